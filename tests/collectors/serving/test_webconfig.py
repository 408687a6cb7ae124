"""The web config (exporter-toolkit's format): checked whole at load, errors name file and key and
never show a value under basic_auth_users; bcrypt checked against the OpenBSD test vectors."""

from __future__ import annotations

import base64

import pytest

from collectors.serving.webconfig import BasicAuth, WebConfigError, bcrypt_backend, load_web_config

# Openwall crypt_blowfish's wrapper.c test vectors (the OpenBSD bcrypt's): an independent source
VECTORS = [("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*U"),
           ("$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK", "U*U*"),
           ("$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a", "U*U*U")]


def basic(user: str, pw: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode()


@pytest.mark.parametrize("h, pw", VECTORS)
def test_bcrypt_matches_the_reference_vectors(h, pw):
    check = bcrypt_backend()
    assert check(pw.encode(), h.encode()) and not check((pw + "x").encode(), h.encode())


def test_basic_auth_accepts_only_the_right_user_and_password():
    auth = BasicAuth({"prom": VECTORS[0][0], "other": VECTORS[1][0]})
    assert auth.check(basic("prom", "U*U")) and auth.check(basic("prom", "U*U"))  # the second from the cache
    assert auth.check(basic("other", "U*U*"))
    for header in (basic("prom", "U*U*"), basic("other", "U*U"), basic("nobody", "U*U"), None, "Bearer x",
                   "Basic !!!", "Basic " + base64.b64encode(b"no-colon").decode()):
        assert not auth.check(header), header


def test_a_valid_file_and_paths_relative_to_it(tmp_path):
    p = tmp_path / "web.yml"
    p.write_text(f"tls_server_config: {{cert_file: tls.crt, key_file: /abs/tls.key}}\n"
                 f"basic_auth_users: {{prom: '{VECTORS[0][0]}'}}\n")
    web = load_web_config(p)
    assert web.tls.cert_file == str(tmp_path / "tls.crt") and web.tls.key_file == "/abs/tls.key"
    assert web.basic_auth_users == {"prom": VECTORS[0][0]}
    (tmp_path / "empty.yml").write_text("")
    assert load_web_config(tmp_path / "empty.yml").tls is None  # as exporter-toolkit: plain HTTP, no auth


@pytest.mark.parametrize("text, key, words", [
    ("tls_server_config: {cert_file: a}\n", "tls_server_config.key_file", "is required"),
    ("tls_server_config: {cert_file: a, key_file: b, min_version: TLS10}\n", "tls_server_config.min_version",
     "TLS12, TLS13"),
    ("tls_server_config: {cert_file: a, key_file: b, client_auth_type: RequireAndVerifyClientCert}\n",
     "tls_server_config.client_ca_file", "is required"),
    ("tls_server_config: {cert_file: a, key_file: b, cipher_suites: [x]}\n", "tls_server_config.cipher_suites",
     "does not implement"),
    ("basic_auth: {a: b}\n", "basic_auth", "unknown key"),
    ("tls_server_config: [\n", "(yaml)", ""),
    ("- a\n", "(top level)", "expected a mapping"),
])
def test_a_malformed_file_names_the_key(tmp_path, text, key, words):
    p = tmp_path / "web.yml"
    p.write_text(text)
    with pytest.raises(WebConfigError) as e:
        load_web_config(p)
    assert e.value.key == key and words in e.value.reason and str(p) in str(e.value)


def test_a_password_where_its_hash_belongs_is_refused_without_showing_it(tmp_path):
    p = tmp_path / "web.yml"
    p.write_text("basic_auth_users: {prom: Clear-Pw-47}\n")
    with pytest.raises(WebConfigError) as e:
        load_web_config(p)
    assert e.value.key == "basic_auth_users.prom" and "bcrypt" in e.value.reason
    assert "Clear-Pw-47" not in str(e.value)


def test_an_unreadable_file_is_named(tmp_path):
    with pytest.raises(WebConfigError) as e:
        load_web_config(tmp_path / "missing.yml")
    assert "cannot read" in str(e.value) and "missing.yml" in str(e.value)
    with pytest.raises(WebConfigError) as e:
        load_web_config(tmp_path)
    assert "not a regular file" in str(e.value)

"""collectors.app.jmx_credentials: the JMX exporter's password as a secret reference (monitor.settings.secrets),
resolved at every fetch, and each way of not having one named (the reference, never a value); the keys
of the development versions before it are refused naming their replacement."""

import pytest

from boundedhttp import FetchError
from clirun import run_cli
from collectors.app import jmx_credentials
from monitor.settings.config import BrokerConfig, ConfigError, parse_config

URL = "http://b1:7071/metrics"


def broker(tmp_path, **jmx) -> BrokerConfig:
    """The broker as monitor.yaml gives it (references checked at load, the password kept as written)."""
    cfg = parse_config({"clusters": [{"name": "c", "brokers": [{"id": 1, "jmx_url": URL, **jmx}]}]})
    return cfg.clusters[0].brokers[0]


def test_no_user_no_auth_and_a_reference_gives_the_password_at_every_fetch(tmp_path, monkeypatch):
    assert jmx_credentials(BrokerConfig(id="1"), URL) is None
    (tmp_path / "jmx").write_text("s3 cret\n")  # as `echo` writes it: the newline is not part of it
    b = broker(tmp_path, jmx_username="u", jmx_password="${directory:%s:jmx}" % tmp_path)
    assert b.jmx_password == "${directory:%s:jmx}" % tmp_path  # kept as written, not the value
    assert jmx_credentials(b, URL) == ("u", "s3 cret")
    (tmp_path / "jmx").write_text("rotated")  # read at every fetch
    assert jmx_credentials(b, URL) == ("u", "rotated")
    monkeypatch.setenv("JMX_PW", "from-env")
    assert jmx_credentials(broker(tmp_path, jmx_username="u", jmx_password="${env:JMX_PW}"), URL) == ("u", "from-env")
    (tmp_path / "jmx.properties").write_text("jmx.password = from\\u0020props\n")
    ref = "${file:%s:jmx.password}" % (tmp_path / "jmx.properties")
    assert jmx_credentials(broker(tmp_path, jmx_username="u", jmx_password=ref), URL) == ("u", "from props")


def test_a_password_gone_after_load_is_a_credentials_error_naming_the_reference(tmp_path, monkeypatch):
    monkeypatch.setenv("JMX_PW", "s3cret-value")
    b = broker(tmp_path, jmx_username="u", jmx_password="${env:JMX_PW}")
    monkeypatch.delenv("JMX_PW")
    with pytest.raises(FetchError) as exc:
        jmx_credentials(b, URL)
    assert exc.value.kind == "credentials" and "${env:JMX_PW}" in str(exc.value) and URL in str(exc.value)
    assert "s3cret-value" not in str(exc.value)


@pytest.mark.parametrize("settings, named", [
    ({"jmx_username": "u"}, "jmx_username needs jmx_password"),
    ({"jmx_password": "${env:Y}"}, "without jmx_username"),
])
def test_a_user_without_a_password_or_the_reverse_is_a_credentials_error(settings, named):
    with pytest.raises(FetchError) as exc:
        jmx_credentials(BrokerConfig(id="1", **settings), URL)
    assert exc.value.kind == "credentials" and named in str(exc.value) and URL in str(exc.value)


def test_an_unresolvable_reference_is_a_config_error_at_load(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_SUCH_VARIABLE_X", raising=False)
    with pytest.raises(ConfigError) as exc:
        broker(tmp_path, jmx_username="u", jmx_password="${env:NO_SUCH_VARIABLE_X}")
    assert exc.value.key == "clusters[0].brokers[0].jmx_password"
    assert "environment variable NO_SUCH_VARIABLE_X is not set" in exc.value.reason


@pytest.mark.parametrize("old, new", [("jmx_password_file", "${directory:DIR:NAME}"),
                                      ("jmx_password_env", "${env:NAME}")])
def test_the_replaced_keys_are_refused_naming_the_replacement(tmp_path, old, new):
    with pytest.raises(ConfigError) as exc:
        broker(tmp_path, jmx_username="u", **{old: "x"})
    assert [p.key for p in exc.value.problems] == [f"clusters[0].brokers[0].{old}"]
    assert f"replaced by jmx_password: {new}" in exc.value.reason


def test_config_check_shows_the_reference_and_hides_a_written_password(tmp_path):
    import subprocess
    import sys

    import yaml

    (tmp_path / "jmx").write_text("from-the-file\n")
    path = tmp_path / "monitor.yaml"
    ref = "${directory:%s:jmx}" % tmp_path
    path.write_text(yaml.safe_dump({"clusters": [{"name": "c", "brokers": [
        {"id": 1, "jmx_url": URL, "jmx_username": "u", "jmx_password": ref},
        {"id": 2, "jmx_url": URL, "jmx_username": "u", "jmx_password": "written-in-the-file"}]}]}))
    proc = run_cli("config", "check", str(path))
    assert proc.returncode == 0, proc.stderr
    brokers = yaml.safe_load(proc.stdout.split("\n", 1)[1])["clusters"][0]["brokers"]
    assert [b["jmx_password"] for b in brokers] == [ref, "***"]
    assert "clusters[0].brokers[1].jmx_password: a secret written in the file" in proc.stderr
    for secret in ("from-the-file", "written-in-the-file"):
        assert secret not in proc.stdout + proc.stderr

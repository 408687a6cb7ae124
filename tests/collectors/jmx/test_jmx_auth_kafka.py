"""The JMX exporter agent behind HTTP Basic auth on a real broker: the collector reads it with
``jmx_username`` and ``jmx_password`` given by reference to a file or an environment variable, and a
wrong or missing password puts the source down as ``unauthorized`` without the secret in any output.

The agent keeps a salted SHA-256 of the password (jmx_exporter 1.0.1's MessageDigestAuthenticator:
hex of SHA-256(salt + ":" + password), the configured hash compared lowercased without colons)."""

from __future__ import annotations

import hashlib
import secrets
import subprocess

from collecting import collect_once
from kafkatools import own_broker


def test_jmx_exporter_behind_basic_auth(tmp_path):
    password, salt = secrets.token_urlsafe(16), secrets.token_hex(8)
    wrong = secrets.token_urlsafe(16)
    # jmx_exporter 1.0.1 compares with a hex of the digest that has no leading zeros (1 hash in 16 starts
    # with 0): the hash is given the way the agent prints it
    basic = {"username": "prom", "algorithm": "SHA-256", "salt": salt,
             "passwordHash": hashlib.sha256(f"{salt}:{password}".encode()).hexdigest().lstrip("0")}
    pw_file = tmp_path / "jmx-password"
    pw_file.write_text(password + "\n")  # as `echo` writes it: the newline is not part of the password
    with own_broker(tmp_path / "broker", jmx_http_server={"authentication": {"basic": basic}}) as state:
        def config(**auth):
            # the agent's first scrape (the broker was only asked for a 401 while starting) is slow on a
            # loaded machine: the default 5 s deadline is for warm exporters
            return {"timeouts": {"jmx": 60},
                    "clusters": [{"name": "c", "brokers": [{"id": "1", "jmx_url": state.jmx_url, **auth}]}]}

        good = collect_once(config(jmx_username="prom", jmx_password="${directory:%s:jmx-password}" % tmp_path),
                            tmp_path)
        bad = collect_once(config(jmx_username="prom", jmx_password="${env:JMX_PW}"), tmp_path, {"JMX_PW": wrong})
        none = collect_once(config(), tmp_path)

    assert good.returncode == 0, good.stderr
    assert 'kafka_compaction_source_up{cluster="c",kind="jmx",source="jmx:c:1"} 1.0' in good.stdout
    assert "kafka_compaction_broker_cleaner_dead_threads" in good.stdout
    for proc, why in ((bad, "credentials refused"), (none, "no credentials sent")):
        assert proc.returncode == 1
        assert 'kafka_compaction_source_up{cluster="c",kind="jmx",source="jmx:c:1"} 0.0' in proc.stdout
        assert ('kafka_compaction_source_errors_total{cluster="c",error="unauthorized",kind="jmx",source="jmx:c:1"} 1.0'
                in proc.stdout)
        assert f"HTTP 401: unauthorized ({why})" in proc.stderr and state.jmx_url in proc.stderr
    for proc in (good, bad, none):
        for secret in (password, wrong):
            assert secret not in proc.stdout + proc.stderr


def make_tls(tmp_path) -> tuple[str, str]:
    """A CA of the test's own and a certificate it signs for 127.0.0.1, in a PKCS12 keystore the agent
    reads (openssl). Returns (CA file, keystore)."""
    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=tmp_path)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=test CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (tmp_path / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
        "server.pem", "-days", "2", "-extfile", "san.ext")
    run("pkcs12", "-export", "-in", "server.pem", "-inkey", "server.key", "-name", "jmx", "-out", "server.p12",
        "-passout", "pass:changeit")
    return str(tmp_path / "ca.pem"), str(tmp_path / "server.p12")


def test_jmx_exporter_over_https_with_the_operators_ca(tmp_path):
    ca, keystore = make_tls(tmp_path)
    (tmp_path / "other").mkdir()
    other_ca, _ = make_tls(tmp_path / "other")  # a CA that did not sign the broker's certificate
    ssl_cfg = {"ssl": {"keyStore": {"filename": keystore, "password": "changeit"}, "certificate": {"alias": "jmx"}}}
    with own_broker(tmp_path / "broker", jmx_http_server=ssl_cfg) as state:
        assert state.jmx_url.startswith("https://")

        def config(**tls):
            return {"timeouts": {"jmx": 60},
                    "clusters": [{"name": "c", "brokers": [{"id": "1", "jmx_url": state.jmx_url, **tls}]}]}

        good = collect_once(config(jmx_ca_file=ca), tmp_path)
        untrusted = collect_once(config(jmx_ca_file=other_ca), tmp_path)
        system_cas = collect_once(config(), tmp_path)

    assert good.returncode == 0, good.stderr
    assert 'kafka_compaction_source_up{cluster="c",kind="jmx",source="jmx:c:1"} 1.0' in good.stdout
    for proc in (untrusted, system_cas):
        assert proc.returncode == 1
        assert ('kafka_compaction_source_errors_total{cluster="c",error="tls",kind="jmx",source="jmx:c:1"} 1.0'
                in proc.stdout), proc.stderr
        assert "certificate" in proc.stderr, proc.stderr

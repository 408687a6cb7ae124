"""The JMX exporter agent behind HTTP Basic auth on a real broker: the collector reads it with
``jmx_username`` and a password from a file or an environment variable, and a wrong or missing
password puts the source down as ``unauthorized`` without the secret in any output.

The agent keeps a salted SHA-256 of the password (jmx_exporter 1.0.1's MessageDigestAuthenticator:
hex of SHA-256(salt + ":" + password), the configured hash compared lowercased without colons)."""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
import sys

import yaml

from kafkatools import CLI_MODULE, own_broker


def collect_once(config: dict, tmp_path, env: dict | None = None) -> subprocess.CompletedProcess:
    path = tmp_path / "monitor.yaml"
    path.write_text(yaml.safe_dump(config))
    return subprocess.run([sys.executable, "-m", CLI_MODULE, "collect", "--once", "--config", str(path)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


def test_jmx_exporter_behind_basic_auth(tmp_path):
    password, salt = secrets.token_urlsafe(16), secrets.token_hex(8)
    wrong = secrets.token_urlsafe(16)
    basic = {"username": "prom", "algorithm": "SHA-256", "salt": salt,
             "passwordHash": hashlib.sha256(f"{salt}:{password}".encode()).hexdigest()}
    pw_file = tmp_path / "jmx-password"
    pw_file.write_text(password + "\n")  # as `echo` writes it: the newline is not part of the password
    with own_broker(tmp_path / "broker", jmx_basic_auth=basic) as state:
        def config(**auth):
            # the agent's first scrape (the broker was only asked for a 401 while starting) is slow on a
            # loaded machine: the default 5 s deadline is for warm exporters
            return {"timeouts": {"jmx": 60},
                    "clusters": [{"name": "c", "brokers": [{"id": "1", "jmx_url": state.jmx_url, **auth}]}]}

        good = collect_once(config(jmx_username="prom", jmx_password_file=str(pw_file)), tmp_path)
        bad = collect_once(config(jmx_username="prom", jmx_password_env="JMX_PW"), tmp_path, {"JMX_PW": wrong})
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

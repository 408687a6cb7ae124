"""A wrong SCRAM password against the 3-broker SASL_SSL cluster (tests/conftest.py ``kafka_cluster``):
``collect --once`` says the admin source failed, names its endpoint (bootstrap servers and protocol),
says the broker refused the credentials (error kind ``credentials``, as for a JMX exporter's), and prints
no password: neither the wrong one given through the environment nor the right one.

Expected values come from outside the code under test: Kafka's own SASL refusal (librdkafka's
``_AUTHENTICATION`` error) for a password the cluster never had."""

from __future__ import annotations


import pytest
import yaml

from clirun import run_cli
from kafkatools import client_config

pytestmark = pytest.mark.slow

WRONG = "Not-The-Monitor-Password-7"


def test_a_wrong_scram_password_is_a_credentials_error_naming_the_endpoint(kafka_cluster, tmp_path):
    client = {k: v for k, v in client_config(kafka_cluster, "monitor").items() if k != "bootstrap.servers"}
    client["sasl.password"] = "${env:COMPACTION_MONITOR_TEST_PW}"
    cfg = {"timeouts": {"admin": 5}, "clusters": [{
        "name": "c3", "bootstrap_servers": kafka_cluster.bootstrap, "consumer_groups": False, "client": client}]}
    path = tmp_path / "monitor.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = run_cli("collect", "--once", "--config", str(path), env={"COMPACTION_MONITOR_TEST_PW": WRONG})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert WRONG not in out and kafka_cluster.password("monitor") not in out
    assert f"source admin:c3 (bootstrap {kafka_cluster.bootstrap}, SASL_SSL) failed" in proc.stderr, proc.stderr
    said = next(line for line in proc.stderr.splitlines() if line.startswith("collect: source admin:c3"))
    assert "the brokers refused the credentials of User:monitor (SCRAM-SHA-512)" in said, said
    assert "Authentication failed" in said and "sasl_ssl://127.0.0.1:" in said, said  # Kafka's refusal, a broker named
    assert 'kafka_compaction_source_errors_total{cluster="c3",error="credentials",kind="admin",source="admin:c3"} 1.0' \
        in proc.stdout, proc.stdout

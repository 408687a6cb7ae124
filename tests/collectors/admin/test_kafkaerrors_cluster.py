"""The SASL and authorization kinds on the 3-broker SASL_SSL cluster (tests/conftest.py ``kafka_cluster``,
shared by the session): a wrong SCRAM password is a cluster out of reach of kind ``credentials`` (SASL),
named by its bootstrap address with the principal and mechanism and never a password; the user ``blind``
(no ACL) reaches the cluster and is refused its calls, each of kind ``unauthorized`` with the ACL advice.
What is asserted is what Kafka and librdkafka answered, not what the classifier was fed."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from collectors.admin.source import AdminFetcher
from collectors.admin.errors import AUTHORIZATION, SASL, ClusterUnreachable, advice, of_exception
from kafkatools import client_config
from monitor.settings.config import ClusterConfig

WRONG = "Not-The-Monitor-Password-8"


def cluster_config(cluster, user: str, **extra) -> ClusterConfig:
    client = {k: v for k, v in client_config(cluster, user, **extra).items() if k != "bootstrap.servers"}
    return ClusterConfig(name="c3", bootstrap_servers=cluster.bootstrap, client=client)


def test_a_wrong_password_is_the_sasl_kind_naming_the_cluster_the_principal_and_no_password(kafka_cluster):
    fetcher = AdminFetcher(cluster_config(kafka_cluster, "monitor", **{"sasl.password": WRONG}), timeout=10)
    try:
        with pytest.raises(ClusterUnreachable) as got:
            fetcher.topics()
    finally:
        fetcher.close()
    exc = got.value
    assert exc.kind == SASL == "credentials" and exc.failure.address in kafka_cluster.bootstrap.split(",")
    assert str(exc).startswith(f"cannot reach the cluster at {kafka_cluster.bootstrap} (SASL authentication "
                               "failed): the brokers refused the credentials of User:monitor (SCRAM-SHA-512)")
    assert "Authentication failed during authentication due to invalid credentials" in str(exc)  # Kafka's words
    assert WRONG not in str(exc) and kafka_cluster.password("monitor") not in str(exc)


def test_blind_reaches_the_cluster_and_its_refused_calls_are_the_authorization_kind(kafka_cluster):
    admin = AdminClient(client_config(kafka_cluster, "blind"))
    asked = admin.describe_configs([ConfigResource(ResourceType.BROKER, "1"),
                                    ConfigResource(ResourceType.TOPIC, "__consumer_offsets")], request_timeout=10)
    refusals = []
    for fut in asked.values():
        with pytest.raises(KafkaException) as got:
            fut.result(timeout=30)
        refusals.append(got.value)
    kinds = {of_exception(e).kind for e in refusals}
    assert kinds == {AUTHORIZATION}, [str(e) for e in refusals]
    assert {e.args[0].name() for e in refusals} == {"CLUSTER_AUTHORIZATION_FAILED", "TOPIC_AUTHORIZATION_FAILED"}
    fetcher = AdminFetcher(cluster_config(kafka_cluster, "blind"), timeout=10)
    try:
        snap = fetcher.topics()  # reached: a refusal is an answer, the source stays up
    finally:
        fetcher.close()
    reasons = {s.reason for got in snap.cleaner_settings.values() for s in got.values() if s.source == "unknown"}
    assert reasons and all("CLUSTER_AUTHORIZATION_FAILED" in r for r in reasons), reasons
    assert "kafka-acls --add --allow-principal User:blind" in advice(AUTHORIZATION, principal="User:blind")

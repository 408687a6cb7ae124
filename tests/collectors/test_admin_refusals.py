"""How a refused admin call is told (collectors.admin): the resource type the missing ACL is on, from
Kafka's error code; the principal in kafka-acls' words; one log line per (call, resource), however
often the call is refused, and every refusal counted as ``unauthorized``. The broker's own refusals
are tested on the ACL'd cluster (test_least_privilege_cluster.py); these are the rules around them."""

from __future__ import annotations

import logging

from confluent_kafka import KafkaError, KafkaException

from collectors.admin import AdminFetcher, authorization_failure, principal, refusal
from collectors.export_partitions import CONFIG_DEPENDS
from collectors.metrics import METRICS
from monitor.config import ClusterConfig
from monitor.topicconfig import TopicConfig


def refused(code) -> KafkaException:
    return KafkaException(KafkaError(code))


def test_the_resource_type_comes_from_kafkas_authorization_error_codes():
    assert authorization_failure(refused(KafkaError.TOPIC_AUTHORIZATION_FAILED)) == "TOPIC"
    assert authorization_failure(refused(KafkaError.GROUP_AUTHORIZATION_FAILED)) == "GROUP"
    assert authorization_failure(refused(KafkaError.CLUSTER_AUTHORIZATION_FAILED)) == "CLUSTER"
    assert authorization_failure(refused(KafkaError.REQUEST_TIMED_OUT)) is None
    assert authorization_failure(RuntimeError("no")) is None


def test_the_principal_and_the_missing_acl_in_kafka_acls_words():
    assert principal(ClusterConfig(client={"sasl.username": "blind"})) == "User:blind"
    assert principal(ClusterConfig()) == "the client's principal"
    assert refusal("DescribeConfigs", "TOPIC", "accounts.changelog", "User:blind") == \
        "DescribeConfigs on TOPIC accounts.changelog for User:blind"
    assert refusal("DescribeConfigs", "CLUSTER", "", "User:blind") == "DescribeConfigs on CLUSTER for User:blind"


def test_a_refusal_is_counted_each_time_and_logged_once_per_call_and_resource(caplog):
    f = AdminFetcher(ClusterConfig(name="c", bootstrap_servers="127.0.0.1:1", client={"sasl.username": "blind"}))
    errors, kinds = {}, []
    try:
        with caplog.at_level(logging.WARNING, logger="compaction_monitor.admin"):
            for _ in range(3):
                f._failed("DescribeConfigs", "TOPIC", "t1", refused(KafkaError.TOPIC_AUTHORIZATION_FAILED),
                          errors, kinds, "t1")
            f._failed("DescribeConfigs", "TOPIC", "t2", refused(KafkaError.TOPIC_AUTHORIZATION_FAILED),
                      errors, kinds, "t2")
            f._failed("DescribeConfigs", "TOPIC", "t3", refused(KafkaError.REQUEST_TIMED_OUT), errors, kinds, "t3")
    finally:
        f.close()
    assert kinds == ["unauthorized"] * 4 + ["timeout"]  # a timed-out call is counted as a timeout (issue 35)
    assert errors["t1"] == "refused: no DescribeConfigs on TOPIC t1 for User:blind (TOPIC_AUTHORIZATION_FAILED)"
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines  # t1 once, t2 once; the timeout is no refusal
    assert "--allow-principal User:blind --operation DescribeConfigs --topic t1" in lines[0]


def test_every_series_left_out_for_an_unknown_config_names_a_metric_and_a_topic_config():
    configs = set(TopicConfig().to_strings())
    assert set(CONFIG_DEPENDS) <= set(METRICS)
    assert {k for keys in CONFIG_DEPENDS.values() for k in keys} <= configs

"""An admin session's clients and how their calls are told (collectors.admin.client): a refused call's
resource type (the missing ACL's, from Kafka's error code) and the principal in kafka-acls' words; one
log line per (call, resource), however often the call is refused, and every refusal counted as
``unauthorized``; librdkafka's settings (socket.timeout.ms from the admin timeout), a result waited for
past librdkafka's own timeout (librdkafka's log lines: test_kafkaerrors_log.py). The broker's own refusals are
tested on the ACL'd cluster (test_least_privilege_cluster.py); these are the rules around them."""

from __future__ import annotations

import concurrent.futures
import logging
import threading

import pytest
from confluent_kafka import KafkaError, KafkaException

from boundedhttp import FetchError
from collectors.admin.source import AdminFetcher
from collectors.admin.client import AdminSession, _client_conf, authorization_failure, principal, refusal
from collectors.export.partitions import CONFIG_DEPENDS
from collectors.export.metrics import METRICS
from monitor.settings.config import ClusterConfig
from monitor.model.topicconfig import TopicConfig


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
    f = AdminSession(ClusterConfig(name="c", bootstrap_servers="127.0.0.1:1", client={"sasl.username": "blind"}))
    errors, kinds = {}, []
    try:
        with caplog.at_level(logging.WARNING, logger="compaction_monitor.admin"):
            for _ in range(3):
                f.failed("DescribeConfigs", "TOPIC", "t1", refused(KafkaError.TOPIC_AUTHORIZATION_FAILED),
                          errors, kinds, "t1")
            f.failed("DescribeConfigs", "TOPIC", "t2", refused(KafkaError.TOPIC_AUTHORIZATION_FAILED),
                      errors, kinds, "t2")
            f.failed("DescribeConfigs", "TOPIC", "t3", refused(KafkaError.REQUEST_TIMED_OUT), errors, kinds, "t3")
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


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_librdkafka_drops_a_silent_broker_after_the_admin_timeout_unless_the_client_section_says():
    """socket.timeout.ms is how long a request stays in flight on a broker that never answers before
    librdkafka drops that connection; by default the admin timeout, not librdkafka's 60 s (a frozen broker
    kept the admin source down that long: tests/collectors/test_broker_partitioned_cluster.py)."""
    cluster = ClusterConfig(name="c", bootstrap_servers="127.0.0.1:9")
    assert _client_conf(cluster, 5)["socket.timeout.ms"] == 5000
    assert _client_conf(cluster, 0.001)["socket.timeout.ms"] == 10  # librdkafka's least
    assert "socket.timeout.ms" not in _client_conf(cluster)
    own = ClusterConfig(name="c", bootstrap_servers="127.0.0.1:9", client={"socket.timeout.ms": 30000})
    assert _client_conf(own, 5)["socket.timeout.ms"] == 30000


@pytest.mark.slow  # waits out librdkafka's real timeouts on an address that never answers
def test_a_result_settled_by_librdkafkas_own_timeout_is_not_lost_to_the_wait():
    """librdkafka settles a request at its request_timeout (a fan-out to every broker with the answers it
    got and an error for each broker that did not answer); waiting only as long lost that race, and the
    source went down with a bare TimeoutError. A future settled at the request timeout is read; one never
    settled ends in a timeout naming the endpoint."""
    fetcher = AdminFetcher(ClusterConfig(name="c", bootstrap_servers="127.0.0.1:9"), timeout=0.2)
    try:
        late = concurrent.futures.Future()
        timer = threading.Timer(fetcher.timeout, late.set_result, ("partial",))
        timer.start()
        assert fetcher.session.result(late, "list_consumer_groups") == "partial"
        with pytest.raises(FetchError) as err:
            fetcher.session.result(concurrent.futures.Future(), "list_consumer_groups")
        assert err.value.kind == "timeout" and "bootstrap 127.0.0.1:9" in str(err.value)
        assert "list_consumer_groups: no answer within" in str(err.value)
    finally:
        fetcher.close()

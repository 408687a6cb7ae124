"""A source is up only when its refresh got what it asked for (issue 35): the consumer-groups and admin
refreshes with some calls failing (the failed groups and topics unknown, exported with the call and the
reason) and with every call failing (down, with the error); each source's state changes logged once,
rate-limited; its last error's kind exported, redacted. The real broker restart is in
test_broker_restart.py; here a fake admin client injects what a real broker cannot be made to do on
demand: one group's or one topic's call timing out while the others answer."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from types import SimpleNamespace

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from prometheus_client import CollectorRegistry

from boundedhttp import FetchError
from collectors.admin import AdminFetcher
from collectors.admin_client import LibrdkafkaLog
from collectors.admin_state import PartitionOffsets, TopicInfo
from collectors.exporter import register_all
from collectors.runner import Source, StateLog, Store, refresh_once
from monitor.config import ClusterConfig
from monitor.topicconfig import TopicConfig

TIMED_OUT = KafkaException(KafkaError(KafkaError._TIMED_OUT, "Failed while waiting for response from broker"))


def done(value=None, exc=None) -> Future:
    f = Future()
    f.set_exception(exc) if exc is not None else f.set_result(value)
    return f


class FakeAdmin:
    """ListGroups answers ``groups``; each group's offsets are ``offsets[group]`` (a list of
    TopicPartition) or an exception."""

    def __init__(self, groups, offsets):
        self.groups, self.offsets = groups, offsets

    def list_consumer_groups(self, **_):
        return done(SimpleNamespace(valid=[SimpleNamespace(group_id=g) for g in self.groups], errors=[]))

    def list_consumer_group_offsets(self, requests, **_):
        gid = requests[0].group_id
        got = self.offsets[gid]
        return {gid: done(exc=got) if isinstance(got, Exception) else done(SimpleNamespace(topic_partitions=got))}

    def poll(self, _):
        return 0


TOPICS = {"t": TopicInfo("t", TopicConfig.from_strings({"cleanup.policy": "compact"}),
                         {0: PartitionOffsets(1, 0, 10, 10, (1,))})}


def fetcher(admin) -> AdminFetcher:
    f = AdminFetcher(ClusterConfig(name="c", bootstrap_servers="127.0.0.1:1"), timeout=1)
    f.session.admin = admin
    return f


def test_a_group_whose_offsets_time_out_is_unknown_with_the_reason_and_the_others_lag_is_exported():
    f = fetcher(FakeAdmin(["ok", "stuck"], {"ok": [TopicPartition("t", 0, 10)], "stuck": TIMED_OUT}))
    try:
        snap = f.group_lags(TOPICS)
        assert [(x.group, x.lag_records) for x in snap.lags] == [("ok", 0)]
        assert snap.unknown == {"stuck": ("list_consumer_group_offsets", "timeout")}
        assert "_TIMED_OUT" in snap.errors["stuck"]
        assert snap.error_kinds == ("timeout",)
        assert f.rebuilds == 1  # a call timed out while ListGroups answered: new clients for the next refresh
        store = Store()
        store.register("consumer_groups:c", "consumer_groups", "c")
        store.success("consumer_groups:c", snap, 0.1, 0.0)
        reg = CollectorRegistry(auto_describe=False)
        register_all(reg, store)
        assert reg.get_sample_value("kafka_compaction_consumer_group_lag_unknown", {
            "cluster": "c", "group": "stuck", "call": "list_consumer_group_offsets", "reason": "timeout"}) == 1
        assert reg.get_sample_value("kafka_compaction_consumer_group_lag_unknown", {
            "cluster": "c", "group": "ok", "call": "list_consumer_group_offsets", "reason": "timeout"}) is None
        assert reg.get_sample_value("kafka_compaction_consumer_group_topic_lag_records",
                                    {"cluster": "c", "group": "ok", "topic": "t"}) == 0
        assert reg.get_sample_value("kafka_compaction_source_up", {
            "cluster": "c", "source": "consumer_groups:c", "kind": "consumer_groups"}) == 1
        assert reg.get_sample_value("kafka_compaction_source_last_error_info", {
            "cluster": "c", "source": "consumer_groups:c", "kind": "consumer_groups", "error": "timeout",
            "message": f"stuck: {snap.errors['stuck']}"[:200]}) == 1
    finally:
        f.close()


def test_a_partition_without_a_log_end_offset_makes_the_group_unknown_not_lag_zero():
    topics = {"t": TopicInfo("t", TOPICS["t"].config, {0: PartitionOffsets(1, -1, -1, -1, (1,))})}
    f = fetcher(FakeAdmin(["g"], {"g": [TopicPartition("t", 0, 4)]}))
    try:
        snap = f.group_lags(topics)
        assert snap.lags == () and snap.unknown == {"g": ("list_offsets", "end_offset_unknown")}
    finally:
        f.close()


def test_every_groups_offsets_failing_puts_the_source_down_with_the_error():
    f = fetcher(FakeAdmin(["a", "b"], {"a": TIMED_OUT, "b": TIMED_OUT}))
    store = Store()
    src = Source("consumer_groups:c", "consumer_groups", "c", lambda: f.group_lags(TOPICS), 1)
    store.register(src.name, src.kind, src.cluster)
    try:
        assert refresh_once(store, src) is False
        (st,) = store.statuses()
        assert not st.up and st.errors == {"timeout": 1}
        assert "list_consumer_group_offsets of the groups failed for all 2" in st.last_error
        assert st.last_error_kind == "timeout" and "_TIMED_OUT" in st.last_error_message
    finally:
        f.close()


def test_a_refused_group_is_an_answer_not_a_failure():
    refused = KafkaException(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED))
    f = fetcher(FakeAdmin(["a"], {"a": refused}))
    try:
        snap = f.group_lags(TOPICS)  # no raise: the broker answered (no ACL), the group is unknown with why
        assert snap.unknown == {"a": ("list_consumer_group_offsets", "unauthorized")}
        assert f.rebuilds == 0
    finally:
        f.close()


def test_the_last_errors_text_is_exported_redacted():
    store = Store()
    store.register("jmx:c:1", "jmx", "c", "1")
    store.failure("jmx:c:1", RuntimeError("GET https://admin:s3cret@host:9404/metrics: refused"), 0.1)
    reg = CollectorRegistry(auto_describe=False)
    register_all(reg, store)
    [sample] = [s for m in reg.collect() for s in m.samples if s.name == "kafka_compaction_source_last_error_info"]
    assert sample.labels["error"] == "error" and "s3cret" not in sample.labels["message"]
    assert "https://admin:***@host" in sample.labels["message"]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def status(up: bool, error: str | None = None):
    return SimpleNamespace(name="admin:c", up=up, last_error=error, endpoint="bootstrap b:9092")


def test_state_changes_are_logged_once_and_a_flapping_source_at_most_twice_per_interval(caplog):
    clock = Clock()
    states = StateLog(interval=60, clock=clock, logger=logging.getLogger("test.states"))
    with caplog.at_level(logging.INFO, logger="test.states"):
        states.observe(status(True))  # a first refresh that works: nothing to say
        clock.now = 10
        states.observe(status(False, "FetchError: bootstrap b:9092: no answer within 12s"))
        states.observe(status(False, "FetchError: bootstrap b:9092: no answer within 12s"))  # no change
        for i in range(100):  # flapping every refresh for 50 s, up first: that recovery is said at once
            clock.now = 11 + i * 0.5
            states.observe(status(i % 2 == 0, "FetchError: x" if i % 2 else None))
        clock.now = 65  # still within the minute of the first two lines: nothing
        states.observe(status(False, "FetchError: y"))
        clock.now = 75  # the interval is over and the state differs from the one last logged (up)
        states.observe(status(False, "FetchError: y"))
        clock.now = 80
        states.observe(status(False, "FetchError: y"))
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["source admin:c is down: FetchError: bootstrap b:9092: no answer within 12s",
                     "source admin:c (bootstrap b:9092) is up again",
                     "source admin:c (bootstrap b:9092) is down: FetchError: y (98 state changes since the last "
                     "line not logged)"], lines


def test_a_source_down_from_the_start_is_logged_and_its_recovery_too(caplog):
    clock = Clock()
    states = StateLog(interval=60, clock=clock, logger=logging.getLogger("test.states2"))
    with caplog.at_level(logging.INFO, logger="test.states2"):
        states.observe(status(False, "boom"))
        clock.now = 5  # a recovery right after: said at once
        states.observe(status(True))
    assert [r.getMessage() for r in caplog.records] == [
        "source admin:c (bootstrap b:9092) is down: boom", "source admin:c (bootstrap b:9092) is up again"]


def test_librdkafka_lines_go_through_logging_each_kind_once_per_interval(caplog):
    clock = Clock()
    lib = LibrdkafkaLog(logging.getLogger("test.librdkafka"), repeat=60, clock=clock)
    line = "[thrd:b:9092/1]: b:9092/1: Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after {}ms)"
    with caplog.at_level(logging.INFO, logger="test.librdkafka"):
        for i in range(1000):  # ~19 a second for 50 s, as during the outage
            clock.now = i * 0.05
            lib.log(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#producer-1", line.format(i % 7))
        lib.log(logging.INFO, "%s [%s] %s", "FAIL", "rdkafka#producer-1", "Disconnected")
        clock.now = 61
        lib.log(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#producer-1", line.format(3))
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert len(lines) == 3, lines
    assert lines[0] == (logging.ERROR, "librdkafka: FAIL [rdkafka#producer-1] " + line.format(0))
    assert lines[1][0] == logging.INFO
    assert lines[2][1].endswith("(999 more like it in the last 60s not logged)"), lines[2]


def test_a_timeout_of_ours_counts_as_a_timed_out_call():
    f = fetcher(FakeAdmin(["a", "b"], {"a": FetchError("bootstrap x", "timeout", "no answer within 3s"),
                                       "b": [TopicPartition("t", 0, 10)]}))
    try:
        snap = f.group_lags(TOPICS)
        assert snap.unknown == {"a": ("list_consumer_group_offsets", "timeout")} and f.rebuilds == 1
    finally:
        f.close()


@pytest.mark.parametrize("fail", ["describe_configs", "list_offsets"])
def test_a_topic_the_admin_api_did_not_answer_for_is_unknown_with_the_call(fail):
    class Admin:
        def list_topics(self, **_):
            part = SimpleNamespace(leader=1, replicas=[1])
            topics = {t: SimpleNamespace(error=None, partitions={0: part}) for t in ("a", "b")}
            return SimpleNamespace(topics=topics, brokers={})

        def describe_configs(self, resources, **_):
            entry = SimpleNamespace(value="compact")
            return {r: done(exc=TIMED_OUT) if fail == "describe_configs" and r.name == "b"
                    else done({"cleanup.policy": entry}) for r in resources}

        def list_offsets(self, request, **_):
            return {tp: done(exc=TIMED_OUT) if fail == "list_offsets" and tp.topic == "b"
                    else done(SimpleNamespace(offset=5)) for tp in request}

        def poll(self, _):
            return 0

    f = fetcher(Admin())
    try:
        snap = f.topics()
        assert snap.unknown == {"b": (fail, "timeout")}
        assert "a" in snap.topics and snap.topics["a"].partitions[0].latest == 5
        if fail == "list_offsets":
            assert snap.topics["b"].partitions[0].latest == -1
        store = Store()
        store.register("admin:c", "admin", "c")
        store.success("admin:c", snap, 0.1, 0.0)
        reg = CollectorRegistry(auto_describe=False)
        register_all(reg, store)
        assert reg.get_sample_value("kafka_compaction_topic_admin_unknown",
                                    {"cluster": "c", "topic": "b", "call": fail, "reason": "timeout"}) == 1
        assert f.rebuilds == 1
    finally:
        f.close()

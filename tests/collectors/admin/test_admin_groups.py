"""The consumer-groups refresh (collectors.admin.groups) is up only when it got what it asked for (issue
35): a group whose offsets time out is unknown with the call and the reason while the others' lag is
exported; every group's failing puts the source down with the error; a refusal is an answer. A fake
admin client (tests/adminfakes.py) injects one group's call timing out while the others answer; the
real broker restart is in test_broker_restart.py."""

from __future__ import annotations

import concurrent.futures

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from prometheus_client import CollectorRegistry

from adminfakes import TIMED_OUT, TOPICS, FakeAdmin, fetcher
from boundedhttp import FetchError
from collectors.admin.source import AdminFetcher
from collectors.admin.state import PartitionOffsets, TopicInfo
from collectors.export.exporter import register_all
from collectors.export.view import message_label
from collectors.serving.runner import Source, Store, refresh_once
from monitor.settings.config import ClusterConfig


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
            "message": message_label(f"stuck: {snap.errors['stuck']}")}) == 1
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


def test_a_timeout_of_ours_counts_as_a_timed_out_call():
    f = fetcher(FakeAdmin(["a", "b"], {"a": FetchError("bootstrap x", "timeout", "no answer within 3s"),
                                       "b": [TopicPartition("t", 0, 10)]}))
    try:
        snap = f.group_lags(TOPICS)
        assert snap.unknown == {"a": ("list_consumer_group_offsets", "timeout")} and f.rebuilds == 1
    finally:
        f.close()


def test_a_listing_with_an_error_leaves_the_listed_groups_unknown():
    """ListGroups goes to every broker; one that does not answer adds an error and leaves out the groups it
    coordinates. Such a listing is partial: the snapshot keeps the groups' lags, but which groups ListGroups
    gives is unknown (else their absence would count as hidden by ACLs: admin_unlisted_groups,
    ConsumerGroupsHidden). A fake listing on purpose: which broker a real cluster fails on is not ours to pick."""
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import ConsumerGroupListing, ListConsumerGroupsResult

    fetcher = AdminFetcher(ClusterConfig(name="c", bootstrap_servers="127.0.0.1:9"), timeout=0.2)
    try:
        def listing(errors):
            fut = concurrent.futures.Future()
            fut.set_result(ListConsumerGroupsResult(valid=[ConsumerGroupListing("g1", False)], errors=errors))
            return fut

        fetcher.session.admin.list_consumer_groups = lambda **kw: listing([])
        fetcher.session.admin.list_consumer_group_offsets = lambda *a, **kw: {"g1": _settled([])}
        assert fetcher.group_lags({}).listed == frozenset({"g1"})
        fetcher.session.admin.list_consumer_groups = lambda **kw: listing([KafkaError(KafkaError._TIMED_OUT)])
        snap = fetcher.group_lags({})
        assert snap.listed is None and snap.errors  # partial: unknown, and the error counted
    finally:
        fetcher.close()


def _settled(partitions):
    from confluent_kafka import ConsumerGroupTopicPartitions

    fut = concurrent.futures.Future()
    fut.set_result(ConsumerGroupTopicPartitions("g1", partitions))
    return fut


def fetched_lag(bootstrap: str, group: str):
    """One admin refresh of the real broker as the collector makes it: (topics snapshot, groups snapshot,
    ``group``'s one partition lag)."""
    f = AdminFetcher(ClusterConfig(name="c", bootstrap_servers=bootstrap), timeout=10)
    try:
        snap = f.topics()
        groups = f.group_lags(snap.topics, snap.taken_at)
    finally:
        f.close()
    [lag] = [x for x in groups.lags if x.group == group]
    return snap, groups, lag


def test_a_groups_lag_in_records_and_in_time_is_the_brokers(kafka):
    """Against the session broker: a group committed at offset 4 of 10 records written an hour ago (their
    CreateTime) lags 6 records and, read exactly (the record at the committed offset), an hour; its share
    of the topic's delete.retention.ms is that time over it."""
    import time as clock

    from kafkatools import commit_offsets, compacted, create_topic, produce, unique_topic
    from monitor.model.consumers import EXACT

    topic = create_topic(kafka.bootstrap, unique_topic("admin-groups"),
                         **compacted(**{"delete.retention.ms": 600_000, "segment.ms": 3_600_000}))
    written_ms = int(clock.time() * 1000) - 3_600_000
    produce(kafka.bootstrap, topic, [(f"k{i}", "v") for i in range(10)], timestamp_ms=written_ms)
    group = unique_topic("admin-groups-g")
    commit_offsets({"bootstrap.servers": kafka.bootstrap, "group.id": group}, [TopicPartition(topic, 0, 4)])
    snap, groups, lag = fetched_lag(kafka.bootstrap, group)
    assert (lag.topic, lag.partition, lag.committed, lag.end_offset, lag.lag_records) == (topic, 0, 4, 10, 6)
    assert lag.lag_method == EXACT and group not in groups.unknown and group in groups.listed
    assert 3600 <= lag.lag_seconds <= groups.taken_at - written_ms / 1000 + 1e-6
    assert lag.delete_retention_seconds == 600.0
    assert lag.retention_fraction == lag.lag_seconds / 600.0


def test_a_record_compacted_away_is_not_stood_in_for_by_the_next_ones_age(kafka):
    """A group committed at offset 4 of ten records written two hours ago, each key written again now and
    the old ones cleaned away: the first record at or after offset 4 is now's (offset 10), seconds old. Its
    age is not the group's lag (two hours at least): with one log-end-offset sample (a one-shot, as
    ``topics lint``) the time lag is unknown, reason record_compacted, so the review names its check not
    run instead of passing it (issue 41: lint passed a group the alert called critical)."""
    import time as clock

    from kafkatools import (commit_offsets, compacted, consume_all, create_topic, produce, roll_at, unique_topic,
                            wait_cleaned)
    from monitor.model.consumers import RECORD_COMPACTED
    from monitor.verdicts.configreview import GroupLagFact, TopicFacts, review

    topic = create_topic(kafka.bootstrap, unique_topic("admin-groups-gap"), **compacted(**{"delete.retention.ms": 600_000}))
    now_ms = int(clock.time() * 1000)
    produce(kafka.bootstrap, topic, [(f"k{i}", "old") for i in range(10)], timestamp_ms=now_ms - 2 * 3_600_000)
    produce(kafka.bootstrap, topic, [(f"k{i}", "new") for i in range(10)], timestamp_ms=now_ms)
    roll_at(kafka.bootstrap, topic, now_ms + 1000)
    wait_cleaned(kafka.log_dir, topic, past=10)
    assert min(m.offset() for m in consume_all(kafka.bootstrap, topic)) == 10  # offsets 0..9 are gone
    group = unique_topic("admin-groups-gap-g")
    commit_offsets({"bootstrap.servers": kafka.bootstrap, "group.id": group}, [TopicPartition(topic, 0, 4)])
    snap, groups, lag = fetched_lag(kafka.bootstrap, group)
    assert (lag.committed, lag.lag_records) == (4, 17)
    assert (lag.lag_seconds, lag.lag_unknown_reason) == (None, RECORD_COMPACTED), lag
    r = review([TopicFacts(topic, snap.topics[topic].config, groups_measured=True,
                           group_lags=(GroupLagFact(group, 0, lag.lag_seconds),))])
    assert not r.passed and [n["check"] for n in r.not_run if n["check"] == "delete_retention_below_consumer_lag"]


def test_the_clients_are_rebuilt_at_most_once_per_backoff_however_many_refreshes_time_out(caplog):
    """Issue 42: a group's offsets timing out refresh after refresh while ListGroups answers (a frozen
    broker: the real one is tests/collectors/admin/test_kafkaerrors_frozen.py) rebuilds the clients once,
    then not again until REBUILD_BACKOFF_SECONDS have passed on the session's clock."""
    import logging

    from collectors.admin import client as admin_client

    admin = FakeAdmin(["ok", "stuck"], {"ok": [TopicPartition("t", 0, 10)], "stuck": TIMED_OUT})
    f = fetcher(admin)
    now = [0.0]
    f.session.clock = lambda: now[0]
    f.session._new_admin = lambda: admin  # a rebuild gets the same frozen cluster
    try:
        with caplog.at_level(logging.WARNING, logger="compaction_monitor.admin"):
            counts = []
            for step in (0.0, 1.0, admin_client.REBUILD_BACKOFF_SECONDS - 2.0, 1.0, 1.0):
                now[0] += step
                f.group_lags(TOPICS)
                counts.append(f.rebuilds)
    finally:
        f.close()
    # at 0 s; not at 1 s nor at 59 s; at 60 s (the backoff over); not at 61 s
    assert counts == [1, 1, 1, 2, 2]
    said = [r.getMessage() for r in caplog.records if "new admin client" in r.getMessage()]
    assert len(said) == 1 and f"no other rebuild for {admin_client.REBUILD_BACKOFF_SECONDS:g}s" in said[0]

"""What ListGroups gave against what __consumer_offsets holds, per cluster: the replica with the highest
log end offset speaks for each partition, the exporter's two gauges, and the log line once per cluster
and per change. The snapshots are the sources' own types, filled as the sources fill them (the broker
side is tests/monitor/kafka/test_offsetgroups.py and tests/collectors/test_least_privilege_cluster.py)."""

from __future__ import annotations

import logging

from prometheus_client import CollectorRegistry, generate_latest

from collectors.admin.state import AdminSnapshot, GroupSnapshot
from collectors.app import HiddenGroupsNotice
from collectors.export.exporter import register_all
from collectors.logdirs.snapshot import LogDirSnapshot, offsets_topic_groups
from collectors.logdirs.scanner import LogDirScanner
from collectors.serving.runner import Store


def _store(listed, replicas) -> Store:
    """A cluster c1 whose ListGroups gave ``listed`` and whose brokers' log dirs hold ``replicas``
    (broker -> {partition: (log end offset, groups)})."""
    store = Store()
    store.register("admin:c1", "admin", "c1")
    store.success("admin:c1", AdminSnapshot(0.0, principal="User:blind"), 0.0, 0.0)
    store.register("consumer_groups:c1", "consumer_groups", "c1")
    store.success("consumer_groups:c1", GroupSnapshot(0.0, listed=frozenset(listed)), 0.0, 0.0)
    for b, parts in replicas.items():
        store.register(f"log_dirs:c1:{b}", "log_dirs", "c1", b)
        store.success(f"log_dirs:c1:{b}", LogDirSnapshot(0.0, offsets_groups=parts), 0.0, 0.0)
    return store


def test_each_partition_is_told_by_its_most_advanced_replica():
    ahead = LogDirSnapshot(0.0, offsets_groups={0: (10, frozenset({"a"})), 1: (3, frozenset({"b", "c"}))})
    behind = LogDirSnapshot(0.0, offsets_groups={0: (8, frozenset({"a", "deleted-since"})), 1: (2, frozenset())})
    assert offsets_topic_groups([behind, ahead]) == {"a", "b", "c"}
    assert offsets_topic_groups([LogDirSnapshot(0.0)]) is None  # no __consumer_offsets read: unknown, not 0


def test_the_gauges_and_no_offsets_gauge_without_the_offsets_topic():
    def text(store):
        reg = CollectorRegistry(auto_describe=False)
        register_all(reg, store)
        return generate_latest(reg).decode()

    out = text(_store([], {"1": {7: (4, frozenset({"g1", "g2"}))}}))
    assert 'kafka_compaction_admin_listed_groups{cluster="c1"} 0.0' in out
    assert 'kafka_compaction_offsets_topic_groups{cluster="c1"} 2.0' in out
    assert 'kafka_compaction_admin_unlisted_groups{cluster="c1"} 2.0' in out
    # listed groups without committed offsets (an empty group) do not hide the one that is not listed
    out = text(_store(["g1", "empty"], {"1": {7: (4, frozenset({"g1", "g2"}))}}))
    assert 'kafka_compaction_admin_listed_groups{cluster="c1"} 2.0' in out
    assert 'kafka_compaction_admin_unlisted_groups{cluster="c1"} 1.0' in out
    out = text(_store(["g1"], {"1": {}}))
    assert 'kafka_compaction_admin_listed_groups{cluster="c1"} 1.0' in out
    assert 'kafka_compaction_offsets_topic_groups{' not in out
    assert 'kafka_compaction_admin_unlisted_groups{' not in out  # the offsets topic not read: unknown


def test_logged_once_per_cluster_and_per_change(caplog):
    def lines(notice):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="compaction_monitor.collect"):
            notice()
            notice()  # the same counts again: said already
        return [r.getMessage() for r in caplog.records]

    two = {"1": {0: (5, frozenset({"g1", "g2"}))}}
    notice = HiddenGroupsNotice(_store([], two))
    said = lines(notice)
    assert len(said) == 1 and "ListGroups gives 0 consumer group(s) to User:blind" in said[0]
    assert "live committed offsets of 2 group(s), 2 of them not listed (g1, ...)" in said[0]
    assert "grant Describe on the GROUP resources" in said[0]
    notice.store = _store(["g1"], two)  # one granted: a change, said again
    assert [m for m in lines(notice) if "1 of them not listed (g2, ...)" in m] != []
    notice.store = _store(["g1", "g2"], two)  # all listed: nothing to say
    assert lines(notice) == []
    notice.store = _store(["g1"], two)  # hidden again after being fine: said again
    assert len(lines(notice)) == 1
    notice.store = _store([], {"1": {}})  # no __consumer_offsets in the log dirs read: cannot be known
    assert lines(notice) == []


def test_an_offsets_topic_without_commits_counts_zero_groups_not_unknown(tmp_path):
    """A __consumer_offsets partition as Kafka creates it (an empty first segment): the log dir holds the
    offsets topic, so the count is known, and it is 0."""
    folder = tmp_path / "__consumer_offsets-0"
    folder.mkdir()
    (folder / "00000000000000000000.log").write_bytes(b"")
    snap = LogDirScanner([tmp_path]).refresh()
    assert snap.offsets_groups == {0: (-1, frozenset())}
    assert offsets_topic_groups([snap]) == frozenset()

"""collectors.export.facts: each refresh's joins made once. A partition replica joined with its broker's
gauges and cleaner settings and with the leader's replica state; an unreadable partition with its one
unknown cause; the one-shot scan (``logdir``, ``explain``) joined by the same definition as the
collector; the store's facts built once per change of the store. Real inputs: a log dir written with
kafka-python's builders, a JMX page recorded from Kafka 4.3, the admin source's own snapshot types."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

import factsfixtures as ff
from collectors.export import metrics as M
from collectors.export.exporter import register_all
from collectors.export.exposition import RenderedExposition
from collectors.export.facts import FactsCache, from_scan, from_scan_brokers, from_statuses
from collectors.logdirs.scanner import LogDirScanner
from monitor.verdicts.causes import unknown_cause


def _by_broker(facts):
    return {ld.broker: {f.key: f for f in ld.partitions + ld.unreadable} for ld in facts.log_dirs}


def test_a_partition_is_joined_with_its_brokers_gauges_and_settings_and_the_leaders_state(tmp_path):
    facts = from_statuses(ff.store(tmp_path, brokers=("1", "2")).statuses(), 200.0)
    parts = _by_broker(facts)
    mine = parts["1"][("orders", 0)]
    b = mine.broker_facts
    # the gauges' page says DeadThreadCount; the admin snapshot says the settings, the refused one aside
    assert (b.dead_threads, b.source) == (ff.gauges().dead_threads(), "jmx:c:1")
    assert (b.cleaner_enabled, b.cleaner_threads, b.io_max.value) == (True, 2, 1048576.0)
    assert facts.brokers[("c", "1")] == b
    # broker 2: no gauges read and no setting of its own: nothing to judge its cleaner by
    assert parts["2"][("orders", 0)].broker_facts is None and facts.brokers[("c", "2")] is None
    assert "cleaner_dead" in parts["2"][("orders", 0)].cause.unchecked
    assert "cleaner_dead" not in mine.cause.unchecked  # the gauge was read for broker 1
    # the admin snapshot says broker 1 leads orders-0: both replicas are judged against its state
    assert mine.leader is mine.state
    assert parts["2"][("orders", 0)].leader is mine.state
    assert parts["2"][("orders", 0)].state is not mine.state


def test_an_unreadable_partition_has_one_unknown_cause_with_its_fault(tmp_path):
    facts = from_statuses(ff.store(tmp_path).statuses(), 200.0)
    [ld] = facts.log_dirs
    [bad] = ld.unreadable
    assert bad.key == ("orders", 1) and bad.report is None and bad.state is None
    assert "a segment swap in progress" in bad.fault
    assert bad.unknown_reason == "segments_changing"
    assert bad.cause == unknown_cause("orders", 1, bad.fault)
    assert [f.key for f in ld.every()] == [("orders", 0), ("orders", 1), ("orders", 2)]
    # the one-shot scan states the same cause for it
    scan = from_scan(LogDirScanner([tmp_path / "b1"]).refresh())
    assert [f.cause.as_dict() for f in scan.unreadable] == [
        unknown_cause("orders", 1, scan.unreadable[0].fault).as_dict()]


def test_the_one_shot_scan_joins_the_brokers_settings_as_the_collector_does(tmp_path):
    """``explain`` with the admin API: the broker's settings by the collector's definition, the I/O limit
    included (it was left out before: two definitions); no gauges (one read cannot measure I/O)."""
    collector = _by_broker(from_statuses(ff.store(tmp_path).statuses(), 200.0))["1"][("orders", 0)].broker_facts
    snap = LogDirScanner([tmp_path / "b1"]).refresh()
    one_shot = from_scan(snap, admin=ff.admin(), node="1").partitions[0].broker_facts
    assert (one_shot.cleaner_enabled, one_shot.cleaner_threads, one_shot.io_max) == (
        collector.cleaner_enabled, collector.cleaner_threads, collector.io_max)
    assert (one_shot.dead_threads, one_shot.source, one_shot.cleaner_io) == (None, "", None)
    # another broker's node id: none of broker 1's settings are its
    assert from_scan(snap, admin=ff.admin(), node="7").partitions[0].broker_facts is None
    assert from_scan(snap).partitions[0].broker_facts is None


def test_facts_are_built_once_per_change_of_the_store(tmp_path):
    store = ff.store(tmp_path)
    reads = []

    def clock():
        reads.append(1)
        return 200.0 + len(reads)

    cache = FactsCache(store, clock)
    first = cache.get()
    assert cache.get() is first and len(reads) == 1  # nothing refreshed: the same facts
    store.success("log_dirs:c:1", LogDirScanner([tmp_path / "b1"], broker_id="1").refresh(), 0.0, 300.0)
    second = cache.get()
    assert second is not first and second.now == 202.0
    store.failure("jmx:c:1", OSError("gone"), 0.0)  # a source down is a change too
    assert cache.get() is not second and cache.get().brokers[("c", "1")].source == ""


def test_one_render_of_every_area_reads_the_clock_once(tmp_path):
    """The area collectors registered together share the facts: one page, one reading of the clock
    (before, the partitions and the config review each read it and joined the sources again)."""
    reads = []

    def clock():
        reads.append(1)
        return 200.0

    reg = CollectorRegistry(auto_describe=False)
    register_all(reg, ff.store(tmp_path, groups=(ff.lag(),)), clock=clock)
    generate_latest(reg)
    assert len(reads) == 1
    lb = {"cluster": "c", "broker": "1", "topic": "orders", "partition": "1", "cause": "unknown"}
    assert reg.get_sample_value(M.P_CAUSE, lb) == 1.0


def test_the_served_page_lets_the_facts_go_once_rendered(tmp_path):
    """The served page renders only after the store changed: the facts are released after each render (issue
    43: some 3 KB a partition not kept between renders), built again by the next, and the page is the same."""
    reads = []

    def clock():
        reads.append(1)
        return 200.0

    reg = CollectorRegistry(auto_describe=False)
    facts = register_all(reg, ff.store(tmp_path, groups=(ff.lag(),)), clock=clock)
    rendered = RenderedExposition(reg, after_render=facts.release)
    assert rendered.render() and not facts.held and len(reads) == 1  # one build for every area, then let go
    first = rendered.page().body
    assert rendered.render() and not facts.held and len(reads) == 2
    assert rendered.page().body == first
    generate_latest(reg)  # a registry collected elsewhere (collect --once) keeps its facts as before
    assert facts.held


def test_a_scan_of_two_brokers_log_dirs_judges_each_replica_with_its_own_brokers_settings_and_queue(tmp_path):
    """``explain`` on a path holding two brokers' log dirs (issue 42): one part per node.id of the log dirs'
    meta.properties, each replica with its own broker's settings (the admin snapshot has broker 1's only:
    broker 2's are not taken from it) and in its own broker's cleaner queue, each with its own log dir."""
    for node in ("1", "2"):
        ff.log_dir(tmp_path / f"b{node}", node)
    snap = LogDirScanner([tmp_path]).refresh()
    parts = from_scan_brokers(snap, admin=ff.admin())
    assert [p.broker for p in parts] == ["1", "2"]
    for part in parts:
        mine = str(tmp_path / f"b{part.broker}")
        assert {(f.key, f.log_dir, f.broker) for f in part.partitions} == {
            (("orders", 0), mine, part.broker), (("orders", 2), mine, part.broker)}
        assert set(part.queue.cleans) <= {("orders", 0), ("orders", 2)}
    one, two = parts
    assert one.broker_facts.cleaner_threads == 2 and all(f.broker_facts is one.broker_facts for f in one.partitions)
    assert two.broker_facts is None and all(f.broker_facts is None for f in two.partitions)
    # orders-1 (a swap in progress) could not be read: its fault names the log dir it was found in and goes
    # with that broker, whose queue is then unknown (the scan keeps one fault per (topic, partition))
    [bad] = [f for p in parts for f in p.unreadable]
    owner = next(p for p in parts if bad in p.unreadable)
    assert bad.fault.startswith(str(tmp_path / f"b{owner.broker}")) and bad.broker == owner.broker
    assert all(c.start_ms is None for c in owner.queue.cleans.values())
    # one broker's log dirs: the scan as it was
    alone = LogDirScanner([tmp_path / "b1"]).refresh()
    [whole] = from_scan_brokers(alone, admin=ff.admin())
    assert whole.broker == "" and whole.broker_facts.cleaner_threads == 2

"""collectors.export.broker: the broker area maps a broker's cleaner gauges (a JMX exporter page recorded
from Kafka 4.3), its cleaner settings (the admin source's snapshot, one setting refused) and its
log-cleaner.log (lines in Kafka's own formats, tests/cleanerlogfixtures.py) to their series; the cleaner
log's uncleanable mark is the same fact the partition's cause is made from."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

import factsfixtures as ff
from cleanerlogfixtures import START, stats_block, uncleanable
from collectors.export import metrics as M
from collectors.logdirs.cleaner_log import CleanerLogFollower
from collectors.export.broker import BrokerCleanerCollector, BrokerSettingsCollector, CleanerLogCollector
from collectors.export.exporter import register_all
from collectors.export.facts import from_statuses

B1 = {"cluster": "c", "broker": "1"}


def _registry(store, *classes):
    reg = CollectorRegistry(auto_describe=False)
    for cls in classes:
        reg.register(cls(store, clock=lambda: 200.0))
    return reg


def test_the_gauges_are_the_pages_and_only_the_brokers_read(tmp_path):
    reg = _registry(ff.store(tmp_path, brokers=("1", "2")), BrokerCleanerCollector)
    g = ff.gauges()
    assert reg.get_sample_value(M.BROKER_DEAD, B1) == g.dead_threads()
    assert reg.get_sample_value(M.BROKER_DIRTY_RATIO, B1) == g.dirty_ratio()
    [(log_dir, n)] = g.per_log_dir["uncleanable_partitions_count"].items()  # the recording broker's one log dir
    assert reg.get_sample_value(M.BROKER_UNCLEANABLE_PARTS, B1 | {"log_dir": log_dir}) == n
    assert reg.get_sample_value(M.BROKER_DEAD, {"cluster": "c", "broker": "2"}) is None  # no page read: no series


def test_each_known_setting_has_its_series_and_a_refused_one_says_why(tmp_path):
    reg = _registry(ff.store(tmp_path), BrokerSettingsCollector)
    assert reg.get_sample_value(M.BROKER_CLEANER_THREADS, B1 | {"source": "admin"}) == 2.0
    assert reg.get_sample_value(M.BROKER_CLEANER_IO_MAX, B1 | {"source": "admin"}) == 1048576.0
    assert reg.get_sample_value(M.BROKER_CLEANER_BACKOFF, B1 | {"source": "unknown"}) is None
    assert reg.get_sample_value(M.BROKER_CLEANER_KNOWN, B1 | {"reason": "CLUSTER_AUTHORIZATION_FAILED"}) == 0.0


def test_the_cleaner_logs_uncleanable_mark_is_the_partitions_cause_too(tmp_path):
    log = tmp_path / "log-cleaner.log"
    log.write_text("\n".join([*START,
                              *stats_block("2026-11-22 09:01:00,000", 0, "orders-2", 0, 30, 40_000, 0.5, 0.1, 0.02,
                                           20_000, 30, 10),
                              *uncleanable("2026-11-22 09:05:00,000", "UnifiedLog(dir=/k/orders-0)", "orders-0",
                                           "org.apache.kafka.common.errors.CorruptRecordException",
                                           "Record size 0 is less than the minimum record overhead (14)")]) + "\n")
    store = ff.store(tmp_path)
    follower = CleanerLogFollower(log)
    store.register("cleaner_log:c:1", "cleaner_log", "c", "1")
    store.success("cleaner_log:c:1", follower.refresh(), 0.0, 100.0)
    follower.close()
    reg = _registry(store, CleanerLogCollector)
    part = B1 | {"topic": "orders", "partition": "0"}
    assert reg.get_sample_value(M.P_UNCLEANABLE, part | {
        "exception": "CorruptRecordException"}) == 1.0  # the simple name, as Kafka logs it
    assert reg.get_sample_value(M.CL_CLEANS + "_total", B1) == 1.0
    # the partition's cause is made from the same cleaner-log state
    [ld] = from_statuses(store.statuses(), 200.0).log_dirs
    assert ld.cleaner is not None and ld.partitions[0].cleaner is ld.cleaner
    assert ld.partitions[0].cause.cause == "uncleanable"
    full = CollectorRegistry(auto_describe=False)
    register_all(full, store, clock=lambda: 200.0)
    assert full.get_sample_value(M.P_CAUSE, part | {"cause": "uncleanable"}) == 1.0

"""The cleaner queue's forecast in the partitions area (collectors.export.partitions, joined in collectors.export.facts):
each compacted partition's forecast next clean (start, end, how late against max.compaction.lag.ms) or why it
is unknown, and the broker's backlog drain time. Real inputs: tests/collectors/factsfixtures.py's log dir, its
unreadable partition made readable, the admin snapshot's settings, and a log-cleaner.log's stats block."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from prometheus_client import CollectorRegistry

import factsfixtures as ff
from collectors.export import metrics as M
from collectors.export.partitions import PartitionCollector
from collectors.export.view import View
from collectors.export.facts import from_statuses
from monitor.kafka.cleanerlog import read_cleaner_log
from monitor.model.topicconfig import BrokerSetting

NOW = 200.0
STATS = """[2026-11-22 11:24:18,847] INFO [kafka-log-cleaner-thread-0]:
	Log cleaner thread 0 cleaned log other-0 (dirty section = [0, 5400])
	2.0 MB of log processed in 2.0 seconds (1.0 MB/sec).
 (org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread)
"""


def _store(tmp_path, *, backoff_known=True, cleaner=True):
    store = ff.store(tmp_path, with_gauges=False)
    (tmp_path / "b1" / "orders-1" / f"{0:020d}.index.swap").unlink()  # no clean in progress: all three read
    snap = ff.admin()
    settings = dict(snap.cleaner_settings["1"])
    if backoff_known:
        settings["log.cleaner.backoff.ms"] = BrokerSetting("log.cleaner.backoff.ms", 15_000, "admin")
    store.success("admin:c", replace(snap, cleaner_settings={"1": settings}), 0.0, 100.0)
    from collectors.logdirs.scanner import LogDirScanner
    store.success("log_dirs:c:1", LogDirScanner([tmp_path / "b1"], broker_id="1").refresh(), 0.0, 100.0)
    if cleaner:
        store.register("cleaner_log:c:1", "cleaner_log", "c", "1")
        store.success("cleaner_log:c:1", SimpleNamespace(state=read_cleaner_log(STATS.splitlines())), 0.0, 100.0)
    return store


def _registry(store):
    reg = CollectorRegistry(auto_describe=False)
    reg.register(PartitionCollector(store, clock=lambda: NOW, view=View("partition")))
    return reg


LB = {"cluster": "c", "broker": "1", "topic": "orders"}


def test_the_forecast_is_exported_per_partition_and_the_drain_per_broker(tmp_path):
    store = _store(tmp_path)
    reg = _registry(store)
    [ld] = from_statuses(store.statuses(), NOW).log_dirs
    q = ld.queue
    assert q.drain_ms is not None, q
    for p in (0, 1, 2):
        c = q.cleans[("orders", p)]
        start = reg.get_sample_value(M.P_NEXT_CLEAN, LB | {"partition": str(p)})
        if c.start_ms is None:
            assert start is None
            assert reg.get_sample_value(M.P_NEXT_CLEAN_UNKNOWN, LB | {"partition": str(p), "reason": c.code}) == 1.0
        else:
            assert start == c.start_ms / 1000
            assert reg.get_sample_value(M.P_NEXT_CLEAN_END, LB | {"partition": str(p)}) == c.end_ms / 1000
    # orders-0 was never cleaned (ratio 1.0 > 0.5): a thread takes it now, its first segment at the slower of the
    # throughput log-cleaner.log gives (2 MB in 2 s: 1 MiB/s) and the throttle's share (1 MiB/s of I/O, which counts
    # 3 bytes per byte processed of a log with no clean section: the map's read, the copy's read, the write:
    # monitor.model.cleanerqueue._io_per_byte); orders-1 (its active segment
    # alone) and orders-2 (cleaned up to it) are not eligible, and the first refresh has no write rate to say when
    zero = q.cleans[("orders", 0)]
    s0 = ld.partitions[0].state
    assert zero.start_ms == int(NOW * 1000) and zero.position == 1
    assert abs((zero.end_ms - zero.start_ms) - 3 * s0.cleanable_bytes / (1 << 20) * 1000) <= 1
    assert {q.cleans[("orders", p)].code for p in (1, 2)} == {"write_rate_unknown"}
    assert q.drain_ms == zero.end_ms
    assert reg.get_sample_value(M.BROKER_BACKLOG_DRAIN, {"cluster": "c", "broker": "1"}) == q.drain_seconds > 0
    assert reg.get_sample_value(M.P_NEXT_CLEAN_LATE, LB | {"partition": "0"}) is None  # no max.compaction.lag.ms


def test_an_unknown_setting_or_no_cleaner_log_leaves_the_forecast_unknown_with_the_reason(tmp_path):
    reg = _registry(_store(tmp_path / "a", backoff_known=False))
    assert reg.get_sample_value(M.P_NEXT_CLEAN_UNKNOWN, LB | {"partition": "0", "reason": "broker_unknown"}) == 1.0
    assert reg.get_sample_value(M.BROKER_BACKLOG_DRAIN_UNKNOWN,
                                {"cluster": "c", "broker": "1", "reason": "broker_unknown"}) == 1.0
    assert reg.get_sample_value(M.P_NEXT_CLEAN, LB | {"partition": "0"}) is None
    reg = _registry(_store(tmp_path / "b", cleaner=False))
    assert reg.get_sample_value(M.P_NEXT_CLEAN_UNKNOWN, LB | {"partition": "0", "reason": "no_throughput"}) == 1.0
    assert reg.get_sample_value(M.BROKER_BACKLOG_DRAIN_UNKNOWN,
                                {"cluster": "c", "broker": "1", "reason": "no_throughput"}) == 1.0


def test_an_unreadable_partition_leaves_every_place_in_the_queue_unknown(tmp_path):
    reg = CollectorRegistry(auto_describe=False)
    reg.register(PartitionCollector(ff.store(tmp_path, with_gauges=False), clock=lambda: NOW, view=View("partition")))
    assert reg.get_sample_value(M.P_NEXT_CLEAN_UNKNOWN, LB | {"partition": "0", "reason": "broker_unknown"}) == 1.0

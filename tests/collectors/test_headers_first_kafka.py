"""Headers first (issue 31) on a real broker's log: the first refresh gives every partition's compaction
state from batch headers alone (no record read: PartitionReader's detail counter stays 0) and marks its
record-level figures pending; the next refresh reads the records, and then every summary and state
equals a whole read's of the same files (transactions, an abort, control batches, tombstones and
empty values included)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from collectors.export import metrics as M
from collectors.export.partitions import _partition_rows
from collectors.logdirs.scanner import LogDirScanner
from fakeclock import FakeClock
from kafkatools import (compacted, copy_partition, create_topic, produce, roll, transactional_producer,
                        unique_topic, write_rounds)

pytestmark = pytest.mark.kafka

NOW = 1_900_000_000.0  # one fixed clock for both scanners: their states are compared field by field
RECORD_LEVEL = {"tombstones", "tombstones_clean", "tombstones_dirty", "oldest_tombstone_timestamp",
                "oldest_tombstone_age_ms", "tombstones_past_retention", "tombstones_past_delete_horizon",
                # the delete-horizon figures hold the tombstones' (unknown: None) and the next removal
                "delete_horizon_records", "next_delete_horizon_ms", "pending_delete_horizon_ms", "horizon_rejected"}


@pytest.fixture(scope="module")
def log_copy(kafka, tmp_path_factory) -> Path:
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("hdr"), **compacted())
    write_rounds(b, t, 2, keys=50, tombstones=range(0, 50, 5))
    produce(b, t, [(b"empty", b"")] * 3)
    p = transactional_producer(b, f"{t}-tx")
    for commit in (True, False, True):
        p.begin_transaction()
        for i in range(10):
            p.produce(t, key=f"tx{i}".encode(), value=None if i % 4 == 0 else b"v" * 40, partition=0)
        assert p.flush(30) == 0
        (p.commit_transaction if commit else p.abort_transaction)(30)
    roll(b, t)
    dst = tmp_path_factory.mktemp("hdr")
    copy_partition(Path(kafka.log_dir) / f"{t}-0", dst)
    shutil.copy(Path(kafka.log_dir) / "cleaner-offset-checkpoint", dst)
    return dst


def _scanner(path, headers_first):
    return LogDirScanner([path], clock=lambda: NOW, include_all=True, headers_first=headers_first)


def test_state_from_headers_then_records_equals_a_whole_read(log_copy):
    whole = _scanner(log_copy, False).refresh()
    [full] = whole.partitions
    assert full.state.tombstones > 0 and full.empty_value_records >= 1
    assert full.detail_pending is None

    scanner = _scanner(log_copy, True)
    first = scanner.refresh()
    reader = scanner._reader
    assert reader.detail_bytes == 0 and reader.header_bytes > 0  # no record-level read yet
    [rep] = first.partitions
    assert rep.detail_pending is True and rep.active_keys is None
    s, f = dataclasses.asdict(rep.state), dataclasses.asdict(full.state)
    assert {k: v for k, v in s.items() if k not in RECORD_LEVEL} == {k: v for k, v in f.items() if k not in RECORD_LEVEL}
    assert rep.state.open_transactions == () and rep.state.last_stable_offset == full.state.last_stable_offset
    assert first.io.pending_bytes == sum(x.size for x in reader._cache.values())
    assert scanner.busy()
    rows = {n for n, _, _ in _partition_rows(rep, NOW)}
    assert M.P_CLEANABLE_RATIO in rows and M.P_ELIGIBLE in rows  # the compaction state is out ...
    assert not rows & {M.P_TOMBSTONES, M.P_PAST_HORIZON, M.P_KEYLESS, M.P_EMPTY_VALUES}  # ... its records' not
    # the markers' horizon states come from headers; the tombstones' are unknown (no series), never 0
    horizons = rep.state.delete_horizon_records
    assert horizons["tombstone"] is None and horizons["marker"] == full.state.delete_horizon_records["marker"]
    assert sum(horizons["marker"].values()) >= 3 and rep.state.next_delete_horizon_ms is None
    kinds = {x["kind"] for n, x, _ in _partition_rows(rep, NOW) if n == M.P_HORIZON_RECORDS}
    assert kinds == {"marker"} and M.P_NEXT_HORIZON not in rows
    assert ("kafka_compaction_partition_detail_pending", 1.0) in {(n, v) for n, _, v in
                                                                 _partition_rows(rep, NOW)}
    assert rep.cause(NOW).cause == full.cause(NOW).cause

    second = scanner.refresh()
    [rep2] = second.partitions
    assert rep2.detail_pending is False and second.io.pending_bytes == 0 and not scanner.busy()
    assert rep2.state == full.state
    assert (rep2.keyless_records, rep2.empty_value_records) == (full.keyless_records, full.empty_value_records)
    assert reader.detail_bytes == sum(x.size for x in reader._cache.values())
    ref = _scanner(log_copy, False)
    ref.refresh()
    whole_reads = list(ref._reader._cache.values())
    assert sum(s.control_records for s in whole_reads) >= 3  # the commit, abort and commit markers
    for path, s in reader._cache.items():  # header pass + record pass == one whole read, field by field
        assert dataclasses.asdict(s) == dataclasses.asdict(ref._reader._cache[path])
    pending = [v for n, _, v in _partition_rows(rep2, NOW) if n == M.P_DETAIL_PENDING]
    assert pending == [0.0]


def test_records_are_read_at_the_budget_slice_by_slice_until_whole(log_copy):
    from collectors.logdirs.detail import DETAIL_SLICE_SECONDS
    from monitor.fileio.iobudget import IoBudget

    full = _scanner(log_copy, False).refresh().partitions[0]
    clock = FakeClock()
    rate = 100
    budget = IoBudget(rate, clock=clock, sleep=clock.sleep)
    scanner = LogDirScanner([log_copy], clock=lambda: NOW, include_all=True, headers_first=True, io_budget=budget)
    first = scanner.refresh()
    total = first.io.pending_bytes
    assert total > 2 * rate * DETAIL_SLICE_SECONDS  # more than two slices' worth
    biggest = max(s.size for s in scanner._reader._cache.values())
    refreshes = 0
    while scanner.busy():
        t0, read0 = clock.now, scanner._reader.detail_bytes
        # time passes between refreshes: a refresh finding the budget in debt (the header pass's, charged
        # without waiting) reads no record and sleeps not; the debt pays itself off meanwhile
        clock.now += budget.debt_seconds()
        snap = scanner.refresh()
        refreshes += 1
        read = scanner._reader.detail_bytes - read0
        # a slice reads what the budget allows in it (the header pass's debt paid first), and one batch more
        assert read <= rate * (clock.now - t0) + rate + biggest
        assert snap.partitions[0].detail_pending is scanner.busy()
        assert refreshes < 1000
    assert refreshes >= 2
    assert snap.partitions[0].state == full.state and snap.io.pending_bytes == 0

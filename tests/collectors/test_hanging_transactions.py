"""Hanging transactions as the collector exports them and ``logdir`` prints them, on a log dir written
from kafka-python's record builders (tests/recordfixtures.py): which transaction is open, and how old,
follows from the batches written (their producer ids, offsets and create times), not from our reader."""

from __future__ import annotations

import io
import json
import time

from prometheus_client import CollectorRegistry

from cli.logdir_cmd import run_logdir
from collectors.export.partitions import PartitionCollector
from collectors.logdirs.scanner import LogDirScanner
from collectors.serving.runner import Store
from monitor.settings.config import Config
from recordfixtures import Rec, control, v2, write

HOUR_MS = 3_600_000


def _txn(lo: int, hi: int, pid: int, ts: int, epoch: int = 0):
    return v2([Rec(o, ts, f"k{o}".encode(), b"v" * 20) for o in range(lo, hi)], producer_id=pid,
              producer_epoch=epoch, base_sequence=0, transactional=True)


def _log_dir(root, now_ms: int):
    """Partition txn-0: producer 7 open for an hour from offset 0 (epoch 3), producer 8 open for 5 s
    from offset 3, producer 9 committed (5..7), plain data, and an active segment from 10."""
    folder = root / "txn-0"
    write(folder / "00000000000000000000.log", [
        _txn(0, 3, 7, now_ms - HOUR_MS, epoch=3), _txn(3, 5, 8, now_ms - 5000), _txn(5, 7, 9, now_ms - 9000),
        control(7, "COMMIT", 9, 0, now_ms - 8000),
        v2([Rec(o, now_ms - 1000, f"k{o}".encode(), b"p") for o in range(8, 10)])])
    write(folder / "00000000000000000010.log", [v2([Rec(10, now_ms, b"k10", b"p")])])
    (root / "cleaner-offset-checkpoint").write_text("0\n1\ntxn 0 0\n")
    return root


def test_logdir_lists_open_transactions_and_which_hang(tmp_path):
    now_ms = int(time.time() * 1000)
    _log_dir(tmp_path, now_ms)
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([tmp_path], config=Config(), fmt="json", out=out, err=err) == 0, err.getvalue()
    [row] = json.loads(out.getvalue())
    got = [(t["producer_id"], t["producer_epoch"], t["first_offset"], t["hanging"]) for t in row["open_transactions"]]
    # default transaction.max.timeout.ms (15 min): an hour is past it, 5 s is not
    assert got == [(7, 3, 0, True), (8, 0, 3, False)]
    assert row["hanging_transactions"] == 1 and row["last_stable_offset"] == 0
    ages = [t["age_ms"] for t in row["open_transactions"]]
    assert HOUR_MS <= ages[0] < HOUR_MS + 60_000 and 5000 <= ages[1] < 65_000

    out = io.StringIO()
    assert run_logdir([tmp_path], config=Config(), fmt="text", out=out, err=io.StringIO()) == 0
    lines = out.getvalue().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("open transactions"))
    body = [ln.split() for ln in lines[at + 2:at + 4]]  # its two rows (other blocks, e.g. free space, follow)
    assert len(lines) == at + 4 or not lines[at + 4].startswith("txn-")
    assert [(b[0], b[1], b[2], b[3], b[-1]) for b in body] == [("txn-0", "7", "3", "0", "yes"),
                                                              ("txn-0", "8", "0", "3", "no")]


def test_collector_exports_the_hanging_count(tmp_path):
    now_ms = int(time.time() * 1000)
    _log_dir(tmp_path, now_ms)
    store = Store()
    store.register("log_dirs:c:1", "log_dirs", "c", "1")
    reg = CollectorRegistry(auto_describe=False)
    reg.register(PartitionCollector(store))
    lb = {"cluster": "c", "broker": "1", "topic": "txn", "partition": "0"}

    def export_at(clock_ms: int):
        snap = LogDirScanner([tmp_path], clock=lambda: clock_ms / 1000).refresh()
        store.success("log_dirs:c:1", snap, 0.0, clock_ms / 1000)
        return (reg.get_sample_value("kafka_compaction_partition_open_transactions", lb),
                reg.get_sample_value("kafka_compaction_partition_hanging_transactions", lb))

    assert export_at(now_ms) == (2, 1)
    assert export_at(now_ms - HOUR_MS + 60_000) == (2, 0)  # a minute after the oldest began: none hangs yet
    assert export_at(now_ms + HOUR_MS) == (2, 2)

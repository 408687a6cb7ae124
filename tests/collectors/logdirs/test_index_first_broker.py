"""The index-first read (issue 43) on a real broker's log dir: a compacted partition with committed and
aborted transactions, a clean done by the broker and a half-written active segment, copied with the indexes
and snapshots Kafka wrote. Its rolled segments are summarised from Kafka's own ``.index``/``.timeindex`` (none
refused), and the first page equals a whole read field by field; once the record pass read them, every
figure is the whole read's."""

from __future__ import annotations

import time

from collectors.logdirs.churn import Relister
from collectors.logdirs.read import PartitionReader
from collectors.logdirs.scanner import LogDirScanner
from kafkatools import (cleaner_checkpoint, compacted, copy_partition, create_topic, partition_dir, roll,
                        transactional_producer, unique_topic, wait_cleaned, write_rounds)
from monitor.kafka.logdir import scan_partition
from monitor.model.summary import from_indexes, summarize
from monitor.model.topicconfig import effective_broker_setting, effective_config
from monitor.model.transactions import TRANSACTION_MAX_TIMEOUT
from recordfixtures import v2, items
from waiting import wait_for

from test_index_first import STATE_FIELDS, SUMMARY_FIELDS
from test_steady_refresh import _compare as compare_reports

TXN = effective_broker_setting(TRANSACTION_MAX_TIMEOUT)
# batches of ~4 KB, so that a round's segment holds many and its .index several entries (index first pays from
# INDEX_FIRST_MIN_ENTRIES on)
SMALL_BATCHES = {"batch.size": 4096}


def transactions(bootstrap, topic, tid):
    p = transactional_producer(bootstrap, tid)
    for commit in (True, False, True):
        p.begin_transaction()
        for i in range(40):
            p.produce(topic, key=f"k{i}".encode(), value=b"txn" * 30, partition=0)
        p.commit_transaction(30) if commit else p.abort_transaction(30)
    assert p.flush(30) == 0


def test_the_first_page_from_kafkas_indexes_equals_a_whole_read(kafka, tmp_path):
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("idx"), **compacted())
    write_rounds(b, t, rounds=3, keys=600, **SMALL_BATCHES)
    transactions(b, t, f"{t}-tx")
    roll(b, t)
    folder = partition_dir(kafka.log_dir, t)
    cleaned = wait_cleaned(kafka.log_dir, t)
    write_rounds(b, t, rounds=2, keys=600, **SMALL_BATCHES)  # dirty again, above the clean
    transactions(b, t, f"{t}-tx2")
    roll(b, t)
    wait_for(lambda: [p for p in folder.glob("*.snapshot") if int(p.name[:20]) > cleaned] or None, 60,
             f"a producer snapshot of {t} above its clean")
    dst = copy_partition(folder, tmp_path, suffixes=(".log", ".index", ".timeindex", ".txnindex", ".snapshot"),
                         keep_mtimes=True)
    active = scan_partition(dst).segments[-1].log
    with open(active, "ab") as fh:  # an append under way: half a batch past the last whole one
        data = v2(items(range(10**6, 10**6 + 5))).data
        fh.write(data[:len(data) // 2])
    cfg = effective_config(t, compacted=True).config
    checkpoint, now_ms = cleaner_checkpoint(kafka.log_dir, t), time.time_ns() // 1_000_000

    def read(reader):
        return reader.read(scan_partition(dst), cfg, now_ms, checkpoint, None, TXN)

    whole = read(PartitionReader(Relister()))
    said = []
    first = PartitionReader(Relister(), headers_first=True, notify=said.append)
    got = read(first)
    pending = [s for s in got[0] if s.headers_pending]
    assert said == [] and first.untrusted == {}  # Kafka's own indexes: every one trusted
    assert pending and not got[0][-1].headers_pending  # the rolled segments below the snapshot; the active: headers
    assert any(s.base_offset < checkpoint for s in pending)  # a segment the broker's clean wrote among them
    assert any(s.transactional_batches for s in whole[0]) and whole[0][-1].cut_tail  # transactions; half a batch
    for s in pending:
        w, _ = summarize(s.path, s.base_offset)
        for name in SUMMARY_FIELDS:
            assert getattr(s, name) == getattr(w, name), (s.path, name)
        assert from_indexes(s.path, s.base_offset)[0].next_offset == w.next_offset
    for name in STATE_FIELDS:
        assert getattr(got[2], name) == getattr(whole[2], name), name
    assert got[4] == whole[4]
    for s in got[0]:
        first.detail(s.path)
    assert read(first)[2] == whole[2]
    # a reused report (issue 43 item 3) equals a fresh fold on this real broker's log (transactions, a clean, a
    # half-written batch), headers first as the collector reads it, at clock values from now to days ahead; the
    # thresholds themselves are crossed on generated logs (test_steady_refresh.py, tests/monitor/model/
    # test_valid_until.py): here the clean's markers' horizons pass before the write rate is first measured
    (tmp_path / "cleaner-offset-checkpoint").write_text(f"0\n1\n{t} 0 {checkpoint}\n")
    clock = [now_ms / 1000]

    def lookup(topic, known):
        return effective_config(topic, compacted=True)

    scanner = LogDirScanner([tmp_path], config_lookup=lookup, clock=lambda: clock[0], headers_first=True)
    reused = 0
    for step in (0, 1, 2, 30, 60, 3_600, 86_400, 86_430, 8 * 86_400, 8 * 86_400 + 30):
        clock[0] = now_ms / 1000 + step
        snap = scanner.refresh()
        while scanner.busy():  # its records read to the end, as the collector's next refreshes do
            snap = scanner.refresh()
        again = LogDirScanner([tmp_path], config_lookup=lookup, clock=lambda: clock[0], headers_first=True)
        fresh = again.refresh()
        while again.busy():
            fresh = again.refresh()
        (r,), (f,) = snap.partitions, fresh.partitions
        compare_reports(r, f, int(clock[0] * 1000))
        reused += snap.reused
    assert reused


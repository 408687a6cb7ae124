"""Producer-state snapshots (monitor.kafka.producer_snapshot) read from files a real broker wrote, field by field
against Kafka's own kafka-dump-log; damaged copies refused with file and byte; and the open transactions
of the snapshot plus the log after it checked against the fold from the log (monitor.model.transactions)."""

from __future__ import annotations

import io
import json
import re
import shutil
import struct

import pytest
from crc32c import crc32c

from cli.logdir_cmd import run_logdir
from kafkatools import (compacted, copy_partition, create_topic, localtools, partition_dir, produce, producer, roll,
                        unique_topic)
from monitor.model.compaction import partition_state
from monitor.settings.config import Config
from monitor.kafka.producer_snapshot import (ENTRY, HEADER, ProducerSnapshot, ProducerSnapshotError, parse_producer_snapshot,
                                       read_producer_snapshot)
from monitor.model.summary import SegmentSummary
from monitor.model.topicconfig import TopicConfig
from monitor.model.transactions import DATA, TxnEvent
from waiting import wait_for

# kafka-dump-log's names for a snapshot entry's fields (DumpLogSegments.dumpProducerIdSnapshot)
DUMP_NAMES = {"producerId": "producer_id", "producerEpoch": "epoch", "coordinatorEpoch": "coordinator_epoch",
              "currentTxnFirstOffset": "current_txn_first_offset", "lastSequence": "last_sequence",
              "lastOffset": "last_offset", "offsetDelta": "offset_delta", "timestamp": "timestamp"}


def _dumped_entries(path) -> dict[int, dict]:
    out = {}
    for line in localtools.dump_log([path]).splitlines():
        if not line.startswith("producerId:"):
            continue
        fields = dict(re.findall(r"(\w+): (\S+)", line))
        row = {}
        for k, name in DUMP_NAMES.items():
            v = fields[k]
            m = re.fullmatch(r"OptionalLong(?:\[(-?\d+)\]|\.empty)", v)
            row[name] = (int(m.group(1)) if m.group(1) else -1) if m else int(v)
        out[row["producer_id"]] = row
    return out


@pytest.fixture(scope="module")
def broker_snapshot(kafka, tmp_path_factory):
    """A partition with an idempotent producer, a committed and an open transaction, rolled so that the
    broker writes a snapshot with the transaction ongoing; copied (segments and snapshots)."""
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("snap"), **compacted())
    produce(b, t, [(f"i{i}".encode(), b"idem" * 4) for i in range(30)], **{"enable.idempotence": True})
    p = producer(b, **{"transactional.id": f"{t}-tx", "transaction.timeout.ms": 600_000})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce(t, key=b"c", value=b"committed", partition=0)
    p.commit_transaction(30)
    p.begin_transaction()
    for i in range(10):
        p.produce(t, key=f"o{i}".encode(), value=b"open", partition=0)
    assert p.flush(30) == 0
    folder = partition_dir(kafka.log_dir, t)
    try:
        roll(b, t)
        wait_for(lambda: list(folder.glob("*.snapshot")) or None, 60, f"a producer snapshot of {t}")
        dst = copy_partition(folder, tmp_path_factory.mktemp("snap"), suffixes=(".log", ".snapshot"))
    finally:
        p.abort_transaction(30)  # leave nothing open on the session's broker
    (dst.parent / "cleaner-offset-checkpoint").write_text(f"0\n1\n{t} 0 0\n")
    return dst


def test_reader_agrees_with_kafka_dump_log(broker_snapshot):
    [path] = sorted(broker_snapshot.glob("*.snapshot"))[-1:]
    snap = read_producer_snapshot(path)
    assert snap.offset == int(path.name[:20])
    theirs = _dumped_entries(path)
    assert len(theirs) == 2  # the idempotent producer and the transactional one
    assert {e.producer_id: {k: getattr(e, k) for k in DUMP_NAMES.values()} for e in snap.entries} == theirs
    [ongoing] = snap.ongoing()
    assert ongoing.current_txn_first_offset == theirs[ongoing.producer_id]["current_txn_first_offset"] >= 0


def test_damaged_snapshots_are_refused_with_file_and_byte(broker_snapshot, tmp_path):
    [src] = sorted(broker_snapshot.glob("*.snapshot"))[-1:]
    data = src.read_bytes()
    name = src.name

    def refused(body: bytes) -> ProducerSnapshotError:
        p = tmp_path / name
        p.write_bytes(body)
        with pytest.raises(ProducerSnapshotError) as exc:
            read_producer_snapshot(p)
        assert str(exc.value).startswith(f"{p}: byte {exc.value.position}: ")
        return exc.value

    flipped = bytearray(data)
    flipped[HEADER.size + 9] ^= 0x40  # inside the first entry's epoch
    assert refused(bytes(flipped)).position == 2 and "CRC-32C" in refused(bytes(flipped)).reason
    assert refused(struct.pack(">h", 2) + data[2:]).position == 0  # another version
    assert refused(data[:3]).position == 3  # ends inside the header

    def resigned(body: bytes) -> bytes:  # a valid CRC over damaged content: the layout checks must catch it
        return body[:2] + struct.pack(">I", crc32c(body[6:])) + body[6:]

    e = refused(resigned(data[:-5]))
    assert e.position == HEADER.size + ENTRY.size and "inside producer entry 1 of 2" in e.reason
    e = refused(resigned(data + b"\0\0\0"))
    assert e.position == len(data) and "3 bytes after the last of 2" in e.reason


def _with_no_ongoing_transaction(data: bytes) -> bytes:
    """The snapshot with every entry's current_txn_first_offset set to -1 and the CRC recomputed: a
    snapshot that disagrees with the log (a fault the real broker does not write)."""
    body = bytearray(data)
    for i in range(struct.unpack_from(">i", body, 2 + 4)[0]):
        struct.pack_into(">q", body, HEADER.size + i * ENTRY.size + ENTRY.size - 8, -1)
    struct.pack_into(">I", body, 2, crc32c(bytes(body[6:])))
    return bytes(body)


def test_logdir_checks_the_log_fold_against_the_snapshot(broker_snapshot, tmp_path):
    root = tmp_path / "logdir"
    shutil.copytree(broker_snapshot.parent, root)
    folder = root / broker_snapshot.name
    [snap_path] = sorted(folder.glob("*.snapshot"))[-1:]
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([root], config=Config(), fmt="json", out=out, err=err) == 0, err.getvalue()
    [row] = json.loads(out.getvalue())
    [ongoing] = read_producer_snapshot(snap_path).ongoing()
    assert [(t["producer_id"], t["first_offset"]) for t in row["open_transactions"]] == [
        (ongoing.producer_id, ongoing.current_txn_first_offset)]
    assert row["transactions_checked_with"] == str(snap_path) and row["transaction_faults"] == []

    snap_path.write_bytes(_with_no_ongoing_transaction(snap_path.read_bytes()))
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([root], config=Config(), fmt="json", out=out, err=err) == 1
    [row] = json.loads(out.getvalue())
    [fault] = row["transaction_faults"]
    assert fault.startswith(f"{snap_path}: ") and row["faults"] == 1
    assert str(snap_path) in err.getvalue()

    snap_path.write_bytes(snap_path.read_bytes()[:-1])
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([root], config=Config(), fmt="json", out=out, err=err) == 1
    [row] = json.loads(out.getvalue())
    assert row["transaction_faults"][0].startswith(f"{snap_path}: byte ")
    assert row["transactions_checked_with"] is None


# --- the fold from a snapshot, on hand-made snapshots (Kafka's rules: the snapshot's ongoing transactions,
# then the log's events from its offset on) -------------------------------------------------------------

NOW = 1_000_000


def _entry(pid, first, last, epoch=0):
    from monitor.kafka.producer_snapshot import ProducerEntry

    return ProducerEntry(pid, epoch, 0, last, 0, NOW - 100, 0, first)


def _seg(base, next_offset, events=()):
    s = SegmentSummary(f"/x/{base:020d}.log", base, size=100, next_offset=next_offset, max_timestamp=NOW,
                       first_batch_max_timestamp=NOW)
    for e in events:
        s.add_txn_event(e)
    return s


def test_snapshot_fold_agrees_or_names_the_snapshot():
    segs = [_seg(0, 100, [TxnEvent(7, 0, 40, 50, DATA, NOW - 500)]),
            _seg(100, 200, [TxnEvent(8, 0, 120, 130, DATA, NOW - 400)]), _seg(200, 210)]
    cfg = TopicConfig(min_cleanable_dirty_ratio=0.01)
    # a snapshot at 100 with 7's transaction ongoing; 8's opens in the log after it
    ok = ProducerSnapshot("/x/00000000000000000100.snapshot", 100, (_entry(7, 40, 50),))
    st = partition_state("t", 0, segs, cfg, NOW, producer_snapshot=ok)
    assert st.transactions_checked_with == ok.path and st.transaction_faults == () and st.faults == 0
    # a snapshot that forgot 7's transaction: the disagreement is a fault naming the snapshot
    bad = ProducerSnapshot("/x/00000000000000000100.snapshot", 100, (_entry(9, 60, 60),))
    st = partition_state("t", 0, segs, cfg, NOW, producer_snapshot=bad)
    [fault] = st.transaction_faults
    assert fault.startswith(bad.path + ": ") and "(7, 40)" in fault and "(9, 60)" in fault and st.faults == 1
    assert st.last_stable_offset == 40  # still the log's answer, now with a fault beside it
    # a snapshot below the first dirty offset is not used (the cleaner may have removed markers after it)
    st = partition_state("t", 0, segs, cfg, NOW, checkpoint=150, producer_snapshot=bad)
    assert st.transactions_checked_with is None and st.transaction_faults == ()

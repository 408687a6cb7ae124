"""Bounded memory whatever a file claims (monitor.kafka.readbound): a 1 GiB sparse segment whose first batch
header claims ~10^9 bytes, and 1 GiB sparse producer snapshot and ``.txnindex`` files, read by
``inspect``, ``inspect --stats``, ``logdir`` and ``collect --once`` as child processes. Each child's
peak RSS (``os.wait4``'s ru_maxrss, ``procs.run_measured``) stays under the bound (``MAX_BATCH_BYTES``, and
a few MiB of working buffers beside it) plus the same command's
peak on the same log dir without the damaged files (the interpreter's and the command's own baseline),
and the output names the file and the byte position of what is wrong. Before the bound the segment
cost 1.9-2.9 GB and each of the other files 1 GB (issue 35).

Also, in this process: a large legitimate batch (several MiB, under the bound) decodes exactly, and a
batch past the bound (the bound lowered here: a real one would take 100 MiB of test data) is a fault
naming file and byte, with the batches either side still read."""

from __future__ import annotations

import random
import shutil
import struct

import pytest
from crc32c import crc32c

from monitor.kafka import readbound
from monitor.kafka.producer_snapshot import ENTRY as SNAPSHOT_ENTRY
from monitor.kafka.producer_snapshot import HEADER as SNAPSHOT_HEADER
from monitor.kafka.producer_snapshot import ProducerSnapshotError, read_producer_snapshot
from monitor.kafka.record import CrcMismatchError, OversizeBatchError, SegmentReader
from monitor.model.txnindex import ENTRY as TXN_ENTRY
from monitor.model.txnindex import TxnIndexError, read_txn_index
from procs import run_measured
from recordfixtures import Rec, items, three_v2_batches, v2, write

GIB = 1 << 30
CLAIMED = 10**9  # the batch length the damaged header claims
SEG0 = "00000000000000000000.log"


def _sparse(path, head: bytes = b"", size: int = GIB) -> None:
    with open(path, "wb") as fh:
        fh.truncate(size)
        fh.write(head)


SNAPSHOT = "00000000000000000006.snapshot"
TXNINDEX = "00000000000000000000.txnindex"
DAMAGED = {  # which file of which partition is damaged, and what logdir says about it
    "segment": ("seg-0", SEG0, "byte 0: CRC-32C mismatch in batch at offset 0 (stored 0)", 2),  # then a zero tail
    "snapshot": ("snap-0", SNAPSHOT, "byte 0: unknown snapshot version 0 (Kafka writes 1)", 1),
    "txnindex": ("txn-0", TXNINDEX, "byte 34: last offset 0 does not follow the previous entry's 0", 1),
}


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    """``good``: three partitions of a rolled segment (offsets 0..5) and an empty active one; one copy
    per kind of damage: seg-0's rolled segment a 1 GiB sparse file whose first batch header claims
    ~10^9 bytes; a 1 GiB sparse ``.snapshot`` in snap-0; a ~1 GiB sparse ``.txnindex`` (a whole number
    of 34-byte entries: streamed to the first bad entry) of txn-0's rolled segment."""
    root = tmp_path_factory.mktemp("readbound")
    good = root / "good"
    for t in ("seg-0", "snap-0", "txn-0"):
        three_v2_batches(good / t / SEG0)
        (good / t / "00000000000000000006.log").write_bytes(b"")
    (good / "cleaner-offset-checkpoint").write_text("0\n3\nseg 0 0\nsnap 0 0\ntxn 0 0\n")
    damaged = {}
    for kind, (part, name, _, _) in DAMAGED.items():
        d = damaged[kind] = root / kind
        shutil.copytree(good, d)
        if kind == "segment":
            _sparse(d / part / name, struct.pack(">qiib", 0, CLAIMED, 0, 2))  # offset, length, epoch, magic 2
        else:
            _sparse(d / part / name, size=GIB // TXN_ENTRY.size * TXN_ENTRY.size if kind == "txnindex" else GIB)
    return good, damaged


# beside the batch held (at most the bound): the compressed input, a read piece, the decoder's buffer and the
# interpreter's own growth (a zstd batch inflating to 1 GiB measured 103 MiB over its baseline)
WORKING_BYTES = 16 << 20


def _bounded(args_damaged, args_good) -> tuple[int, str, str]:
    """Run both; assert the damaged run's peak RSS is under the good run's plus the bound (and the working
    buffers beside it)."""
    rc, out, err, rss = run_measured(*args_damaged)
    _, _, _, base = run_measured(*args_good)
    assert rss < base + readbound.MAX_BATCH_BYTES + WORKING_BYTES, (
        f"peak RSS {rss >> 20} MiB, baseline {base >> 20} MiB, bound {readbound.MAX_BATCH_BYTES >> 20} MiB")
    assert "Traceback" not in err, err
    return rc, out, err


@pytest.mark.parametrize("flags", [(), ("--stats",)], ids=["inspect", "inspect-stats"])
def test_inspect_of_a_segment_claiming_a_gigabyte_stays_bounded(dirs, flags):
    good, damaged = dirs
    seg = damaged["segment"] / "seg-0" / SEG0
    rc, _, err = _bounded(("inspect", *flags, str(seg)), ("inspect", *flags, str(good / "seg-0" / SEG0)))
    assert rc == 1
    assert f"{seg}: byte 0: CRC-32C mismatch in batch at offset 0 (stored 0) of {CLAIMED + 12} bytes" in err, err
    assert f"{seg}: byte {CLAIMED + 12}: " in err and "zero bytes" in err, err  # the rest: a zero-filled tail


@pytest.mark.parametrize("kind", DAMAGED)
def test_logdir_stays_bounded_and_names_the_file_and_byte(dirs, kind):
    good, damaged = dirs
    part, name, says, _ = DAMAGED[kind]
    rc, _, err = _bounded(("logdir", "--all", str(damaged[kind])), ("logdir", "--all", str(good)))
    assert rc == 1 and f"logdir: {part}: {damaged[kind] / part / name}: {says}" in err, err


@pytest.mark.parametrize("kind", DAMAGED)
def test_collect_once_stays_bounded_and_counts_the_fault(dirs, kind):
    good, damaged = dirs
    part, _, _, n = DAMAGED[kind]
    _, out, _ = _bounded(("collect", "--once", "--log-dir", str(damaged[kind])),
                         ("collect", "--once", "--log-dir", str(good)))
    faults = {}
    for line in out.splitlines():
        if line.startswith("kafka_compaction_partition_read_faults{"):
            faults[line.split('topic="')[1].split('"')[0]] = float(line.rsplit(" ", 1)[1])
    assert faults == {t: n if t == part[:-2] else 0.0 for t in ("seg", "snap", "txn")}, faults


def _zstd_bomb_batch() -> bytes:
    """A v2 batch of ~32 KiB whose zstd records inflate to 1 GiB of zeros, its CRC valid."""
    import cramjam

    c = cramjam.zstd.Compressor(3)
    zeros = bytes(1 << 20)
    for _ in range(GIB >> 20):
        c.compress(zeros)
    b = bytearray(v2(items(range(0, 2))).data[:61]) + bytes(c.finish())
    struct.pack_into(">i", b, 8, len(b) - 12)  # batch length
    struct.pack_into(">h", b, 21, 4)  # attributes: zstd
    struct.pack_into(">I", b, 17, crc32c(bytes(b[21:])))
    return bytes(b)


@pytest.mark.parametrize("flags", [(), ("--stats",)], ids=["inspect", "inspect-stats"])
def test_a_batch_inflating_to_a_gigabyte_stays_bounded(tmp_path, flags):
    """A decompression bomb: 32 KiB of zstd inflating to 1 GiB (before the bound: 1 GiB and more of RSS)."""
    seg = tmp_path / SEG0
    seg.write_bytes(_zstd_bomb_batch() + v2(items(range(2, 4))).data)
    good = write(tmp_path / "good" / SEG0, [v2(items(range(0, 2))), v2(items(range(2, 4)))]).path
    rc, out, err = _bounded(("inspect", *flags, str(seg)), ("inspect", *flags, str(good)))
    assert rc == 1 and f"{seg}: byte 0: zstd records decompress to more than {readbound.MAX_BATCH_BYTES} bytes" in err
    assert "1 batches, 2 records" in err, err  # the batch after it still read


# ------------------------------------------------------------------ correctness either side of the bound

def _big_records(offset: int, n: int, value_bytes: int, seed: int = 35) -> list[Rec]:
    rnd = random.Random(seed)
    return [Rec(offset + i, 1_700_000_000_000 + i, f"big-{offset + i}".encode(),
                rnd.randbytes(value_bytes // 2) + b"v" * (value_bytes - value_bytes // 2)) for i in range(n)]


@pytest.mark.slow  # several MiB of random values built, compressed and decoded per codec
@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_a_batch_of_several_mib_decodes_exactly(tmp_path, codec):
    """A 6 MiB batch (three 2 MiB records; Kafka takes it with max.message.bytes raised past 1 MiB),
    between two small ones: every record, key and value as written, in all three views."""
    big = v2(_big_records(2, 3, 2 << 20), codec)
    seg = write(tmp_path / SEG0, [v2(items(range(0, 2))), big, v2(items(range(5, 7)), codec)])
    reader = SegmentReader(seg.path)
    got = [(r.offset, r.timestamp, r.key, r.value) for r in reader.records()]
    assert got == [(r.offset, r.timestamp, r.key, r.value) for r in seg.records] and not reader.faults
    assert len(seg.records[2].value) == 2 << 20
    for (batch, cols), (_, arrs) in zip(SegmentReader(seg.path).decoded(columns=True),
                                        SegmentReader(seg.path).decoded(arrays=True)):
        assert len(cols) == len(arrs) == batch.records_count
        assert sorted(set(cols.value_sizes)) == sorted({len(r.value) for r in seg.records
                                                        if batch.base_offset <= r.offset <= batch.last_offset})


@pytest.fixture
def small_bound(monkeypatch):
    """The bound lowered to 1 MiB in this process, so that a batch past it fits a test."""
    monkeypatch.setattr(readbound, "MAX_BATCH_BYTES", 1 << 20)
    monkeypatch.setattr(readbound, "READ_PIECE_BYTES", 64 << 10)
    return 1 << 20


def test_a_batch_past_the_bound_is_a_fault_and_the_next_batch_is_read(tmp_path, small_bound):
    big = v2(_big_records(2, 2, 1 << 20), "none")
    seg = write(tmp_path / SEG0, [v2(items(range(0, 2))), big, v2(items(range(4, 6)))])
    at = seg.positions[1]
    with pytest.raises(OversizeBatchError) as exc:
        list(SegmentReader(seg.path).records())
    assert exc.value.position == at and str(exc.value).startswith(f"{seg.path}: byte {at}: batch at offset 2 is ")
    assert f"more than the {small_bound} a batch is held in memory" in str(exc.value)
    reader = SegmentReader(seg.path, skip_corrupt=True)
    assert [r.offset for r in reader.records()] == [0, 1, 4, 5] and [f.kind for f in reader.faults] == ["oversize"]
    # its CRC was checked from the file: a flipped byte in its records is a CRC mismatch, not "oversize"
    data = bytearray(seg.path.read_bytes())
    data[at + 1000] ^= 0xFF
    seg.path.write_bytes(bytes(data))
    reader = SegmentReader(seg.path, skip_corrupt=True)
    assert [r.offset for r in reader.records()] == [0, 1, 4, 5]
    assert [type(f) for f in reader.faults] == [CrcMismatchError] and reader.faults[0].position == at


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_records_decompressing_past_the_bound_are_a_fault(tmp_path, small_bound, codec):
    """A compressed batch under the bound on disk whose records inflate past it (2 MiB of compressible
    records): an oversize fault naming file and byte; the batches either side still read."""
    recs = [Rec(2 + i, 1_700_000_000_000, f"k{i}".encode(), b"x" * (512 << 10)) for i in range(4)]
    big = v2(recs, codec)
    assert len(big.data) < small_bound
    seg = write(tmp_path / SEG0, [v2(items(range(0, 2))), big, v2(items(range(6, 8)))])
    for view in ({}, {"columns": True}, {"arrays": True}):
        reader = SegmentReader(seg.path, skip_corrupt=True)
        assert [b.base_offset for b, _ in reader.decoded(**view)] == [0, 6]
        [fault] = reader.faults
        assert isinstance(fault, OversizeBatchError) and fault.position == seg.positions[1]
        assert f"records decompress to more than {small_bound} bytes" in str(fault)


def test_snapshot_and_txnindex_entries_past_the_bound_are_refused(tmp_path, monkeypatch):
    """Valid files whose entries pass the bound (lowered here to two entries' bytes): refused naming
    file and byte, never held."""
    monkeypatch.setattr(readbound, "MAX_BATCH_BYTES", 2 * TXN_ENTRY.size)
    idx = tmp_path / "00000000000000000000.txnindex"
    idx.write_bytes(b"".join(TXN_ENTRY.pack(0, 7, i, i, i) for i in range(3)))
    with pytest.raises(TxnIndexError) as exc:
        read_txn_index(idx, 0)
    assert str(exc.value).startswith(f"{idx}: byte 68: 3 entries (102 bytes) are more than the 68 bytes")
    monkeypatch.setattr(readbound, "MAX_BATCH_BYTES", 2 * SNAPSHOT_ENTRY.size)
    body = struct.pack(">i", 3) + b"".join(SNAPSHOT_ENTRY.pack(i, 0, 0, 0, 0, 0, 0, -1) for i in range(3))
    snap = tmp_path / "00000000000000000005.snapshot"
    snap.write_bytes(struct.pack(">hI", 1, crc32c(body)) + body)
    assert SNAPSHOT_HEADER.size == 10
    with pytest.raises(ProducerSnapshotError) as exc:
        read_producer_snapshot(snap)
    assert str(exc.value).startswith(f"{snap}: byte 10: 3 producer entries ({3 * SNAPSHOT_ENTRY.size} bytes) are more")


@pytest.mark.kafka
@pytest.mark.slow
@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_a_broker_written_batch_of_several_mib_decodes_exactly(kafka, tmp_path, codec):
    """A real broker takes a 6 MiB batch once the topic's ``max.message.bytes`` is raised (the producer's
    ``message.max.bytes`` and ``batch.size`` too): every record reads back as produced, and as Kafka's
    own kafka-dump-log prints it."""
    from dumpcompare import batch_facts, compare, dump, inspect_jsonl
    from kafkatools import copy_partition, create_topic, partition_dir, produce, unique_topic

    b = kafka.bootstrap
    t = create_topic(b, unique_topic("bigbatch"), **{"max.message.bytes": str(32 << 20)})
    rnd = random.Random(35)
    sent = [(f"big-{i}".encode(), "".join(rnd.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=2 << 20)).encode())
            for i in range(3)]
    produce(b, t, sent, **{"message.max.bytes": 32 << 20, "batch.size": 32 << 20, "linger.ms": 2000,
                           "compression.type": codec})
    folder = copy_partition(partition_dir(kafka.log_dir, t), tmp_path)
    files = sorted(folder.glob("*.log"))
    batches = [bt for f in files for bt in SegmentReader(f).batches()]
    # one batch holds the three records: twice and more Kafka's default message.max.bytes (1 MiB + 12)
    assert [bt.records_count for bt in batches] == [3] and batches[0].size > 2 << 20, [bt.size for bt in batches]
    reader_records = [(r.key, r.value) for f in files for r in SegmentReader(f).records()]
    assert reader_records == sent
    _, theirs = dump(files)
    compare(inspect_jsonl([folder]), theirs)
    assert batch_facts(batches) == batch_facts(theirs)

"""The reader and the dump parser agree with Kafka's own ``kafka-dump-log``, record by record,
on segments the real broker wrote: every codec, tombstones, headers, null keys, LogAppendTime,
transactions with an abort, segments after the broker compacted them, and the broker's KRaft
metadata log; and on the layouts a broker of today no longer writes (magic 0 and 1, compressed
wrappers, mixed magics, raw snappy, emptied batches), made by kafka-python's builders."""

from __future__ import annotations

import re
import struct
from array import array

import pytest
import xxhash

from dumpcompare import batch_facts, compare, dump, inspect_jsonl
from inspectsegments import CODECS, write_partitions
from kafkatools import copy_partition, partition_dir
from monitor.kafka.record import SegmentReader
from recordfixtures import READER_GAPS

pytestmark = [pytest.mark.kafka, pytest.mark.slow]  # every test runs kafka-dump-log (a JVM)


@pytest.fixture(scope="module")
def written(kafka, tmp_path_factory):
    """Partition folders copied (so the cleaner cannot change them under the comparison); text keys
    only, as the keys are compared with the dump's text."""
    return write_partitions(kafka, tmp_path_factory.mktemp("segments"), cleaned=True, binary_keys=False)


@pytest.mark.parametrize("label", [f"codec-{c}" for c in CODECS] + ["logappend", "txn", "cleaned"])
def test_inspect_matches_kafka_dump_log(written, label):
    folder = written[label]
    ours = inspect_jsonl([folder])
    text, batches = dump(sorted(folder.glob("*.log")))
    compare(ours, batches)
    # batch level: sizes, CRCs and record counts as Kafka prints them
    mine = [b for f in sorted(folder.glob("*.log")) for b in SegmentReader(f).batches()]
    assert batch_facts(mine) == batch_facts(batches)
    if label.startswith("codec-") and label != "codec-none":
        assert label.removeprefix("codec-") in {b.compression for b in batches}


@pytest.mark.parametrize("label", [f"codec-{c}" for c in CODECS] + ["logappend", "txn", "cleaned"])
def test_arrays_view_matches_kafka_dump_log(written, label):
    """The arrays view the Spark audit folds, on broker-written bytes: offsets, timestamps, keys and
    value sizes as Kafka prints them, and key hashes as the xxhash library computes XXH64 (seed 42,
    the null key hashing to the seed, as Spark's xxhash64 does)."""
    files = sorted(written[label].glob("*.log"))
    _, theirs = dump(files)
    ours = []
    for f in files:
        for _, arr in SegmentReader(f).decoded(arrays=True):
            key_sizes, pos = array("i", arr.key_sizes), 0
            keys = []
            for size in key_sizes:
                keys.append(None if size < 0 else arr.keys[pos:pos + size])
                pos += max(size, 0)
            ours += zip(array("q", arr.offsets), array("q", arr.timestamps), keys, array("i", arr.value_sizes),
                        array("q", arr.key_hashes))
    expected = []
    for b in theirs:
        for r in b.records():
            # a marker's key is not printed: (version 0, type) as EndTransactionMarker writes it
            key = struct.pack(">hh", 0, {"ABORT": 0, "COMMIT": 1}[r.control_type]) if b.is_control else r.key
            h = 42 if key is None else xxhash.xxh64_intdigest(key, seed=42)
            expected.append((r.offset, r.timestamp, key, r.value_size, h - (1 << 64) if h >= 1 << 63 else h))
    assert ours == expected and len(ours) > 0


def test_dump_text_inspected_equals_segments_inspected(written, tmp_path):
    """Both ways: inspect of the dump text gives the same records as inspect of the segments."""
    for label in ("codec-gzip", "txn", "cleaned"):
        folder = written[label]
        text, _ = dump(sorted(folder.glob("*.log")))
        dump_file = tmp_path / f"{label}.dump.txt"
        dump_file.write_text(text)
        a = inspect_jsonl([folder])
        b = inspect_jsonl([dump_file])
        fields = ["offset", "timestamp", "key_size", "value_size", "tombstone", "control", "control_type",
                  "transactional", "compression", "producer_id", "header_keys", "batch_base_offset",
                  "delete_horizon_ms"]
        assert [[r[f] for f in fields] for r in a] == [[r[f] for f in fields] for r in b]


def test_features_are_really_present(written):
    """Guards the scenario itself: the comparisons above covered what they claim to."""
    from monitor.kafka.record import read_segment

    recs = [r for f in sorted(written["codec-zstd"].glob("*.log")) for r in read_segment(f)]
    assert any(r.is_tombstone for r in recs) and any(r.key is None for r in recs)
    assert any(r.header_keys == ["trace", 'zürich "q"'] for r in recs)  # one with a null value
    txn = [r for f in sorted(written["txn"].glob("*.log")) for r in read_segment(f)]
    assert [r.control_type for r in txn if r.batch.is_control] == ["COMMIT", "ABORT", "COMMIT"]
    la = [r for f in sorted(written["logappend"].glob("*.log")) for r in read_segment(f)]
    assert {r.batch.timestamp_type for r in la} == {"log_append"}
    cleaned = [r for f in sorted(written["cleaned"].glob("*.log")) for r in read_segment(f)]
    # by hand: round r wrote k0..k99 at offsets 101r..101r+99 and a roll record at 101r+100; the
    # tombstones of k0, k5, .., k95 are at 303..322 and the last roll record (the active segment) at
    # 323. Cleaned up to 323, each key keeps its last record: round 2's value, or its tombstone.
    assert [r.offset for r in cleaned] == sorted([202 + i for i in range(100) if i % 5] + [302]
                                                 + list(range(303, 324)))
    assert [r.key for r in cleaned if r.is_tombstone] == [f"k{i}".encode() for i in range(0, 100, 5)]
    assert all(r.batch.delete_horizon_ms for r in cleaned if r.is_tombstone), "a tombstone without a delete horizon"


def test_every_generated_layout_matches_kafka_dump_log(record_gallery):
    """Magic 0/1/2 in every codec, LogAppendTime, compressed wrappers, transactions, cleaned and
    emptied batches, mixed magics (tests/recordfixtures.py), read by us and by Kafka's tool."""
    names = [n for n in record_gallery if n not in READER_GAPS]
    files = [record_gallery[n].path for n in names]
    _, batches = dump(files)
    by_file = {}
    for b in batches:
        by_file.setdefault(b.file, []).append(b)
    for name, f in zip(names, files):
        theirs = by_file[str(f)]
        compare(inspect_jsonl([f]), theirs)
        mine = list(SegmentReader(f).batches())
        assert [(b.position, b.size, b.crc, b.magic, b.last_offset) for b in mine] == \
            [(b.position, b.size, b.crc, b.magic, b.last_offset) for b in theirs], name
        assert [b.records_count for b in mine if b.magic == 2] == [b.records_count for b in theirs if b.magic == 2], name
        # and both read what the builder was given
        assert [r.offset for b in theirs for r in b.records()] == [r.offset for r in record_gallery[name].records]


@pytest.mark.xfail(strict=True, reason=READER_GAPS["magic0-lz4"])
def test_magic0_lz4_reads_as_kafka_reads_it(record_gallery):
    f = record_gallery["magic0-lz4"].path
    _, theirs = dump([f])
    assert [r.offset for b in theirs for r in b.records()] == list(range(9))  # Kafka reads it
    compare(inspect_jsonl([f]), theirs)


def test_kraft_metadata_log_matches_kafka_dump_log(kafka, tmp_path):
    """The session broker's own ``__cluster_metadata`` log: control and metadata records, magic 2."""
    copied = sorted(copy_partition(partition_dir(kafka.log_dir, "__cluster_metadata"), tmp_path).glob("*.log"))
    assert copied, "the broker has no metadata log"
    copy = copied[0]
    reader = SegmentReader(copy)
    batches = list(reader.batches())
    assert not reader.faults and batches and {b.magic for b in batches} == {2}
    # metadata values are binary (UUIDs), which the tool prints lossily as text; its metadata decoder
    # prints them as JSON, one line each
    text, theirs = dump([copy], "--cluster-metadata-decoder")
    assert batch_facts(batches) == batch_facts(theirs)
    assert [(b.is_control, b.partition_leader_epoch) for b in batches] == \
        [(b.is_control, b.partition_leader_epoch) for b in theirs]
    assert [(r.offset, r.timestamp, r.key_size, r.value_size) for b in batches for r in b.records()] \
        == [(r.offset, r.timestamp, r.key_size, r.value_size) for b in theirs for r in b.records()]
    # Kafka prints a KRaft control record by its type name (LeaderChange: {...}, KRaftVersion: {...})
    printed = [(int(m[1]), re.sub(r"(?<=[a-z])(?=[A-Z])", "_", m[2]).upper()) for m in re.finditer(
        r"^\| offset: (\d+) .*?headerKeys: \[\] (LeaderChange|KRaftVersion|KRaftVoters|SnapshotHeader|SnapshotFooter): ",
        text, re.M)]
    assert [(r.offset, r.control_type) for b in batches if b.is_control for r in b.records()] == printed
    assert printed, "no KRaft control record in the metadata log"


def test_keys_and_values_holding_line_breaks_parse_as_kafka_dump_log_prints_them(tmp_path):
    """kafka-dump-log prints keys and payloads raw: a key with line breaks goes on over the next lines
    (before its payload, or to the record's end when it has none). The dump parser joins them back by
    keySize, as it does a payload's by valueSize, and reads what the builder wrote."""
    from recordfixtures import T0, Rec, v2, write

    records = [Rec(0, T0, b"two\nlines", b"v0"), Rec(1, T0, b"a\n\nb payload: c", b"x\ny"),
               Rec(2, T0, b"tail\n", None), Rec(3, T0, b"\n", b"lead"), Rec(4, T0, b"plain", b"v4")]
    seg = write(tmp_path / "orders-0" / "00000000000000000000.log", [v2(records)])
    _, theirs = dump([seg.path])
    got = [(r.offset, r.key, r.value) for b in theirs for r in b.records()]
    assert got == [(r.offset, r.key, r.value) for r in records]
    compare(inspect_jsonl([seg.path]), theirs)

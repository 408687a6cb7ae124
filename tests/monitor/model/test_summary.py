"""``monitor.model.summary``: one segment's Kafka facts, read once and cached, against the broker's own
segments (a record-by-record account of the same files) and Kafka's log end offset."""

from __future__ import annotations

import os

import pytest

from kafkatools import copy_partition, create_topic, partition_dir, produce, roll, unique_topic, watermarks
from monitor.model.compaction import log_end_offset
from monitor.kafka.record import SegmentReader
from monitor.model.summary import SegmentSummary, fold_end, summarize
from monitor.model.tailcheck import CHECK_BYTES
from recordfixtures import Rec, T0, items, v2, write
from waiting import wait_for

pytestmark = pytest.mark.kafka


def _account(path):
    """The segment's facts record by record (the reader's plain iteration, not the summary's fold)."""
    batches = list(SegmentReader(path).batches())
    recs = [r for b in batches if not b.is_control for r in b.records()]
    return {"batches": len(batches), "records": sum(b.records_count for b in batches),
            "first": batches[0].max_timestamp if batches else -1,
            "max": max((b.max_timestamp for b in batches), default=-1),
            "next": batches[-1].last_offset + 1 if batches else None,
            "tombstones": [r.offset for r in recs if r.value_size < 0],
            "keyless": sum(r.key is None for r in recs), "empty": sum(r.value_size == 0 for r in recs)}


@pytest.fixture(scope="module")
def broker_partition(kafka, tmp_path_factory):
    """A partition the broker wrote in three segments (two rolled, the active one), with tombstones,
    null keys and empty values; its copy, and the broker's high watermark (its log end offset)."""
    t = create_topic(kafka.bootstrap, unique_topic("summary"), **{"segment.ms": 200})  # delete: null keys allowed
    for r in range(2):
        produce(kafka.bootstrap, t, [(f"k{i}".encode() if i % 7 else None,
                                      None if i % 5 == 4 else (b"" if i % 11 == 3 else f"v{r}-{i}".encode()))
                                     for i in range(60)])
        roll(kafka.bootstrap, t)
    copy = copy_partition(partition_dir(kafka.log_dir, t), tmp_path_factory.mktemp("summary"))
    return copy, watermarks(kafka.bootstrap, t)[1]


def test_each_broker_segment_summarised_as_its_records_say(broker_partition):
    folder, high_watermark = broker_partition
    logs = sorted(folder.glob("*.log"))
    assert len(logs) == 3
    sums = []
    for f in logs:
        s, read = summarize(f, int(f.name[:-4]))
        a = _account(f)
        assert read == f.stat().st_size == s.size == s.end_position
        assert (s.batches, s.records, s.first_batch_max_timestamp, s.max_timestamp, s.next_offset) == \
               (a["batches"], a["records"], a["first"], a["max"], a["next"])
        assert list(s.tombstone_offsets) == a["tombstones"]
        assert (s.keyless_records, s.empty_value_records) == (a["keyless"], a["empty"])
        assert not s.faults
        sums.append(s)
    assert all(s.tombstones and s.keyless_records and s.empty_value_records for s in sums[:2])  # what was written
    # Kafka rolls at the log end: each segment ends where the next begins, the last at the high watermark
    assert [s.next_offset for s in sums[:-1]] == [s.base_offset for s in sums[1:]]
    assert sums[-1].next_offset == high_watermark == log_end_offset(sums)


def test_an_empty_segment_ends_at_its_base_offset_as_kafka_says(kafka, tmp_path):
    """A partition Kafka has just created holds one empty segment; its log end offset is the segment's
    base (LogSegment.readNextOffset: baseOffset when it has no batch). So does a hand-made empty segment
    above an older one, as UnifiedLog.deleteSegments leaves after rolling before it deletes them all.
    (The collector's fold used to leave it None, the audit's the base offset.)"""
    t = create_topic(kafka.bootstrap, unique_topic("summary-empty"), **{"cleanup.policy": "compact"})
    folder = partition_dir(kafka.log_dir, t)
    wait_for(lambda: (folder / f"{0:020d}.log").exists(), 30, f"the broker's log of {t}")
    copy = copy_partition(folder, tmp_path)
    (only,) = sorted(copy.glob("*.log"))
    s, read = summarize(only, 0)
    assert (read, s.batches, s.records, s.first_batch_max_timestamp) == (0, 0, 0, -1)
    assert s.next_offset == 0 == watermarks(kafka.bootstrap, t)[1]

    old = write(tmp_path / "p-0" / f"{0:020d}.log", [v2(items(range(0, 5)))])
    empty = tmp_path / "p-0" / f"{5:020d}.log"
    empty.write_bytes(b"")
    sums = [summarize(old.path, 0)[0], summarize(empty, 5)[0]]
    assert sums[1].next_offset == 5 == log_end_offset(sums)


def test_an_appended_segment_reads_only_the_new_bytes_and_keeps_its_first_batch(tmp_path):
    """The active segment grows: the next summary starts where the last stopped (a batch boundary) and
    ends as a full read would; the first batch's max timestamp stays the file's first batch's."""
    batches = [v2([Rec(o, T0 + 1000 * o, f"k{o % 3}".encode(), None if o == 4 else b"v")]) for o in range(6)]
    path = tmp_path / f"{0:020d}.log"
    write(path, batches[:2])
    first, read1 = summarize(path, 0)
    with open(path, "ab") as fh:
        fh.write(b"".join(b.data for b in batches[2:]))
    grown, read2 = summarize(path, 0, first)
    # the appended bytes, and the last batch read's header again (monitor.model.tailcheck)
    assert read1 == len(batches[0].data) + len(batches[1].data)
    assert read2 == sum(len(b.data) for b in batches[2:]) + CHECK_BYTES
    full, _ = summarize(path, 0)
    keep = ("batches", "records", "first_batch_max_timestamp", "max_timestamp", "next_offset", "size", "end_position")
    assert {k: getattr(grown, k) for k in keep} == {k: getattr(full, k) for k in keep}
    assert grown.first_batch_max_timestamp == T0 and grown.max_timestamp == T0 + 5000 and grown.next_offset == 6
    assert list(grown.tombstone_offsets) == [4]


def test_an_empty_segment_that_grows_takes_its_first_batch(tmp_path):
    path = tmp_path / f"{7:020d}.log"
    path.write_bytes(b"")
    empty, _ = summarize(path, 7)
    assert empty.next_offset == 7
    write(path, [v2([Rec(7, T0 + 5, b"k", b"v")]), v2([Rec(8, T0 + 9, b"k", b"w")])])
    grown, _ = summarize(path, 7, empty)
    assert (grown.first_batch_max_timestamp, grown.max_timestamp, grown.next_offset) == (T0 + 5, T0 + 9, 9)


def test_an_unchanged_segment_is_not_read_again_and_a_swapped_one_is(tmp_path):
    """Unchanged (path, size, mtime, inode): the cached summary, nothing read. A clean swaps a new
    file in under the same name, even with the old size and mtime: a new inode, read again."""
    path = tmp_path / f"{0:020d}.log"
    write(path, [v2(items(range(0, 4)))])
    s, _ = summarize(path, 0)
    again, read = summarize(path, 0, s)
    assert again is s and read == 0
    st = path.stat()
    swapped = tmp_path / "swap"  # the same records an hour later: the same size, other bytes
    write(swapped, [v2([Rec(r.offset, r.timestamp + 3_600_000, r.key, r.value) for r in items(range(0, 4))])])
    assert swapped.stat().st_size == st.st_size
    os.replace(swapped, path)  # a new inode under the old name
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    fresh, read = summarize(path, 0, s)
    assert fresh is not s and read == st.st_size and fresh.max_timestamp == s.max_timestamp + 3_600_000


def test_a_corrupt_batch_is_a_fault_and_the_rest_is_read(tmp_path):
    path = tmp_path / f"{0:020d}.log"
    seg = write(path, [v2(items(range(0, 2))), v2(items(range(2, 4))), v2(items(range(4, 6)))])
    data = bytearray(path.read_bytes())
    data[seg.positions[1] + 70] ^= 0xFF  # inside the second batch's records: its CRC fails
    path.write_bytes(bytes(data))
    s, _ = summarize(path, 0)
    assert s.faults and str(path) in s.faults[0]
    assert s.next_offset == 6 and s.batches == 2  # the batches around it are folded


def test_fold_end_keeps_a_read_next_offset():
    s = SegmentSummary("x", 10, next_offset=15)
    fold_end(s)
    assert s.next_offset == 15
    s = SegmentSummary("x", 10)
    fold_end(s)
    assert s.next_offset == 10


def test_a_summary_holds_containers_only_of_what_its_segment_has(tmp_path):
    """Issue 43: a segment without tombstones, horizons, transactions or faults holds the shared read-only
    empties (no arrays or dicts of its own: most segments); one with tombstones its own arrays, which another
    summary never sees; a write into a shared empty is refused, never shared by every summary."""
    from monitor.model.summary import NO_ARRAY, NO_DICT, NO_LIST, own

    plain = write(tmp_path / "t-0" / "00000000000000000000.log", [v2(items(range(0, 10), distinct=10))])
    tombs = write(tmp_path / "t-1" / "00000000000000000000.log", [v2(items(range(0, 10), tombstone_every=3))])
    a, b = summarize(plain.path, 0)[0], summarize(tombs.path, 0)[0]
    assert a.records == 10 and a.tombstones == 0 and b.tombstones == 3
    assert a.tombstone_rows is NO_ARRAY and a.delete_horizons is NO_ARRAY and a.txn_aborts is NO_ARRAY
    assert a.txn_markers is NO_DICT and a.txn_runs is NO_DICT and a.txn_first_markers is NO_DICT
    assert a.faults is NO_LIST
    assert b.tombstone_rows is not NO_ARRAY and list(b.tombstone_offsets) == [2, 5, 8] and len(NO_ARRAY) == 0
    assert list(b.tombstone_rows[0::3]) == [2, 5, 8] and list(b.tombstone_horizons) == [-1] * 3
    assert list(b.tombstone_timestamps) == list(b.tombstone_rows[1::3]) and len(b.tombstone_rows) == 9
    for write_into in (lambda: a.tombstone_rows.append(1), lambda: a.faults.append("x"),
                       lambda: a.txn_runs.__setitem__(1, None), lambda: a.txn_first_markers.setdefault(1, 2)):
        with pytest.raises(TypeError, match="read-only"):
            write_into()
    own(a, "faults").append("x")
    assert a.faults == ["x"] and SegmentSummary("y", 0).faults == [] and NO_LIST == []

"""A rolled segment's ``.index`` and ``.timeindex`` (monitor.kafka.segindex): their first and last entries as
Kafka wrote them, and each index Kafka would not trust refused with its file and reason (generated here)."""

from __future__ import annotations

import os

import pytest

from indexfixtures import kafka_indexes
from monitor.kafka.segindex import (CORRUPT, MISSING, NO_ENTRY, NOT_TRIMMED, OLDER, TRUNCATED, IndexUntrusted,
                                    offset_index_ends, time_index_ends)
from monitor.kafka.record import SegmentReader
from recordfixtures import items, v2, write

BASE = 100


@pytest.fixture
def segment(tmp_path):
    log = tmp_path / f"{BASE:020d}.log"
    write(log, [v2(items(range(o, o + 40), distinct=7)) for o in range(BASE, BASE + 400, 40)])
    index, timeindex = kafka_indexes(log, BASE)
    return log, index, timeindex


def mtime(path):
    return os.stat(path).st_mtime_ns


def test_the_ends_are_the_last_entries_kafka_wrote(segment):
    log, index, timeindex = segment
    batches = list(SegmentReader(log).headers())
    o = offset_index_ends(str(index), BASE, mtime(log))
    t = time_index_ends(str(timeindex), BASE, mtime(log))
    assert o.entries == len(index.read_bytes()) // 8 > 1
    assert o.last[1] in [b.position for b in batches] and o.last[1] > 0
    assert t.last[0] == max(b.max_timestamp for b in batches)  # Kafka's maxTimestampSoFar
    assert o.bytes_read == 16 and t.bytes_read <= 24  # two entries each, never the whole file


def refused(fn, path, log) -> IndexUntrusted:
    with pytest.raises(IndexUntrusted) as got:
        fn(str(path), BASE, mtime(log))
    assert str(path) in str(got.value) and "read by its batch headers" in str(got.value)
    return got.value


def test_a_missing_index_is_refused(segment):
    log, index, _ = segment
    index.unlink()
    assert refused(offset_index_ends, index, log).code == MISSING


@pytest.mark.parametrize("which", [0, 1])
def test_a_truncated_index_is_refused(segment, which):
    log, *files = segment
    path = files[which]
    data = path.read_bytes()
    path.write_bytes(data[:-3])
    os.utime(path, ns=(mtime(log), mtime(log)))
    err = refused([offset_index_ends, time_index_ends][which], path, log)
    assert err.code == TRUNCATED and f"{len(data) - 3} bytes" in str(err)


@pytest.mark.parametrize("which", [0, 1])
def test_an_index_zero_filled_past_its_last_entry_is_refused(segment, which):
    """Kafka preallocates segment.index.bytes and trims at roll: zeros past the entries are an index the
    broker did not trim (it stopped first), whose last entry is no entry."""
    log, *files = segment
    path = files[which]
    with open(path, "ab") as fh:  # segment.index.bytes rounded down to whole entries, as Kafka preallocates
        fh.truncate(10 * 1024 * 1024 // (8, 12)[which] * (8, 12)[which])
    os.utime(path, ns=(mtime(log), mtime(log)))
    assert refused([offset_index_ends, time_index_ends][which], path, log).code == NOT_TRIMMED


def test_an_index_older_than_its_log_is_refused(segment):
    log, _, timeindex = segment
    os.utime(timeindex, ns=(mtime(log) - 10**9, mtime(log) - 10**9))
    assert refused(time_index_ends, timeindex, log).code == OLDER


def test_a_time_index_going_back_is_refused(segment):
    log, _, timeindex = segment
    data = timeindex.read_bytes()
    entry = (1).to_bytes(8, "big") + data[-4:]  # a last timestamp below the first (Kafka's sanityCheck)
    timeindex.write_bytes(data[:-12] + entry if len(data) > 12 else data + entry)
    os.utime(timeindex, ns=(mtime(log), mtime(log)))
    assert refused(time_index_ends, timeindex, log).code == CORRUPT


def test_a_rolled_segments_empty_time_index_is_refused_an_empty_offset_index_is_not(segment):
    log, index, timeindex = segment
    for p in (index, timeindex):
        p.write_bytes(b"")
        os.utime(p, ns=(mtime(log), mtime(log)))
    assert offset_index_ends(str(index), BASE, mtime(log)).last is None  # smaller than index.interval.bytes
    assert refused(time_index_ends, timeindex, log).code == NO_ENTRY

"""A rolled segment's ``.index`` and ``.timeindex`` as Kafka writes them, and a producer-state snapshot, for
tests of the index-first read (monitor.kafka.segindex, monitor.model.summary.from_indexes) on generated files.

As ``LogSegment.append`` does: before an append, once more than ``index.interval.bytes`` were appended since
the last entry, an offset index entry (the append's largest offset, its position) and a time index entry
(the largest timestamp so far and its offset, only when above the last entry's); at roll
(``onBecomeInactiveSegment``) the largest timestamp so far once more when above the last entry. Here each
batch is one append.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from crc32c import crc32c

from monitor.kafka.producer_snapshot import ENTRY, HEADER, VERSION
from monitor.kafka.record import SegmentReader
from monitor.kafka.segindex import OFFSET_ENTRY, TIME_ENTRY

INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes, Kafka's default


def kafka_indexes(log: Path, base_offset: int, interval: int = INDEX_INTERVAL_BYTES) -> tuple[Path, Path]:
    """Write ``log``'s ``.index`` and ``.timeindex`` as a broker leaves them for a rolled segment."""
    offsets, times = bytearray(), bytearray()
    since, top, top_offset, last_ts = 0, -1, base_offset, -1
    for b in SegmentReader(log).headers():
        if since > interval:
            offsets += OFFSET_ENTRY.pack(b.last_offset - base_offset, b.position)
            if top > last_ts:
                times += TIME_ENTRY.pack(top, top_offset - base_offset)
                last_ts = top
            since = 0
        since += b.size
        if b.max_timestamp > top:
            top, top_offset = b.max_timestamp, b.last_offset
    if top > last_ts:
        times += TIME_ENTRY.pack(top, top_offset - base_offset)
    stem = str(log)[:-len(".log")]
    Path(stem + ".index").write_bytes(offsets)
    Path(stem + ".timeindex").write_bytes(times)
    st = os.stat(log)  # written after the log, as at roll: never older than it
    for suffix in (".index", ".timeindex"):
        os.utime(stem + suffix, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    return Path(stem + ".index"), Path(stem + ".timeindex")


def producer_snapshot(folder: Path, offset: int, ongoing: tuple[tuple[int, int], ...] = ()) -> Path:
    """``<offset>.snapshot`` with one producer entry per (producer id, first offset of its ongoing transaction)."""
    body = b"".join(ENTRY.pack(pid, 0, 0, first, 0, 0, 0, first) for pid, first in ongoing)
    count = struct.pack(">i", len(ongoing))
    data = HEADER.pack(VERSION, crc32c(count + body), len(ongoing)) + body
    path = folder / f"{offset:020d}.snapshot"
    path.write_bytes(data)
    return path

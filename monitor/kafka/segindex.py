"""A rolled segment's ``.index`` and ``.timeindex``, read for their first and last entries only (issue 43).

Why: Kafka's LogCleanerManager needs of a rolled segment its size, its first batch's timestamp, its
largest timestamp and its offsets. Kafka keeps the largest timestamp itself: a segment's
``maxTimestampSoFar`` is loaded from its time index's last entry (``LogSegment.maxTimestampAndOffsetSoFar``),
and the entry is written when the segment rolls (``onBecomeInactiveSegment``: ``timeIndex.maybeAppend(...,
skipFullCheck = true)``); its next offset is read from the offset index's last entry on
(``LogSegment.readNextOffset``: ``offsetIndex.lookup(Long.MAX_VALUE)``, then the batches from that position).
Reading those two entries and two headers costs a few pages a segment, not a page a batch.

Layouts, as Kafka writes them (big-endian; ``OffsetIndex``/``TimeIndex`` in storage/.../log):
``.index`` entries of 8 bytes (relative offset INT32, position INT32); ``.timeindex`` entries of 12 bytes
(timestamp INT64, relative offset INT32). An index Kafka would not trust is refused with the reason
(``IndexUntrusted``), as its ``sanityCheck`` refuses one: a length not a multiple of the entry size, a last
offset below the base offset, a time index whose last timestamp is below its first; and what only a
reader from outside meets: a missing file, an index not trimmed (Kafka preallocates ``segment.index.bytes``
of zeros and trims them at roll, ``trimToValidSize``: zeros past the last entry mean the broker stopped
before it trimmed), one older than its ``.log`` (written before the log's last append), a rolled segment's
time index with no entry (Kafka appends one at roll whenever a batch had a timestamp).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

from monitor.fileio.regularfile import open_regular, os_reason

OFFSET_ENTRY = struct.Struct(">ii")  # relative offset, position (OffsetIndex.ENTRY_SIZE = 8)
TIME_ENTRY = struct.Struct(">qi")  # timestamp, relative offset (TimeIndex.ENTRY_SIZE = 12)

# why an index is not used, one code each (the log line says the file and the detail)
MISSING, TRUNCATED, NOT_TRIMMED, OLDER, CORRUPT, NO_ENTRY, DISAGREES = (
    "missing", "truncated", "not_trimmed", "older_than_log", "corrupt", "no_entry", "disagrees_with_log")


class IndexUntrusted(ValueError):
    """An index not to be used for its segment: ``str()`` names the file and why; ``code`` is one of the above."""

    def __init__(self, path: str, code: str, detail: str):
        self.path, self.code, self.detail = str(path), code, detail
        super().__init__(f"{path}: index not used ({code}): {detail}; the segment is read by its batch headers")


@dataclass(frozen=True, slots=True)
class IndexEnds:
    """The first and last entries of one index file (absolute offsets), and the bytes read for them."""

    entries: int
    first: tuple[int, int] | None  # (.index: offset, position; .timeindex: timestamp, offset); None when empty
    last: tuple[int, int] | None
    bytes_read: int


def _ends(path: str, layout: struct.Struct, base_offset: int, log_mtime_ns: int, key: int,
          min_entries: int = 0) -> IndexEnds:
    """First and last entries of an index; ``key`` is the position of the relative offset in an entry. Fewer
    than ``min_entries``: their count only, nothing read (first and last None)."""
    try:
        fh = open_regular(path, 0)
    except FileNotFoundError:
        raise IndexUntrusted(path, MISSING, "no such file") from None
    except OSError as exc:
        raise IndexUntrusted(path, MISSING, os_reason(exc)) from None
    with fh:
        st = os.fstat(fh.fileno())
        size, width = st.st_size, layout.size
        if size % width:
            raise IndexUntrusted(path, TRUNCATED, f"{size} bytes, not a multiple of its {width}-byte entries")
        if st.st_mtime_ns < log_mtime_ns:
            raise IndexUntrusted(path, OLDER, f"modified at {st.st_mtime_ns} ns, before its .log ({log_mtime_ns} ns)")
        n = size // width
        if n == 0 or n < min_entries:
            return IndexEnds(n, None, None, 0)
        first = layout.unpack(os.pread(fh.fileno(), width, 0))
        last = first if n == 1 else layout.unpack(os.pread(fh.fileno(), width, size - width))
    if last == (0, 0):
        raise IndexUntrusted(path, NOT_TRIMMED, f"zeros past its last entry (not trimmed: {n} entries of "
                                                f"{width} bytes preallocated)")
    if last[key] < 0 or first[key] < 0:
        raise IndexUntrusted(path, CORRUPT, f"last offset {base_offset + last[key]} below the base offset {base_offset}")
    if last[key] < first[key]:
        raise IndexUntrusted(path, CORRUPT, f"last offset {base_offset + last[key]} below its first, "
                                            f"{base_offset + first[key]}")

    def absolute(e):
        return (base_offset + e[0], e[1]) if key == 0 else (e[0], base_offset + e[1])
    return IndexEnds(n, absolute(first), absolute(last), width if n == 1 else 2 * width)


def offset_index_ends(path: str, base_offset: int, log_mtime_ns: int, min_entries: int = 0) -> IndexEnds:
    """``.index``: (offset, position) first and last; empty is fine (a segment smaller than
    ``index.interval.bytes`` has no entry: its batches are read from position 0, as Kafka's lookup does).
    Fewer than ``min_entries``: the count alone (the caller reads the segment otherwise)."""
    ends = _ends(path, OFFSET_ENTRY, base_offset, log_mtime_ns, 0, min_entries)
    if ends.last is not None and ends.last[1] < ends.first[1]:
        raise IndexUntrusted(path, CORRUPT, f"last position {ends.last[1]} below its first, {ends.first[1]}")
    return ends


def time_index_ends(path: str, base_offset: int, log_mtime_ns: int) -> IndexEnds:
    """``.timeindex``: (timestamp, offset) first and last; a rolled segment's with no entry is refused
    (``NO_ENTRY``: Kafka appends its maxTimestampSoFar at roll; none means no batch had a timestamp, or
    an index not written: the headers tell which)."""
    ends = _ends(path, TIME_ENTRY, base_offset, log_mtime_ns, 1)
    if ends.last is None:
        raise IndexUntrusted(path, NO_ENTRY, "no entry (a rolled segment's holds its largest timestamp)")
    if ends.last[0] < ends.first[0]:
        raise IndexUntrusted(path, CORRUPT, f"last timestamp {ends.last[0]} below its first, {ends.first[0]}")
    return ends

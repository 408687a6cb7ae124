"""Duplicates stuck in the active segment: records of the active segment that a later record of the same
key, in the same segment, supersedes.

The cleaner never touches the active segment (LogCleanerManager: the first uncleanable offset is at most
its base offset), so on a quiet topic whose segment does not roll these duplicates stay on disk and every
reader of the log reads them. The segment summaries (``monitor.model.summary``) keep no keys, so this reads
the keys of the active segment only, and only within bounds:

* incrementally: a segment that only grew is read from where the last read stopped (once its last
  batch read is found where it was: ``monitor.model.tailcheck``), and the per-key state (the xxh64
  hash of each key, as the audit groups keys, and the size of its latest record) is kept, so a steady
  refresh reads only the appended bytes; the collector's cache keeps it across restarts
  (``collectors.logdirs.summary_state``), so a restart does too;
* at most ``max_bytes`` of the segment and ``max_keys`` distinct keys: past either, the tally stops and
  says so (``over_bound``); the counts are then not exported (unknown, with the reason), never a partial
  count passed off as the whole.

``duplicate_bytes`` counts the superseded records' key and value bytes (what a consumer reads of them),
not their on-disk record framing. A tombstone supersedes the records of its key before it; records
without a key (which the broker refuses on a compacted topic) are never duplicates. Control records
(transaction markers) are skipped.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from monitor.kafka.record import RecordFormatError, SegmentReader
from monitor.model.tailcheck import intact, tail

# the bounds' defaults, which monitor.yaml's take (timeouts.active_segment_key_read_bytes / _max_keys): 256 MiB
# of one active segment (the default segment.bytes is 1 GiB), 1,000,000 distinct keys (~100 MB of state at worst)
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_KEYS = 1_000_000
# What one distinct key held in a tally costs in memory (issue 43): its dict slot and index at a dict's fill (~40 B)
# and two int objects (the 64-bit key hash, 32 B; the size, 28 B): ~100 B. A broker's active segments together may
# hold DEFAULT_BUDGET_BYTES of them (timeouts.active_segment_keys_budget_bytes): 64 MiB, ~670,000 keys; a tally
# that would take the total past it is stopped, its counts unknown (``over_budget``), never partial.
KEY_BYTES = 100
DEFAULT_BUDGET_BYTES = 64 * 1024 * 1024
OVER_BUDGET = "the active segments' key sets would hold"  # how an over_bound set by the budget begins
KEYS_BOUND = "distinct keys in the active segment"  # how an over_bound set by max_keys ends


def over_budget_reason(held: int, budget: int) -> str:
    return (f"{OVER_BUDGET} {held} bytes with this one's, more than the {budget} byte budget "
            "(timeouts.active_segment_keys_budget_bytes)")


class KeySizes:
    """An active segment's key hash -> key+value bytes of its latest record (``ActiveKeys``): as a restart decodes
    it from the cache, two arrays (16 B a key); made a dict (``writable``: a slot and two ints, ~100 B a key) only
    when the tally reads on, so an active segment that did not grow since holds its keys packed (issue 43: ~1.9 KB
    a partition at 20 keys). Reads (``len``, ``keys``, ``values``, ``items``, ``==``) are the same either way."""

    __slots__ = ("_hashes", "_sizes", "_dict")

    def __init__(self, hashes: array | None = None, sizes: array | None = None):
        if (hashes is None) != (sizes is None) or hashes is not None and len(hashes) != len(sizes):
            raise ValueError("a key set's hashes and sizes differ in length")
        self._hashes, self._sizes = hashes, sizes
        self._dict: dict[int, int] | None = {} if hashes is None else None

    def writable(self) -> dict[int, int]:
        """The key set as a dict, for the tally to read on into (made once from the arrays)."""
        if self._dict is None:
            self._dict = dict(zip(self._hashes, self._sizes))
            self._hashes = self._sizes = None
        return self._dict

    def __len__(self) -> int:
        return len(self._dict) if self._dict is not None else len(self._hashes)

    def keys(self):
        return self._dict.keys() if self._dict is not None else self._hashes

    def values(self):
        return self._dict.values() if self._dict is not None else self._sizes

    def items(self):
        return self._dict.items() if self._dict is not None else zip(self._hashes, self._sizes)

    def clear(self) -> None:
        self._hashes = self._sizes = None
        self._dict = {}

    def __eq__(self, other) -> bool:
        if isinstance(other, KeySizes):
            other = dict(other.items())
        return isinstance(other, dict) and dict(self.items()) == other

    __hash__ = None  # mutable, as a dict

    def __repr__(self) -> str:
        return f"KeySizes({len(self)} keys)"


@dataclass(slots=True)
class ActiveKeys:
    path: str
    base_offset: int
    inode: int = 0
    end_position: int = 0  # where the next read starts (a batch boundary)
    tail_position: int = -1  # the last batch read, checked before reading on (monitor.model.tailcheck)
    tail_crc: int = 0
    records: int = 0  # data records read (control records skipped)
    duplicate_records: int = 0  # superseded by a later record of the same key in this segment
    duplicate_bytes: int = 0  # their key and value bytes
    over_bound: str | None = None  # why the tally stopped (then the counts are unknown)
    faults: list[str] = field(default_factory=list)
    # key hash -> key+value bytes of its latest record; at most max_keys of them (emptied once over a bound),
    # kept in the collector's cache (monitor.model.summarystore) as two arrays, and so decoded (``KeySizes``)
    _latest: KeySizes = field(default_factory=KeySizes, repr=False)

    @property
    def distinct_keys(self) -> int:
        return len(self._latest)

    @property
    def held_bytes(self) -> int:
        """What its key set costs in memory, as the budget counts it (``KEY_BYTES`` a key)."""
        return len(self._latest) * KEY_BYTES

    @property
    def over_budget(self) -> bool:
        """Stopped by the broker's budget for all active segments' keys, not by this segment's own bounds."""
        return self.over_bound is not None and self.over_bound.startswith(OVER_BUDGET)

    @property
    def known(self) -> bool:
        """Whether the counts cover the whole segment as read (no bound hit, no unreadable batch)."""
        return self.over_bound is None and not self.faults


def tally(path: str | Path, base_offset: int, previous: ActiveKeys | None = None, *,
          max_bytes: int = DEFAULT_MAX_BYTES, max_keys: int = DEFAULT_MAX_KEYS,
          count: Callable[[int], None] | None = None) -> ActiveKeys:
    """The active segment's duplicates, reusing ``previous`` when the file is the same one and only
    grew (read from its end position on, its last batch found where it was); anything else starts
    again from the file's start. ``count``: given the bytes each call reads."""
    path = Path(path)
    st = os.stat(path)
    size = st.st_size
    same = previous is not None and previous.path == str(path) and previous.inode == st.st_ino
    if same and previous.over_bound is not None:
        return previous  # a bound hit stays hit for this file: it is not read again every refresh
    k = None
    if same and size >= previous.end_position and not previous.faults:
        if size == previous.end_position:
            return previous
        ok, checked = intact(path, previous.tail_position, previous.tail_crc, previous.end_position)
        if count is not None:
            count(checked)
        k = previous if ok else None
    if k is None:
        k = ActiveKeys(str(path), base_offset, inode=st.st_ino)
    if size > max_bytes:
        k.over_bound = f"the active segment is {size} bytes, more than the {max_bytes} read for keys"
        k._latest.clear()
        return k
    reader = SegmentReader(path, start=k.end_position, skip_corrupt=True)
    latest = k._latest.writable()
    try:
        for batch, a in reader.decoded(arrays=True):
            k.tail_position, k.tail_crc = tail(batch)
            if batch.is_control:
                continue
            hashes = array("q", a.key_hashes)
            ksizes = array("i", a.key_sizes)
            vsizes = array("i", a.value_sizes)
            for h, ks, vs in zip(hashes, ksizes, vsizes):
                k.records += 1
                if ks < 0:
                    continue
                before = latest.get(h)
                if before is not None:
                    k.duplicate_records += 1
                    k.duplicate_bytes += before
                latest[h] = ks + max(vs, 0)
            if len(latest) > max_keys:
                k.over_bound = f"more than {max_keys} {KEYS_BOUND}"
                latest.clear()
                if count is not None:
                    count(reader.bytes_read)
                return k
    except RecordFormatError as exc:
        k.faults.append(str(exc))
    if count is not None:
        count(reader.bytes_read)
    k.end_position = reader.end_position
    k.faults.extend(str(f) for f in reader.log_faults())  # not a batch being appended right now
    return k

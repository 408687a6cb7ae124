"""Totals of segment files, folded batch by batch: what ``inspect --stats`` prints per file and partition.

Why a fold of its own: the question "what is in this segment" (how many batches, records, tombstones,
markers, which codecs, which offsets and times) should not cost a Python object per record. A v2 or
legacy batch is folded from its fixed-width arrays (``batch.arrays()``, the view the audit scans:
counts of -1 sizes and min/max over C arrays); a batch parsed from ``kafka-dump-log`` text is folded
from its records. Both give the same totals for the same segment (tests/monitor/kafka/test_segmentstats.py
checks them against Kafka's own dump).

Conventions, as Kafka has them: a tombstone is a data record with a null value (a control record is
never one); ``first_offset``/``last_offset`` are records' offsets (a batch the cleaner emptied keeps
its offsets but has no record), ``next_offset`` is the last batch's last offset + 1 (the log end
offset a segment implies); timestamps below 0 are Kafka's NO_TIMESTAMP (magic 0) and left out, so a
range none of whose records carries a time is ``None`` (unknown).
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field

from monitor.kafka.record.arrays import RecordArrays
from monitor.kafka.record.model import CONTROL_TYPES, control_type_code
from monitor.kafka.record.v2 import RecordColumns

try:  # value ranges in C (monitor/kafka/record/_decode.c), else min() and max() over the array
    if os.environ.get("COMPACTION_MONITOR_PURE_PYTHON"):
        raise ImportError("pure Python requested")
    from monitor.kafka.record._decode import int64_range as _c_int64_range
except ImportError:  # also a decoder built before it had int64_range
    _c_int64_range = None


INT64_MIN = -(1 << 63)


def value_range(int64s: bytes, floor: int = INT64_MIN) -> tuple[int, int] | None:
    """(min, max) of the native int64 values >= ``floor`` in ``int64s``, None when there is none
    (timestamps take floor 0: -1 is Kafka's NO_TIMESTAMP)."""
    if _c_int64_range is not None:
        return _c_int64_range(int64s, floor)
    return _py_value_range(int64s, floor)


def _py_value_range(int64s: bytes, floor: int = INT64_MIN) -> tuple[int, int] | None:
    a = array("q")
    a.frombytes(int64s)
    if not a:
        return None
    lo, hi = min(a), max(a)
    if lo < floor:
        known = [v for v in a if v >= floor]
        return (min(known), max(known)) if known else None
    return lo, hi


_NOT_NEGATIVE = (-1).__lt__  # v -> -1 < v


@dataclass
class Counts:
    """The few counts every reading of segments keeps (``inspect``'s summary line on stderr); ``Totals``
    adds the rest. ``tally`` is the cheap fold: records, tombstones and control records of a batch in
    any of the readers' views, without touching a record where an array tells."""

    files: int = 0
    batches: int = 0
    records: int = 0
    tombstones: int = 0
    control_records: int = 0
    bytes: int = 0  # batch sizes on disk, headers included (kafka-dump-log's ``size``)
    batches_skipped: int = 0  # corrupt batches (see inspect's fault lines)

    def tally(self, batch, data) -> None:
        """Records, tombstones and control records of one batch: ``data`` is its ``RecordColumns``,
        ``RecordArrays`` or records."""
        n = len(data)
        self.records += n
        if batch.is_control:
            self.control_records += n
        elif isinstance(data, RecordColumns):
            self.tombstones += n - sum(map(_NOT_NEGATIVE, data.value_sizes))
        elif isinstance(data, RecordArrays):
            sizes = array("i")
            sizes.frombytes(data.value_sizes)
            self.tombstones += sizes.count(-1)
        else:
            self.tombstones += sum(r.is_tombstone for r in data)


@dataclass
class Totals(Counts):
    """Counts over batches; ``None`` where no batch or record told the figure."""

    keyless_records: int = 0
    control_batches: int = 0
    transactional_batches: int = 0
    delete_horizon_batches: int = 0
    empty_batches: int = 0  # a batch with no record left (the cleaner keeps one for producer state)
    key_bytes: int = 0
    value_bytes: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    next_offset: int | None = None
    min_timestamp: int | None = None
    max_timestamp: int | None = None
    compression: dict[str, int] = field(default_factory=dict)  # batches per codec
    magic: dict[str, int] = field(default_factory=dict)  # batches per magic byte
    timestamp_type: dict[str, int] = field(default_factory=dict)  # batches per timestamp type
    control_types: dict[str, int] = field(default_factory=dict)  # control records per type (COMMIT, ABORT, ...)
    producer_ids: set[int] = field(default_factory=set, repr=False)

    # ---------------------------------------------------------------- folding
    def _batch(self, batch, n: int) -> None:
        self.batches += 1
        self.bytes += batch.size
        _count(self.compression, batch.compression)
        _count(self.magic, str(batch.magic))
        _count(self.timestamp_type, batch.timestamp_type)
        last = batch.last_offset
        if self.next_offset is None or last + 1 > self.next_offset:
            self.next_offset = last + 1
        if batch.is_transactional:
            self.transactional_batches += 1
        if batch.delete_horizon_ms is not None:
            self.delete_horizon_batches += 1
        if batch.producer_id >= 0:
            self.producer_ids.add(batch.producer_id)
        if n == 0:
            self.empty_batches += 1
        if batch.is_control:
            self.control_batches += 1
            self.control_records += n
        self.records += n

    def _range(self, first: int, last: int, tmin: int | None, tmax: int | None) -> None:
        if self.first_offset is None or first < self.first_offset:
            self.first_offset = first
        if self.last_offset is None or last > self.last_offset:
            self.last_offset = last
        if tmin is not None and (self.min_timestamp is None or tmin < self.min_timestamp):
            self.min_timestamp = tmin
        if tmax is not None and (self.max_timestamp is None or tmax > self.max_timestamp):
            self.max_timestamp = tmax

    def add_arrays(self, batch, arr) -> None:
        """Fold a batch read from a segment, with its ``RecordArrays``."""
        n = len(arr)
        self._batch(batch, n)
        if not n:
            return
        ks, vs = array("i"), array("i")
        ks.frombytes(arr.key_sizes)
        vs.frombytes(arr.value_sizes)
        nulls = vs.count(-1)
        self.value_bytes += sum(vs) + nulls
        self.key_bytes += len(arr.keys)
        tmin, tmax = value_range(arr.timestamps, 0) or (None, None)
        # min and max, not first and last: Kafka's LogValidator keeps an uncompressed v2 batch's
        # offset deltas as the producer wrote them (it checks only the count against the range)
        self._range(*value_range(arr.offsets), tmin, tmax)
        if batch.is_control:
            pos = 0
            for size in ks:
                key = None if size < 0 else arr.keys[pos:pos + size]
                pos += max(size, 0)
                _count(self.control_types, _control_name(control_type_code(key)))
            return
        self.tombstones += nulls
        self.keyless_records += ks.count(-1)

    def add_records(self, batch, records) -> None:
        """Fold a batch with its ``Record`` objects (a batch parsed from dump text)."""
        n = len(records)
        self._batch(batch, n)
        if not n:
            return
        known = [r.timestamp for r in records if r.timestamp >= 0]
        self._range(min(r.offset for r in records), max(r.offset for r in records),
                    min(known) if known else None, max(known) if known else None)
        for r in records:
            ks, vs = r.key_size, r.value_size
            self.key_bytes += max(ks, 0)
            self.value_bytes += max(vs, 0)
            if batch.is_control:
                _count(self.control_types, r.control_type or "UNKNOWN")
                continue
            self.tombstones += vs < 0
            self.keyless_records += ks < 0

    def merge(self, other: "Totals") -> None:
        """Add ``other`` (another file of the same partition, or a partition into the grand total)."""
        for name in ("files", "batches", "records", "tombstones", "keyless_records", "control_batches",
                     "control_records", "transactional_batches", "delete_horizon_batches", "empty_batches",
                     "bytes", "key_bytes", "value_bytes", "batches_skipped"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.first_offset is not None:  # else it has no record, so no time either
            self._range(other.first_offset, other.last_offset, other.min_timestamp, other.max_timestamp)
        if other.next_offset is not None and (self.next_offset is None or other.next_offset > self.next_offset):
            self.next_offset = other.next_offset
        for name in ("compression", "magic", "timestamp_type", "control_types"):
            mine = getattr(self, name)
            for k, v in getattr(other, name).items():
                mine[k] = mine.get(k, 0) + v
        self.producer_ids |= other.producer_ids

    def as_dict(self, offsets: bool = True) -> dict:
        """Plain JSON values (no NaN, no set): what ``--stats --format jsonl`` prints. ``offsets``
        False leaves the offsets out (a total over several partitions has no offset range)."""
        d = {k: v for k, v in self.__dict__.items()
             if k != "producer_ids" and (offsets or k not in ("first_offset", "last_offset", "next_offset"))}
        d["producers"] = len(self.producer_ids)
        for name in ("compression", "magic", "timestamp_type", "control_types"):
            d[name] = dict(sorted(d[name].items()))
        return d


def _count(d: dict, key) -> None:
    d[key] = d.get(key, 0) + 1


def _control_name(code: int | None) -> str:
    return "UNKNOWN" if code is None else CONTROL_TYPES.get(code, "UNKNOWN")

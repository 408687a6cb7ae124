"""The cleaner simulation's record arithmetic over a batch's fixed-width arrays, in numpy where it is
installed (the audit's install: a batch's records decided in a few vector operations) and in plain
Python where it is not (the slim install, which has no numpy): the same rule (``retained``) either way.

``COMPACTION_MONITOR_PURE_PYTHON`` forces the plain loop, as it does the record decoder's.
"""

from __future__ import annotations

import os
from array import array

from monitor.kafka.record.varint import varint_size

try:
    if os.environ.get("COMPACTION_MONITOR_PURE_PYTHON"):
        raise ImportError("pure Python requested")
    import numpy as np  # optional: the core install has no numpy; ``PURE`` below stands in
except ImportError:
    np = None
try:  # the C decoder's splice loop (a decoder built before it: the numpy splice below)
    if np is None:
        raise ImportError("no numpy")
    from monitor.kafka.record._decode import splice as _c_splice
except ImportError:
    _c_splice = None


def retained(past, latest_for_key, tombstone, retain_deletes):
    """Kafka's ``Cleaner.shouldRetainRecord`` for a record of a batch whose records are not discarded:
    past the map's latest offset, or the latest offset of its key (keyless records never are) with a
    value, or a tombstone while its deletes are retained (no horizon, or one still ahead). Written
    with ``|``, ``&`` and ``^ True`` so it holds for numpy bool arrays and Python bools alike."""
    return past | (latest_for_key & ((tombstone ^ True) | retain_deletes))


class Columns:
    """A batch's offsets, key hashes, key sizes and value sizes (-1: null); and, to size the batch a clean
    rewrites without decoding its records, timestamps and tail sizes (``RecordArrays.tail_sizes``; None
    from a C decoder built before them)."""

    __slots__ = ("offsets", "hashes", "key_sizes", "value_sizes", "timestamps", "tails")

    def __init__(self, offsets, hashes, key_sizes, value_sizes, timestamps=None, tails=None):
        self.offsets, self.hashes, self.key_sizes, self.value_sizes = offsets, hashes, key_sizes, value_sizes
        self.timestamps, self.tails = timestamps, tails


_PAST_EVERY_OFFSET = (1 << 63) - 1

if np is not None:
    # a zigzag varint of z takes 1 + (the thresholds z reaches) bytes: 2^7, 2^14, ... 2^63
    _VARINT_STEPS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def _varint_sizes(values):
    """``varint_size`` of every int64 in ``values`` (numpy; Java's long arithmetic: a delta wraps as it
    does in ``DefaultRecord.writeTo``)."""
    values = values.astype(np.int64, copy=False)
    zigzag = ((values << 1) ^ (values >> 63)).view(np.uint64)
    return np.searchsorted(_VARINT_STEPS, zigzag, side="right") + 1


class NumpyOps:
    """Masks are numpy bool arrays; a batch is decided in a few vector operations."""

    name = "numpy"

    @staticmethod
    def columns(arr) -> Columns:
        tails = arr.tail_sizes
        return Columns(np.frombuffer(arr.offsets, dtype=np.int64), np.frombuffer(arr.key_hashes, dtype=np.int64),
                       np.frombuffer(arr.key_sizes, dtype=np.int32), np.frombuffer(arr.value_sizes, dtype=np.int32),
                       np.frombuffer(arr.timestamps, dtype=np.int64),
                       None if tails is None else np.frombuffer(tails, dtype=np.int32))

    @staticmethod
    def first_timestamp(c: Columns, keep) -> int:
        """The first kept record's timestamp (the rebuilt batch's base timestamp when it has no horizon)."""
        return int(c.timestamps[0] if keep is None else c.timestamps[keep][0])

    @staticmethod
    def records_size(c: Columns, keep, base_offset: int, base_ts: int) -> int | None:
        """The records section a clean writes for the kept records (all when ``keep`` is None), uncompressed:
        per record ``DefaultRecord.sizeInBytes`` = length varint + attributes + offset delta (against the
        batch's base offset, which the clean keeps) + timestamp delta (against the new base) + the tail it
        copies. None when a kept record's tail is not a copy (``RecordArrays.tail_sizes`` -1) or not known."""
        if c.tails is None:
            return None
        if keep is None:
            offsets, timestamps, tails = c.offsets, c.timestamps, c.tails
        else:
            offsets, timestamps, tails = c.offsets[keep], c.timestamps[keep], c.tails[keep]
        if len(tails) and tails.min() < 0:
            return None
        body = _varint_sizes(offsets - base_offset)
        body += _varint_sizes(timestamps - base_ts)
        body += tails
        body += 1  # attributes
        return int(body.sum() + _varint_sizes(body).sum())

    @staticmethod
    def largest_record(c: Columns, base_offset: int, base_ts: int) -> int | None:
        """The largest record's ``DefaultRecord.sizeInBytes`` (its length field: attributes, the offset and
        timestamp deltas against ``base_offset`` and ``base_ts``, the tail), ``records_size``'s rule per
        record; None when a tail is not a copy or not known."""
        tails = c.tails
        if tails is None or not len(tails) or tails.min() < 0:
            return None
        # only the records that can be the largest: the two deltas' varints take 2 to 20 bytes, so a
        # record whose tail is more than 18 bytes short of the longest tail is shorter than that record
        # (the varints of a whole batch were a tenth of the audit's record pass on lz4 data)
        near = np.flatnonzero(tails >= tails.max() - 18)
        body = _varint_sizes(c.offsets[near] - base_offset)
        body += _varint_sizes(c.timestamps[near] - base_ts)
        body += tails[near]
        return int(body.max()) + 1  # attributes

    @staticmethod
    def tombstones(c: Columns) -> int:
        return int((c.value_sizes < 0).sum())

    @staticmethod
    def keyed_from(c: Columns, lo: int):
        """The keyed records at or past ``lo``: (hashes, offsets, which records they are)."""
        sel = (c.key_sizes >= 0) & (c.offsets >= lo)
        return c.hashes[sel], c.offsets[sel], sel

    @staticmethod
    def found_from_puts(c: Columns, sel, is_last, lookup):
        """Kafka's ``map.get`` for each record of a batch whose records ``sel`` were put in the map:
        a put record's own offset when it was its key's last put, else past any offset; the other
        keyed records looked up (keyless ones are never the latest for a key)."""
        found = np.full(len(c.offsets), -1, dtype=np.int64)
        found[sel] = np.where(is_last, c.offsets[sel], _PAST_EVERY_OFFSET)
        rest = ~sel & (c.key_sizes >= 0)
        if rest.any():
            found[rest] = lookup(c.hashes[rest])
        return found

    @staticmethod
    def none_kept(n: int):
        return np.zeros(n, dtype=bool)

    @staticmethod
    def count(mask) -> int:
        return int(mask.sum())

    @staticmethod
    def flags(mask) -> list:
        return mask.tolist()

    @staticmethod
    def decide(c: Columns, keep, latest_offset, found, retain_deletes):
        """(kept mask or None when every record stays, a kept record is a tombstone, a tombstone
        would be judged by its deletes: latest for its key and not past the map)."""
        tomb = c.value_sizes < 0
        past = c.offsets > latest_offset
        latest_for_key = (c.key_sizes >= 0) & (c.offsets >= found(c.hashes))
        judged = bool((tomb & latest_for_key & ~past).any())
        out = retained(past, latest_for_key, tomb, retain_deletes)
        if keep is not None:
            out &= keep
        if out.all():
            return None, bool(tomb.any()), judged
        return out, bool((tomb & out).any()), judged


    @staticmethod
    def splice(data: bytes, c: Columns, keep, base_offset: int, base_ts: int, batch_base_ts: int) -> bytes | None:
        """``encode.splice_records`` in the C decoder's loop (``_decode.splice``, a record at a time in C) or,
        with a decoder built before it, with the varints in vector operations: the records section a clean
        writes for the kept records, their tails copied from the decompressed section ``data`` behind new
        heads (length, attributes, deltas) built at once. The records' places in ``data`` follow from their sizes (their deltas against the batch's
        own base timestamp ``batch_base_ts``, a CreateTime batch's); None when they do not add up to
        ``data`` (a LogAppendTime batch: its records' own deltas are not in the arrays) or a kept tail is
        not a copy: ``encode.splice_records`` then."""
        if c.tails is None or len(c.tails) == 0:
            return None
        if _c_splice is not None:  # the same rule a record at a time in C: no per-field vector passes
            return _c_splice(data, c.offsets, c.timestamps, c.tails, None if keep is None else keep.view(np.uint8),
                             base_offset, base_ts, batch_base_ts)
        if c.tails.min() < 0:
            return None
        off_deltas = c.offsets - base_offset
        body = _varint_sizes(off_deltas) + _varint_sizes(c.timestamps - batch_base_ts) + c.tails + 1
        ends = np.cumsum(body + _varint_sizes(body))
        if int(ends[-1]) != len(data):
            return None
        if keep is None:
            off_deltas, timestamps, tails, src = off_deltas, c.timestamps, c.tails, ends - c.tails
        else:
            off_deltas, timestamps, tails, src = off_deltas[keep], c.timestamps[keep], c.tails[keep], (ends - c.tails)[keep]
        ts_deltas = timestamps - base_ts
        n_off, n_ts = _varint_sizes(off_deltas), _varint_sizes(ts_deltas)
        body = 1 + n_off + n_ts + tails
        n_len = _varint_sizes(body)
        head = n_len + 1 + n_ts + n_off  # each record's new head: length, attributes, the two deltas
        head_end = np.cumsum(head)
        at = head_end - head
        heads = np.zeros(int(head_end[-1]), dtype=np.uint8)  # the attributes byte stays 0
        _put_varints(heads, at, body, n_len)
        _put_varints(heads, at + n_len + 1, ts_deltas, n_ts)
        _put_varints(heads, at + n_len + 1 + n_ts, off_deltas, n_off)
        heads, section = heads.tobytes(), memoryview(data)
        parts = []
        add = parts.append
        for h0, h1, s0, s1 in zip(at.tolist(), head_end.tolist(), src.tolist(), (src + tails).tolist()):
            add(heads[h0:h1])
            add(section[s0:s1])
        return b"".join(parts)


def _put_varints(out, at, values, sizes) -> None:
    """Each value's zigzag varint written into ``out`` at ``at`` (``sizes`` its bytes, ``_varint_sizes``)."""
    zigzag = ((values << 1) ^ (values >> 63)).view(np.uint64)
    for k in range(int(sizes.max())):
        m = sizes > k
        byte = (zigzag[m] >> np.uint64(7 * k)) & np.uint64(0x7F)
        byte |= np.where(sizes[m] - 1 > k, np.uint64(0x80), np.uint64(0))
        out[at[m] + k] = byte.astype(np.uint8)


class PureOps:
    """Masks are lists of bools; a record at a time."""

    name = "python"

    @staticmethod
    def columns(arr) -> Columns:
        def col(buf, code):
            a = array(code)
            a.frombytes(buf)
            return a.tolist()
        return Columns(col(arr.offsets, "q"), col(arr.key_hashes, "q"), col(arr.key_sizes, "i"),
                       col(arr.value_sizes, "i"), col(arr.timestamps, "q"),
                       None if arr.tail_sizes is None else col(arr.tail_sizes, "i"))

    @staticmethod
    def first_timestamp(c: Columns, keep) -> int:
        return c.timestamps[0] if keep is None else next(t for t, k in zip(c.timestamps, keep) if k)

    @staticmethod
    def splice(data, c, keep, base_offset, base_ts, batch_base_ts):
        return None  # encode.splice_records, a record at a time

    @staticmethod
    def records_size(c: Columns, keep, base_offset: int, base_ts: int) -> int | None:
        if c.tails is None:
            return None
        total = 0
        for i, (o, t, tail) in enumerate(zip(c.offsets, c.timestamps, c.tails)):
            if keep is not None and not keep[i]:
                continue
            if tail < 0:
                return None
            body = 1 + varint_size(o - base_offset) + varint_size(t - base_ts) + tail
            total += varint_size(body) + body
        return total

    @staticmethod
    def largest_record(c: Columns, base_offset: int, base_ts: int) -> int | None:
        if c.tails is None or not c.tails or min(c.tails) < 0:
            return None
        return max(1 + varint_size(o - base_offset) + varint_size(t - base_ts) + tail
                   for o, t, tail in zip(c.offsets, c.timestamps, c.tails))

    @staticmethod
    def tombstones(c: Columns) -> int:
        return sum(1 for v in c.value_sizes if v < 0)

    @staticmethod
    def keyed_from(c: Columns, lo: int):
        sel = [i for i, (k, o) in enumerate(zip(c.key_sizes, c.offsets)) if k >= 0 and o >= lo]
        return [c.hashes[i] for i in sel], [c.offsets[i] for i in sel], sel

    @staticmethod
    def none_kept(n: int):
        return [False] * n

    @staticmethod
    def count(mask) -> int:
        return sum(mask)

    @staticmethod
    def flags(mask) -> list:
        return list(mask)

    @staticmethod
    def decide(c: Columns, keep, latest_offset, found, retain_deletes):
        found_at = found(c.hashes)
        out, judged = [], False
        for i, (o, k, v) in enumerate(zip(c.offsets, c.key_sizes, c.value_sizes)):
            tomb, past = v < 0, o > latest_offset
            latest_for_key = k >= 0 and o >= found_at[i]
            judged = judged or (tomb and latest_for_key and not past)
            out.append(bool(retained(past, latest_for_key, tomb, retain_deletes)) and (keep is None or keep[i]))
        tomb_kept = any(v < 0 and r for v, r in zip(c.value_sizes, out))
        return (None if all(out) else out), tomb_kept, judged


OPS = NumpyOps if np is not None else PureOps

"""A batch's records as fixed-width arrays: what bulk scans turn into numpy or Arrow columns
without a Python object per record.

Every field is a ``bytes`` object in native byte order (int64 offsets, timestamps and key hashes,
int32 key and value sizes, -1 for null) plus the non-null keys back to back, so that a consumer wraps
them with ``numpy.frombuffer`` or ``pyarrow.py_buffer`` at no copy. The key hash is XXH64 with seed 42,
the hash Spark's ``xxhash64()`` gives a binary column: the audit groups keys by it whether the records
were decoded here or in the JVM. The C loop in ``_decode.c`` fills them; ``from_columns`` is the
pure-Python way to the same bytes.
"""

from __future__ import annotations

import os
import struct
from array import array

from monitor.kafka.record.varint import varint_size

try:
    if os.environ.get("COMPACTION_MONITOR_PURE_PYTHON"):
        raise ImportError("pure Python requested")
    from monitor.kafka.record._decode import xxh64 as _c_xxh64
except ImportError:
    _c_xxh64 = None

NULL_KEY_HASH = 42  # Spark: xxhash64(null) is the seed


class RecordArrays:
    """``tail_sizes`` (int32): each record's bytes from its key length varint to its end (key, value,
    headers), which a clean copies as they are: the cleaner simulation sizes a rewritten batch from them
    and its deltas (``monitor.model.cleanarrays``). -1 for a record a clean writes differently (a header
    key that is not UTF-8: Kafka writes back the String it decoded). None from a C decoder built before
    them: the simulation then decodes such a batch's records."""

    __slots__ = ("offsets", "timestamps", "key_hashes", "key_sizes", "value_sizes", "keys", "tail_sizes")

    def __init__(self, offsets: bytes, timestamps: bytes, key_hashes: bytes, key_sizes: bytes, value_sizes: bytes,
                 keys: bytes, tail_sizes: bytes | None = None):
        self.offsets, self.timestamps, self.key_hashes = offsets, timestamps, key_hashes
        self.key_sizes, self.value_sizes, self.keys = key_sizes, value_sizes, keys
        self.tail_sizes = tail_sizes

    def __len__(self) -> int:
        return len(self.offsets) // 8

    @classmethod
    def from_columns(cls, cols) -> "RecordArrays":
        """The same arrays from a RecordColumns (legacy message sets, or no C decoder)."""
        keys = cols.keys
        return cls(array("q", cols.offsets).tobytes(), array("q", cols.timestamps).tobytes(),
                   array("q", (NULL_KEY_HASH if k is None else xxh64(k) for k in keys)).tobytes(),
                   array("i", (-1 if k is None else len(k) for k in keys)).tobytes(),
                   array("i", (-1 if v < 0 else v for v in cols.value_sizes)).tobytes(),
                   b"".join(k for k in keys if k),
                   array("i", (tail_size(k, v, h) for k, v, h in zip(keys, cols.value_sizes, cols.headers))).tobytes())


def headers_size(headers) -> int:
    """The bytes of a record's headers section (count varint, then each key and value with its length)."""
    size = varint_size(len(headers))
    for hkey, hval in headers:
        klen = len(hkey.encode("utf-8")) if isinstance(hkey, str) else len(hkey)
        size += varint_size(klen) + klen
        if hval is None:
            size += 1
        else:
            size += varint_size(len(hval)) + len(hval)
    return size


def tail_size(key: bytes | None, value_size: int, headers) -> int:
    """A record's tail (``RecordArrays.tail_sizes``) from its decoded fields; -1 when a header key was not
    UTF-8 (decoded with replacement characters, as the C loop's check finds)."""
    if headers and any("\ufffd" in k for k, _ in headers):
        return -1
    size = 1 if key is None else varint_size(len(key)) + len(key)
    size += 1 if value_size < 0 else varint_size(value_size) + value_size
    return size + (headers_size(headers) if headers else 1)


_P1, _P2, _P3, _P4, _P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                           9650029242287828579, 2870177450012600261)
_M = (1 << 64) - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def _xxh64_py(data: bytes, seed: int = 42) -> int:
    n, p = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        while p + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, p)
            v = [_round(a, lane) for a, lane in zip(v, lanes)]
            p += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for a in v:
            h = ((h ^ _round(0, a)) * _P1 + _P4) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while p + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, p)[0]), 27) * _P1 + _P4) & _M
        p += 8
    if p + 4 <= n:
        h = (_rotl(h ^ ((struct.unpack_from("<I", data, p)[0] * _P1) & _M), 23) * _P2 + _P3) & _M
        p += 4
    while p < n:
        h = (_rotl(h ^ ((data[p] * _P5) & _M), 11) * _P1) & _M
        p += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    h ^= h >> 32
    return h - (1 << 64) if h >= 1 << 63 else h


def xxh64(data: bytes, seed: int = 42) -> int:
    """Signed 64-bit XXH64 of ``data``: Spark's ``xxhash64(binary)`` with its default seed 42."""
    return _c_xxh64(data, seed) if _c_xxh64 is not None else _xxh64_py(data, seed)

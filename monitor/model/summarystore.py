"""The collector's summary cache as bytes: what a restart needs to trust instead of reading a segment again.

Pure: ``encode`` turns segment summaries (``monitor.model.summary.SegmentSummary``),
``__consumer_offsets`` segments' commits (``monitor.kafka.offsetgroups.SegmentCommits``) and active
segments' keys (``monitor.model.activekeys.ActiveKeys``) into one file's
bytes, ``decode`` turns bytes back or raises ``CacheRejected`` with one of ``REJECTED`` and a line saying
why; the file, its state dir and when to trust an entry are the collector's
(``collectors.logdirs.summary_state``).

Serialised generically from the dataclasses' fields and type hints, never field by field by hand:
another field on ``SegmentSummary`` is encoded without a change here, and it changes ``VERSION`` (a
digest of every kind's field names and types, nested ``NamedTuple`` fields included, with ``FORMAT``),
so a cache written before the change is refused as another version, never read into the new shape.
``FORMAT`` is bumped by hand when a field keeps its name and type but changes its meaning. A field of a
type with no codec below fails at import (``TypeError``), not at the first write.

Layout: ``MAGIC``, one JSON header line (format, version, entry count, payload length), the payload
(zlib, one JSON array per entry: its kind, then its field values in field order), then the SHA-256
of every byte before it. A file that does not start with ``MAGIC`` is foreign; shorter than its header
says, truncated; whose digest differs, edited (or damaged) since it was written. JSON, not pickle: a
file edited by hand must never run code.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
import operator
import sys
import types
import zlib
from array import array
from typing import Any, Callable, Iterable, Union, get_args, get_origin, get_type_hints

from monitor.fileio import strictjson
from monitor.kafka.offsetgroups import SegmentCommits
from monitor.model.activekeys import ActiveKeys, KeySizes
from monitor.model.summary import SegmentSummary

FORMAT = 1  # bump when a field's meaning changes under the same name and type
MAGIC = b"compaction-monitor summary cache\n"
# why a cache file is not used: written by another version of the monitor; shorter than it says; its
# digest differs (edited by hand, damaged); not a cache file at all; a sound digest over content that
# does not decode (a bug of the writer)
REJECTED = ("version", "truncated", "checksum", "foreign", "malformed")
KINDS: dict[str, type] = {"s": SegmentSummary, "c": SegmentCommits, "a": ActiveKeys}
DIGEST = 32
MAX_HEADER = 4096


class CacheRejected(ValueError):
    """A cache file not to be trusted: ``reason`` one of ``REJECTED``, ``detail`` what was found."""

    def __init__(self, reason: str, detail: str):
        self.reason, self.detail = reason, detail
        super().__init__(f"{reason}: {detail}")


Codec = tuple[str, Callable[[Any], Any], Callable[[Any], Any]]  # (type's description, encode, decode)


def _check(kind: type, v):
    if type(v) is not kind:  # bool is no int here, an int no float
        raise ValueError(f"expected {kind.__name__}, found {type(v).__name__}")
    return v


def _scalar(kind: type) -> Codec:
    return kind.__name__, lambda v: v, lambda v: _check(kind, v)


def _bytes_codec() -> Codec:
    return "bytes", lambda v: base64.b64encode(v).decode(), lambda v: base64.b64decode(_check(str, v), validate=True)


def _array_codec() -> Codec:
    """An array as its typecode and its bytes, little-endian whatever the machine's order."""
    def enc(a: array):
        b = array(a.typecode, a)
        if sys.byteorder == "big":
            b.byteswap()
        return [a.typecode, base64.b64encode(b.tobytes()).decode()]

    def dec(v):
        code, data = v
        out = array(_check(str, code))
        if data:  # (most are empty: a segment without tombstones, horizons or aborts)
            # binascii's strict mode: base64's validate=True (no character outside the alphabet), without its wrapper
            out.frombytes(binascii.a2b_base64(_check(str, data), strict_mode=True))
            if sys.byteorder == "big":
                out.byteswap()
        return out

    return "array", enc, dec


def _two_arrays_codec(name: str, what: str, make) -> Codec:
    """A mapping of ints to ints as two arrays of 64-bit ints (its keys, its values), 16 bytes a key, not a
    JSON pair each; decoded by ``make(keys, values)``. ``what`` names it in a decode error."""
    _, enc_a, dec_a = _array_codec()

    def enc(m):
        return [enc_a(array("q", m.keys())), enc_a(array("q", m.values()))]

    def dec(v):
        keys, values = (dec_a(x) for x in _check(list, v))
        if keys.typecode != "q" or values.typecode != "q" or len(keys) != len(values):
            raise ValueError(f"{what}'s two arrays differ in type or length")
        return make(keys, values)

    return name, enc, dec


def _intmap_codec() -> Codec:
    """An int -> int dict (an active segment's key hashes and sizes, ``ActiveKeys``, up to a million)."""
    return _two_arrays_codec("intmap", "an int map", lambda keys, values: dict(zip(keys, values)))


def _keysizes_codec() -> Codec:
    """An active segment's key set (``monitor.model.activekeys.KeySizes``) decoded as its two arrays
    (packed until the tally reads on), never made a dict here."""
    return _two_arrays_codec("keysizes", "a key set",
                             lambda keys, values: KeySizes(keys, values) if keys else KeySizes())


def codec(tp) -> Codec:
    """The codec of one type hint; TypeError for a type this cache cannot hold."""
    origin, args = get_origin(tp), get_args(tp)
    if tp in (int, str, float, bool):
        return _scalar(tp)
    if tp is KeySizes:
        return _keysizes_codec()
    if origin is dict and args == (int, int):
        return _intmap_codec()
    if tp is bytes:
        return _bytes_codec()
    if tp is array:
        return _array_codec()
    if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        name, enc, dec = codec(next(a for a in args if a is not type(None)))
        return f"{name}|None", (lambda v: None if v is None else enc(v)), (lambda v: None if v is None else dec(v))
    if origin in (list, tuple) and (origin is list or (len(args) == 2 and args[1] is Ellipsis)):
        name, enc, dec = codec(args[0])
        return (f"{origin.__name__}[{name}]", lambda v: [enc(x) for x in v],
                lambda v: origin(dec(x) for x in _check(list, v)))
    if origin is dict and len(args) == 2:
        (kn, ke, kd), (vn, ve, vd) = codec(args[0]), codec(args[1])
        return (f"dict[{kn},{vn}]", lambda v: [[ke(k), ve(x)] for k, x in v.items()],
                lambda v: {kd(k): vd(x) for k, x in _check(list, v)})
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):  # a NamedTuple
        parts = [codec(h) for h in get_type_hints(tp).values()]
        desc = ",".join(f"{f}:{p[0]}" for f, p in zip(tp._fields, parts))

        def dec_nt(v):
            if len(_check(list, v)) != len(parts):
                raise ValueError(f"{tp.__name__}: {len(v)} fields, expected {len(parts)}")
            return tp(*(p[2](x) for p, x in zip(parts, v)))

        return f"{tp.__name__}({desc})", lambda v: [p[1](x) for p, x in zip(parts, v)], dec_nt
    raise TypeError(f"no cache codec for {tp!r}")


def _fields(cls) -> list[tuple[str, Codec]]:
    hints = get_type_hints(cls)
    return [(f.name, codec(hints[f.name])) for f in dataclasses.fields(cls)]


FIELDS: dict[str, list[tuple[str, Codec]]] = {k: _fields(cls) for k, cls in KINDS.items()}
_SCALARS = (int, str, float, bool)


class _Plan:
    """One kind's fields as positions: plain scalars (checked by type), the others through their codec;
    all read in one ``attrgetter`` call. A summary per segment, 100,000 of them on a large broker: the
    per-entry cost is what a save and a start pay."""

    def __init__(self, cls, fields):
        hints = get_type_hints(cls)
        self.cls, self.width = cls, len(fields)
        self.get = operator.attrgetter(*(n for n, _ in fields))
        self.plain = [(i, hints[n]) for i, (n, _) in enumerate(fields) if hints[n] in _SCALARS]
        # the plain fields' values and types, read and compared in one call each (the check's loop only on a mismatch)
        idx = [i for i, _ in self.plain]
        self.plain_get = (operator.itemgetter(*idx) if len(idx) > 1 else
                          (lambda v, i=idx[0]: (v[i],)) if idx else (lambda v: ()))
        self.plain_types = tuple(tp for _, tp in self.plain)
        # fields whose default is a shared read-only empty (``SegmentSummary.SHARED_EMPTIES``): decoded empty, they
        # hold that one again, not an empty container each (the cold read's shape, ~650 B a segment less); its
        # encoding (what most segments hold) is told by equality and never decoded
        shared = getattr(cls, "SHARED_EMPTIES", {}).values()
        made = [f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
                for f in dataclasses.fields(cls)]
        empties = {i: v for i, v in enumerate(made) if any(v is e for e in shared)}
        self.coded = [(i, c[1], c[2], empties.get(i), c[1](empties[i]) if i in empties else None)
                      for i, (n, c) in enumerate(fields) if hints[n] not in _SCALARS]

    def encode(self, obj) -> list:
        vals = list(self.get(obj))
        for i, enc, _, _, _ in self.coded:
            vals[i] = enc(vals[i])
        return vals

    def decode(self, vals: list):
        if len(vals) != self.width:
            raise ValueError(f"{len(vals)} fields, {self.cls.__name__} has {self.width}")
        if tuple(map(type, self.plain_get(vals))) != self.plain_types:
            for i, tp in self.plain:
                if type(vals[i]) is not tp:
                    raise ValueError(f"field {i}: expected {tp.__name__}, found {type(vals[i]).__name__}")
        for i, _, dec, empty, empty_encoded in self.coded:
            v = vals[i]
            if empty is not None and v == empty_encoded:
                vals[i] = empty
                continue
            v = dec(v)
            vals[i] = empty if empty is not None and not v else v
        return self.cls(*vals)


_PLANS = {k: _Plan(KINDS[k], fs) for k, fs in FIELDS.items()}
_KIND_OF = {cls: k for k, cls in KINDS.items()}


def version(kinds: dict[str, type] = KINDS, fmt: int = FORMAT) -> str:
    """``fmt`` and every kind's field names and types, as one digest: what a cache must match."""
    text = f"{fmt};" + ";".join(f"{k}={cls.__name__}(" + ",".join(f"{n}:{c[0]}" for n, c in _fields(cls)) + ")"
                                 for k, cls in kinds.items())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


VERSION = version()


def _entry(obj) -> bytes:
    kind = _KIND_OF[type(obj)]
    return strictjson.dumps([kind, *_PLANS[kind].encode(obj)], separators=(",", ":")).encode()


def encode(entries: Iterable, meta: dict | None = None) -> Iterable[bytes]:
    """The file's bytes, in pieces (a large cache is never one string in memory twice): ``entries``
    are ``SegmentSummary``, ``SegmentCommits`` and ``ActiveKeys``; ``meta`` (plain JSON) goes into the header."""
    z = zlib.compressobj(1)  # level 1: the cache is written after refreshes, on the collector's time
    chunks, n = [], 0
    for e in entries:
        chunks.append(z.compress(_entry(e) + b"\n"))
        n += 1
    chunks.append(z.flush())
    payload = b"".join(chunks)
    head = {"format": FORMAT, "version": VERSION, "entries": n, "payload_bytes": len(payload), **(meta or {})}
    h = hashlib.sha256()
    for piece in (MAGIC, strictjson.dumps(head, sort_keys=True).encode() + b"\n", payload):
        h.update(piece)
        yield piece
    yield h.digest()


def header(data: bytes) -> tuple[dict, int]:
    """(the header, where the payload starts); CacheRejected when the bytes are no cache of this version."""
    if not data.startswith(MAGIC):
        if MAGIC.startswith(data):
            raise CacheRejected("truncated", f"{len(data)} bytes, shorter than the cache's mark")
        raise CacheRejected("foreign", "not a summary cache (its first bytes are not the cache's mark)")
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + MAX_HEADER)
    if end < 0:
        raise CacheRejected("truncated" if len(data) < len(MAGIC) + MAX_HEADER else "malformed",
                            f"no header line within {MAX_HEADER} bytes of the mark")
    try:
        head = json.loads(data[len(MAGIC):end])
    except ValueError as exc:
        raise CacheRejected("checksum", f"header is no JSON ({exc})") from None
    if not isinstance(head, dict):
        raise CacheRejected("checksum", "header is no JSON object")
    if head.get("format") != FORMAT or head.get("version") != VERSION:
        raise CacheRejected("version", f"format {head.get('format')!r} version {head.get('version')!r}, "
                                       f"this monitor reads format {FORMAT} version {VERSION}")
    return head, end + 1


def decode(data: bytes) -> tuple[dict, list]:
    """(header, entries) of a cache file's bytes; CacheRejected (with the reason) for anything else."""
    head, start = header(data)
    size = head.get("payload_bytes")
    if type(size) is not int or size < 0:
        raise CacheRejected("checksum", f"header's payload_bytes is {size!r}")
    want = start + size + DIGEST
    if len(data) < want:
        raise CacheRejected("truncated", f"{len(data)} bytes, the header says {want}")
    if len(data) > want:
        raise CacheRejected("checksum", f"{len(data)} bytes, the header says {want}")
    if hashlib.sha256(data[:want - DIGEST]).digest() != data[want - DIGEST:]:
        raise CacheRejected("checksum", "its SHA-256 differs from the one written (edited or damaged since)")
    try:
        entries = [_decode_entry(row) for rows in _rows(_lines(data, start, size)) for row in rows]
    except (ValueError, TypeError, zlib.error, KeyError) as exc:
        raise CacheRejected("malformed", f"an entry does not decode ({exc})") from None
    if len(entries) != head.get("entries"):
        raise CacheRejected("malformed", f"{len(entries)} entries, the header says {head.get('entries')!r}")
    return head, entries


CHUNK = 1 << 16  # compressed bytes inflated at a time


def _lines(data: bytes, start: int, size: int):
    """The payload's lines as it is inflated, a chunk at a time: a restart holds the entries decoded so far
    and one chunk's lines, never the whole inflated payload and its list of lines beside them (at 100,000
    segments some 40 MB at once). A line longer than a chunk (an active segment's keys) is joined once.
    ValueError when the stream ends early or goes on past its end."""
    z, view, part = zlib.decompressobj(), memoryview(data)[start:start + size], []
    for at in range(0, size, CHUNK):
        *done, tail = z.decompress(view[at:at + CHUNK]).split(b"\n")
        if done:
            part.append(done[0])
            yield b"".join(part)
            yield from done[1:]
            part = []
        part.append(tail)
        if z.unused_data:
            raise ValueError("bytes after the compressed payload's end")
    *done, tail = (b"".join(part) + z.flush()).split(b"\n")  # what flush gives may end lines too
    if not z.eof:
        raise ValueError("the compressed payload ends early")
    yield from done
    if tail:
        yield tail


ROWS = 512  # lines parsed by one json call


def _rows(lines):
    """The lines' JSON rows, ``ROWS`` lines to a ``json.loads`` (one call a line cost more than its parse: a
    restart decodes 100,000 of them); ValueError when a line is no one JSON array."""
    batch = []
    for line in lines:
        batch.append(line)
        if len(batch) == ROWS:
            yield _parsed(batch)
            batch = []
    if batch:
        yield _parsed(batch)


def _parsed(batch: list) -> list:
    rows = json.loads(b"[" + b",".join(batch) + b"]")
    if len(rows) != len(batch) or not all(type(r) is list for r in rows):
        raise ValueError("a line is not one JSON array")
    return rows


def _decode_entry(row):
    return _PLANS[row[0]].decode(row[1:])


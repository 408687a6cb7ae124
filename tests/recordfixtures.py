"""Record fixtures made at test time: segment files in every magic, codec and odd layout, each with
the records a reader must find in it.

The bytes come from kafka-python's record builders (``kafka.record``), a client library maintained
apart from this project, with its own codecs (python-snappy with xerial framing, lz4, zstandard).
A builder writes what a producer sends; a broker then stamps a few header fields when it appends
(base offset, partition leader epoch, the wrapper's offset and timestamp, LogAppendTime) and a
cleaner may leave odd layouts (offset gaps, a batch emptied of records). ``_restamp_*`` does those
steps by hand, the way Kafka's ``LogValidator`` and ``LogCleaner`` do, recomputing the CRC.

The expected records are what the builder was given (offsets, timestamps, keys, values, headers),
never what this project's reader says, so a test comparing the two can fail. Bytes written by the
real broker are compared with Kafka's own ``kafka-dump-log`` instead (tests/monitor/kafka/record/test_reader_vs_kafka.py).
"""

from __future__ import annotations

import functools
import random
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.codec import snappy_encode
from kafka.record.util import calc_crc32c

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
LEGACY_CODECS = ("none", "gzip", "snappy", "lz4")  # zstd came with magic 2
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
CONTROL_TYPES = {"ABORT": 0, "COMMIT": 1}
NO_TIMESTAMP = -1  # what a magic 0 message has, and what a reader reports for it
T0 = 1_700_000_000_000  # a fixed create time (ms) so every run writes the same bytes

# legacy message: offset int64, size int32, crc uint32, magic int8, attributes int8, [timestamp int64]
LEGACY_PREFIX = struct.Struct(">qiIbb")
LEGACY_CRC_AT, LEGACY_ATTRS_AT, LEGACY_TIMESTAMP_AT = 12, 17, 18
# v2 batch header (DefaultRecordBatch.java): the CRC-32C covers attributes..end
V2_BASE_OFFSET_AT, V2_LEADER_EPOCH_AT, V2_CRC_AT, V2_ATTRS_AT = 0, 12, 17, 21
V2_LAST_OFFSET_DELTA_AT, V2_FIRST_TS_AT, V2_MAX_TS_AT = 23, 27, 35
V2_HEADER_SIZE = 61


@dataclass(frozen=True)
class Rec:
    """One record as a reader must report it."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


@dataclass
class Written:
    """One batch (magic 2) or top-level message (magic 0/1) as it lies in the file."""

    data: bytes
    magic: int
    compression: str
    records: list[Rec]
    timestamp_type: str = "create"
    transactional: bool = False
    control: str | None = None  # "COMMIT"/"ABORT" for a control batch
    producer_id: int = -1
    last_offset: int | None = None

    def __post_init__(self):
        if self.last_offset is None:
            self.last_offset = self.records[-1].offset


@dataclass
class Segment:
    """A segment file and what is in it, batch by batch."""

    path: Path
    batches: list[Written] = field(default_factory=list)

    @property
    def records(self) -> list[Rec]:
        return [r for b in self.batches for r in b.records]

    @property
    def positions(self) -> list[int]:
        out, pos = [], 0
        for b in self.batches:
            out.append(pos)
            pos += len(b.data)
        return out


def items(offsets, prefix: str = "k", tombstone_every: int = 0, null_key_every: int = 0, distinct: int = 0,
          step_ms: int = 7):
    """Compressible records at ``offsets``: key ``prefix-N``, value ``value N ...`` repeated, create time
    ``T0 + offset * step_ms``; every ``tombstone_every``-th a null value, every ``null_key_every``-th a null key."""
    out = []
    for i, off in enumerate(offsets):
        n = off % distinct if distinct else off
        key = None if null_key_every and i % null_key_every == null_key_every - 1 else f"{prefix}-{n}".encode()
        value = None if tombstone_every and i % tombstone_every == tombstone_every - 1 else \
            (f"value {off} of {prefix} " * (4 + off % 5)).encode()
        out.append(Rec(off, T0 + off * step_ms, key, value))
    return out


# ------------------------------------------------------------------ magic 0 and 1


def legacy(magic: int, records: list[Rec], codec: str = "none", log_append_time: int | None = None) -> list[Written]:
    """Magic 0/1 messages as a broker stores them: one message per record, or (compressed) one
    wrapper whose offset is its last inner record's; a v1 wrapper's inner offsets are relative
    (0..n-1), a v0 wrapper's absolute. ``log_append_time`` (v1): the broker's time on every message
    (compressed: on the wrapper, which then stands for every inner one)."""
    assert magic in (0, 1) and codec in LEGACY_CODECS
    if magic == 0:
        assert log_append_time is None, "magic 0 has no timestamp"
        records = [Rec(r.offset, NO_TIMESTAMP, r.key, r.value) for r in records]
    ts_type = "none" if magic == 0 else ("log_append" if log_append_time is not None else "create")
    expected = [Rec(r.offset, log_append_time, r.key, r.value) for r in records] \
        if log_append_time is not None else list(records)
    if codec == "none":
        out = []
        for r, e in zip(records, expected):
            b = LegacyRecordBatchBuilder(magic, 0, 1 << 30)
            assert b.append(r.offset, r.timestamp, r.key, r.value) is not None
            data = bytes(b.build())
            if log_append_time is not None:
                data = _restamp_legacy(data, timestamp=log_append_time, attributes=TIMESTAMP_TYPE_BIT)
            out.append(Written(data, magic, "none", [e], ts_type))
        return out
    b = LegacyRecordBatchBuilder(magic, CODECS[codec], 1 << 30)
    for i, r in enumerate(records):
        inner_offset = i if magic == 1 else r.offset
        assert b.append(inner_offset, r.timestamp, r.key, r.value) is not None
    data = bytes(b.build())  # a producer's wrapper: offset 0, timestamp 0
    assert data[LEGACY_ATTRS_AT] & 0x07 == CODECS[codec], "the builder did not compress"
    if magic == 0:
        data = _restamp_legacy(data, offset=records[-1].offset)
    else:
        stamp = log_append_time if log_append_time is not None else max(r.timestamp for r in records)
        data = _restamp_legacy(data, offset=records[-1].offset, timestamp=stamp,
                               attributes=TIMESTAMP_TYPE_BIT if log_append_time is not None else 0)
    return [Written(data, magic, codec, expected, ts_type)]


def _restamp_legacy(data: bytes, offset: int | None = None, timestamp: int | None = None,
                    attributes: int = 0) -> bytes:
    """What the broker does to a message it appends: set its offset (outside the CRC), and for v1
    the timestamp and timestamp-type bit (inside it: the CRC-32 is recomputed)."""
    buf = bytearray(data)
    if offset is not None:
        struct.pack_into(">q", buf, 0, offset)
    if timestamp is not None:
        assert buf[16] == 1
        struct.pack_into(">q", buf, LEGACY_TIMESTAMP_AT, timestamp)
    buf[LEGACY_ATTRS_AT] |= attributes
    struct.pack_into(">I", buf, LEGACY_CRC_AT, zlib.crc32(bytes(buf[16:])))
    return bytes(buf)


# ------------------------------------------------------------------ magic 2


def v2(records: list[Rec], codec: str = "none", *, producer_id: int = -1, producer_epoch: int = -1,
       base_sequence: int = -1, transactional: bool = False, log_append_time: int | None = None,
       leader_epoch: int = 0, last_offset: int | None = None, raw_snappy: bool = False) -> Written:
    """One record batch v2 as a broker stores it: base offset and leader epoch set, LogAppendTime
    stamped as the max timestamp with the timestamp-type bit, and ``last_offset`` past the last
    record when a cleaner removed records from the batch's end (the header keeps the batch's range).
    ``raw_snappy``: snappy blocks without xerial's framing, as kafkajs and some other clients write."""
    if raw_snappy:
        assert codec == "snappy"
        w = v2(records, "none", producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
               transactional=transactional, log_append_time=log_append_time, leader_epoch=leader_epoch,
               last_offset=last_offset)
        data = bytearray(w.data[:V2_HEADER_SIZE]) + snappy_encode(w.data[V2_HEADER_SIZE:], xerial_compatible=False)
        struct.pack_into(">i", data, 8, len(data) - 12)
        w.data = _restamp_v2(data, records[0].offset, leader_epoch, attrs=CODECS["snappy"])
        w.compression = "snappy"
        return w
    base = records[0].offset
    b = DefaultRecordBatchBuilder(2, CODECS[codec], transactional, producer_id, producer_epoch, base_sequence,
                                  1 << 30)
    for r in records:
        assert b.append(r.offset - base, r.timestamp, r.key, r.value, list(r.headers)) is not None
    data = bytearray(b.build())
    assert data[V2_ATTRS_AT + 1] & 0x07 == CODECS[codec], "the builder did not compress (data not compressible?)"
    expected = records
    attrs = 0
    max_ts = None
    if log_append_time is not None:
        attrs, max_ts = TIMESTAMP_TYPE_BIT, log_append_time
        expected = [Rec(r.offset, log_append_time, r.key, r.value, r.headers) for r in records]
    data = _restamp_v2(data, base, leader_epoch, attrs=attrs, max_ts=max_ts,
                       last_offset_delta=None if last_offset is None else last_offset - base)
    return Written(data, 2, codec, expected, "log_append" if log_append_time is not None else "create",
                   transactional, producer_id=producer_id, last_offset=last_offset)


def control(offset: int, kind: str, producer_id: int, producer_epoch: int, timestamp: int,
            coordinator_epoch: int = 0) -> Written:
    """A transaction marker as the coordinator writes it: one control record in a transactional
    batch with the control bit; key = (version 0, type), value = (version 0, coordinator epoch)
    (ControlRecordType.java, EndTransactionMarker.java). The builder writes the record, the control
    bit is the broker's."""
    key = struct.pack(">hh", 0, CONTROL_TYPES[kind])
    value = struct.pack(">hi", 0, coordinator_epoch)
    b = DefaultRecordBatchBuilder(2, 0, True, producer_id, producer_epoch, -1, 1 << 30)
    b.append(0, timestamp, key, value, [])
    data = _restamp_v2(bytearray(b.build()), offset, 0, attrs=CONTROL_BIT)
    return Written(data, 2, "none", [Rec(offset, timestamp, key, value)], transactional=True, control=kind,
                   producer_id=producer_id)


def empty_v2(base_offset: int, last_offset: int, producer_id: int, producer_epoch: int, base_sequence: int,
             timestamp: int) -> Written:
    """A batch the cleaner emptied of records but kept for its producer state (LogCleaner keeps the
    last batch of each producer): record count 0, offset range and producer fields intact."""
    b = DefaultRecordBatchBuilder(2, 0, False, producer_id, producer_epoch, base_sequence, 1 << 30)
    data = bytearray(b.build())
    struct.pack_into(">qq", data, V2_FIRST_TS_AT, timestamp, timestamp)
    data = _restamp_v2(data, base_offset, 0, last_offset_delta=last_offset - base_offset)
    return Written(data, 2, "none", [], producer_id=producer_id, last_offset=last_offset)


def _restamp_v2(data: bytearray, base_offset: int, leader_epoch: int, attrs: int = 0, max_ts: int | None = None,
                last_offset_delta: int | None = None) -> bytes:
    """The broker's part of a v2 header: base offset and leader epoch (outside the CRC), and the
    attributes, max timestamp and last offset delta (inside: the CRC-32C is recomputed)."""
    struct.pack_into(">q", data, V2_BASE_OFFSET_AT, base_offset)
    struct.pack_into(">i", data, V2_LEADER_EPOCH_AT, leader_epoch)
    (a,) = struct.unpack_from(">h", data, V2_ATTRS_AT)
    struct.pack_into(">h", data, V2_ATTRS_AT, a | attrs)
    if max_ts is not None:
        struct.pack_into(">q", data, V2_MAX_TS_AT, max_ts)
    if last_offset_delta is not None:
        struct.pack_into(">i", data, V2_LAST_OFFSET_DELTA_AT, last_offset_delta)
    struct.pack_into(">I", data, V2_CRC_AT, calc_crc32c(bytes(data[V2_ATTRS_AT:])))
    return bytes(data)


# ------------------------------------------------------------------ files


def write(path: Path, batches: list[Written]) -> Segment:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(b.data for b in batches))
    return Segment(path, list(batches))


def three_v2_batches(path: Path) -> Segment:
    """Offsets 0..5 in three v2 batches of two records: gzip, none, gzip (the second one's records
    are readable bytes at known positions, for tests that damage them)."""
    return write(path, [v2(items(range(0, 2)), "gzip"), v2(items(range(2, 4))), v2(items(range(4, 6)), "gzip")])


@functools.lru_cache(maxsize=1)
def gallery_batches() -> dict[str, list[Written]]:
    """One segment's batches per magic, codec and odd layout: name -> batches (in memory, the same
    bytes every run)."""
    out: dict[str, list[Written]] = {}
    for magic in (0, 1):
        for codec in LEGACY_CODECS:
            # two messages (or wrappers) so a position past the first one is tested too
            out[f"magic{magic}-{codec}"] = (
                legacy(magic, items(range(0, 5), f"m{magic}", tombstone_every=4), codec)
                + legacy(magic, items(range(5, 9), f"m{magic}", null_key_every=3), codec))
    append_ts = T0 + 3_600_000
    out["magic1-log-append-time"] = (legacy(1, items(range(0, 3)), "none", log_append_time=append_ts)
                                     + legacy(1, items(range(3, 8)), "gzip", log_append_time=append_ts + 5))
    for codec in CODECS:
        recs = items(range(0, 40), f"v2{codec}", tombstone_every=7, null_key_every=13, distinct=15)
        recs = [Rec(r.offset, r.timestamp, r.key, r.value, (("trace", f"t{r.offset}".encode()), ("empty", None))
                    if r.offset % 11 == 0 else ()) for r in recs]
        out[f"magic2-{codec}"] = [v2(recs[:25], codec), v2(recs[25:], codec, leader_epoch=3)]
    out["magic2-snappy-raw"] = [v2(items(range(0, 12), "raw"), "snappy", raw_snappy=True)]
    out["magic2-log-append-time"] = [v2(items(range(0, 10)), "lz4", log_append_time=append_ts),
                                     v2(items(range(10, 12)), log_append_time=append_ts + 1)]
    pid, epoch = 4000, 2
    out["magic2-transactions"] = [
        v2(items(range(0, 5), "tx"), "zstd", producer_id=pid, producer_epoch=epoch, base_sequence=0,
           transactional=True),
        control(5, "COMMIT", pid, epoch, T0 + 100),
        v2(items(range(6, 9), "tx"), producer_id=pid, producer_epoch=epoch, base_sequence=5, transactional=True),
        control(9, "ABORT", pid, epoch, T0 + 200),
    ]
    # after a clean: offset gaps inside a batch, a batch whose last records were removed (its header
    # keeps the original last offset), and a producer's emptied last batch
    kept = [r for r in items(range(0, 30), "c", distinct=10) if r.offset % 3 != 1]
    out["magic2-cleaned"] = [v2(kept[:8], "gzip", last_offset=12), v2(kept[8:], "snappy"),
                             empty_v2(30, 34, 77, 0, 30, T0 + 500)]
    # an upgraded topic: magic 0, then 1, then 2 in one segment, compressed and not
    out["mixed-magics"] = (legacy(0, items(range(0, 3), "old")) + legacy(0, items(range(3, 6), "old"), "snappy")
                           + legacy(1, items(range(6, 9), "mid"), "gzip") + legacy(1, items(range(9, 11), "mid"))
                           + [v2(items(range(11, 20), "new"), "zstd"), v2(items(range(20, 23), "new"))])
    return out


GALLERY = tuple(gallery_batches())

# Layouts Kafka reads and this project's reader does not (yet): name -> why. Tests mark them xfail
# (strict, so a fix shows up as a failure that asks for this entry to go).
READER_GAPS = {
    "magic0-lz4": "magic 0 lz4 carries the wrong frame-header checksum Kafka 0.8/0.9 wrote (KAFKA-3160); "
                  "Kafka ignores it for magic 0, monitor.kafka.record.codecs rejects it",
}


def gallery(folder: Path) -> dict[str, Segment]:
    """The gallery written under ``folder`` (``folder/NAME/00000000000000000000.log``): name -> Segment."""
    return {name: write(folder / name / "00000000000000000000.log", batches)
            for name, batches in gallery_batches().items()}


def many_batches(path: Path, legacy_messages: int = 1200, v2_batches: int = 3, seed: int = 5) -> Segment:
    """Many small top-level messages then a few v2 batches (a topic upgraded with data in it), with
    random sizes from a seeded generator."""
    rnd = random.Random(seed)
    batches = []
    for off in range(legacy_messages):
        batches += legacy(1, [Rec(off, T0 + off, f"key-{off}".encode(), b"v" * rnd.randrange(0, 40))])
    off = legacy_messages
    for _ in range(v2_batches):
        n = rnd.randrange(2, 50)
        batches.append(v2(items(range(off, off + n), "key"), "snappy"))
        off += n
    return write(path, batches)


def mangled(body: bytes, seed: int, trials: int):
    """``body`` with 1 to 4 random bytes changed, every fifth one also cut short (seeded: replayable)."""
    rnd = random.Random(seed)
    for trial in range(trials):
        mutated = bytearray(body)
        for _ in range(rnd.randint(1, 4)):
            mutated[rnd.randrange(len(mutated))] = rnd.randrange(256)
        if trial % 5 == 0:
            mutated = mutated[: rnd.randrange(len(mutated))]
        yield trial, bytes(mutated)

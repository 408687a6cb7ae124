"""Record batch format v2 (magic 2), as in Kafka's DefaultRecordBatch / DefaultRecord.

Batch header, 61 bytes, big-endian::

    baseOffset            int64   0
    batchLength           int32   8   bytes after this field: total = batchLength + 12
    partitionLeaderEpoch  int32  12   not covered by the CRC
    magic                 int8   16   2
    crc                   uint32 17   CRC-32C of bytes [21, end of batch)
    attributes            int16  21   bits 0-2 codec, 3 timestamp type, 4 transactional,
                                      5 control, 6 has delete horizon
    lastOffsetDelta       int32  23
    baseTimestamp         int64  27   the delete horizon when bit 6 is set
    maxTimestamp          int64  35
    producerId            int64  43
    producerEpoch         int16  51
    baseSequence          int32  53
    recordsCount          int32  57
    records                      61   one compressed stream when codec != 0

Record: length varint, attributes int8, timestampDelta varlong, offsetDelta
varint, keyLength varint (-1 null), key, valueLength varint (-1 null, a
tombstone), value, headersCount varint, then per header keyLength varint,
key (UTF-8), valueLength varint, value.
"""

from __future__ import annotations

import os
import struct

from crc32c import crc32c

from monitor.kafka.record.arrays import RecordArrays
from monitor.kafka.record.codecs import CODEC_NAMES, CodecError, decompress
from monitor.kafka.record.model import Record
from monitor.kafka.record.varint import VarintError, read_varint, varint_tail

try:  # the same loop in C, built by setup.py where a compiler exists; see _decode.c
    if os.environ.get("COMPACTION_MONITOR_PURE_PYTHON"):
        raise ImportError("pure Python requested")
    from monitor.kafka.record._decode import decode_arrays as _c_decode_arrays
    from monitor.kafka.record._decode import decode_columns as _c_decode_columns
except ImportError:
    _c_decode_columns = _c_decode_arrays = None


def decoder() -> str:
    """``"c"`` when this process decodes batches with the C extension (``_decode.c``), else
    ``"python"``: the audit reports it from each task, so a cluster whose executors fell back to the
    pure-Python loop (no compiler, a shipped source zip) shows it in summary.json."""
    return "c" if _c_decode_arrays is not None else "python"

HEADER = struct.Struct(
    ">q"  # baseOffset
    "i"  # batchLength
    "i"  # partitionLeaderEpoch
    "b"  # magic
    "I"  # crc (unsigned)
    "h"  # attributes
    "i"  # lastOffsetDelta
    "q"  # baseTimestamp
    "q"  # maxTimestamp
    "q"  # producerId
    "h"  # producerEpoch
    "i"  # baseSequence
    "i"  # recordsCount
)
HEADER_SIZE = HEADER.size
assert HEADER_SIZE == 61
LOG_OVERHEAD = struct.calcsize(">qi")  # offset + length prefix every format shares: 12
CRC_START = struct.calcsize(">qiibI")  # 21: the CRC covers attributes to the end
MAGIC_OFFSET = struct.calcsize(">qii")  # 16

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40


class RecordDecodeError(ValueError):
    """A record inside an otherwise framed batch does not parse; the reader adds file and position."""


class BatchV2:
    """One magic-2 batch: header fields parsed at once, records decoded on iteration."""

    __slots__ = (
        "file", "position", "base_offset", "batch_length", "partition_leader_epoch", "magic",
        "crc", "attributes", "last_offset_delta", "base_timestamp", "max_timestamp",
        "producer_id", "producer_epoch", "base_sequence", "records_count", "_body",
    )

    def __init__(self, file: str, position: int, header: bytes, body: bytes | None):
        (
            self.base_offset, self.batch_length, self.partition_leader_epoch, self.magic,
            self.crc, self.attributes, self.last_offset_delta, self.base_timestamp,
            self.max_timestamp, self.producer_id, self.producer_epoch, self.base_sequence,
            self.records_count,
        ) = HEADER.unpack_from(header, 0)
        self.file = file
        self.position = position
        self._body = body  # bytes after the 61-byte header; None when only headers were scanned

    # -- facts from the header -------------------------------------------------
    @property
    def size(self) -> int:
        """Total bytes of the batch in the file (what kafka-dump-log calls ``size``)."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def compression(self) -> str:
        return CODEC_NAMES.get(self.codec, f"unknown({self.codec})")

    @property
    def timestamp_type(self) -> str:
        return "log_append" if self.attributes & TIMESTAMP_TYPE_MASK else "create"

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """KIP-534: the time after which the cleaner may drop this batch's tombstones and markers."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None

    @property
    def first_timestamp(self) -> int:
        """The first record's timestamp (baseTimestamp unless it holds the delete horizon)."""
        return self.base_timestamp

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF

    # -- checks ----------------------------------------------------------------
    def crc_ok(self, header: bytes) -> bool:
        """CRC-32C over attributes..end: the header tail from byte 21, then the body."""
        return crc32c(self._body, crc32c(header[CRC_START:HEADER_SIZE])) == self.crc

    # -- records ---------------------------------------------------------------
    def records(self) -> list[Record]:
        """Decode every record (decompressing once); raises RecordDecodeError or CodecError."""
        c = self.columns()
        buf = c.buf
        return [Record(o, t, k, v, h, self, buf, p)
                for o, t, k, v, p, h in zip(c.offsets, c.timestamps, c.keys, c.value_sizes, c.value_positions, c.headers)]

    def columns(self) -> "RecordColumns":
        """The records as parallel lists (no object per record): what bulk scans want."""
        if self._body is None:
            raise ValueError("batch was scanned without its body")
        data = self._body
        if self.codec:
            data = decompress(self.codec, data)
        if _c_decode_columns is not None:
            try:
                cols = RecordColumns(data)
                (cols.offsets, cols.timestamps, cols.keys, cols.value_sizes, cols.value_positions,
                 cols.headers) = _c_decode_columns(data, self.records_count, self.base_offset, self.base_timestamp,
                                                   self.max_timestamp, bool(self.attributes & TIMESTAMP_TYPE_MASK))
                return cols
            except ValueError as exc:
                raise RecordDecodeError(str(exc)) from exc
        try:
            return _decode_columns(data, self)
        except (IndexError, VarintError) as exc:
            raise RecordDecodeError(f"record data ends early or is malformed: {exc}") from exc


    def arrays(self) -> RecordArrays:
        """The records as fixed-width arrays (see ``arrays.py``): what columnar scans want."""
        if self._body is None:
            raise ValueError("batch was scanned without its body")
        if _c_decode_arrays is None:
            return RecordArrays.from_columns(self.columns())
        data = decompress(self.codec, self._body, copy=False) if self.codec else self._body
        try:
            return RecordArrays(*_c_decode_arrays(data, self.records_count, self.base_offset, self.base_timestamp,
                                                  self.max_timestamp, bool(self.attributes & TIMESTAMP_TYPE_MASK)))
        except ValueError as exc:
            raise RecordDecodeError(str(exc)) from exc


class RecordColumns:
    """A batch's records column by column; ``buf`` holds the values at ``value_positions``."""

    __slots__ = ("buf", "offsets", "timestamps", "keys", "value_sizes", "value_positions", "headers")

    def __init__(self, buf):
        self.buf = buf
        self.offsets, self.timestamps, self.keys = [], [], []
        self.value_sizes, self.value_positions, self.headers = [], [], []

    def __len__(self) -> int:
        return len(self.offsets)

    @classmethod
    def from_records(cls, records) -> "RecordColumns":
        c = cls(None)
        for r in records:
            c.offsets.append(r.offset)
            c.timestamps.append(r.timestamp)
            c.keys.append(r.key)
            c.value_sizes.append(r.value_size)
            c.value_positions.append(-1)
            c.headers.append(r.headers)
        return c


def _decode_columns(buf: bytes, batch: BatchV2) -> RecordColumns:
    """The hot loop: one- and two-byte varints decoded inline (almost every field of a record),
    longer ones by ``varint_tail``; one slice per key, values left in place."""
    cols = RecordColumns(buf)
    add_offset, add_ts, add_key = cols.offsets.append, cols.timestamps.append, cols.keys.append
    add_vsize, add_vpos, add_headers = cols.value_sizes.append, cols.value_positions.append, cols.headers.append
    count = batch.records_count
    base_offset = batch.base_offset
    log_append = batch.attributes & TIMESTAMP_TYPE_MASK
    base_ts = batch.base_timestamp
    max_ts = batch.max_timestamp
    end = len(buf)
    pos = 0
    for _ in range(count):
        # length
        b = buf[pos]
        if b < 0x80:
            length = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            c = buf[pos + 1]
            if c < 0x80:
                n = (b & 0x7F) | (c << 7)
                length = (n >> 1) ^ -(n & 1)
                pos += 2
            else:
                length, pos = varint_tail(buf, pos + 1, b)
        rec_end = pos + length
        if length < 0 or rec_end > end:
            raise RecordDecodeError(f"record length {length} at {pos} runs past the records ({end} bytes)")
        pos += 1  # attributes (unused)
        # timestampDelta
        b = buf[pos]
        if b < 0x80:
            ts_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            c = buf[pos + 1]
            if c < 0x80:
                n = (b & 0x7F) | (c << 7)
                ts_delta = (n >> 1) ^ -(n & 1)
                pos += 2
            else:
                ts_delta, pos = varint_tail(buf, pos + 1, b)
        # offsetDelta
        b = buf[pos]
        if b < 0x80:
            off_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            c = buf[pos + 1]
            if c < 0x80:
                n = (b & 0x7F) | (c << 7)
                off_delta = (n >> 1) ^ -(n & 1)
                pos += 2
            else:
                off_delta, pos = varint_tail(buf, pos + 1, b)
        # key
        b = buf[pos]
        if b < 0x80:
            klen = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            c = buf[pos + 1]
            if c < 0x80:
                n = (b & 0x7F) | (c << 7)
                klen = (n >> 1) ^ -(n & 1)
                pos += 2
            else:
                klen, pos = varint_tail(buf, pos + 1, b)
        if klen >= 0:
            key = buf[pos : pos + klen]
            pos += klen
        else:
            key = None
        # value
        b = buf[pos]
        if b < 0x80:
            vlen = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            c = buf[pos + 1]
            if c < 0x80:
                n = (b & 0x7F) | (c << 7)
                vlen = (n >> 1) ^ -(n & 1)
                pos += 2
            else:
                vlen, pos = varint_tail(buf, pos + 1, b)
        vpos = pos
        if vlen > 0:
            pos += vlen
        # headers
        b = buf[pos]
        if b < 0x80:
            nh = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            c = buf[pos + 1]
            if c < 0x80:
                n = (b & 0x7F) | (c << 7)
                nh = (n >> 1) ^ -(n & 1)
                pos += 2
            else:
                nh, pos = varint_tail(buf, pos + 1, b)
        headers = _headers(buf, pos, nh, rec_end) if nh else ()
        if pos > rec_end or (not nh and pos != rec_end):
            raise RecordDecodeError(f"record fields run to {pos}, past its declared end {rec_end}" if pos > rec_end
                                    else f"record fields end at {pos}, {rec_end - pos} byte(s) before its declared "
                                         f"end {rec_end}")
        pos = rec_end
        add_offset(base_offset + off_delta)
        add_ts(max_ts if log_append else base_ts + ts_delta)
        add_key(key)
        add_vsize(vlen)
        add_vpos(vpos)
        add_headers(headers)
    if pos != end:
        raise RecordDecodeError(f"{end - pos} bytes left after {count} records")
    return cols


def _headers(buf: bytes, pos: int, n: int, rec_end: int) -> list[tuple[str, bytes | None]]:
    if n < 0:
        raise RecordDecodeError(f"negative header count {n}")
    out = []
    for _ in range(n):
        klen, pos = read_varint(buf, pos)
        if klen < 0:
            raise RecordDecodeError("header key is null")
        hkey = bytes(buf[pos : pos + klen]).decode("utf-8", "replace")
        pos += klen
        vlen, pos = read_varint(buf, pos)
        hval = None
        if vlen >= 0:
            hval = bytes(buf[pos : pos + vlen])
            pos += vlen
        out.append((hkey, hval))
    if pos != rec_end:
        raise RecordDecodeError(f"headers end at {pos}, record declared end {rec_end}")
    return out


__all__ = ["BatchV2", "CodecError", "HEADER", "HEADER_SIZE", "LOG_OVERHEAD", "MAGIC_OFFSET", "RecordDecodeError"]

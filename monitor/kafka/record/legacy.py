"""Legacy message sets, magic 0 and 1 (Kafka before 0.11; still on disk after upgrades).

Message, big-endian::

    offset       int64   0   absolute; for a compressed v1 wrapper, the offset of its last inner message
    messageSize  int32   8   bytes after this field
    crc          uint32 12   CRC-32 (not 32C) of magic..end
    magic        int8   16   0 or 1
    attributes   int8   17   bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4), bit 3 timestamp type (v1);
                             bit 6 (v2's delete-horizon flag) set is a read fault (reader ``_header_fault``)
    timestamp    int64  18   v1 only
    key          int32 length (-1 null) + bytes
    value        int32 length (-1 null) + bytes; a compressed wrapper's value is an inner message set

Inner messages of a v1 wrapper carry relative offsets 0..n-1; the absolute
offset is wrapper.offset - last_relative + relative. A v0 wrapper's inner
offsets are absolute. A LogAppendTime wrapper stamps its time on every inner message.
"""

from __future__ import annotations

import struct
import zlib

from monitor.kafka.record.codecs import CODEC_NAMES, decompress
from monitor.kafka.record.model import Record

PREFIX = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
PREFIX_SIZE = PREFIX.size  # 18
TIMESTAMP = struct.Struct(">q")
LENGTH = struct.Struct(">i")
CRC_START = struct.calcsize(">qiI")  # 16: CRC covers magic..end
MIN_SIZE_V0 = struct.calcsize(">Ibbii")  # crc, magic, attributes, key len, value len = 14
MIN_SIZE_V1 = MIN_SIZE_V0 + TIMESTAMP.size

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08


class LegacyDecodeError(ValueError):
    """A legacy message that does not parse; the reader adds file and position."""


class LegacyMessage:
    """One top-level legacy message: a plain record, or a compressed wrapper of inner records."""

    __slots__ = (
        "file", "position", "offset", "message_size", "crc", "magic", "attributes", "timestamp",
        "key", "value", "_records",
    )
    # Facts v2 batches have and legacy messages do not; same names so callers need no branch.
    partition_leader_epoch = -1
    producer_id = -1
    producer_epoch = -1
    base_sequence = -1
    last_sequence = -1
    is_transactional = False
    is_control = False
    has_delete_horizon = False
    delete_horizon_ms = None

    def __init__(self, file: str, position: int, data: bytes):
        self.file = file
        self.position = position
        self.offset, self.message_size, self.crc, self.magic, self.attributes = PREFIX.unpack_from(data, 0)
        pos = PREFIX_SIZE
        if self.magic == 1:
            (self.timestamp,) = TIMESTAMP.unpack_from(data, pos)
            pos += TIMESTAMP.size
        else:
            self.timestamp = -1
        self.key, pos = _bytes(data, pos)
        self.value, pos = _bytes(data, pos)
        if pos != len(data):
            raise LegacyDecodeError(f"message fields end at {pos} of {len(data)} bytes")
        self._records = None

    def crc_ok(self, data: bytes) -> bool:
        return zlib.crc32(memoryview(data)[CRC_START:]) == self.crc

    @property
    def size(self) -> int:
        return self.message_size + 12

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def compression(self) -> str:
        return CODEC_NAMES.get(self.codec, f"unknown({self.codec})")

    @property
    def timestamp_type(self) -> str:
        if self.magic == 0:
            return "none"
        return "log_append" if self.attributes & TIMESTAMP_TYPE_MASK else "create"

    @property
    def max_timestamp(self) -> int:
        return self.timestamp

    @property
    def base_timestamp(self) -> int:
        return self.timestamp

    first_timestamp = base_timestamp

    @property
    def last_offset(self) -> int:
        return self.offset

    @property
    def next_offset(self) -> int:
        return self.offset + 1

    @property
    def base_offset(self) -> int:
        recs = self.records()
        return recs[0].offset if recs else self.offset

    @property
    def last_offset_delta(self) -> int:
        return self.last_offset - self.base_offset

    @property
    def records_count(self) -> int:
        return len(self.records())

    def columns(self):
        """The same column view as a v2 batch (legacy sets are small: built from the records)."""
        from monitor.kafka.record.v2 import RecordColumns

        return RecordColumns.from_records(self.records())

    def arrays(self):
        from monitor.kafka.record.arrays import RecordArrays

        return RecordArrays.from_columns(self.columns())

    def records(self) -> list[Record]:
        if self._records is None:
            self._records = self._decode()
        return self._records

    def _decode(self) -> list[Record]:
        if self.codec == 0:
            return [Record(self.offset, self.timestamp, self.key, _size(self.value), [], self, value=self.value)]
        if self.value is None:
            raise LegacyDecodeError("compressed wrapper has a null value")
        inner = decompress(self.codec, self.value)
        msgs = list(_iter_inner(inner))
        if not msgs:
            return []
        log_append = self.magic == 1 and self.attributes & TIMESTAMP_TYPE_MASK
        shift = 0
        if self.magic == 1:
            shift = self.offset - msgs[-1][0]  # inner offsets are relative
        out = []
        for off, ts, key, value in msgs:
            out.append(Record(off + shift, self.timestamp if log_append else ts, key, _size(value), [], self,
                              value=value))
        return out


def _size(value: bytes | None) -> int:
    return -1 if value is None else len(value)


def _bytes(data: bytes, pos: int) -> tuple[bytes | None, int]:
    if pos + 4 > len(data):
        raise LegacyDecodeError(f"length field at {pos} runs past the message")
    (n,) = LENGTH.unpack_from(data, pos)
    pos += 4
    if n < 0:
        return None, pos
    if pos + n > len(data):
        raise LegacyDecodeError(f"{n} bytes at {pos} run past the message")
    return bytes(data[pos : pos + n]), pos + n


def _iter_inner(data: bytes):
    """(offset, timestamp, key, value) of each inner message; nested wrappers are not allowed."""
    pos = 0
    end = len(data)
    while pos < end:
        if pos + PREFIX_SIZE > end:
            raise LegacyDecodeError(f"inner message header truncated at {pos}")
        off, size, crc, magic, attrs = PREFIX.unpack_from(data, pos)
        total = size + 12
        if size < MIN_SIZE_V0 or pos + total > end:
            raise LegacyDecodeError(f"inner message size {size} at {pos} is invalid")
        chunk = data[pos : pos + total]
        if zlib.crc32(chunk[CRC_START:]) != crc:
            raise LegacyDecodeError(f"inner message at {pos} fails its CRC")
        q = PREFIX_SIZE
        ts = -1
        if magic == 1:
            (ts,) = TIMESTAMP.unpack_from(chunk, q)
            q += TIMESTAMP.size
        key, q = _bytes(chunk, q)
        value, q = _bytes(chunk, q)
        yield off, ts, key, value
        pos += total

"""The bytes a clean writes for a batch it keeps part of: Kafka's ``MemoryRecords.filterTo``, re-done.

A batch kept whole and not (re)stamped is copied as it is (``batch.writeTo``: its size is ``batch.size``).
Any other kept batch is rebuilt by ``buildRetainedRecordsInto`` through a ``MemoryRecordsBuilder``:

* the header (61 bytes) keeps base offset, producer id/epoch, base sequence, partition leader epoch,
  codec, timestamp type, transactional and control flags, and the original last offset delta
  (``overrideLastOffset``: the producer's last sequence survives the clean);
* the base timestamp is the delete horizon when the batch carries one (a new stamp, ``needToSetDeleteHorizon``,
  or the one it had: a horizon is never changed or removed), else the first kept record's timestamp;
* each kept record is written again (``DefaultRecord.writeTo``): its offset and timestamp deltas are
  recomputed against that base, so zigzag varints change size (a horizon one ``delete.retention.ms``
  ahead of the records makes every timestamp delta a large negative number);
* the records section goes through the batch's own codec at Kafka's default level
  (``Compression.of(type).build()``), framed the way Kafka's Java streams frame it (``compress_like_kafka``).

A batch the clean empties but keeps (``BatchRetention.RETAIN_EMPTY``: a producer's last batch, KAFKA-17076)
is a bare header (``DefaultRecordBatch.writeEmptyHeader``): 61 bytes, codec none, base timestamp -1.

``retained_batch_size`` is what the cleaner simulation counts; ``retained_batch`` gives the whole
batch's bytes (CRC included) so tests compare them with what a real broker's clean wrote.

Against a Kafka 4.3 broker's clean (tests/monitor/kafka/record/test_encode_vs_kafka.py) the rebuilt
batches are Kafka's bytes for none, gzip and lz4 (the JDK's zlib and lz4-java's fast compressor give
what Python's zlib and cramjam's lz4 give); snappy and zstd come within a few bytes a batch (cramjam's
Rust snappy finds a few matches apart from C++ snappy 1.1.10; its zstd 1.5.7 against zstd-jni's 1.5.6
on large blocks): about 0.05% of a partition, either way.
"""

from __future__ import annotations

import struct
import zlib

import cramjam
from crc32c import crc32c

from monitor.kafka.record.codecs import BLOCK_LENGTH, GZIP, LZ4, NONE, SNAPPY, XERIAL_HEADER, XERIAL_MAGIC, ZSTD
from monitor.kafka.record.v2 import (
    CODEC_MASK, CONTROL_MASK, CRC_START, DELETE_HORIZON_MASK, HEADER, HEADER_SIZE, LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK, TRANSACTIONAL_MASK,
)
from monitor.kafka.record.arrays import headers_size as _headers_size
from monitor.kafka.record.varint import encode_varint, varint_size, varint_tail

EMPTY_BATCH_SIZE = HEADER_SIZE  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD: writeEmptyHeader writes no record
NO_TIMESTAMP = -1

# Kafka's Java streams (clients/.../common/compress): the frame each codec writes, at the default level
GZIP_LEVEL = 6  # Deflater.DEFAULT_COMPRESSION, GzipOutputStream(buffer, 8 KiB, level) under a 16 KiB buffer
# java.util.zip.GZIPOutputStream's header: magic, CM 8, no flags, mtime 0, XFL 0, OS 255 "unknown" (JDK >= 16;
# older JDKs wrote 0: the size is the same)
GZIP_HEADER = bytes((0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF))
# Lz4BlockOutputStream: level 9 (LZ4's default in Kafka) picks LZ4Factory's *fast* compressor, not HC;
# frame magic, FLG 0x60 (version 1, independent blocks, no checksums, no content size), BD 0x40
# (64 KiB blocks), the descriptor's xxhash32 byte; blocks of 64 KiB, an end mark, no content checksum
LZ4_FRAME_HEADER = bytes.fromhex("04224d18604082")
LZ4_BLOCK = 64 * 1024
LZ4_INCOMPRESSIBLE = 0x80000000
LZ4_END_MARK = b"\x00\x00\x00\x00"
SNAPPY_BLOCK = 32 * 1024  # xerial SnappyOutputStream's default block size
ZSTD_LEVEL = 3  # zstd-jni's ZstdOutputStreamNoFinalizer at CompressionType.ZSTD's default level
_U32LE = struct.Struct("<I")


_MASK64 = 0xFFFFFFFFFFFFFFFF
_ONE_OR_TWO_BYTES = [bytes([z]) if z < 0x80 else bytes([(z & 0x7F) | 0x80, z >> 7]) for z in range(1 << 14)]


def _varint(value: int) -> bytes:
    """``encode_varint``, with the one- and two-byte encodings (almost every delta and length) looked up."""
    z = ((value << 1) ^ (value >> 63)) & _MASK64
    return _ONE_OR_TWO_BYTES[z] if z < 0x4000 else encode_varint(value)




def _body_size(offset_delta: int, timestamp_delta: int, key_size: int, value_size: int, headers) -> int:
    """``DefaultRecord.sizeOfBodyInBytes``: attributes, deltas, key, value, headers."""
    size = 1 + varint_size(offset_delta) + varint_size(timestamp_delta)
    size += 1 if key_size < 0 else varint_size(key_size) + key_size
    size += 1 if value_size < 0 else varint_size(value_size) + value_size
    return size + (_headers_size(headers) if headers else 1)


def record_size(offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None, headers=()) -> int:
    """Bytes of one record as ``DefaultRecord.writeTo`` writes it, the leading length varint included."""
    body = _body_size(offset_delta, timestamp_delta, -1 if key is None else len(key),
                      -1 if value is None else len(value), headers)
    return varint_size(body) + body


def encode_record(offset_delta: int, timestamp_delta: int, key, value, headers=()) -> bytes:
    """One record's bytes (``DefaultRecord.writeTo``)."""
    out = bytearray()
    out += b"\x00"  # attributes: unused, always 0
    out += encode_varint(timestamp_delta)
    out += encode_varint(offset_delta)
    for field in (key, value):
        if field is None:
            out += b"\x01"  # varint -1
        else:
            out += encode_varint(len(field))
            out += field
    out += encode_varint(len(headers))
    for hkey, hval in headers:
        kb = hkey.encode("utf-8") if isinstance(hkey, str) else bytes(hkey)
        out += encode_varint(len(kb))
        out += kb
        if hval is None:
            out += b"\x01"
        else:
            out += encode_varint(len(hval))
            out += hval
    return encode_varint(len(out)) + bytes(out)


def _value_of(record):
    if record.value_size < 0:
        return None
    value = record.value
    if value is None:
        raise ValueError(f"record at offset {record.offset} carries no value bytes (read without its batch body): "
                         "its compressed size cannot be counted")
    return value


def encode_records(records, base_offset: int, base_timestamp: int) -> bytes:
    """The uncompressed records section for ``records`` (``monitor.kafka.record.model.Record``) in a batch
    whose base offset and base timestamp are given. Only a record's length, offset delta and timestamp
    delta change when a clean rewrites it: the rest (key, value, headers) is copied from the bytes it was
    decoded from where the record still holds them (``_tail``), else encoded again."""
    out = []
    add = out.append
    for r in records:
        tail = _tail(r)
        if tail is None:
            add(encode_record(r.offset - base_offset, r.timestamp - base_timestamp, r.key, _value_of(r),
                              r.headers or ()))
            continue
        head = b"\x00" + _varint(r.timestamp - base_timestamp) + _varint(r.offset - base_offset)
        add(_varint(len(head) + len(tail)))
        add(head)
        add(tail)
    return b"".join(out)


def _tail(record):
    """The record's key, value and headers as they lie in its decoded batch (from the key's length varint
    to the record's end), or None when the record holds no such bytes (a legacy message, a dump line)."""
    buf, vpos = record._buf, record._vpos
    if buf is None or vpos < 0:
        return None
    key, vsize, headers = record.key, record.value_size, record.headers
    if headers and any("\ufffd" in k for k, _ in headers):
        return None  # a header key that was not UTF-8: Kafka re-encodes the String it decoded, replacements and all
    start = vpos - (1 if vsize < 0 else varint_size(vsize)) - (1 if key is None else varint_size(len(key)) + len(key))
    end = vpos + max(vsize, 0) + (_headers_size(headers) if headers else 1)
    return bytes(buf[start:end])


def compress_like_kafka(codec: int, data: bytes) -> bytes:
    """``data`` compressed the way Kafka's ``Compression.of(codec).build().wrapForOutput`` frames it."""
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        deflater = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY)
        body = deflater.compress(data) + deflater.flush()
        return GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    if codec == SNAPPY:
        out = [XERIAL_HEADER.pack(XERIAL_MAGIC, 1, 1)]
        for start in range(0, len(data), SNAPPY_BLOCK):
            block = bytes(cramjam.snappy.compress_raw(bytes(data[start : start + SNAPPY_BLOCK])))
            out.append(BLOCK_LENGTH.pack(len(block)))
            out.append(block)
        return b"".join(out)
    if codec == LZ4:
        out = [LZ4_FRAME_HEADER]
        for start in range(0, len(data), LZ4_BLOCK):
            raw = bytes(data[start : start + LZ4_BLOCK])
            block = bytes(cramjam.lz4.compress_block(raw, store_size=False))
            if len(block) >= len(raw):  # Lz4BlockOutputStream stores an incompressible block as it is
                out.append(_U32LE.pack(len(raw) | LZ4_INCOMPRESSIBLE))
                out.append(raw)
            else:
                out.append(_U32LE.pack(len(block)))
                out.append(block)
        out.append(LZ4_END_MARK)
        return b"".join(out)
    if codec == ZSTD:
        # ZstdOutputStreamNoFinalizer under a BufferedOutputStream: the records go in with ZSTD_e_continue (so
        # the frame states no content size), close() flushes first (ZSTD_e_flush: the data's blocks, none
        # marked last), then ends the frame (ZSTD_e_end: an empty last block, 3 bytes; no checksum)
        compressor = cramjam.zstd.Compressor(ZSTD_LEVEL)
        compressor.compress(bytes(data))
        return bytes(compressor.flush()) + bytes(compressor.finish())
    raise ValueError(f"unknown compression codec id {codec}")


def compressed_size(codec: int, data) -> int:
    """``len(compress_like_kafka(codec, data))``, without building the framed bytes where the codec
    allows: lz4 (the codec of most rewritten batches) block by block into one reused buffer, each
    block's size the smaller of its compressed and raw size (an incompressible block is stored as it
    is). Why: a clean's sizes only need the length, and the framing copied each 64 KiB block three
    times (a slice, the codec's output, the join): a third of the CPU of sizing a rewritten lz4 batch."""
    if codec == LZ4:
        view = memoryview(data)
        out = bytearray(cramjam.lz4.compress_block_bound(view[:LZ4_BLOCK]))
        n = len(LZ4_FRAME_HEADER) + len(LZ4_END_MARK)
        for start in range(0, len(view), LZ4_BLOCK):
            raw = view[start : start + LZ4_BLOCK]
            n += 4 + min(cramjam.lz4.compress_block_into(raw, out, store_size=False), len(raw))
        return n
    return len(compress_like_kafka(codec, data))


def base_timestamp(batch, first_kept_timestamp: int, delete_horizon_ms) -> tuple[int, bool]:
    """The rebuilt batch's base timestamp and whether it is a horizon. A batch that has a horizon keeps
    it (``filterTo``: ``batch.deleteHorizonMs().orElse(NO_TIMESTAMP)``; only an unstamped batch is stamped);
    else the new stamp, else the first kept record's timestamp (``MemoryRecordsBuilder``: the first
    appended record's)."""
    if batch.has_delete_horizon:
        return batch.base_timestamp, True
    if delete_horizon_ms is not None:
        return delete_horizon_ms, True
    return first_kept_timestamp, False


def _base_timestamp(batch, records, delete_horizon_ms) -> tuple[int, bool]:
    return base_timestamp(batch, records[0].timestamp, delete_horizon_ms)


def splice_records(data: bytes, keep, offsets, timestamps, tails, base_offset: int, base_ts: int) -> bytes | None:
    """The uncompressed records section a clean writes, spliced from the batch's decompressed section
    ``data`` without decoding a record: each kept record's tail (``RecordArrays.tail_sizes``: key, value,
    headers) copied behind its new length varint, attributes and deltas; ``keep`` a flag per record (None:
    all). None when a kept record's tail is not a copy (-1). The same bytes as ``encode_records``."""
    out = []
    add = out.append
    pos = 0
    for i, (offset, ts, tail) in enumerate(zip(offsets, timestamps, tails)):
        b = data[pos]
        if b < 0x80:
            length, body = (b >> 1) ^ -(b & 1), pos + 1
        else:
            length, body = varint_tail(data, pos + 1, b)
        pos = body + length
        if keep is not None and not keep[i]:
            continue
        if tail < 0:
            return None
        head = b"\x00" + _varint(ts - base_ts) + _varint(offset - base_offset)
        add(_varint(len(head) + tail))
        add(head)
        add(data[pos - tail:pos])
    return b"".join(out)


def _unchanged(batch, records, delete_horizon_ms, last_offset_delta) -> bool:
    """``writeOriginalBatch && !needToSetDeleteHorizon``: every record kept, no new stamp."""
    return (len(records) == batch.records_count
            and (delete_horizon_ms is None or batch.has_delete_horizon)
            and (last_offset_delta is None or last_offset_delta == batch.last_offset_delta))


def retained_batch_size(batch, records, *, delete_horizon_ms, last_offset_delta=None) -> int:
    """The byte size of the batch ``filterTo`` writes when it keeps ``records`` (in offset order, maybe
    none: ``RETAIN_EMPTY``) of ``batch`` (``BatchV2``), stamped with ``delete_horizon_ms`` when that is
    not None (a batch that has a horizon keeps its own, as in Kafka). Uncompressed batches are counted
    arithmetically; compressed ones are re-encoded and recompressed."""
    if not records:
        return EMPTY_BATCH_SIZE
    if _unchanged(batch, records, delete_horizon_ms, last_offset_delta):
        return batch.size
    base_ts = _base_timestamp(batch, records, delete_horizon_ms)[0]
    if batch.codec != NONE:  # the compressed section is what counts: no header, no CRC built
        return HEADER_SIZE + len(compress_like_kafka(batch.codec, encode_records(records, batch.base_offset, base_ts)))
    return HEADER_SIZE + records_size(records, batch.base_offset, base_ts)


def records_size(records, base_offset: int, base_ts: int) -> int:
    """The records section's size, uncompressed, without building it: ``DefaultRecord.sizeInBytes`` per
    record, the varints' sizes inlined (the cleaner simulation calls this for every batch that loses records)."""
    total = 0
    for r in records:
        x = r.offset - base_offset
        z = (x << 1) ^ (x >> 63)
        body = 2 if z < 0x80 else 1 + ((z & 0xFFFFFFFFFFFFFFFF).bit_length() + 6) // 7  # attributes + offset delta
        x = r.timestamp - base_ts
        z = (x << 1) ^ (x >> 63)
        body += 1 if z < 0x80 else ((z & 0xFFFFFFFFFFFFFFFF).bit_length() + 6) // 7
        key = r.key
        if key is None:
            body += 1
        else:
            n = len(key)
            body += n + (1 if n < 64 else varint_size(n))
        n = r.value_size
        body += 1 if n < 0 else n + (1 if n < 64 else varint_size(n))
        headers = r.headers
        body += _headers_size(headers) if headers else 1
        total += body + (1 if body < 64 else varint_size(body))
    return total


def retained_batch(batch, records, *, delete_horizon_ms, last_offset_delta=None) -> bytes:
    """The whole batch (header with its CRC, then the records section) that ``filterTo`` writes."""
    if not records:
        return _header(batch.base_offset, batch.last_offset_delta, EMPTY_BATCH_SIZE, batch.partition_leader_epoch,
                       batch.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_MASK | CONTROL_MASK),
                       NO_TIMESTAMP, batch.max_timestamp, batch, 0, b"")
    base_ts, stamped = _base_timestamp(batch, records, delete_horizon_ms)
    section = compress_like_kafka(batch.codec, encode_records(records, batch.base_offset, base_ts))
    attributes = batch.attributes & (CODEC_MASK | TIMESTAMP_TYPE_MASK | TRANSACTIONAL_MASK | CONTROL_MASK)
    if stamped:
        attributes |= DELETE_HORIZON_MASK
    # LogAppendTime: the batch's max timestamp stands (the builder's logAppendTime); CreateTime: the kept max
    max_ts = batch.max_timestamp if batch.attributes & TIMESTAMP_TYPE_MASK else max(r.timestamp for r in records)
    lod = batch.last_offset_delta if last_offset_delta is None else last_offset_delta
    return _header(batch.base_offset, lod, HEADER_SIZE + len(section), batch.partition_leader_epoch, attributes,
                   base_ts, max_ts, batch, len(records), section)


def _header(base_offset, last_offset_delta, size, leader_epoch, attributes, base_ts, max_ts, batch, count,
            section) -> bytes:
    """``DefaultRecordBatch.writeHeader``: the 61-byte header, CRC-32C over attributes..end."""
    head = bytearray(HEADER.pack(base_offset, size - LOG_OVERHEAD, leader_epoch, 2, 0, attributes, last_offset_delta,
                                 base_ts, max_ts, batch.producer_id, batch.producer_epoch, batch.base_sequence, count))
    crc = crc32c(section, crc32c(bytes(head[CRC_START:])))
    struct.pack_into(">I", head, CRC_START - 4, crc)
    return bytes(head) + section


__all__ = ["EMPTY_BATCH_SIZE", "base_timestamp", "compress_like_kafka", "splice_records", "encode_record", "encode_records", "record_size",
           "records_size", "retained_batch", "retained_batch_size", "varint_size"]

"""Decompression of a batch's record section, for the codecs Kafka writes.

Codec ids are the low 3 bits of the attributes: 0 none, 1 gzip, 2 snappy,
3 lz4, 4 zstd. Kafka's Java producer frames snappy with xerial's
``SnappyOutputStream`` (an 8-byte magic, two int32 versions, then
``[int32 length][raw snappy block]``...); some other clients write raw snappy,
so both are accepted. lz4 is the standard frame format (magic 2 and 1), zstd
standard frames, possibly without a content size, so both are streamed.

The output is bounded (``monitor.kafka.readbound.MAX_BATCH_BYTES``): a few KiB of zstd can claim
gigabytes, so each codec writes into a buffer of at most the bound (grown from a small one a
thread reuses) and stops there with ``DecompressedTooLarge``; gzip is inflated with zlib's
``max_length``, snappy's stated lengths are checked before a block is inflated.
"""

from __future__ import annotations

import struct
import threading
import zlib

import cramjam

from monitor.kafka import readbound

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, min compatible version
BLOCK_LENGTH = struct.Struct(">i")
SNAPPY_FRAMED_MAGIC = b"\xff\x06\x00\x00sNaPpY"  # Google's framing format (rare, accepted)


SCRATCH_BYTES = 1 << 20  # the buffer each thread keeps for lz4/zstd output; grown per batch past it
KEEP_BYTES = 8 << 20  # a grown buffer up to this is kept for the thread's next batch
_FULL = "failed to write whole buffer"  # cramjam's DecompressionError when the output buffer is too small


class CodecError(ValueError):
    pass


class DecompressedTooLarge(CodecError):
    """The records decompress to more than the bound (``monitor.kafka.readbound.MAX_BATCH_BYTES``)."""


_local = threading.local()


def decompress(codec: int, data: bytes, copy: bool = True, limit: int | None = None) -> bytes:
    """The uncompressed bytes of ``data``, at most ``limit`` of them (default: the read bound), else
    ``DecompressedTooLarge``; ``CodecError`` says what went wrong. ``copy=False``: lz4 and zstd give
    a view of this thread's buffer (bytes-like, no copy), valid until the thread's next call: for
    callers that only read it at once."""
    if limit is None:
        limit = readbound.MAX_BATCH_BYTES
    try:
        if codec == GZIP:
            return _gunzip(data, limit)
        if codec == SNAPPY:
            return _unsnappy(data, limit)
        if codec == LZ4:
            return _bounded("lz4", cramjam.lz4.decompress_into, data, limit, copy)
        if codec == ZSTD:
            return _bounded("zstd", cramjam.zstd.decompress_into, data, limit, copy)
    except CodecError:
        raise
    except Exception as exc:  # the codec libraries raise their own types
        raise CodecError(f"{CODEC_NAMES.get(codec, codec)} data does not decompress: {exc}") from exc
    if codec == NONE:
        return data
    raise CodecError(f"unknown compression codec id {codec}")


def _too_large(codec: str, limit: int) -> DecompressedTooLarge:
    return DecompressedTooLarge(f"{codec} records decompress to more than {limit} bytes, the most a batch's records "
                                f"are held in memory (monitor.kafka.readbound.MAX_BATCH_BYTES); its records are not read")


def _bounded(codec: str, decompress_into, data, limit: int, copy: bool):
    """cramjam's ``decompress_into`` a buffer of this thread's; while the output does not fit, again into
    one 8x larger, up to ``limit`` + 1 bytes (a fuller one means more than the limit)."""
    try:
        buf = _local.buf
    except AttributeError:
        buf = _local.buf = bytearray(SCRATCH_BYTES)
    try:
        n = decompress_into(data, buf)
    except cramjam.DecompressionError as exc:
        if _FULL not in str(exc):
            raise
        buf, n = _grown(codec, decompress_into, data, limit, len(buf))
    if n > limit:
        raise _too_large(codec, limit)
    return bytes(memoryview(buf)[:n]) if copy else memoryview(buf)[:n]


def _grown(codec: str, decompress_into, data, limit: int, size: int) -> tuple[bytearray, int]:
    """The output that did not fit ``size`` bytes, into buffers 8x larger each time, at most ``limit`` + 1."""
    while True:
        if size > limit:
            raise _too_large(codec, limit) from None
        size = min(size * 8, limit + 1)
        buf = None  # the smaller buffer let go before the larger one is taken: at most one is held
        buf = bytearray(size)
        try:
            n = decompress_into(data, buf)
        except cramjam.DecompressionError as exc:
            if _FULL not in str(exc):
                raise
            continue
        if size <= KEEP_BYTES:
            _local.buf = buf
        return buf, n


def _gunzip(data: bytes, limit: int) -> bytes:
    out = []
    total = 0
    while data:
        d = zlib.decompressobj(wbits=47)  # gzip or zlib header, auto-detected
        chunk = d.decompress(data, limit + 1 - total)
        total += len(chunk)
        if total > limit or d.unconsumed_tail:
            raise _too_large("gzip", limit)
        out.append(chunk)
        chunk = d.flush()
        total += len(chunk)
        if total > limit:
            raise _too_large("gzip", limit)
        out.append(chunk)
        if not d.eof:
            raise CodecError("gzip stream is truncated")
        data = d.unused_data  # concatenated members
    return b"".join(out)


def _unsnappy(data: bytes, limit: int) -> bytes:
    if data.startswith(XERIAL_MAGIC):
        return _unsnappy_xerial(data, limit)
    if data.startswith(SNAPPY_FRAMED_MAGIC):
        return _bounded("snappy", cramjam.snappy.decompress_into, data, limit, True)
    if cramjam.snappy.decompress_raw_len(data) > limit:  # raw snappy states its length up front
        raise _too_large("snappy", limit)
    return bytes(cramjam.snappy.decompress_raw(data))


def _unsnappy_xerial(data: bytes, limit: int) -> bytes:
    pos = XERIAL_HEADER.size
    if len(data) < pos:
        raise CodecError("xerial snappy header is truncated")
    out = []
    end = len(data)
    total = 0
    while pos < end:
        if pos + 4 > end:
            raise CodecError(f"xerial snappy block length truncated at {pos}")
        (n,) = BLOCK_LENGTH.unpack_from(data, pos)
        pos += 4
        if n < 0 or pos + n > end:
            raise CodecError(f"xerial snappy block of {n} bytes runs past the data at {pos}")
        block = data[pos : pos + n]
        total += cramjam.snappy.decompress_raw_len(block)
        if total > limit:
            raise _too_large("snappy", limit)
        out.append(bytes(cramjam.snappy.decompress_raw(block)))
        pos += n
    return b"".join(out)


def compress(codec: int, data: bytes) -> bytes:
    """Compress like Kafka's Java client does (xerial framing for snappy); for writing test fixtures."""
    if codec == NONE:
        return data
    if codec == GZIP:
        import gzip

        return gzip.compress(data)
    if codec == SNAPPY:
        block = bytes(cramjam.snappy.compress_raw(data))
        return XERIAL_HEADER.pack(XERIAL_MAGIC, 1, 1) + BLOCK_LENGTH.pack(len(block)) + block
    if codec == LZ4:
        return bytes(cramjam.lz4.compress(data))
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise CodecError(f"unknown compression codec id {codec}")

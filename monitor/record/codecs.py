"""Decompression of a batch's record section, for the codecs Kafka writes.

Codec ids are the low 3 bits of the attributes: 0 none, 1 gzip, 2 snappy,
3 lz4, 4 zstd. Kafka's Java producer frames snappy with xerial's
``SnappyOutputStream`` (an 8-byte magic, two int32 versions, then
``[int32 length][raw snappy block]``...); some other clients write raw snappy,
so both are accepted. lz4 is the standard frame format (magic 2 and 1), zstd
standard frames, possibly without a content size, so both are streamed.
"""

from __future__ import annotations

import struct
import zlib

import cramjam

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, min compatible version
BLOCK_LENGTH = struct.Struct(">i")
SNAPPY_FRAMED_MAGIC = b"\xff\x06\x00\x00sNaPpY"  # Google's framing format (rare, accepted)


class CodecError(ValueError):
    pass


def decompress(codec: int, data: bytes, copy: bool = True) -> bytes:
    """The uncompressed bytes of ``data``; ``CodecError`` says what went wrong. ``copy=False``: lz4
    and zstd give cramjam's buffer as it is (bytes-like, no copy) for callers that only read it."""
    try:
        if codec == GZIP:
            return _gunzip(data)
        if codec == SNAPPY:
            return _unsnappy(data)
        if codec == LZ4:
            out = cramjam.lz4.decompress(data)
            return bytes(out) if copy else out
        if codec == ZSTD:
            out = cramjam.zstd.decompress(data)
            return bytes(out) if copy else out
    except CodecError:
        raise
    except Exception as exc:  # the codec libraries raise their own types
        raise CodecError(f"{CODEC_NAMES.get(codec, codec)} data does not decompress: {exc}") from exc
    if codec == NONE:
        return data
    raise CodecError(f"unknown compression codec id {codec}")


def _gunzip(data: bytes) -> bytes:
    out = []
    while data:
        d = zlib.decompressobj(wbits=47)  # gzip or zlib header, auto-detected
        out.append(d.decompress(data))
        out.append(d.flush())
        if not d.eof:
            raise CodecError("gzip stream is truncated")
        data = d.unused_data  # concatenated members
    return b"".join(out)


def _unsnappy(data: bytes) -> bytes:
    if data.startswith(XERIAL_MAGIC):
        return _unsnappy_xerial(data)
    if data.startswith(SNAPPY_FRAMED_MAGIC):
        return bytes(cramjam.snappy.decompress(data))
    return bytes(cramjam.snappy.decompress_raw(data))


def _unsnappy_xerial(data: bytes) -> bytes:
    pos = XERIAL_HEADER.size
    if len(data) < pos:
        raise CodecError("xerial snappy header is truncated")
    out = []
    end = len(data)
    while pos < end:
        if pos + 4 > end:
            raise CodecError(f"xerial snappy block length truncated at {pos}")
        (n,) = BLOCK_LENGTH.unpack_from(data, pos)
        pos += 4
        if n < 0 or pos + n > end:
            raise CodecError(f"xerial snappy block of {n} bytes runs past the data at {pos}")
        out.append(bytes(cramjam.snappy.decompress_raw(data[pos : pos + n])))
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

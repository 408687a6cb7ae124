"""Protobuf-style zigzag varints as Kafka's DefaultRecord writes them.

``n`` is encoded as ``(n << 1) ^ (n >> 63)``, then 7 bits per byte, least
significant group first, high bit set on every byte but the last.
"""

from __future__ import annotations

MAX_VARLONG_BYTES = 10


class VarintError(ValueError):
    pass


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode one zigzag varint/varlong at ``pos``; return (value, next position)."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    return varint_tail(buf, pos + 1, b)


def varint_tail(buf: bytes, pos: int, first: int) -> tuple[int, int]:
    """The rest of a varint whose first byte (``first``, high bit set) was already read;
    ``pos`` is the position of the second byte. The hot loops inline the one-byte case."""
    result = first & 0x7F
    shift = 7
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift >= 70:
            raise VarintError("varint longer than 10 bytes")


def encode_varint(value: int) -> bytes:
    """Zigzag-encode ``value`` (64-bit); used by tests and by writers of fixtures."""
    n = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def varint_size(value: int) -> int:
    """Bytes of ``value`` as a zigzag varint/varlong (``ByteUtils.sizeOfVarlong``)."""
    z = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    return 1 if z < 0x80 else (z.bit_length() + 6) // 7

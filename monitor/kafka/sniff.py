"""Which reader a file needs: a log segment's bytes, kafka-dump-log text, or neither.

By content, not by name or first bytes: pasted dumps start with a prompt, a comment, indentation
or a grepped record line, and a segment's first bytes are just an offset. A segment starts with its
first batch's header: an 8-byte big-endian base offset, a 4-byte batch length, a 4-byte partition
leader epoch (v2; a CRC for magic 0/1) and the magic byte at byte 16 (Kafka's
``LogInputStream``/``DefaultRecordBatch`` layout: ``LOG_OVERHEAD`` = 12, ``MAGIC_OFFSET`` = 16).
Text never holds a byte 0, 1 or 2, so the two cannot be confused.
"""

from __future__ import annotations

import struct

from monitor.kafka.dumplines import is_dump_line

SNIFF_BYTES = 64 * 1024
NOT_KAFKA = "this is not a Kafka segment or kafka-dump-log output"
MIN_BATCH_LENGTH = 14  # LegacyRecord.RECORD_OVERHEAD_V0 (the smallest record, magic 0) after the length


def looks_like_segment(head: bytes) -> bool:
    """A first batch header: base offset >= 0, a length a batch can have, magic 0, 1 or 2."""
    if len(head) < 17:
        return False
    base, length = struct.unpack_from(">qi", head, 0)
    return base >= 0 and length >= MIN_BATCH_LENGTH and head[16] in (0, 1, 2)


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # Windows PowerShell 5's ">" writes UTF-16 with a BOM


def text_encoding(head: bytes) -> str:
    """How to decode a dump whose first bytes are ``head``: UTF-16 after its byte order mark, else
    UTF-8 (a UTF-8 BOM is then removed by the parser)."""
    return "utf-16" if head.startswith(UTF16_BOMS) else "utf-8"


def _text(head: bytes) -> str:
    """``head`` decoded as text, undecodable bytes replaced: kafka-dump-log prints keys and payloads
    raw, so a real dump of binary records (Avro, Protobuf, non-UTF-8 keys) holds bytes that are not
    UTF-8, and even NULs. Whether it is a dump is told by its lines, not by its bytes."""
    if text_encoding(head) == "utf-16":
        cut = len(head) - len(head) % 2
        return head[:cut].decode("utf-16", errors="replace")
    return head.decode("utf-8", errors="replace")


def sniff(head: bytes, name: str = "") -> str | None:
    """``"segment"``, ``"dump"`` or None (neither) for a file whose first bytes are ``head``
    (read ``SNIFF_BYTES``). An empty file is an empty segment (a freshly rolled one is); a binary
    ``.log`` file whose first batch header is damaged is still a segment, for the reader to report
    the corruption with its byte position."""
    if not head or looks_like_segment(head):
        return "segment"
    lines = _text(head).split("\n")
    if len(head) >= SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last may be cut
    if any(is_dump_line(line) for line in lines):
        return "dump"
    if name.endswith(".log") and _binary(head):
        return "segment"
    return None


def _binary(head: bytes) -> bool:
    """A NUL, or bytes that are not UTF-8 before the sample's last (possibly cut) character."""
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return not (exc.start >= len(head) - 3 and exc.reason == "unexpected end of data")
    return False

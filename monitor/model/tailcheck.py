"""Whether the bytes a summary was read from are still the file's prefix: one batch header re-read.

A summary read up to some position (``SegmentSummary.end_position``, ``ActiveKeys.end_position``) is
read on from there when its file grew (same inode, larger size): the broker appended. But Kafka also
truncates the active segment in place (``UnifiedLog.truncateTo`` -> ``LogSegment.truncateTo`` on a
leader change: same file, same inode), after which it can grow past the old size with other batches.
What was read is then no longer the file's; reading on would fold two logs into one figure. So the
last batch read is remembered (its position and stored CRC: ``tail_position``, ``tail_crc``), and
before reading on its header is read again: a different CRC there, or (v2) a batch that no longer
ends where the read stopped, means the prefix changed and the summary is read again from byte 0.
A CRC covers the whole batch, so a batch rewritten in place with other records differs from it but
by chance (2^-32); a truncation that cuts nothing the summary holds leaves the tail as it was and is
correctly trusted. Costs ``CHECK_BYTES`` a grown segment.
"""

from __future__ import annotations

import os
import struct

from monitor.kafka.record import legacy, v2

CHECK_BYTES = v2.HEADER_SIZE  # 61: a v2 batch's header (a legacy message's CRC lies within it too)
NO_TAIL = -1  # tail_position of a summary that read no batch: any bytes after it are new
_PREFIX = struct.Struct(">qiib")  # offset, length, (leader epoch | crc), magic


def tail(batch) -> tuple[int, int]:
    """(position, stored CRC) of a batch the reader yielded, for ``intact``."""
    return batch.position, batch.crc


def intact(path, position: int, crc: int, end: int) -> tuple[bool, int]:
    """(whether the batch read last at ``position``, CRC ``crc``, ending at ``end``, is still there;
    bytes read). No tail (``NO_TAIL``): nothing was read before, so intact. An unreadable file: not intact
    (the caller reads it again, and meets the error there)."""
    if position < 0:
        return True, 0
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            head = os.pread(fd, CHECK_BYTES, position)
        finally:
            os.close(fd)
    except OSError:
        return False, 0
    if len(head) < _PREFIX.size:
        return False, len(head)
    _, length, _, magic = _PREFIX.unpack_from(head, 0)
    if magic == 2:
        if len(head) < CHECK_BYTES:
            return False, len(head)
        stored = v2.HEADER.unpack_from(head, 0)[4]
        return stored == crc and position + v2.LOG_OVERHEAD + length == end, len(head)
    if len(head) < legacy.CRC_START:
        return False, len(head)
    stored = struct.unpack_from(">I", head, legacy.CRC_START - 4)[0]
    return stored == crc, len(head)

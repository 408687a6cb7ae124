"""Kafka's producer-state snapshot files (``<offset>.snapshot`` in a partition folder), read strictly.

The broker's ProducerStateManager writes one when a segment rolls (and on a clean shutdown): its
table of producers as of offset ``<offset>`` (the file name, exclusive), among them, per producer,
the first offset of its ongoing transaction. That gives a second way to know the open transactions
(the snapshot, then the log's events from its offset on) to check the fold from the log against
(``monitor.model.transactions.snapshot_events``).

The layout (ProducerStateManager.java, PRODUCER_SNAPSHOT_VERSION 1, PID_SNAPSHOT_MAP_SCHEMA): version
int16, crc uint32 (CRC-32C of every byte after it), producer_entries: an int32 count and that many
fixed-size entries (``ENTRY_LAYOUT``). Kafka's readSnapshot refuses another version and a CRC
mismatch; so does this reader, and also a short file or bytes after the last entry, each error naming
the file and the byte position.

The file is read in pieces (``monitor.kafka.readbound.READ_PIECE_BYTES``), never whole: the CRC over the
whole file first, then the entries, at most ``MAX_BATCH_BYTES`` of them (2.2 million producers), so a
damaged or sparse file of any size costs a piece of memory, not its size.
"""

from __future__ import annotations

import io
import os
import struct
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from crc32c import crc32c

from monitor.kafka import readbound
from monitor.kafka.kafkanames import SNAPSHOT_SUFFIX, offset_file
from monitor.fileio.regularfile import open_regular

VERSION = 1  # ProducerStateManager.PRODUCER_SNAPSHOT_VERSION
HEADER = struct.Struct(">hIi")  # version, crc, producer_entries count
CRC_START = 6  # PRODUCER_ENTRIES_OFFSET: the CRC covers the count and the entries
# One producer entry (PRODUCER_SNAPSHOT_ENTRY_SCHEMA), field names and Kafka types in Kafka's order.
ENTRY_LAYOUT = (
    ("producer_id", "q"),  # INT64
    ("epoch", "h"),  # INT16
    ("last_sequence", "i"),  # INT32
    ("last_offset", "q"),  # INT64, -1 when the producer has no data batch (only a marker)
    ("offset_delta", "i"),  # INT32
    ("timestamp", "q"),  # INT64, max timestamp of the producer's last batch
    ("coordinator_epoch", "i"),  # INT32
    ("current_txn_first_offset", "q"),  # INT64, -1 when no transaction is ongoing
)
ENTRY = struct.Struct(">" + "".join(code for _, code in ENTRY_LAYOUT))
ProducerEntry = namedtuple("ProducerEntry", [name for name, _ in ENTRY_LAYOUT])


class ProducerSnapshotError(ValueError):
    """A snapshot file that is not what Kafka writes, at ``position`` of ``file``."""

    def __init__(self, file: str | Path, position: int, reason: str):
        self.file, self.position, self.reason = str(file), position, reason
        super().__init__(f"{self.file}: byte {position}: {reason}")


@dataclass(frozen=True)
class ProducerSnapshot:
    path: str
    offset: int  # the producer state is as of this offset (exclusive): the file name
    entries: tuple  # ProducerEntry, in file order

    def ongoing(self) -> list:
        """The entries with an ongoing transaction, by its first offset."""
        return sorted((e for e in self.entries if e.current_txn_first_offset >= 0),
                      key=lambda e: e.current_txn_first_offset)


def snapshot_offset(path: str | Path) -> int:
    """The offset in a snapshot file's name (``00000000000000000402.snapshot`` -> 402), by the one rule
    of ``monitor.kafka.kafkanames``: only the 20-digit name Kafka writes (``LogFileUtils.producerSnapshotFile``);
    ``5.snapshot`` or ``².snapshot`` is not a snapshot of Kafka's (an error naming the file, never a
    ValueError from ``int``)."""
    found = offset_file(os.path.basename(os.fspath(path)))
    if found is None or found[1] != SNAPSHOT_SUFFIX:
        raise ProducerSnapshotError(path, 0, "file name is not <20-digit offset>.snapshot, the name Kafka writes")
    return found[0]


def parse_producer_snapshot(data: bytes, path: str | Path) -> ProducerSnapshot:
    """A snapshot from its bytes (already in memory)."""
    return _read(io.BytesIO(data), path)


def read_producer_snapshot(path: str | Path) -> ProducerSnapshot:
    """Read and parse one snapshot file, in pieces; only a regular file is read (a FIFO or device raises
    ``monitor.fileio.regularfile.NotRegularFile``, an OSError, never a wait)."""
    with open_regular(path) as fh:
        return _read(fh, path)


def _read(fh: BinaryIO, path: str | Path) -> ProducerSnapshot:
    offset = snapshot_offset(path)
    head = fh.read(HEADER.size)
    if len(head) < HEADER.size:
        raise ProducerSnapshotError(path, len(head), f"file ends inside the {HEADER.size}-byte header")
    version, crc, count = HEADER.unpack(head)
    if version != VERSION:
        raise ProducerSnapshotError(path, 0, f"unknown snapshot version {version} (Kafka writes {VERSION})")
    computed, end_crc = crc32c(head[CRC_START:]), HEADER.size
    while piece := fh.read(readbound.READ_PIECE_BYTES):
        computed = crc32c(piece, computed)
        end_crc += len(piece)
    if computed != crc:
        raise ProducerSnapshotError(path, 2, f"CRC-32C mismatch: stored {crc}, computed {computed} "
                                             f"over bytes {CRC_START}..{end_crc}")
    size = end_crc
    if count < 0:
        raise ProducerSnapshotError(path, CRC_START, f"negative producer entry count {count}")
    end = HEADER.size + count * ENTRY.size
    if size < end:
        at = HEADER.size + (size - HEADER.size) // ENTRY.size * ENTRY.size
        raise ProducerSnapshotError(path, at, f"file ends inside producer entry {(at - HEADER.size) // ENTRY.size} "
                                              f"of {count} ({ENTRY.size} bytes each)")
    if size > end:
        raise ProducerSnapshotError(path, end, f"{size - end} bytes after the last of {count} producer entries")
    if end - HEADER.size > readbound.MAX_BATCH_BYTES:
        raise ProducerSnapshotError(path, HEADER.size, f"{count} producer entries ({end - HEADER.size} bytes) are more "
                                                       f"than the {readbound.MAX_BATCH_BYTES} bytes a reader holds "
                                                       f"(monitor.kafka.readbound.MAX_BATCH_BYTES); not read")
    fh.seek(HEADER.size)
    entries: list = []
    per_piece = max(readbound.READ_PIECE_BYTES // ENTRY.size, 1) * ENTRY.size
    left = end - HEADER.size
    while left:
        piece = fh.read(min(per_piece, left))
        if len(piece) < min(per_piece, left) or len(piece) % ENTRY.size:  # changed since the CRC was read
            raise ProducerSnapshotError(path, end - left + len(piece), "file changed while it was read")
        entries.extend(ProducerEntry._make(t) for t in ENTRY.iter_unpack(piece))
        left -= len(piece)
    return ProducerSnapshot(str(path), offset, tuple(entries))

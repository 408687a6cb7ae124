"""A lazy walk over a segment file (or any binary stream of batches), batch by batch.

The file is read through a buffered stream, one batch at a time, so a
multi-GB segment is never held whole. The magic byte (always at byte 16 of a
batch, in every format) picks the parser. CRCs are checked per batch. Faults
become ``RecordFormatError`` subclasses naming file and byte position; every
valid batch before a fault has already been yielded. With ``skip_corrupt`` a
fault is appended to ``reader.faults`` and the walk goes on when the batch's
length can be trusted, or stops cleanly when it cannot.

A batch is held in memory only up to ``monitor.kafka.readbound.MAX_BATCH_BYTES`` (on disk, and its records
once decompressed): a length claiming more is never allocated. Such a batch is read in
``READ_PIECE_BYTES`` pieces for its CRC only, then reported: a CRC mismatch (the usual case: a
damaged length field), or ``OversizeBatchError`` when the CRC holds (its records unknown).
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator

from crc32c import crc32c

from monitor.kafka import readbound
from monitor.kafka.record import horizon, legacy, v2
from monitor.kafka.record.codecs import CodecError, DecompressedTooLarge
from monitor.kafka.record.errors import (
    ControlRecordError,
    CorruptBatchError,
    CrcMismatchError,
    HorizonError,
    OversizeBatchError,
    RecordFormatError,
    TruncatedBatchError,
    UnknownMagicError,
    UnsupportedCodecError,
    ZeroFillError,
)
from monitor.kafka.record.model import Record
from monitor.kafka.record.varint import VarintError, read_varint
from monitor.fileio.regularfile import open_regular, os_reason

PREFIX = struct.Struct(">qiib")  # baseOffset/offset, length, (leader epoch | crc), magic: same bytes in every format
PREFIX_SIZE = PREFIX.size  # 17
READ_BUFFER = 1 << 20
STREAM_MAX_BATCH = 1 << 30  # a length above this in a stream of unknown size is garbage, not a batch
PAGE_BYTES = 4096  # a header-only walk's buffer: one page, so a seek past the records reads none of them
CONTROL_BODIES = "control"  # batches(bodies=...): headers, and a control batch's body (SegmentReader.headers)
_ATTRIBUTES = struct.Struct(">h")


def _is_control(header: bytes) -> bool:
    return bool(_ATTRIBUTES.unpack_from(header, v2.CRC_START)[0] & v2.CONTROL_MASK)


def cut_tail_is_fault(active: bool) -> bool:
    """The one rule for a segment that ends inside a batch (a cut tail), for every reader (``inspect``,
    ``logdir``, ``explain``, the collector): Kafka appends only to a partition's active segment (its last,
    UnifiedLog.append -> LocalLog.append), whole batches at a time, so only there can a read meet a
    batch half-written, the append under way; a segment before it was complete when the next one was
    rolled, and a cut tail there is damage (a crash the broker's recovery did not see, a copy cut short).
    ``active``: the segment is its partition's last, or may be (a file given alone)."""
    return not active


class SegmentReader:
    """Batches and records of one segment.

    ``source`` is a path or an open binary file object (for ``hdfs:``/``s3a:``
    files opened by the caller); ``name`` is what errors call it. ``start`` is
    a byte position to begin at (a batch boundary, e.g. where an earlier read
    of a growing segment stopped).
    """

    def __init__(self, source: str | os.PathLike | BinaryIO, *, name: str | None = None, start: int = 0,
                 verify_crc: bool = True, skip_corrupt: bool = False, stop: int | None = None):
        self._source = source
        self.stop = stop  # a batch boundary to end the walk at (a detail read up to where headers were read)
        self.name = name or (str(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", "<stream>"))
        self.start = start
        self.verify_crc = verify_crc
        self.skip_corrupt = skip_corrupt
        self.faults: list[RecordFormatError] = []
        self.end_position = start  # first byte not consumed as a valid or skipped batch
        self.batches_read = 0
        self.batches_skipped = 0
        # bytes this walk read from the file: a batch read whole counts its size, a header alone the page
        # it lies in (PAGE_BYTES: what the OS reads for it), not 61 bytes: what a disk budget is charged
        self.bytes_read = 0

    # ---------------------------------------------------------------- opening
    def _open(self, buffer: int = READ_BUFFER) -> tuple[BinaryIO, int | None, bool]:
        if isinstance(self._source, (str, os.PathLike)):
            try:
                fh = open_regular(self._source, buffer)
            except OSError as exc:
                raise RecordFormatError(self.name, self.start, f"cannot read: {os_reason(exc)}") from exc
            size = os.fstat(fh.fileno()).st_size
            return fh, size, True
        fh = self._source
        size = None
        try:
            if fh.seekable():
                here = fh.tell()
                size = fh.seek(0, io.SEEK_END)
                fh.seek(here)
        except (OSError, AttributeError):
            size = None
        return fh, size, False

    # ---------------------------------------------------------------- batches
    def batches(self, *, bodies: bool | str = True) -> Iterator[v2.BatchV2 | legacy.LegacyMessage]:
        """Each batch in file order. ``bodies=False`` reads only v2 headers and seeks past
        the records (no CRC check, no decompression): cheap size and offset questions.
        ``bodies=CONTROL_BODIES`` (``headers()``) reads a control batch's body too (a few bytes: its
        record's key says COMMIT or ABORT), CRC checked as in a full read."""
        headers_only = bodies is not True
        fh, size, owned = self._open(PAGE_BYTES if headers_only else READ_BUFFER)
        if headers_only and owned and hasattr(os, "posix_fadvise"):
            try:  # seeking batch to batch: no read-ahead of the records skipped
                os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_RANDOM)
            except OSError:
                pass
        try:
            if self.start:
                fh.seek(self.start)
            yield from self._walk(fh, size, bodies)
        finally:
            if owned:
                fh.close()

    def _walk(self, fh: BinaryIO, size: int | None, bodies: bool):
        pos = self.start
        read = fh.read
        while self.stop is None or pos < self.stop:
            head = read(PREFIX_SIZE)
            if not head:
                break
            if len(head) < PREFIX_SIZE:
                self._fault(TruncatedBatchError(self.name, pos, f"{len(head)} bytes at the end, less than a batch header"))
                break
            offset, length, _, magic = PREFIX.unpack(head)
            total = length + v2.LOG_OVERHEAD
            if offset == 0 and length == 0 and magic == 0 and not any(head):
                n = len(head) + _count_zeros(fh)
                self._fault(ZeroFillError(self.name, pos, f"{n} zero bytes where a batch should start"))
                break
            if magic not in (0, 1, 2):
                self._fault(UnknownMagicError(self.name, pos, f"unknown magic byte {magic} (batch length {length})"))
                break
            min_len = (v2.HEADER_SIZE if magic == 2 else legacy.PREFIX_SIZE + 8) - v2.LOG_OVERHEAD
            if length < min_len:
                self._fault(CorruptBatchError(self.name, pos, f"batch length {length} is below the minimum {min_len} for magic {magic}"))
                break
            limit = size if size is not None else pos + STREAM_MAX_BATCH
            if pos + total > limit:
                have = (size - pos) if size is not None else "?"
                self._fault(TruncatedBatchError(
                    self.name, pos, f"batch of {total} bytes runs past the end of the file ({have} bytes left)", length=total))
                break
            if magic == 2 and bodies is not True:
                rest = read(v2.HEADER_SIZE - PREFIX_SIZE)
                if len(rest) < v2.HEADER_SIZE - PREFIX_SIZE:
                    self._fault(TruncatedBatchError(self.name, pos, "batch header is cut short", length=total))
                    break
                header = head + rest
                if bodies == CONTROL_BODIES and _is_control(header) and total <= readbound.MAX_BATCH_BYTES:
                    body = read(total - v2.HEADER_SIZE)
                    if len(body) < total - v2.HEADER_SIZE:
                        self._fault(TruncatedBatchError(self.name, pos, f"batch of {total} bytes is cut short after "
                                                                        f"{v2.HEADER_SIZE + len(body)}", length=total))
                        break
                    self.bytes_read += total
                    batch = self._parse_v2(pos, header, body)
                else:
                    fh.seek(total - v2.HEADER_SIZE, io.SEEK_CUR)
                    self.bytes_read += min(total, PAGE_BYTES)  # the OS reads at least a page for a header
                    batch = v2.BatchV2(self.name, pos, header, None)
            elif total > readbound.MAX_BATCH_BYTES:
                if not self._oversize(fh, pos, head, magic, total):
                    break
                batch = None
            elif magic == 2:  # header and body read apart: the body is the one copy of the records' bytes
                rest = read(v2.HEADER_SIZE - PREFIX_SIZE)
                body = read(total - v2.HEADER_SIZE) if len(rest) == v2.HEADER_SIZE - PREFIX_SIZE else b""
                if len(body) < total - v2.HEADER_SIZE:
                    self._fault(TruncatedBatchError(
                        self.name, pos, f"batch of {total} bytes is cut short after "
                                        f"{PREFIX_SIZE + len(rest) + len(body)}", length=total))
                    break
                self.bytes_read += total
                batch = self._parse_v2(pos, head + rest, body)
            else:
                rest = read(total - PREFIX_SIZE)
                if len(rest) < total - PREFIX_SIZE:
                    self._fault(TruncatedBatchError(
                        self.name, pos, f"batch of {total} bytes is cut short after {len(rest) + PREFIX_SIZE}", length=total))
                    break
                data = head + rest
                del rest
                self.bytes_read += total
                batch = self._parse(pos, magic, data)
            if batch is not None and magic == 2 and batch.records_count < 0:
                # Kafka's DefaultRecordBatch reads the count as a signed int32 and fails on a negative
                # one (InvalidRecordException "Found invalid record count"): a read fault, not 0 records
                self._fault(CorruptBatchError(self.name, pos, f"negative record count {batch.records_count} in the "
                                                              f"header of the batch at offset {batch.base_offset}",
                                              length=total, resumable=True))
                batch = None
            if batch is not None:
                err = self._header_fault(batch, magic) or self._control_fault(batch)
                if err is not None:
                    self._fault(err)
                    batch = None
            if batch is not None:
                self.batches_read += 1
                pos += total
                self.end_position = pos
                yield batch
            else:  # skipped a corrupt batch whose length we trust
                pos += total
                self.end_position = pos

    def headers(self) -> Iterator[v2.BatchV2 | legacy.LegacyMessage]:
        """Each batch's header, seeking from batch to batch (a v2 header carries the batch's length), with
        the body of a control batch (its record's key) and a legacy message whole (it has no header apart):
        what Kafka's LogCleanerManager needs of a segment, without reading its records. No data batch's
        CRC is checked (that needs its bytes): the detail read (``decoded``) checks them."""
        return self.batches(bodies=CONTROL_BODIES)

    def _header_fault(self, batch, magic: int) -> HorizonError | None:
        """A delete horizon no clean could have written: the flag on a legacy message, a horizon before
        the batch's records (``horizon.problem`` without now: one far in the future needs now and
        ``delete.retention.ms``, which the callers that know them check)."""
        flagged = bool(batch.attributes & horizon.HORIZON_FLAG)
        if not flagged:
            return None
        why = horizon.problem(has_horizon=True, magic=magic, horizon_ms=batch.base_timestamp if magic == 2 else None,
                              max_timestamp=batch.max_timestamp)
        if why is None:
            return None
        at = f"batch at offset {batch.base_offset}" if magic == 2 else f"message at offset {batch.offset}"
        return HorizonError(self.name, batch.position, f"{why} ({at})", length=batch.size)

    def _control_fault(self, batch) -> RecordFormatError | None:
        """A control batch that claims records, read with its body: its records must decode and the first
        one's key be a control key Kafka reads (``ControlRecordType.parseTypeId``: at least 4 bytes, a
        version >= 0). A control batch with no record is Kafka's own doing, not a fault: a clean keeps a
        producer's last marker as an empty batch (LogCleaner ``isBatchLastRecordOfProducer`` case 3,
        ``BatchRetention.RETAIN_EMPTY`` -> ``DefaultRecordBatch.writeEmptyHeader``), and Kafka reads one as
        a transaction already cleaned (``CleanedTransactionMetadata.onControlBatchRead``: "An empty control
        batch was already cleaned"; ``ProducerAppendInfo``: "An empty control batch means the entire
        transaction has been cleaned from the log")."""
        if not batch.is_control or batch.magic != 2 or batch.records_count <= 0 or batch._body is None:
            return None
        what = f"control batch at offset {batch.base_offset} claiming {batch.records_count} record(s)"
        lone = _lone_record_key(batch._body) if batch.records_count == 1 and not batch.codec else None
        try:
            keys = lone if lone is not None else batch.columns().keys
        except v2.RecordDecodeError as exc:
            return CorruptBatchError(self.name, batch.position, f"{what}: its records do not decode: {exc}",
                                     length=batch.size, resumable=True)
        except DecompressedTooLarge as exc:
            return OversizeBatchError(self.name, batch.position, f"{what}: {exc}", length=batch.size)
        except CodecError as exc:
            return UnsupportedCodecError(self.name, batch.position, f"{what}: {exc}", length=batch.size)
        key = keys[0] if keys else None
        if key is None or len(key) < 4:
            size = "a null key" if key is None else f"a key of {len(key)} bytes"
            return ControlRecordError(self.name, batch.position, f"{what}: its first record has {size}, not a control "
                                                                 "key (int16 version, int16 type)", length=batch.size)
        version = int.from_bytes(key[:2], "big", signed=True)
        if version < 0:
            return ControlRecordError(self.name, batch.position, f"{what}: control key version {version} is negative",
                                      length=batch.size)
        return None

    def _parse_v2(self, pos: int, header: bytes, body: bytes):
        batch = v2.BatchV2(self.name, pos, header, body)
        if self.verify_crc and not batch.crc_ok(header):
            self._fault(CrcMismatchError(self.name, pos, f"CRC-32C mismatch in batch at offset {batch.base_offset} "
                                                         f"(stored {batch.crc})", length=batch.size))
            return None
        return batch

    def _oversize(self, fh: BinaryIO, pos: int, head: bytes, magic: int, total: int) -> bool:
        """A batch past the bound: its bytes read in pieces for the CRC alone (never held), then a
        fault: truncated (False: the walk stops), a CRC mismatch, or oversize (True: its length holds,
        the walk goes on after it)."""
        rest = fh.read(v2.HEADER_SIZE - PREFIX_SIZE) if magic == 2 else b""
        if magic == 2:
            if len(rest) < v2.HEADER_SIZE - PREFIX_SIZE:
                self._fault(TruncatedBatchError(self.name, pos, "batch header is cut short", length=total))
                return False
            header = head + rest
            batch = v2.BatchV2(self.name, pos, header, None)
            what, stored, crc = f"batch at offset {batch.base_offset}", batch.crc, crc32c(header[v2.CRC_START:])
        else:  # legacy: CRC-32 from the magic byte on; the offset is the message's own
            what, stored = f"magic {magic} message at offset {PREFIX.unpack(head)[0]}", int.from_bytes(head[12:16], "big")
            crc = zlib.crc32(head[legacy.CRC_START:])
        done = PREFIX_SIZE + len(rest)
        while done < total:
            piece = fh.read(min(readbound.READ_PIECE_BYTES, total - done))
            if not piece:
                break
            if self.verify_crc:
                crc = crc32c(piece, crc) if magic == 2 else zlib.crc32(piece, crc)
            done += len(piece)
        if done < total:
            self._fault(TruncatedBatchError(self.name, pos, f"batch of {total} bytes is cut short after {done}",
                                            length=total))
            return False
        if self.verify_crc and crc != stored:
            kind = "CRC-32C" if magic == 2 else "CRC-32"
            self._fault(CrcMismatchError(self.name, pos, f"{kind} mismatch in {what} (stored {stored}) of {total} bytes, "
                                                         f"a length past the {readbound.MAX_BATCH_BYTES} bytes read "
                                                         f"whole: a damaged length field?", length=total))
            return True
        self._fault(OversizeBatchError(self.name, pos, f"{what} is {total} bytes, more than the {readbound.MAX_BATCH_BYTES} "
                                                       f"a batch is held in memory (monitor.kafka.readbound.MAX_BATCH_BYTES): "
                                                       f"{'CRC checked, ' if self.verify_crc else ''}records not read",
                                               length=total))
        return True

    def _parse(self, pos: int, magic: int, data: bytes):
        try:
            msg = legacy.LegacyMessage(self.name, pos, data)
        except (legacy.LegacyDecodeError, struct.error) as exc:
            self._fault(CorruptBatchError(self.name, pos, f"magic {magic} message: {exc}", length=len(data), resumable=True))
            return None
        if self.verify_crc and not msg.crc_ok(data):
            self._fault(CrcMismatchError(self.name, pos, f"CRC-32 mismatch in magic {magic} message at offset {msg.offset} "
                                                         f"(stored {msg.crc})", length=len(data)))
            return None
        return msg

    def _fault(self, err: RecordFormatError) -> None:
        if not self.skip_corrupt:
            raise err
        self.faults.append(err)
        self.batches_skipped += 1

    def cut_tail(self) -> RecordFormatError | None:
        """The truncated batch where the read stopped (the file ends inside it), or None. Whether that is a
        fault is ``cut_tail_is_fault``'s rule."""
        return next((f for f in self.faults if f.kind == "truncated" and f.position == self.end_position), None)

    def log_faults(self, active: bool = True) -> list[RecordFormatError]:
        """``faults``, less the cut tail when the segment is its partition's active one
        (``cut_tail_is_fault``): there it is a batch being appended right now, and the next read, from
        ``end_position``, picks it up once complete."""
        tail = None if cut_tail_is_fault(active) else self.cut_tail()
        return [f for f in self.faults if f is not tail]

    # ---------------------------------------------------------------- records
    def decoded(self, columns: bool = False, arrays: bool = False) -> Iterator[tuple]:
        """(batch, its records) for every batch, or (batch, its RecordColumns) with ``columns``, or
        (batch, its RecordArrays) with ``arrays``; a batch whose records do not decode (bad record
        data, a codec that refuses) is a fault."""
        for batch in self.batches():
            try:
                data = batch.arrays() if arrays else batch.columns() if columns else batch.records()
            except (v2.RecordDecodeError, legacy.LegacyDecodeError) as exc:
                self._fault(CorruptBatchError(self.name, batch.position, str(exc), length=batch.size, resumable=True))
                continue
            except DecompressedTooLarge as exc:
                self._fault(OversizeBatchError(self.name, batch.position, str(exc), length=batch.size))
                continue
            except CodecError as exc:
                self._fault(UnsupportedCodecError(self.name, batch.position, str(exc), length=batch.size))
                continue
            yield batch, data

    def records(self) -> Iterator[Record]:
        """Every record of every batch; a batch whose records do not decode is a fault."""
        for _, recs in self.decoded():
            yield from recs


def _lone_record_key(body: bytes) -> tuple | None:
    """(key,) of the one record that fills an uncompressed body exactly, with no header: a marker as
    Kafka writes it, checked without building a batch's columns (a marker-heavy log has millions);
    None for anything else, which the full decode then reads or reports."""
    try:
        length, pos = read_varint(body, 0)
        if pos + length != len(body):
            return None
        _, pos = read_varint(body, pos + 1)  # attributes, timestamp delta
        _, pos = read_varint(body, pos)  # offset delta
        size, pos = read_varint(body, pos)
        key = None
        if size >= 0:
            key = bytes(body[pos : pos + size])
            pos += size
        size, pos = read_varint(body, pos)
        pos += max(size, 0)
        headers, pos = read_varint(body, pos)
    except (IndexError, VarintError):
        return None
    return (key,) if headers == 0 and pos == len(body) else None


def _count_zeros(fh: BinaryIO) -> int:
    n = 0
    while True:
        chunk = fh.read(READ_BUFFER)
        if not chunk:
            return n
        stripped = chunk.lstrip(b"\x00")
        n += len(chunk) - len(stripped)
        if stripped:
            return n


def read_segment(path: str | Path, **kw) -> list[Record]:
    """All records of a small segment, for tests and one-off scripts."""
    return list(SegmentReader(path, **kw).records())

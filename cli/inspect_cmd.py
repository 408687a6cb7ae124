"""``compaction-monitor inspect``: records of segment files, dump texts or partition folders.

``--format jsonl`` prints one JSON object per record (the field names are a
contract: scripts and the tests rely on them); ``--format table`` is for
people. A summary goes to stderr. The exit status is 1 when corruption was met
(how many batches were skipped is in the summary), 2 for a path that cannot
be used at all.

It lives with the command line, not in the core: it is presentation (formats, messages, exit
statuses) over the core's readers (``monitor.record``, ``monitor.dump``, ``monitor.logdir``).
"""

from __future__ import annotations

import base64
import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, TextIO

from monitor.dump import DumpParser
from monitor.logdir import scan_partition
from monitor.record import RecordFormatError, SegmentReader
from monitor.regularfile import NotRegularFile, open_regular
from monitor.sniff import NOT_KAFKA, SNIFF_BYTES, sniff, text_encoding


@dataclass
class Summary:
    files: int = 0
    batches: int = 0
    records: int = 0
    tombstones: int = 0
    control: int = 0
    bytes: int = 0
    skipped: int = 0
    faults: list[str] = field(default_factory=list)
    dump_problems: list[str] = field(default_factory=list)
    not_kafka: list[str] = field(default_factory=list)  # files that are neither format
    notes: list[str] = field(default_factory=list)  # what was read differently, and why


def expand(path: Path) -> tuple[list[Path], list[str]]:
    """A partition folder becomes its ``.log`` files in offset order, and the ones it cannot read (a
    FIFO, a dangling link: named, with why); a file stays itself."""
    if path.is_dir():
        part = scan_partition(path)
        return [s.log for s in part.segments], list(part.unreadable)
    return [path], []


def iter_file(path: Path, summary: Summary, skip_corrupt: bool) -> Iterator[tuple[object, object]]:
    """(batch, record) pairs of one segment or dump file; faults recorded in ``summary``."""
    with open_regular(path) as fh:
        head = fh.read(SNIFF_BYTES)
    summary.files += 1
    kind = sniff(head, path.name)
    if kind is None:
        summary.not_kafka.append(f"{path}: {NOT_KAFKA}")
        return
    if kind == "dump":
        with io.TextIOWrapper(open_regular(path), encoding=text_encoding(head), errors="surrogateescape",
                              newline="\n") as fh:
            parser = DumpParser(fh, str(path))
            for batch in parser.batches():
                summary.batches += 1
                summary.bytes += batch.size or 0
                for rec in batch.records():
                    yield batch, rec
        summary.dump_problems += [f"{path}: line {p.line}: {p.reason}: {p.text[:80]!r}" for p in parser.problems]
        summary.notes += [f"{path}: line {line}: skipped the section of {f} (an index holds no records)"
                          for f, line in parser.skipped_sections]
        if parser.batchless_records:
            summary.notes.append(f"{path}: {parser.batchless_records} record line(s) without their batch line: "
                                 "batch fields they do not print (size, CRC, delete horizon...) are unknown (null)")
        return
    reader = SegmentReader(path, skip_corrupt=skip_corrupt)
    try:
        for batch, recs in reader.decoded():
            summary.batches += 1
            summary.bytes += batch.size
            for rec in recs:
                yield batch, rec
    finally:
        summary.skipped += reader.batches_skipped
        summary.faults += [str(f) for f in reader.faults]



def record_json(path: Path, batch, rec) -> dict:
    key = rec.key
    return {
        "file": str(path),
        "batch_base_offset": batch.base_offset,
        "batch_last_offset": batch.last_offset,
        "batch_position": batch.position,
        "magic": batch.magic,
        "offset": rec.offset,
        "timestamp": rec.timestamp,
        "timestamp_type": batch.timestamp_type,
        "key": None if key is None else base64.b64encode(key).decode(),
        "key_size": rec.key_size,
        "value_size": rec.value_size,
        "tombstone": rec.is_tombstone,
        "control": batch.is_control,
        "control_type": rec.control_type,
        "transactional": batch.is_transactional,
        "compression": batch.compression,
        "producer_id": batch.producer_id,
        "delete_horizon_ms": batch.delete_horizon_ms,
        "header_keys": rec.header_keys,
    }


TABLE_COLUMNS = [("offset", 10), ("timestamp", 13), ("key", 24), ("value_size", 10), ("flags", 14), ("codec", 6)]


def _table_row(batch, rec) -> str:
    key = rec.key
    if key is None:
        k = "(null)"
    else:
        k = key.decode("utf-8", "replace")
        k = k if k.isprintable() else key.hex()
    flags = []
    if rec.is_tombstone:
        flags.append("tombstone")
    if batch.is_control:
        flags.append(rec.control_type or "control")
    elif batch.is_transactional:
        flags.append("txn")
    vs = "null" if rec.value_size < 0 else str(rec.value_size)
    cells = [str(rec.offset), str(rec.timestamp), k[:24], vs, ",".join(flags), batch.compression or "?"]
    return "  ".join(c.ljust(w) for c, (_, w) in zip(cells, TABLE_COLUMNS))


def run_inspect(paths: list[str], *, fmt: str = "table", skip_corrupt: bool = True,
                out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    summary = Summary()
    if fmt == "table":
        out.write("  ".join(n.ljust(w) for n, w in TABLE_COLUMNS) + "\n")
    status = 0
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            print(f"inspect: {path}: no such file or directory", file=err)
            status = 2
            continue
        files, unreadable = expand(path)
        for problem in unreadable:
            print(f"inspect: cannot read: {problem}", file=err)
            status = 2
        for f in files:
            try:
                for batch, rec in iter_file(f, summary, skip_corrupt):
                    summary.records += 1
                    summary.tombstones += rec.is_tombstone
                    summary.control += batch.is_control
                    if fmt == "jsonl":
                        out.write(json.dumps(record_json(f, batch, rec)) + "\n")
                    else:
                        out.write(_table_row(batch, rec) + "\n")
            except RecordFormatError as exc:  # strict mode: stop this file at the first fault
                summary.faults.append(str(exc))
                summary.skipped += 1
            except BrokenPipeError:
                raise
            except NotRegularFile as exc:
                print(f"inspect: {exc}", file=err)
                status = 2
            except OSError as exc:
                print(f"inspect: {f}: cannot read: {exc.strerror or exc}", file=err)
                status = 2
    print(f"inspect: {summary.files} file(s), {summary.batches} batches, {summary.records} records "
          f"({summary.tombstones} tombstones, {summary.control} control), {summary.bytes} bytes", file=err)
    for fault in summary.faults:
        print(f"inspect: corrupt: {fault}", file=err)
    for problem in summary.dump_problems:
        print(f"inspect: dump: {problem}", file=err)
    for note in summary.notes:
        print(f"inspect: note: {note}", file=err)
    for line in summary.not_kafka:
        print(f"inspect: {line}", file=err)
    if summary.faults:
        print(f"inspect: met corruption: skipped {summary.skipped} batch(es)", file=err)
        status = status or 1
    if summary.dump_problems or summary.not_kafka:
        status = status or 1
    return status

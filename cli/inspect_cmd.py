"""``compaction-monitor inspect``: records of segment files, dump texts or partition folders.

``--format json`` prints one JSON object per record (JSON Lines) (the field names are a contract: scripts and
the tests rely on them; ``cli.inspect_jsonl`` writes them without a general encoder); ``--format
text`` (the default) is for people. ``--stats`` prints no record: totals per file, per partition and in all
(``cli.inspect_stats``), as text or, with ``--format json``, one JSON object per line. A summary goes
to stderr. The exit status is 1 when corruption was met (how many batches were skipped is in the
summary), 2 for a path that cannot be used at all (a folder with no segment file in it: a log dir given
for a partition folder). A truncated batch where a partition's last segment ends is what a live segment shows while a
producer's batch is being appended: as in the collector (``monitor.kafka.record.reader.cut_tail_is_fault``)
it is a note, not corruption, unless ``--strict``; in any other segment it is corruption.

It lives with the command line, not in the core: it is presentation (formats, messages, exit
statuses) over the core's readers (``monitor.kafka.record``, ``monitor.kafka.dump``, ``monitor.kafka.logdir``).
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, TextIO

from cli.inspect_jsonl import batch_lines
from cli.inspect_stats import StatsCollector, render_jsonl, render_text
from cli.progress import FileBytes
from monitor.contract.units import bytes_iec
from monitor.kafka.dump import DumpParser
from monitor.fileio.excerpt import escaped, excerpt
from monitor.kafka.kafkanames import printable
from monitor.kafka.logdir import scan_partition
from monitor.kafka.segmentstats import Counts
from monitor.kafka.record import RecordFormatError, SegmentReader
from monitor.fileio.regularfile import NotRegularFile, open_regular, os_reason, path_problem
from monitor.kafka.sniff import NOT_KAFKA, SNIFF_BYTES, sniff, text_encoding
from monitor.fileio import strictjson


@dataclass
class Summary(Counts):
    """The counts of the summary line, and what else goes to stderr."""

    faults: list[str] = field(default_factory=list)
    dump_problems: list[str] = field(default_factory=list)
    not_kafka: list[str] = field(default_factory=list)  # files that are neither format
    notes: list[str] = field(default_factory=list)  # what was read differently, and why


def expand(path: Path) -> tuple[list[Path], list[str], list[str]]:
    """A partition folder becomes its ``.log`` files in offset order, the ones it cannot read (a FIFO,
    a dangling link: named, with why) and the files it ignores (``5.log``, ``².snapshot``: names Kafka
    never writes, ``monitor.kafka.kafkanames``); a file named on the command line stays itself, whatever its name."""
    if path.is_dir():
        part = scan_partition(path)
        ignored = [printable(f"{path / name}: ignored: {why}") for name, why in part.stray]
        return [s.log for s in part.segments], list(part.unreadable), ignored
    return [path], [], []


def may_be_active(path: Path, files: list[Path]) -> bool:
    """Whether ``path`` may be its partition's active segment (``cut_tail_is_fault``): the last of the files
    of a folder read; a segment file named alone unless its folder holds a segment after it (one copied
    elsewhere may be anything, and is given the benefit)."""
    if len(files) > 1 or not path.name.endswith(".log"):
        return path == files[-1]
    try:
        later = [s for s in scan_partition(path.parent).segments if s.log.name > path.name]
    except OSError:
        return True
    return not later


def iter_file(path: Path, summary: Summary, skip_corrupt: bool,
              view: str = "records", live: bool = True) -> Iterator[tuple[object, object]]:
    """(batch, its records) for each batch of one segment or dump file; faults recorded in ``summary``.
    ``view`` "columns" or "arrays" gives a segment batch's ``RecordColumns`` or ``RecordArrays`` in
    place of its records (what the fast jsonl encoder and ``--stats`` read); a dump batch always comes
    with its records. ``live``: the file may be a partition's active segment (``may_be_active``); a cut tail of any other segment is corruption, as for the collector, ``logdir`` and
    ``explain`` (``monitor.kafka.record.reader.cut_tail_is_fault``: Kafka appends only to the active segment)."""
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
                yield batch, batch.records()
        summary.dump_problems += [f"{path}: line {p.line}: {p.reason}: {excerpt(p.text)}" for p in parser.problems]
        summary.notes += [f"{path}: line {line}: skipped the section of {f} (an index holds no records)"
                          for f, line in parser.skipped_sections]
        if parser.batchless_records:
            summary.notes.append(f"{path}: {parser.batchless_records} record line(s) without their batch line: "
                                 "batch fields they do not print (size, CRC, delete horizon...) are unknown (null)")
        return
    reader = SegmentReader(path, skip_corrupt=skip_corrupt)
    try:
        for batch, recs in reader.decoded(columns=view == "columns", arrays=view == "arrays"):
            summary.batches += 1
            summary.bytes += batch.size
            yield batch, recs
    finally:
        # the collector's rule (cut_tail_is_fault): a truncated batch where the read of a live segment
        # stopped is the batch being appended, not a fault; --strict (skip_corrupt False) raised it instead
        faults = reader.log_faults(active=live)
        tail = [f for f in reader.faults if f not in faults]
        summary.batches_skipped += reader.batches_skipped - len(tail)
        summary.faults += [str(f) for f in faults]
        summary.notes += [f"{f}: left out, as the collector does: the batch being appended to a live segment "
                          "(or a tail cut short); --strict counts it as corrupt" for f in tail]


TABLE_COLUMNS = [("offset", 10), ("timestamp", 13), ("key", 24), ("value_size", 10), ("flags", 14), ("codec", 6)]


def _table_row(batch, rec) -> str:
    key = rec.key
    if key is None:
        k = "(null)"
    else:
        k = escaped(key)  # the one display rule: the dashboard and the audit report show a key alike
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


def run_inspect(paths: list[str], *, fmt: str = "text", skip_corrupt: bool = True, stats: bool = False,
                out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Records of ``paths`` as ``fmt`` on ``out``, or with ``stats`` their totals per file, partition
    and in all (``cli.inspect_stats``); the summary and every fault on ``err``. Returns the exit status."""
    summary = Summary()
    # bytes read of the files' total, on a terminal only (and not among records printed to it)
    meter = FileBytes(err, "inspect", paths, expand, beside=None if stats else out)
    err = meter.writer()  # (a message while the line is drawn takes it away first)
    collected = StatsCollector() if stats else None
    if fmt == "text" and not stats:
        out.write("  ".join(n.ljust(w) for n, w in TABLE_COLUMNS) + "\n")
    view = "arrays" if stats else "columns" if fmt == "json" else "records"
    status = 0
    for raw in paths:
        path = Path(raw)
        problem = path_problem(path)  # a symlink loop is named as one, never "no such file"
        if problem:
            print(f"inspect: {problem}", file=err)
            status = 2
            continue
        try:
            files, unreadable, ignored = expand(path)
        except OSError as exc:  # a folder that cannot be listed
            print(f"inspect: {path}: cannot read: {os_reason(exc)}", file=err)
            status = 2
            continue
        for line in ignored:  # not a fault: Kafka would not load these as segments either
            print(f"inspect: {line}", file=err)
        for problem in unreadable:
            print(f"inspect: cannot read: {problem}", file=err)
            status = 2
        if not files and not unreadable:  # a log dir, or a folder of something else: never "0 file(s)" and 0
            print(f"inspect: {printable(str(path))}: no segment file (<20-digit offset>.log) in this folder: "
                  "give a partition folder (TOPIC-PARTITION) or segment files", file=err)
            status = 2
        for f in files:
            meter.file(f, summary.bytes)
            name = str(f)
            name_json = strictjson.dumps(name)
            skipped_before, batches_before = summary.batches_skipped, summary.batches
            readable = True
            try:
                for batch, data in iter_file(f, summary, skip_corrupt, view, live=may_be_active(f, files)):
                    summary.tally(batch, data)
                    meter.at(summary.bytes)
                    if collected is not None:
                        collected.add(batch, data)
                    elif fmt == "json":
                        for text in batch_lines(name, name_json, batch, data):
                            out.write(text)
                    else:
                        out.write("".join(_table_row(batch, rec) + "\n" for rec in data))
            except RecordFormatError as exc:  # strict mode: stop this file at the first fault
                summary.faults.append(str(exc))
                summary.batches_skipped += 1
            except BrokenPipeError:
                raise
            except NotRegularFile as exc:
                print(f"inspect: {exc}", file=err)
                status, readable = 2, False
            except OSError as exc:
                print(f"inspect: {f}: cannot read: {os_reason(exc)}", file=err)
                status, readable = 2, False
            if collected is not None and readable:
                collected.end_of_input(name, summary.batches - batches_before,
                                       summary.batches_skipped - skipped_before)
    meter.close()
    if collected is not None:
        out.write(render_jsonl(collected) if fmt == "json" else render_text(collected))
    print(f"inspect: {summary.files} file(s), {summary.batches} batches, {summary.records} records "
          f"({summary.tombstones} tombstones, {summary.control_records} control), {bytes_iec(summary.bytes)}", file=err)
    for fault in summary.faults:
        print(f"inspect: corrupt: {fault}", file=err)
    for problem in summary.dump_problems:
        print(f"inspect: dump: {problem}", file=err)
    for note in summary.notes:
        print(f"inspect: note: {note}", file=err)
    for line in summary.not_kafka:
        print(f"inspect: {line}", file=err)
    if summary.faults:
        print(f"inspect: met corruption: skipped {summary.batches_skipped} batch(es)", file=err)
        status = status or 1
    if summary.dump_problems or summary.not_kafka:
        status = status or 1
    return status

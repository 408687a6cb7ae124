"""Kafka's offset-checkpoint text files, parsed strictly.

``cleaner-offset-checkpoint``, ``recovery-point-offset-checkpoint``,
``log-start-offset-checkpoint`` and ``replication-offset-checkpoint`` share one
format (CheckpointFile / OffsetCheckpointFile)::

    0                 version, must be 0
    2                 number of entry lines
    orders 0 1523     <topic> <partition> <offset>
    orders 1 0

An empty file means no entries. Kafka writes ``<file>.tmp`` and renames it, so a
reader never sees half a file; anything else that does not fit is an error that
names the file and line, because a wrong dirty offset would make every ratio wrong.
The file is read in pieces and the first line that does not fit ends the read, so a
damaged file (a power loss leaves one of NUL bytes) costs bounded memory and its
message quotes a short excerpt (``monitor.fileio.excerpt``), never the line whole.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Callable, Iterator

from monitor.fileio.excerpt import EXCERPT_CHARS, excerpt
from monitor.fileio.regularfile import NotRegularFile, open_regular, os_reason

CHECKPOINT_VERSION = 0
CHECKPOINT_FILES = (
    "cleaner-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "replication-offset-checkpoint",
)


class CheckpointError(ValueError):
    """A checkpoint that cannot be read: ``line`` is the line at fault, None when the fault is the file's
    as a whole (a directory, a file the system will not open): no line of it was read, so none is named."""

    def __init__(self, file: str, line: int | None, reason: str):
        self.file, self.line, self.reason = str(file), line, reason
        super().__init__(f"{file}: {reason}" if line is None else f"{file}: line {line}: {reason}")


# The longest line Kafka writes: a topic name (at most 249 characters), a partition and an offset (at
# most 20 characters each) and two spaces. A longer line is no checkpoint line (a power loss can leave
# a file of NUL bytes without one line end): reading stops there, and memory stays bounded.
MAX_LINE_BYTES = 1024
READ_BYTES = 64 * 1024


def _lines(read: Callable[[int], bytes], file: str) -> Iterator[tuple[int, str]]:
    """(line number, text without its line end) of each line, read in pieces of ``READ_BYTES``; a
    line longer than ``MAX_LINE_BYTES`` or not UTF-8 is a CheckpointError quoting an excerpt."""
    buf, n = b"", 0
    while True:
        chunk = read(READ_BYTES)
        if chunk:
            buf += chunk
        pos = 0
        while (end := buf.find(b"\n", pos)) >= 0:
            n += 1
            yield n, _text(buf[pos:end], file, n)
            pos = end + 1
        buf = buf[pos:]
        if len(buf) > MAX_LINE_BYTES:
            raise CheckpointError(file, n + 1, f"more than {MAX_LINE_BYTES} bytes without a line end, "
                                               f"no checkpoint line: {excerpt(buf[:EXCERPT_CHARS + 1], more=True)}")
        if not chunk:
            break
    if buf:
        yield n + 1, _text(buf, file, n + 1)


def _text(raw: bytes, file: str, n: int) -> str:
    if len(raw) > MAX_LINE_BYTES:
        raise CheckpointError(file, n, f"a line of {len(raw)} bytes, longer than any checkpoint line "
                                       f"({MAX_LINE_BYTES}): {excerpt(raw)}")
    try:
        return raw.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as exc:
        raise CheckpointError(file, n, f"not UTF-8 text (byte {exc.start} of the line): {excerpt(raw)}") from None


def read_checkpoint_stream(read: Callable[[int], bytes], file: str = "<checkpoint>",
                           lines_of: dict | None = None) -> dict[tuple[str, int], int]:
    """``{(topic, partition): offset}`` from a checkpoint read by ``read(n)`` (a file's, a pyarrow
    stream's), in pieces; the first line that does not fit stops the read with a CheckpointError
    naming its line and quoting at most an excerpt of it. With ``lines_of``, each entry's line number
    is put there (for ``entry_problem``'s messages)."""
    lines = _lines(read, file)
    first = next(lines, None)
    if first is None or (not first[1].strip() and next(lines, None) is None):
        return {}  # an empty file means no entries
    head = first[1].strip()
    try:
        version = int(head)
    except ValueError:
        raise CheckpointError(file, 1, f"version {excerpt(head)} is not a number") from None
    if version != CHECKPOINT_VERSION:
        raise CheckpointError(file, 1, f"unsupported version {version} (expected {CHECKPOINT_VERSION})")
    second = next(lines, None)
    if second is None:
        raise CheckpointError(file, 2, "missing entry count")
    try:
        expected = int(second[1].strip())
    except ValueError:
        raise CheckpointError(file, 2, f"entry count {excerpt(second[1].strip())} is not a number") from None
    if expected < 0:
        raise CheckpointError(file, 2, f"negative entry count {expected}")
    entries: dict[tuple[str, int], int] = {}
    found, blank = 0, None  # blank: the first blank line not (yet) known to be trailing
    for i, line in lines:
        if not line.strip():
            blank = blank or i
            continue
        if blank is not None:  # a blank line with entries after it
            raise CheckpointError(file, blank, "expected '<topic> <partition> <offset>', got a blank line")
        found += 1
        if found > expected:
            continue  # counted only (a line past the count is the fault), never kept
        parts = line.split()
        if len(parts) != 3:
            raise CheckpointError(file, i, f"expected '<topic> <partition> <offset>', got {excerpt(line)}")
        topic, part, off = parts
        try:  # Kafka reads them with Integer.parseInt and Long.parseLong: more digits are no number to it
            partition, offset = _java_int(part, 31), _java_int(off, 63)
        except ValueError:
            raise CheckpointError(file, i, f"partition or offset is not a number in {excerpt(line)}") from None
        entries[(sys.intern(topic), partition)] = offset  # one string per topic (issue 43)
        if lines_of is not None:
            lines_of[(topic, partition)] = i
    if found != expected:
        raise CheckpointError(file, 2 + found + 1 if found < expected else 2,
                              f"header says {expected} entries, found {found}")
    return entries


def _java_int(text: str, bits: int) -> int:
    """``text`` as Java's parseInt (``bits`` 31) or parseLong (63) reads it; ValueError otherwise."""
    if not text.isascii() or len(text) > 20:
        raise ValueError(text)
    n = int(text)
    if not -(1 << bits) <= n < (1 << bits):
        raise ValueError(text)
    return n


def parse_checkpoint(text: str, file: str = "<checkpoint>", lines_of: dict | None = None) -> dict[tuple[str, int], int]:
    """``{(topic, partition): offset}`` from checkpoint text; CheckpointError when malformed."""
    return read_checkpoint_stream(io.BytesIO(text.encode("utf-8", "surrogateescape")).read, file, lines_of)


def read_checkpoint(path: str | Path, lines_of: dict | None = None) -> dict[tuple[str, int], int]:
    """Read and parse one checkpoint file, in pieces (``read_checkpoint_stream``); a missing file is an
    empty checkpoint. A file that cannot be read says why as the system does (``os.strerror``: "Too
    many levels of symbolic links", "Permission denied")."""
    path = Path(path)
    try:
        with open_regular(path) as fh:
            return read_checkpoint_stream(fh.read, str(path), lines_of)
    except FileNotFoundError:
        return {}
    except NotRegularFile as exc:
        raise CheckpointError(str(path), None, f"cannot read: not a regular file ({exc.what})") from exc
    except OSError as exc:
        raise CheckpointError(str(path), None, f"cannot read: {os_reason(exc)}") from exc


def entry_problem(partition: int, offset: int, log_end_offset: int | None = None) -> str | None:
    """Why one well-formed checkpoint entry cannot be right, or None. Kafka never writes a negative
    partition or offset, nor an offset past the log's end (the cleaner checkpoints at most its first
    uncleanable offset, LogCleanerManager; the log start offset never passes the end). Kafka itself
    would reset such a cleaner checkpoint to the log start offset; the monitor does not guess what it
    meant: the partition's figures are unknown until the entry is right (``log_end_offset`` None:
    only the sign is checked)."""
    if partition < 0:
        return f"negative partition {partition}"
    if offset < 0:
        return f"negative offset {offset}"
    if log_end_offset is not None and offset > log_end_offset:
        return f"offset {offset} is past the log end offset {log_end_offset}"
    return None


def describe_entry_problem(file: str, line: int | None, topic: str, partition: int, offset: int,
                           reason: str) -> str:
    """The message naming the file, the line, the entry and what follows from it."""
    where = f"{file}: line {line}" if line is not None else file
    then = "it names no partition, ignored" if partition < 0 else "the partition's compaction figures are unknown"
    return f"{where}: {topic} {partition} {offset}: {reason}; {then}"


def format_checkpoint(entries: dict[tuple[str, int], int]) -> str:
    """The text Kafka writes for ``entries`` (for fixtures and round-trip tests)."""
    lines = [str(CHECKPOINT_VERSION), str(len(entries))]
    lines += [f"{t} {p} {o}" for (t, p), o in entries.items()]
    return "\n".join(lines) + "\n"

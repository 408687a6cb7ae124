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
"""

from __future__ import annotations

from pathlib import Path

from monitor.regularfile import read_text_regular

CHECKPOINT_VERSION = 0
CHECKPOINT_FILES = (
    "cleaner-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "replication-offset-checkpoint",
)


class CheckpointError(ValueError):
    def __init__(self, file: str, line: int, reason: str):
        self.file, self.line, self.reason = str(file), line, reason
        super().__init__(f"{file}: line {line}: {reason}")


def parse_checkpoint(text: str, file: str = "<checkpoint>", lines_of: dict | None = None) -> dict[tuple[str, int], int]:
    """``{(topic, partition): offset}`` from checkpoint text; CheckpointError when malformed. With
    ``lines_of``, each entry's line number is put there (for ``entry_problem``'s messages)."""
    lines = text.splitlines()
    if not lines or (len(lines) == 1 and not lines[0].strip()):
        return {}
    try:
        version = int(lines[0].strip())
    except ValueError:
        raise CheckpointError(file, 1, f"version {lines[0].strip()!r} is not a number") from None
    if version != CHECKPOINT_VERSION:
        raise CheckpointError(file, 1, f"unsupported version {version} (expected {CHECKPOINT_VERSION})")
    if len(lines) < 2:
        raise CheckpointError(file, 2, "missing entry count")
    try:
        expected = int(lines[1].strip())
    except ValueError:
        raise CheckpointError(file, 2, f"entry count {lines[1].strip()!r} is not a number") from None
    if expected < 0:
        raise CheckpointError(file, 2, f"negative entry count {expected}")
    entries: dict[tuple[str, int], int] = {}
    body = lines[2:]
    while body and not body[-1].strip():
        body.pop()
    for i, line in enumerate(body, start=3):
        parts = line.split()
        if len(parts) != 3:
            raise CheckpointError(file, i, f"expected '<topic> <partition> <offset>', got {line!r}")
        topic, part, off = parts
        try:
            entries[(topic, int(part))] = int(off)
            if lines_of is not None:
                lines_of[(topic, int(part))] = i
        except ValueError:
            raise CheckpointError(file, i, f"partition or offset is not a number in {line!r}") from None
    if len(body) != expected:
        raise CheckpointError(file, 2 + len(body) + 1 if len(body) < expected else 2,
                              f"header says {expected} entries, found {len(body)}")
    return entries


def read_checkpoint(path: str | Path, lines_of: dict | None = None) -> dict[tuple[str, int], int]:
    """Read and parse one checkpoint file; a missing file is an empty checkpoint."""
    path = Path(path)
    try:
        text = read_text_regular(path)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckpointError(str(path), 0, f"cannot read: {exc}") from exc
    return parse_checkpoint(text, str(path), lines_of)


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

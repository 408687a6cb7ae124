"""Kafka's own names for partition folders and offset-named files: the one rule every reader follows.

Partition folders (``LocalLog.logDirName`` writes ``topic + "-" + partition``; ``LogManager.loadLogs``
loads every folder by ``LocalLog.parseTopicPartitionName``). The split is on the last ``-``; the topic
must be a legal topic name (``Topic.validate``: ``[a-zA-Z0-9._-]``, 1..249 characters) and the rest is
read by Java's ``Integer.parseInt``, which takes more than Kafka writes: a leading ``+``, leading zeros
and any Unicode decimal digit (``orders-03``, ``orders-+3`` and ``orders-٣`` all load as partition 3 of
``orders``), but nothing outside int32 (``t-99999999999999999999`` stops the broker's start: no
partition). A folder is read as the partition Kafka's loader makes of it (the broker serves its bytes
as that partition), so two folders that load as the same partition are Kafka's "Duplicate log
directories" (``LogManager.loadLog``: the broker refuses to start until one is deleted): a fault on
that partition, never two partitions. ``PartitionName.canonical`` says whether Kafka itself would
have written the name.

Offset-named files (segments ``.log .index .timeindex .txnindex``, producer snapshots ``.snapshot``,
and those with a temporary suffix ``.cleaned .swap .deleted`` after them): Kafka only ever writes the
offset as exactly 20 ASCII digits (``LogFileUtils.filenamePrefixFromOffset``), and an offset is a
non-negative long. Its loader parses the prefix with ``Long.parseLong`` and then opens the segment by
the 20-digit name it makes from the number (``LogSegment.open`` -> ``LogFileUtils.logFile``), so the
bytes of ``5.log`` are never segment 5 (Kafka would open ``00000000000000000005.log``), and ``².log``
or ``99999999999999999999999.log`` make its loader throw. (``ProducerStateManager.listSnapshotFiles``
would take a ``5.snapshot`` as it is; Kafka never writes one, so it is stray all the same: one rule
for every offset-named file, what Kafka would create.) A file with one of these suffixes and any
other name is stray: ignored, with the reason ``stray_reason`` gives, never read as a segment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

INT32_MAX = 2**31 - 1  # a partition is a Java int
LONG_MAX = 2**63 - 1  # an offset is a Java long
OFFSET_DIGITS = 20  # LogFileUtils.filenamePrefixFromOffset: setMinimumIntegerDigits(20)
TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")  # Topic.validate's legal characters and length
SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")  # LogFileUtils' segment files
SNAPSHOT_SUFFIX = ".snapshot"  # LogFileUtils.PRODUCER_SNAPSHOT_FILE_SUFFIX
TEMP_SUFFIXES = (".cleaned", ".swap", ".deleted")  # LogFileUtils' suffixes after the normal one
OFFSET_SUFFIXES = SEGMENT_SUFFIXES + (SNAPSHOT_SUFFIX,)
_ASCII_DIGITS = frozenset("0123456789")
_OFFSET_FILE = re.compile(r"([0-9]{%d})((?:%s)(?:%s)?)" % (  # [0-9], not \d: ASCII digits only
    OFFSET_DIGITS, "|".join(map(re.escape, OFFSET_SUFFIXES)), "|".join(map(re.escape, TEMP_SUFFIXES))))


def offset_prefix(offset: int) -> str:
    """``filenamePrefixFromOffset``: ``5`` -> ``00000000000000000005``."""
    return f"{offset:0{OFFSET_DIGITS}d}"


def offset_file(name: str) -> tuple[int, str] | None:
    """(offset, suffix) of a file name Kafka writes: 20 ASCII digits (a long), then ``.log``, ``.index``,
    ``.timeindex``, ``.txnindex`` or ``.snapshot``, then at most one of ``.cleaned .swap .deleted``:
    ``00000000000000000100.log.swap`` -> ``(100, ".log.swap")``. None for any other name."""
    m = _OFFSET_FILE.fullmatch(name)
    if m is None:
        return None
    offset = int(m[1])
    return (offset, m[2]) if offset <= LONG_MAX else None


def stray_reason(name: str) -> str | None:
    """Why a file whose suffix Kafka's loader picks up (``LogFileUtils.isLogFile``/``isIndexFile``, a
    ``.snapshot``, a temporary suffix) is not one Kafka would create; None when it is one, or when its
    suffix is none of Kafka's offset-named files (``leader-epoch-checkpoint``, ``partition.metadata``...)."""
    if not name.endswith(OFFSET_SUFFIXES + TEMP_SUFFIXES) or offset_file(name) is not None:
        return None
    stem, dot, _ = name.partition(".")
    if len(stem) == OFFSET_DIGITS and _ASCII_DIGITS.issuperset(stem) and int(stem) > LONG_MAX:
        return f"offset {stem} is beyond a long (2^63-1): Kafka writes no such file"
    if len(stem) == OFFSET_DIGITS and _ASCII_DIGITS.issuperset(stem):
        return "not a suffix Kafka writes after a 20-digit offset"
    return "not <20-digit offset>.<suffix>, the only name Kafka writes (LogFileUtils.filenamePrefixFromOffset)"


@dataclass(frozen=True)
class PartitionName:
    topic: str
    partition: int
    canonical: bool  # the name is exactly what Kafka writes (LocalLog.logDirName)

    @property
    def name(self) -> str:
        """The folder name Kafka writes for this partition: ``orders-03`` -> ``orders-3``."""
        return f"{self.topic}-{self.partition}"


def java_parse_int(s: str) -> int | None:
    """Java's ``Integer.parseInt(s)`` (radix 10): an optional sign, then one or more Unicode decimal
    digits (``Character.digit``), within int32; None where Java throws NumberFormatException."""
    body = s[1:] if s[:1] in "+-" else s
    if not body or not all(c.isdecimal() for c in body):
        return None
    value = int(body)  # Python's int() reads the same Unicode decimal digits
    value = -value if s[0] == "-" else value
    return value if -INT32_MAX - 1 <= value <= INT32_MAX else None


def partition_name(name: str) -> PartitionName | None:
    """``orders.v2-eu-3`` -> ``PartitionName("orders.v2-eu", 3, True)``; ``orders-03`` -> partition 3, not
    canonical; None for what Kafka's loader refuses (no ``-``, an illegal topic name, a partition that is
    not an int32) and for a negative partition (the split on the last ``-`` leaves no sign but ``+``; a
    partition is never negative). Folders marked ``-delete``/``-future``/``-stray`` are the caller's
    (``monitor.kafka.logdir.NOT_LIVE``)."""
    topic, dash, rest = name.rpartition("-")
    if not dash or not TOPIC_NAME.fullmatch(topic):
        return None
    partition = java_parse_int(rest)
    if partition is None or partition < 0:
        return None
    return PartitionName(topic, partition, rest == str(partition))


def topic_partition_key(key: str) -> tuple[str, int] | None:
    """(topic, partition) of a ``topic-partition`` text this program wrote (``TopicPartition.toString``,
    canonical); None for anything else."""
    p = partition_name(key)
    return (p.topic, p.partition) if p is not None and p.canonical else None


def printable(text: str, limit: int = 300) -> str:
    """A name as one short printable line, by the one display rule (``monitor.fileio.excerpt.escaped``:
    ``\\n``, an undecodable byte as ``\\xff``), cut at ``limit`` characters."""
    from monitor.fileio.excerpt import escaped

    return escaped(text, limit)

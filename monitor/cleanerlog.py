"""The stats block the log cleaner writes after each clean, from ``log-cleaner.log``.

    [2026-11-22 11:24:18,847] INFO [kafka-log-cleaner-thread-0]:
    	Log cleaner thread 0 cleaned log orders-3 (dirty section = [1200, 5400])
    	12.3 MB of log processed in 1.4 seconds (8.8 MB/sec).
    	Indexed 4.1 MB in 0.5 seconds (8.2 Mb/sec, 35.7% of total time)
    	Buffer utilization: 0.2%
    	Cleaned 12.3 MB in 0.9 seconds (13.7 Mb/sec, 64.3% of total time)
    	Start size: 12.3 MB (40,112 messages)
    	End size: 5.0 MB (16,001 messages)
    	59.3% size reduction (60.1% fewer messages)

MB is 2^20 bytes ("Mb/sec" is the same unit); numbers may carry locale grouping; a zero duration
prints Infinity or NaN. The cleaner's throughput learned from these blocks calibrates the audit's
cleaning-time estimate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

MB = 1 << 20
NUM = r"([\d.,]+|Infinity|NaN|∞)"
CLEANED = re.compile(r"cleaned log (?P<log>\S+) \(dirty section = \[(?P<start>-?\d+), (?P<end>-?\d+)\]\)")
PROCESSED = re.compile(rf"{NUM} MB of log processed in {NUM} seconds \({NUM} MB/sec\)")
INDEXED = re.compile(rf"Indexed {NUM} MB in {NUM} seconds")
CLEANED_PHASE = re.compile(rf"Cleaned {NUM} MB in {NUM} seconds")
BUFFER = re.compile(rf"Buffer utilization: {NUM}%")
START = re.compile(rf"Start size: {NUM} MB \({NUM} messages\)")
END = re.compile(rf"End size: {NUM} MB \({NUM} messages\)")


def _num(s: str) -> float:
    if s in ("Infinity", "∞"):
        return float("inf")
    if s == "NaN":
        return float("nan")
    return float(s.replace(",", ""))


@dataclass(frozen=True)
class CleanStats:
    log: str  # topic-partition
    dirty_start: int
    dirty_end: int
    processed_mb: float
    seconds: float
    mb_per_sec: float
    indexed_mb: float | None = None
    indexed_seconds: float | None = None
    cleaned_mb: float | None = None
    cleaned_seconds: float | None = None
    buffer_utilization: float | None = None  # 0..1
    start_mb: float | None = None
    start_messages: int | None = None
    end_mb: float | None = None
    end_messages: int | None = None

    @property
    def duration(self) -> float:
        """The clean's seconds, from MB / (MB/sec) when both are finite: the printed seconds are
        rounded to 0.1 s, the rate is not rounded as coarsely."""
        if self.processed_mb > 0 and 0 < self.mb_per_sec < float("inf"):
            return self.processed_mb / self.mb_per_sec
        return self.seconds

    @property
    def topic_partition(self) -> tuple[str, int]:
        topic, _, p = self.log.rpartition("-")
        return topic, int(p)


def parse_cleaner_log(lines: Iterable[str]) -> list[CleanStats]:
    out: list[CleanStats] = []
    block: dict | None = None
    for line in lines:
        m = CLEANED.search(line)
        if m:
            if block:
                out.append(_finish(block))
            block = {"log": m["log"], "dirty_start": int(m["start"]), "dirty_end": int(m["end"])}
            continue
        if block is None:
            continue
        if (m := PROCESSED.search(line)):
            block.update(processed_mb=_num(m[1]), seconds=_num(m[2]), mb_per_sec=_num(m[3]))
        elif (m := INDEXED.search(line)):
            block.update(indexed_mb=_num(m[1]), indexed_seconds=_num(m[2]))
        elif (m := CLEANED_PHASE.search(line)):
            block.update(cleaned_mb=_num(m[1]), cleaned_seconds=_num(m[2]))
        elif (m := BUFFER.search(line)):
            block["buffer_utilization"] = _num(m[1]) / 100
        elif (m := START.search(line)):
            block.update(start_mb=_num(m[1]), start_messages=int(_num(m[2])))
        elif (m := END.search(line)):
            block.update(end_mb=_num(m[1]), end_messages=int(_num(m[2])))
            out.append(_finish(block))
            block = None
    if block and "processed_mb" in block:
        out.append(_finish(block))
    return out


def _finish(b: dict) -> CleanStats:
    b.setdefault("processed_mb", 0.0)
    b.setdefault("seconds", 0.0)
    b.setdefault("mb_per_sec", float("nan"))
    return CleanStats(**b)


def learned_throughput(stats: Iterable[CleanStats], min_mb: float = 1.0) -> float | None:
    """Bytes per second over the cleans big enough to time (total MB / total seconds)."""
    mb = secs = 0.0
    for s in stats:
        d = s.duration
        if s.processed_mb >= min_mb and 0 < d < float("inf"):
            mb += s.processed_mb
            secs += d
    return mb * MB / secs if secs > 0 else None


# --- what the cleaner log says beyond the stats blocks (filled by the cleaner-log reader) ---

@dataclass(frozen=True)
class Uncleanable:
    """A partition the cleaner marked uncleanable: Kafka skips it until the broker restarts."""

    topic: str
    partition: int
    exception: str  # the exception's class name, e.g. CorruptRecordException
    message: str  # the exception's message (first line)
    timestamp_ms: int | None  # when the line was logged
    log_dir: str | None = None  # when the line names it
    source: str = ""  # file:line of the evidence


@dataclass(frozen=True)
class ThreadDeath:
    """A cleaner thread that stopped on an error (Kafka's DeadThreadCount counts these)."""

    thread: str  # e.g. kafka-log-cleaner-thread-0
    error: str  # the last error, first line
    timestamp_ms: int | None
    source: str = ""


@dataclass(frozen=True)
class CleanerLogState:
    """Everything read from one broker's log-cleaner.log so far."""

    uncleanable: dict  # (topic, partition) -> Uncleanable
    thread_deaths: tuple  # of ThreadDeath
    cleans: tuple  # of CleanStats, oldest first

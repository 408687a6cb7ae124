"""What a broker's ``log-cleaner.log`` says: the stats block after each clean, the partitions the
cleaner marked uncleanable and why, cleaner threads that died, and broker starts.

Kafka writes it with log4j's ``[%d] %p %m (%c)%n`` (Kafka's own config/log4j2.yaml); an exception's
stack trace follows its event's line. The line shapes, the same from Kafka 2.x to 4.3 unless said:

* the stats block (Kafka 2.x/3.x core/.../kafka/log/LogCleaner.scala ``recordStats``, 4.x
  storage/.../internals/log/LogCleaner.java ``CleanerThread.recordStats``; the message starts with a
  line break, so the block sits under a header ending in ``]: ``)::

    [2026-11-22 11:24:18,847] INFO [kafka-log-cleaner-thread-0]:
    	Log cleaner thread 0 cleaned log orders-3 (dirty section = [1200, 5400])
    	12.3 MB of log processed in 1.4 seconds (8.8 MB/sec).
    	Indexed 4.1 MB in 0.5 seconds (8.2 Mb/sec, 35.7% of total time)
    	Buffer utilization: 0.2%
    	Cleaned 12.3 MB in 0.9 seconds (13.7 Mb/sec, 64.3% of total time)
    	Start size: 12.3 MB (40,112 messages)
    	End size: 5.0 MB (16,001 messages)
    	59.3% size reduction (60.1% fewer messages)
     (org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread)

  MB is 2^20 bytes ("Mb/sec" is the same unit); numbers carry ``%,`` grouping; a zero duration
  prints Infinity or NaN.
* an uncleanable partition (KIP-346, Kafka 2.1+, ``tryCleanFilthiestLog``), WARN with the
  ``LogCleaningException`` wrapping the cause as its stack trace::

    ... WARN [kafka-log-cleaner-thread-0]: Unexpected exception thrown when cleaning log
    Log(dir=/data/orders-3, topic=orders, ...). Marking its partition (orders-3) as uncleanable (...)

  The log is printed as ``Log(dir=...)`` (2.4+, 4.x), ``UnifiedLog(dir=...)`` (3.x) or
  ``Log(/data/orders-3)`` (2.1-2.3).
* a dead thread: ShutdownableThread's ``error("Error due to", e)`` under the thread's prefix
  (``[kafka-log-cleaner-thread-0]: Error due to``), then ``Stopped``. Kafka 2.0 and older die so on
  any cleaning error; later ones only on an error outside a clean.
* ``Starting the log cleaner`` (LogCleaner.startup) at every broker start: the uncleanable set
  (LogCleanerManager's in-memory ``uncleanablePartitions``) and dead threads are gone after it.
* the rest, read for their shape only (``KNOWN_LINES``): the Cleaner's progress (``Cleaner 0: Beginning
  cleaning of log ...``, ``Building offset map ...``, ``Swapping in cleaned segment ...``: a Scala
  ``List(LogSegment(...))`` in 3.x, a Java ``[LogSegment(...)]`` in 4.x), the cleaner thread's ``Starting``
  and ``Stopped``, LogCleanerManager's checkpoint warnings (it logs under ``kafka.log.LogCleaner``).

A line at INFO or above under one of the cleaner's loggers (``kafka.log.LogCleaner``, 4.x's
``org.apache.kafka.storage.internals.log.{LogCleaner,Cleaner,LogCleaner$CleanerThread}``) in none of these
shapes is from a version (or a patched broker) this parser does not know: it is named like a malformed line
(file, line, the logger and what was expected), so a new event is not silently dropped; the rest is read.
DEBUG and TRACE lines (a logger turned up by hand) are not judged: their shapes are too many to list.

The parser is incremental (``feed`` one line at a time, ``state`` whenever), keeps a bounded amount
(the recent cleans, the last malformed lines, a capped stack trace per event) and never raises on
input: a line it cannot read is named by file and line in ``state().malformed``. The cleaner's
throughput learned from the recent cleans calibrates the cleaning-time estimate (monitor.model.estimate).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable

from monitor.fileio.excerpt import excerpt, shortened
from monitor.kafka.kafkanames import topic_partition_key

MB = 1 << 20
NUM = r"(-?Infinity|NaN|-?∞|-?[\d.,]+)"
CLEANED = re.compile(r"cleaned log (?P<log>\S+) \(dirty section = \[(?P<start>-?\d+), (?P<end>-?\d+)\]\)")
PROCESSED = re.compile(rf"{NUM} MB of log processed in {NUM} seconds \({NUM} MB/sec\)")
INDEXED = re.compile(rf"Indexed {NUM} MB in {NUM} seconds")
CLEANED_PHASE = re.compile(rf"Cleaned {NUM} MB in {NUM} seconds")
BUFFER = re.compile(rf"Buffer utilization: {NUM}%")
START = re.compile(rf"Start size: {NUM} MB \({NUM} messages\)")
END = re.compile(rf"End size: {NUM} MB \({NUM} messages\)")
REDUCTION = re.compile(rf"{NUM}% size reduction \({NUM}% fewer messages\)")

# one log4j event's first line: Kafka's "[%d] %p %m (%c)%n", %d in log4j's default ISO8601-ish form
HEADER = re.compile(r"^\[(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?)\] "
                    r"(?P<level>TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ?(?P<msg>.*)$")
UNCLEANABLE = re.compile(r"Unexpected exception thrown when cleaning log (?P<log>.*?)\. "
                         r"Marking its partition \((?P<tp>.+?)\) as uncleanable")
LOG_DIR = re.compile(r"(?:dir=|^(?:Unified)?Log\()(?P<dir>/[^,)\]]*|[A-Za-z]:\\[^,)\]]*)")
THREAD_DEATH = re.compile(r"\[(?P<thread>kafka-log-cleaner-thread-\d+)\]: Error due to")
BROKER_START = "Starting the log cleaner"
EXCEPTION = re.compile(r"^(?:Caused by: )?(?P<cls>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)(?::\s?(?P<msg>.*))?$")
LOGGER_TAIL = re.compile(r"^\s*\([\w.$]+\)\s*$")  # the " (%c)" closing a multi-line message
# the loggers Kafka's stock log4j configs route to log-cleaner.log (2.x/3.x: one; 4.x: the classes'), and any
# class of the cleaner's beside them (a later version's new one)
CLEANER_LOGGER = re.compile(r"^(?:kafka\.log|org\.apache\.kafka\.storage\.internals\.log)\.(?:Log)?Cleaner[\w$]*$")
EVENT_LOGGER = re.compile(r"\s\((?P<logger>[\w.$]+)\)\s*$")  # the " (%c)" ending an event's line
# a thread's or a Cleaner's log ident before the message: "[kafka-log-cleaner-thread-0]: ", "Cleaner 0: "
IDENT = re.compile(r"^\s*(?:\[[^\]]*\]:\s*)?(?:Cleaner \d+: )?\s*")
# Every message the cleaner's loggers write at INFO and above in Kafka 2.x-4.4 (LogCleaner, Cleaner,
# LogCleanerManager, ShutdownableThread), after the ident: the format strings' fixed starts
KNOWN_LINES = re.compile("|".join(f"(?:{p})" for p in (
    r"$", r"Log cleaner thread \d+ cleaned log ", r"Starting the log cleaner", r"Shutting down the log cleaner",
    r"Starting$", r"Stopped", r"Shutting down$", r"Shutdown completed", r"Error due to",
    r"Beginning cleaning of log ", r"Building offset map for ", r"Offset map for log ", r"Offset map is full",
    r"Cleaning ", r"Swapping in cleaned segment", r"Growing cleaner I/O buffers", r"Caught segment overflow",
    r"Unexpected exception thrown when cleaning log ", r"Cleanable partitions: ", r"Found \d+ invalid messages",
    r"The last checkpoint dirty offset", r"Resetting first dirty offset", r"Failed to access checkpoint file",
    r"Failed to clean up log", r"Stopping cleaning logs in dir", r"Adding the partition offset data",
    r"Removing the partition offset data", r"Updating logCleanerIoMaxBytesPerSecond", r"Cannot use more than 2G",
    r"Log cleaner threads", r"Invalid value for `log.cleaner.threads`", r"Checking if log segment may be cleaned",
    r"Finding range of cleanable offsets", r"No filthiest log found", r"No uncleanable offset found")))
KNOWN_EXPECTED = ("a clean's stats, an uncleanable partition, a thread's death, a start, or a progress or "
                  "checkpoint line of Kafka 2.x-4.4")
JUDGED_LEVELS = {"INFO", "WARN", "ERROR", "FATAL"}
WRAPPERS = {"LogCleaningException"}  # Kafka's wrapper around the real cause (its message repeats the cause's)


def _num(s: str) -> float:
    if s.lstrip("-") in ("Infinity", "∞"):
        return float("-inf") if s.startswith("-") else float("inf")
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
    size_reduction: float | None = None  # 0..1, as Kafka printed it (from bytes, not the rounded MB)
    timestamp_ms: int | None = None
    source: str = ""  # file:line of the block

    @property
    def duration(self) -> float:
        """The clean's seconds, from MB / (MB/sec) when both are finite: the printed seconds are
        rounded to 0.1 s, the rate is not rounded as coarsely."""
        if self.processed_mb > 0 and 0 < self.mb_per_sec < float("inf"):
            return self.processed_mb / self.mb_per_sec
        return self.seconds

    @property
    def processed_bytes(self) -> float:
        """Bytes the clean read, to Kafka's printed precision (0.1 MB)."""
        return self.processed_mb * MB

    @property
    def throughput_bytes_per_second(self) -> float:
        return self.mb_per_sec * MB

    @property
    def topic_partition(self) -> tuple[str, int] | None:
        """The cleaned log's (topic, partition) as Kafka prints it; None for a name it would not print."""
        return topic_partition_key(self.log)


def learned_throughput(stats: Iterable[CleanStats], min_mb: float = 1.0) -> float | None:
    """Bytes per second over the cleans big enough to time (total MB / total seconds)."""
    mb = secs = 0.0
    for s in stats:
        d = s.duration
        if s.processed_mb >= min_mb and 0 < d < float("inf"):
            mb += s.processed_mb
            secs += d
    return mb * MB / secs if secs > 0 else None


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
    exception: str = ""  # the error's class name


@dataclass(frozen=True)
class CleanerLogState:
    """Everything read from one broker's log-cleaner.log so far."""

    uncleanable: dict  # (topic, partition) -> Uncleanable, since the last broker start
    thread_deaths: tuple  # of ThreadDeath since the last broker start
    cleans: tuple  # of CleanStats, oldest first (the most recent ones when bounded)
    cleans_total: int = 0
    processed_bytes_total: float = 0.0
    thread_deaths_total: int = 0  # every death read, across broker starts
    last_thread_death: ThreadDeath | None = None
    broker_starts: int = 0
    malformed: tuple = ()  # "file:line: reason", the most recent ones
    malformed_total: int = 0
    lines: int = 0

    @property
    def last_clean(self) -> CleanStats | None:
        return self.cleans[-1] if self.cleans else None

    def learned_throughput(self, min_mb: float = 1.0) -> float | None:
        """The cleaner's bytes per second over the recent cleans (None when none was big enough)."""
        return learned_throughput(self.cleans, min_mb)


@dataclass
class _Acc:
    uncleanable: dict = field(default_factory=dict)
    deaths: list = field(default_factory=list)
    cleans: deque = field(default_factory=deque)
    cleans_total: int = 0
    processed_bytes_total: float = 0.0
    deaths_total: int = 0
    last_death: ThreadDeath | None = None
    broker_starts: int = 0
    malformed: deque = field(default_factory=lambda: deque(maxlen=20))
    malformed_total: int = 0

    def copy(self) -> "_Acc":
        return _Acc(dict(self.uncleanable), list(self.deaths), deque(self.cleans, self.cleans.maxlen),
                    self.cleans_total, self.processed_bytes_total, self.deaths_total, self.last_death,
                    self.broker_starts, deque(self.malformed, self.malformed.maxlen), self.malformed_total)


@dataclass
class _Event:
    line: int
    timestamp_ms: int | None
    level: str | None
    message: str
    more: list = field(default_factory=list)  # the lines after the first (capped)
    dropped: int = 0


def _timestamp_ms(ts: str) -> int | None:
    """log4j's %d, read in the collector's local time zone (Kafka writes the broker JVM's)."""
    try:
        return int(datetime.strptime(ts.replace(",", ".").replace("T", " ")[:23], "%Y-%m-%d %H:%M:%S.%f")
                   .timestamp() * 1000)
    except ValueError:
        try:
            return int(datetime.strptime(ts[:19].replace("T", " "), "%Y-%m-%d %H:%M:%S").timestamp() * 1000)
        except ValueError:
            return None


def _simple(cls: str) -> str:
    return cls.rsplit(".", 1)[-1]


def root_exception(lines: Iterable[str]) -> tuple[str, str] | None:
    """(class name, first line of message) of a Java stack trace's root cause: the last ``Caused by``,
    or its first exception line; Kafka's LogCleaningException wrapper gives way to its cause. The
    message is ``shortened`` (escaped, at most ``MESSAGE_CHARS``): it is read from a file."""
    found = []
    for ln in lines:
        s = ln.strip()
        if not s or s.startswith(("at ", "... ", "Suppressed:")):
            continue
        m = EXCEPTION.match(s)
        if m and (s.startswith("Caused by: ") or not found):
            found.append((_simple(m["cls"]), (m["msg"] or "").strip()))
    if not found:
        return None
    for cls, msg in reversed(found):
        if cls not in WRAPPERS:
            return cls, shortened(msg)
    return found[-1][0], shortened(found[-1][1])


class CleanerLogParser:
    """Reads log-cleaner.log lines one at a time into a ``CleanerLogState``.

    ``source`` names the file in malformed-line reports. ``max_cleans`` bounds the cleans kept
    (None keeps all: a one-shot read); ``max_event_lines`` bounds one event's stack trace."""

    def __init__(self, source: str = "log-cleaner.log", *, max_cleans: int | None = 256, max_event_lines: int = 200):
        self.source = source
        self.max_event_lines = max_event_lines
        self._acc = _Acc(cleans=deque(maxlen=max_cleans))
        self._event: _Event | None = None
        self.lines = 0

    def feed(self, line: str, lineno: int | None = None) -> None:
        line = line.rstrip("\r\n")
        self.lines += 1
        n = lineno if lineno is not None else self.lines
        m = HEADER.match(line)
        if m:
            self._close()
            self._event = _Event(n, _timestamp_ms(m["ts"]), m["level"], m["msg"])
            return
        if self._event is None:  # a line with no event header above it (another layout, or garbage)
            if line.strip():
                self._bad(n, "not a log4j event line ([date] LEVEL message (logger)) and no event above it")
            return
        if len(self._event.more) < self.max_event_lines:
            self._event.more.append(line)
        else:
            self._event.dropped += 1

    def file_changed(self, source: str | None = None) -> None:
        """The next lines come from another file (rotation): an event never spans files."""
        self._close()
        if source:
            self.source = source

    def finish(self) -> CleanerLogState:
        self._close()
        return self.state()

    def state(self) -> CleanerLogState:
        """What was read so far, the event still open (its stack trace may go on) included."""
        acc = self._acc
        if self._event is not None:
            acc = acc.copy()
            self._apply(self._event, acc)
        return CleanerLogState(
            uncleanable=dict(acc.uncleanable), thread_deaths=tuple(acc.deaths), cleans=tuple(acc.cleans),
            cleans_total=acc.cleans_total, processed_bytes_total=acc.processed_bytes_total,
            thread_deaths_total=acc.deaths_total, last_thread_death=acc.last_death, broker_starts=acc.broker_starts,
            malformed=tuple(acc.malformed), malformed_total=acc.malformed_total, lines=self.lines)

    # --- internals

    def _close(self) -> None:
        if self._event is not None:
            self._apply(self._event, self._acc)
            self._event = None

    def _bad(self, n: int, reason: str, acc: _Acc | None = None) -> None:
        acc = acc or self._acc
        acc.malformed.append(f"{self.source}:{n}: {reason}")
        acc.malformed_total += 1

    def _apply(self, ev: _Event, acc: _Acc) -> None:
        where = f"{self.source}:{ev.line}"
        msg = ev.message
        if BROKER_START in msg:
            acc.uncleanable.clear()
            acc.deaths.clear()
            acc.broker_starts += 1
            return
        if "Marking its partition" in msg:
            m = UNCLEANABLE.search(msg)
            tp = m and topic_partition_key(m["tp"])  # as Kafka prints it; never a partition beyond int32
            if not tp:
                self._bad(ev.line, "an uncleanable-partition line without a topic-partition", acc)
                return
            exc = root_exception(ev.more)
            d = LOG_DIR.search(m["log"])
            log_dir = (d["dir"].rstrip("/").rpartition("/")[0] or None) if d else None
            acc.uncleanable[tp] = Uncleanable(
                tp[0], tp[1], exc[0] if exc else "unknown",
                exc[1] if exc else "no stack trace logged under the event", ev.timestamp_ms, log_dir, where)
            return
        m = THREAD_DEATH.search(msg)
        if m:
            exc = root_exception(ev.more)
            death = ThreadDeath(m["thread"], f"{exc[0]}: {exc[1]}" if exc else "unknown (no stack trace logged)",
                                ev.timestamp_ms, where, exc[0] if exc else "unknown")
            acc.deaths.append(death)
            del acc.deaths[:-64]
            acc.deaths_total += 1
            acc.last_death = death
            return
        block = [msg, *ev.more]
        if any("cleaned log" in ln for ln in block):
            stats = _stats(block, ev, where)
            if isinstance(stats, str):
                self._bad(ev.line, stats, acc)
                return
            acc.cleans.append(stats)
            acc.cleans_total += 1
            acc.processed_bytes_total += stats.processed_bytes
            return
        unknown = _unknown_shape(ev)
        if unknown:
            self._bad(ev.line, unknown, acc)


def _unknown_shape(ev: _Event) -> str | None:
    """Why an event under one of the cleaner's loggers is of no shape this parser knows (None when it is
    known, below INFO, or under another logger: another class routed to the same file is not the cleaner's)."""
    if ev.level not in JUDGED_LEVELS:
        return None
    m = EVENT_LOGGER.search(ev.message)
    if m is not None:
        logger, text = m["logger"], ev.message[:m.start()]
    else:  # a multi-line message (the stats block's shape): its " (%c)" alone on the line after its last
        tail = next((i for i, ln in enumerate(ev.more) if LOGGER_TAIL.match(ln)), None)
        if tail is None:
            return None
        logger = ev.more[tail].strip()[1:-1]
        text = "\n".join([ev.message, *ev.more[:tail]])
    if not CLEANER_LOGGER.match(logger):
        return None
    text = IDENT.sub("", text, count=1).split("\n", 1)[0]
    if KNOWN_LINES.match(text):
        return None
    return (f"a line of the cleaner's logger {logger} ({ev.level}) in no shape this reader knows (another Kafka "
            f"version's?): {excerpt(text)}; expected {KNOWN_EXPECTED}")


def _stats(lines: list[str], ev: _Event, where: str) -> CleanStats | str:
    """One stats block, or why it cannot be read."""
    b: dict = {}
    try:
        for line in lines:
            if (m := CLEANED.search(line)):
                b.update(log=m["log"], dirty_start=int(m["start"]), dirty_end=int(m["end"]))
            elif (m := PROCESSED.search(line)):
                b.update(processed_mb=_num(m[1]), seconds=_num(m[2]), mb_per_sec=_num(m[3]))
            elif (m := INDEXED.search(line)):
                b.update(indexed_mb=_num(m[1]), indexed_seconds=_num(m[2]))
            elif (m := CLEANED_PHASE.search(line)):
                b.update(cleaned_mb=_num(m[1]), cleaned_seconds=_num(m[2]))
            elif (m := BUFFER.search(line)):
                b["buffer_utilization"] = _num(m[1]) / 100
            elif (m := START.search(line)):
                b.update(start_mb=_num(m[1]), start_messages=int(_num(m[2])))
            elif (m := END.search(line)):
                b.update(end_mb=_num(m[1]), end_messages=int(_num(m[2])))
            elif (m := REDUCTION.search(line)):
                b["size_reduction"] = _num(m[1]) / 100
    except ValueError:
        return f"a stats block with a number that cannot be read in {excerpt(line)}"
    if "log" not in b or "processed_mb" not in b:
        return "a stats block without its 'cleaned log' or 'MB of log processed' line"
    return CleanStats(**b, timestamp_ms=ev.timestamp_ms, source=where)


def read_cleaner_log(lines: Iterable[str], source: str = "log-cleaner.log", **kw) -> CleanerLogState:
    """A whole log read at once (every clean kept unless ``max_cleans`` is given)."""
    p = CleanerLogParser(source, max_cleans=kw.pop("max_cleans", None), **kw)
    for line in lines:
        p.feed(line)
    return p.finish()


def parse_cleaner_log(lines: Iterable[str]) -> list[CleanStats]:
    """Every stats block of a whole log, oldest first."""
    return list(read_cleaner_log(lines).cleans)


__all__ = ["MB", "CleanStats", "CleanerLogParser", "CleanerLogState", "ThreadDeath", "Uncleanable",
           "learned_throughput", "parse_cleaner_log", "read_cleaner_log", "root_exception"]

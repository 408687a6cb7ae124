"""The broker's cleaner queue, forecast: when each compacted partition's next clean starts and ends, and
when the broker's backlog drains, by running Kafka's cleaning loop forward in time over every partition
of the broker at once (a partition's turn depends on all the others).

Kafka's loop (Kafka 3.x core/.../kafka/log/LogCleaner.scala ``CleanerThread.doWork`` /
``cleanFilthiestLog``, LogCleanerManager.scala ``grabFilthiestCompactedLog``; 4.x the same in
storage/.../internals/log/LogCleaner.java, LogCleanerManager.java, LogToClean.java):

* each of ``log.cleaner.threads`` threads asks for work; a log being cleaned by one thread is not
  offered to another (``inProgress``), nor is one marked uncleanable;
* the logs offered are those with ``cleanableRatio > min.cleanable.dirty.ratio``, or with
  ``needCompactionNow`` (``maxCompactionDelay > 0``: the oldest dirty segment's first batch is older
  than ``max.compaction.lag.ms``) and cleanable bytes;
* of those the thread takes the one with the highest ``cleanableRatio`` (``LogToClean.compareTo``
  compares the ratio alone: an overdue log is offered whatever its ratio, but it is not put ahead of a
  dirtier one; Kafka's docs call ``max.compaction.lag.ms`` "not a hard guarantee");
* a thread that cleaned goes straight back for more; one that found nothing sleeps
  ``log.cleaner.backoff.ms`` (``pause(config.backoffMs)``);
* after a clean the log's dirty section is empty (its checkpoint is the clean's end offset).

A clean reads the log from its start to the end of the dirty section (``MB of log processed`` in
log-cleaner.log counts those bytes), so it takes (clean + cleanable bytes) / throughput, the throughput
learned from log-cleaner.log (``monitor.kafka.cleanerlog.learned_throughput``: the same bytes over the
same seconds). All threads share one Throttler (``log.cleaner.io.max.bytes.per.second``): while n cleans
run, each does at most the throttle / n of I/O, and the throttle counts every byte read and written:
the cleanable bytes read for the offset map, the processed bytes read, and the bytes written (2 to 3
times the processed bytes, ``_io_per_byte``). Kafka's Throttler (storage/.../internals/utils/Throttler.java,
``checkIntervalMs`` 300 in LogCleaner) lets the bytes run at full speed until 300 ms have passed since
its last check, then sleeps until they fit the setting: the rate holds over each check interval, not
within it: a clean's tail is paid for at the start of the next clean, the queue's last tail never, and
the first check after an idle spell averages the idle time in. The real cleaner is thus ahead of this
forecast by up to two intervals' full-speed bytes / the throttle (docs/cleaner-queue.md).

Assumptions, stated in every forecast's basis: every thread is free now (a thread may be in the middle of
a clean or of its back-off: a start may come up to that much later); new writes arrive at the partition's
measured write rate and count as cleanable as they arrive (Kafka counts them once their segment rolls);
an unknown write rate counts as no writes; a clean keeps the log's size (the ratio of a later clean is
then lower: the second cleans this forecast does not report come no earlier); one pass of the offset map
per clean. A clean goes at the slower of the learned throughput (bytes processed) and its share of the
throttle turned into bytes processed (a throughput learned under the same throttle is about that share
already, so the two agree).

Unknown, with the reason, never a guess: every time when no throughput was learned; a partition's next
clean when it is not eligible and its write rate is unknown, when no write and no deadline will make it
eligible, or beyond ``HORIZON_MS``; the whole broker's when its cleaner is disabled or a partition's
config is unknown (its place in the queue cannot be told, so no one's can).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field, replace

from monitor.model.compaction import CLEANABLE_RATIO_ABOVE_MIN
from monitor.model.topicconfig import BROKER_DEFAULTS, LONG_MAX, no_throttle

HORIZON_MS = 30 * 86_400_000  # how far ahead the loop is run: a clean later than this is "not within 30 days"
# events simulated at most, per log and in all (each is a grab, an end of a clean or an idle wake-up): the loop
# stops once every log that can be offered has its next clean and the backlog has drained, so this bounds only
# a queue that writes keep busy (its later cleans of the same logs)
STEPS_PER_LOG, MIN_STEPS = 20, 1000

NOT_CAUGHT_UP = "not_caught_up"  # the drain's: writes keep the cleaner busy past the horizon
# why a partition's next clean has no time (``NextClean.code``)
NO_THROUGHPUT, NOT_ELIGIBLE_RATE_UNKNOWN, NEVER, BEYOND_HORIZON, BROKER_UNKNOWN, UNCLEANABLE = (
    "no_throughput", "write_rate_unknown", "never_eligible", "beyond_horizon", "broker_unknown", "uncleanable")


@dataclass(frozen=True)
class QueueLog:
    """One compacted partition as the queue sees it (``from_state`` builds it from a ``PartitionState``)."""

    topic: str
    partition: int
    clean_bytes: int
    cleanable_bytes: int
    min_ratio: float
    due_ms: int | None = None  # max.compaction.lag.ms passes (first dirty batch's timestamp + lag); None: never
    lag_ms: int | None = None  # max.compaction.lag.ms when set (for the deadline after a clean)
    write_rate: float | None = None  # bytes/s; None: unknown (counted as no writes, and said)
    uncleanable: str | None = None  # why the cleaner skips it (log-cleaner.log marked it)
    unknown: str | None = None  # why its inputs are unknown (its config)
    # dirty bytes min.compaction.lag.ms holds back, and when they all become cleanable (the newest held
    # segment's largest timestamp + the lag: LogCleanerManager.cleanableOffsets holds a segment while
    # ``largestTimestamp > now - min.compaction.lag.ms``)
    held_bytes: int = 0
    held_until_ms: int | None = None

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.partition


@dataclass(frozen=True)
class CleanerQueueParams:
    """The broker's cleaner: its settings (Kafka's names in the docstrings) and learned throughput."""

    threads: int = 1  # log.cleaner.threads
    backoff_ms: int = BROKER_DEFAULTS["log.cleaner.backoff.ms"]  # Kafka's default
    io_max_bytes_per_second: float | None = None  # log.cleaner.io.max.bytes.per.second; None/Double.MAX: none
    throughput: float | None = None  # bytes/s of one clean, from log-cleaner.log; None: none learned
    throughput_basis: str = ""
    enabled: bool | None = True  # log.cleaner.enable
    unknown: str | None = None  # why a setting the loop needs is unknown

    @property
    def throttle(self) -> float | None:
        v = self.io_max_bytes_per_second
        return v if v is not None and v > 0 and not no_throttle(v) else None


@dataclass(frozen=True)
class NextClean:
    """One partition's forecast next clean. Times are epoch ms; None with ``code`` and ``reason`` saying why."""

    topic: str
    partition: int
    start_ms: int | None
    end_ms: int | None
    position: int | None  # 1 = the first clean to start
    due_ms: int | None  # when max.compaction.lag.ms passes (None: not set, or nothing dirty with a timestamp)
    reason: str
    code: str | None = None

    @property
    def late_ms(self) -> int | None:
        """How far past its max.compaction.lag.ms deadline the clean starts (<= 0: in time); None: unknown."""
        if self.start_ms is None or self.due_ms is None:
            return None
        return self.start_ms - self.due_ms

    def as_dict(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "start_ms": self.start_ms, "end_ms": self.end_ms,
                "position": self.position, "due_ms": self.due_ms, "late_ms": self.late_ms, "reason": self.reason,
                "code": self.code}


@dataclass(frozen=True)
class QueueForecast:
    """Every partition's next clean, and when the broker's cleaner has nothing left to take."""

    now_ms: int
    cleans: dict  # (topic, partition) -> NextClean
    # when the backlog is worked off: every thread idle, no log offered, and none that bytes already written
    # will make offered (held bytes, a deadline); None: unknown (``drain_reason``)
    drain_ms: int | None
    drain_reason: str
    basis: str  # the settings and assumptions the forecast was made with
    drain_code: str | None = None  # why the drain is unknown: NO_THROUGHPUT, BROKER_UNKNOWN or NOT_CAUGHT_UP

    @property
    def drain_seconds(self) -> float | None:
        return None if self.drain_ms is None else max(self.drain_ms - self.now_ms, 0) / 1000.0

    def order(self) -> list[tuple[str, int]]:
        """The partitions in the order their next cleans start."""
        known = [c for c in self.cleans.values() if c.position is not None]
        return [(c.topic, c.partition) for c in sorted(known, key=lambda c: c.position)]


def from_state(state, config, write_rate: float | None = None, *, uncleanable: str | None = None,
               unknown: str | None = None) -> QueueLog:
    """A ``QueueLog`` from a ``monitor.model.compaction.PartitionState`` and its ``TopicConfig``: the
    deadline is Kafka's ``maxCompactionDelay`` turned around (the oldest dirty non-active segment's first
    batch timestamp + max.compaction.lag.ms, past which the log is offered whatever its ratio)."""
    lag = config.max_compaction_lag_ms
    lag = lag if 0 < lag < LONG_MAX else None
    due = None
    if lag is not None and state.first_dirty_timestamp is not None:
        due = state.first_dirty_timestamp + lag
    held, until = 0, None
    if state.uncleanable_reason == "min_compaction_lag" and state.dirty_largest_timestamp is not None:
        held = state.not_yet_cleanable_split()["min_compaction_lag"]
        until = state.dirty_largest_timestamp + config.min_compaction_lag_ms if held else None
    return QueueLog(state.topic, state.partition, state.clean_bytes, state.cleanable_bytes,
                    state.min_cleanable_dirty_ratio, due, lag, write_rate, uncleanable, unknown, held, until)


@dataclass
class _Log:
    q: QueueLog
    clean: float
    dirty: float
    since_ms: float  # when ``dirty`` was counted (writes add from then on)
    due_ms: float | None
    rate: float
    held: float = 0.0
    held_until: float | None = None
    running: bool = False
    first: tuple | None = None  # (start, end or None, position)

    def dirty_at(self, t: float) -> float:
        released = self.held if self.held_until is not None and t >= self.held_until else 0.0
        return self.dirty + released + self.rate * max(t - self.since_ms, 0) / 1000.0

    def ratio_at(self, t: float) -> float:
        d = self.dirty_at(t)
        total = self.clean + d
        return d / total if total > 0 else 0.0

    def offered_at(self, t: float) -> bool:
        """LogCleanerManager.grabFilthiestCompactedLog's filter: some bytes, and the ratio above the
        minimum, or overdue (needCompactionNow: ``now - lag > E``) with cleanable bytes."""
        d = self.dirty_at(t)
        if self.clean + d <= 0:
            return False
        return ((self.due_ms is not None and t > self.due_ms and d > 0)
                or CLEANABLE_RATIO_ABOVE_MIN.holds(self.ratio_at(t), self.q.min_ratio))

    def offered_from(self, t: float) -> float | None:
        """The earliest time >= t at which the log is offered, None if never (no writes, no deadline, no
        held bytes to come). Offered stays offered until a clean (dirty bytes only grow, a deadline
        stays passed), so the first candidate that is offered is the answer: now, the release of the
        held bytes, just past the deadline, or where writes take the ratio past the minimum from one
        of those (``(d + r x) / (c + d + r x) > m``  <=>  ``r x > (m (c + d) - d) / (1 - m)``)."""
        points = [t]
        if self.held and self.held_until is not None and self.held_until > t:
            points.append(self.held_until)
        if self.due_ms is not None and (self.dirty_at(t) > 0 or self.rate > 0 or self.held):
            points.append(max(self.due_ms, t) + 1)  # strictly past it
        m = self.q.min_ratio
        if self.rate > 0 and m < 1:
            for base in list(points):
                d = self.dirty_at(base)
                need = (m * (self.clean + d) - d) / (1 - m)
                points.append(base + max(need, 0) / self.rate * 1000.0 + 1)
        ok = [x for x in points if x >= t and self.offered_at(x)]
        return min(ok) if ok else None


    def backlog_ahead(self, t: float) -> bool:
        """Whether bytes already written will make the log offered after ``t`` (held bytes released, a
        deadline passing): the backlog, as against the work new writes bring."""
        return replace(self, rate=0.0).offered_from(t) is not None


def _settings_problem(p: CleanerQueueParams) -> str | None:
    if p.enabled is False:
        return "log.cleaner.enable is false: this broker cleans nothing"
    if p.unknown:
        return p.unknown
    if p.threads < 1:
        return f"{p.threads} live cleaner threads (log.cleaner.threads less the dead ones): nothing is cleaned"
    return None


def forecast(logs: list[QueueLog], p: CleanerQueueParams, now_ms: int) -> QueueForecast:
    """Run the broker's cleaner threads forward from ``now_ms`` over ``logs`` (module docstring)."""
    throttle = p.throttle
    basis = (f"{p.threads} cleaner thread(s), log.cleaner.backoff.ms={p.backoff_ms}, "
             + (f"throttle {throttle:g} B/s shared" if throttle else "no I/O throttle")
             + (f", throughput {p.throughput:.0f} B/s ({p.throughput_basis})" if p.throughput else "")
             + "; every thread assumed free now, writes at the measured rates (unknown: none)")
    cleans: dict = {}
    broker_bad = _settings_problem(p)
    config_bad = next((f"{q.topic}-{q.partition}: {q.unknown}" for q in logs if q.unknown and not q.uncleanable), None)
    if broker_bad or config_bad:
        why = broker_bad or f"a partition's place in the queue cannot be told ({config_bad}), so no one's can"
        for q in logs:
            cleans[q.key] = NextClean(q.topic, q.partition, None, None, None, q.due_ms, why, BROKER_UNKNOWN)
        return QueueForecast(now_ms, cleans, None, why, basis, BROKER_UNKNOWN)
    for q in logs:
        if q.uncleanable:
            cleans[q.key] = NextClean(q.topic, q.partition, None, None, None, q.due_ms,
                                      f"marked uncleanable: the cleaner skips it until the broker restarts ({q.uncleanable})",
                                      UNCLEANABLE)
    state = [_Log(q, float(q.clean_bytes), float(q.cleanable_bytes), float(now_ms),
                  None if q.due_ms is None else float(q.due_ms), q.write_rate or 0.0, float(q.held_bytes),
                  None if q.held_until_ms is None else float(q.held_until_ms))
             for q in logs if not q.uncleanable]
    ordered = _run(state, p, throttle, now_ms)
    drain_ms, drain_reason = ordered
    drain_code = NOT_CAUGHT_UP if drain_ms is None else None
    for s in state:
        q = s.q
        if s.first is not None:
            start, end, pos = s.first
            if p.throughput is None:
                cleans[q.key] = NextClean(q.topic, q.partition, None, None, pos, q.due_ms,
                                          f"its place in the queue is {pos}; no time without a cleaner throughput "
                                          f"({p.throughput_basis or 'none learned from log-cleaner.log'})", NO_THROUGHPUT)
                continue
            how = ("offered now" if start <= now_ms else "its turn") + f", #{pos} in the queue; {basis}"
            cleans[q.key] = NextClean(q.topic, q.partition, int(start), None if end is None else int(end), pos,
                                      q.due_ms, how)
        elif p.throughput is None and s.offered_from(now_ms) is not None:
            cleans[q.key] = NextClean(q.topic, q.partition, None, None, None, q.due_ms,
                                      "it waits behind the cleans that start first; no time without a cleaner "
                                      f"throughput ({p.throughput_basis or 'none learned from log-cleaner.log'})",
                                      NO_THROUGHPUT)
        elif q.write_rate is None and s.offered_from(now_ms) is None:
            cleans[q.key] = NextClean(q.topic, q.partition, None, None, None, q.due_ms,
                                      "not eligible, and its write rate is unknown: no forecast of when it will be",
                                      NOT_ELIGIBLE_RATE_UNKNOWN)
        elif s.offered_from(now_ms) is None:
            cleans[q.key] = NextClean(q.topic, q.partition, None, None, None, q.due_ms,
                                      "not eligible, and nothing makes it so: no writes (a rate of 0) and no "
                                      "max.compaction.lag.ms deadline ahead", NEVER)
        else:
            cleans[q.key] = NextClean(q.topic, q.partition, None, None, None, q.due_ms,
                                      f"not within the {HORIZON_MS // 86_400_000} days forecast (the queue ahead of it, "
                                      "or its writes, take longer)", BEYOND_HORIZON)
    if p.throughput is None:
        known = p.throughput_basis or "none learned from log-cleaner.log"
        drain_ms, drain_reason = None, f"no cleaner throughput ({known}): how long a clean takes is unknown"
        drain_code = NO_THROUGHPUT
    return QueueForecast(now_ms, cleans, drain_ms, drain_reason, basis, drain_code)


@dataclass(order=True)
class _Thread:
    free_at: float  # when it next asks for work
    ident: int = field(compare=True)
    log: _Log | None = field(default=None, compare=False)
    left: float = field(default=0.0, compare=False)  # bytes of its clean still to process
    io: float = field(default=1.0, compare=False)  # bytes the throttle counts per byte processed (``_io_per_byte``)
    index: int = field(default=-1, compare=False)  # its log's index


def _io_per_byte(clean: float, dirty: float) -> float:
    """Bytes the shared Throttler counts per byte of log processed: Kafka calls ``throttler.maybeThrottle``
    for every buffer read while building the offset map (the cleanable bytes, ``buildOffsetMapForSegment``),
    every buffer read while copying (the whole log to the dirty end, ``cleanInto``), and every buffer of
    retained records written (``cleanInto``). A clean is assumed to keep the log's size, so it writes
    what it reads: (cleanable + 2 x processed) / processed, 2 to 3."""
    processed = clean + dirty
    return (dirty + 2.0 * processed) / processed if processed > 0 else 1.0


def _run(state: list[_Log], p: CleanerQueueParams, throttle: float | None, now_ms: int):
    """The loop; sets each log's ``first`` clean. Returns (drain time or None, reason). Without a
    throughput the order of the first cleans that start at once is still found (one round).

    Cost: the logs not offered wait in a heap by the time they will be (offered stays offered until a
    clean, so that time holds until the log is taken); a thread picks among the offered ones only."""
    rate1 = p.throughput
    threads = [_Thread(float(now_ms), i) for i in range(p.threads)]
    horizon = now_ms + HORIZON_MS
    t = float(now_ms)
    position = 0
    drain = None
    heap: list = []  # (when offered, version, index) of the logs not offered yet
    version = [0] * len(state)
    pool: dict = {}  # index -> log: offered, not running
    pending: set = set()  # logs that bytes already written will get offered (the backlog)

    def push(i: int, at: float) -> None:
        s = state[i]
        when = s.offered_from(at)
        if when is not None:
            heapq.heappush(heap, (when, version[i], i))
            if s.backlog_ahead(at):
                pending.add(i)

    for i in range(len(state)):
        push(i, t)
    waiting = {i for _, _, i in heap}  # the logs that will be offered some time: each needs its next clean

    def top() -> float | None:
        while heap and (heap[0][1] != version[heap[0][2]] or state[heap[0][2]].running):
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    for _ in range(STEPS_PER_LOG * len(state) + MIN_STEPS):
        while (at := top()) is not None and at <= t:
            _, _, i = heapq.heappop(heap)
            pool[i] = state[i]
        # every idle thread due to ask for work asks, in turn (each takes the filthiest log left)
        for th in sorted(threads):
            if th.log is not None or th.free_at > t:
                continue
            if not pool:
                th.free_at = t + p.backoff_ms
                continue
            i = max(pool, key=lambda i: pool[i].ratio_at(t))  # LogToClean.compareTo: the ratio alone
            s = pool.pop(i)
            version[i] += 1
            pending.discard(i)
            dirty = s.dirty_at(t)
            if s.held_until is not None and t >= s.held_until:
                s.held, s.held_until = 0.0, None  # released, and in this clean
            s.running, s.dirty, s.since_ms = True, 0.0, t
            th.log, th.left, th.index = s, s.clean + dirty, i
            th.io = _io_per_byte(s.clean, dirty)
            s.clean += dirty  # a clean keeps the log's size (assumed)
            # deadline after it: the first write after the clean's end offset (taken now) + the lag
            s.due_ms = (t + s.q.lag_ms) if (s.q.lag_ms is not None and s.rate > 0) else None
            if s.first is None:
                position += 1
                s.first = (t, None, position)
                waiting.discard(i)
        busy = [th for th in threads if th.log is not None]
        if not busy and drain is None and not pool and not pending:
            drain = t
        if drain is not None and not waiting and all(th.log is None or th.log.first[1] is not None
                                                     for th in threads):
            break
        if rate1 is None:  # no durations: the first round's order is all that can be told
            return None, "no cleaner throughput"
        each = [min(rate1, throttle / len(busy) / th.io) if throttle else rate1 for th in busy]
        ends = [t + th.left / e * 1000.0 for th, e in zip(busy, each)]
        wakes = []
        nxt = t if pool else top()
        for th in threads:
            if th.log is None and nxt is not None:  # the first back-off wake-up at or after it
                if p.backoff_ms > 0:
                    th.free_at += max(math.ceil((nxt - th.free_at) / p.backoff_ms), 0) * p.backoff_ms
                else:
                    th.free_at = max(nxt, th.free_at)
                wakes.append(th.free_at)
        candidates = ends + wakes
        if not candidates:
            if drain is None:
                drain = t
            break
        nt = max(min(candidates), t)
        if nt > horizon:
            break
        for th, end, e in zip(busy, ends, each):
            th.left -= e * (nt - t) / 1000.0
            if end <= nt or th.left <= 1e-6:
                s = th.log
                s.running = False
                if s.first is not None and s.first[1] is None:
                    s.first = (s.first[0], nt, s.first[2])
                th.log, th.left, th.free_at = None, 0.0, nt
                push(th.index, nt)
        t = nt
    if drain is None:
        return None, (f"the cleaner does not catch up within the {HORIZON_MS // 86_400_000} days forecast, or "
                      f"{STEPS_PER_LOG} cleans a partition: writes keep some log eligible")
    return int(drain), ("when no log is offered, none will be by the bytes already written, and every cleaner "
                        "thread is idle")

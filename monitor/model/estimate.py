"""How long the log cleaner will need for a log, from Kafka's own cleaning loop.

One clean of a log builds the offset map over the dirty section (as many distinct keys as the
dedupe buffer holds: a bigger dirty section needs several passes), then recopies everything below
the end of what the map covered, clean section included. ``log-cleaner.log`` reports the cleaning
phase's bytes over the whole clean's time as "MB of log processed ... MB/sec": the throughput here
has that meaning, so a pass costs (clean bytes + dirty bytes covered so far) / throughput.

Map capacity (SkimpyOffsetMap): slots = floor(min(dedupe buffer / threads, 2^31-1) / (hash + 8));
keys per pass = floor(slots * log.cleaner.io.buffer.load.factor). Kafka 4.3 hashes with MD5 (16 B),
so 24 bytes per entry and 5,033,164 keys per pass with the defaults.

Wall-clock time on a broker (``wall_clock``): its N cleaner threads each take the filthiest log
free at the time, one log per thread, so the sum of per-log cleaning times is not the time a broker
needs. The cleans are scheduled longest first on the least busy of N threads (the LPT schedule: its
makespan is never below sum/N nor below the longest single clean, and at most 4/3 of the best
schedule's); and since LogCleaner has one Throttler for all its threads
(log.cleaner.io.max.bytes.per.second caps "the sum of its read and write i/o", CleanerConfig), the
broker also needs at least the bytes its cleans read over that rate. The wall clock is the larger of
the two.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, replace

from monitor.model.topicconfig import no_throttle

DEFAULT_THROUGHPUT = 40 * (1 << 20)
UNTHROTTLED = "no throttle: log.cleaner.io.max.bytes.per.second is Kafka's default, Double.MAX_VALUE"  # bytes/s for one cleaner thread; calibrate from log-cleaner.log


@dataclass(frozen=True)
class CleanerParams:
    threads: int = 1
    dedupe_buffer_size: int = 134_217_728
    load_factor: float = 0.9
    hash_bytes: int = 16  # MD5 in Kafka 2.x to 4.3
    io_max_bytes_per_second: float = float("inf")
    throughput: float = DEFAULT_THROUGHPUT  # bytes/s of one thread, as log-cleaner.log reports it
    throughput_source: str = "default"
    # where each broker setting came from: Kafka name -> flag | admin | config | default | unknown
    sources: tuple[tuple[str, str], ...] = ()

    @property
    def keys_per_pass(self) -> int:
        memory = min(self.dedupe_buffer_size // max(self.threads, 1), 2**31 - 1)
        slots = memory // (self.hash_bytes + 8)
        return int(slots * self.load_factor)

    @property
    def rate(self) -> float:
        """Bytes/s one thread cleans at: its throughput, capped by the throttle."""
        if self.io_max_bytes_per_second > 0:
            return min(self.throughput, self.io_max_bytes_per_second)
        return self.throughput

    @property
    def throttle(self) -> float | None:
        """log.cleaner.io.max.bytes.per.second when it limits anything; None when it does not (Kafka's
        default is Double.MAX_VALUE, this model's infinity): what JSON output carries, never Infinity."""
        v = self.io_max_bytes_per_second
        return v if v > 0 and not no_throttle(v) else None

    def source_of(self, key: str) -> str:
        return dict(self.sources).get(key, "default")


# CleanerParams' field of each broker setting
PARAM_OF = {"log.cleaner.threads": "threads", "log.cleaner.dedupe.buffer.size": "dedupe_buffer_size",
            "log.cleaner.io.buffer.load.factor": "load_factor",
            "log.cleaner.io.max.bytes.per.second": "io_max_bytes_per_second"}


def params_for(base: CleanerParams, settings: dict | None = None, flags: dict | None = None) -> CleanerParams:
    """``base`` (throughput, hash size) with the broker's cleaner ``settings`` (Kafka name ->
    ``BrokerSetting``: admin | config | default | unknown) under the command line's ``flags`` (Kafka name
    -> value, None: not given): flag > broker setting, and each value's source recorded. An unknown
    setting leaves Kafka's default in the arithmetic, with the source "unknown" saying so."""
    settings, flags = settings or {}, flags or {}
    kw, sources = {}, []
    for key, field_ in PARAM_OF.items():
        if flags.get(key) is not None:
            kw[field_], src = flags[key], "flag"
        elif key in settings and settings[key].value is not None:
            kw[field_], src = settings[key].value, settings[key].source
        elif key in settings:
            src = f"unknown ({settings[key].reason}); Kafka's default assumed"
        else:
            src = "default"
        sources.append((key, src))
    return replace(base, **kw, sources=tuple(sources))

@dataclass(frozen=True)
class CleanEstimate:
    passes: int
    bytes_read: float
    seconds: float
    rate: float


def estimate_clean(clean_bytes: int, dirty_bytes: int, dirty_keys: int, p: CleanerParams) -> CleanEstimate:
    """Passes, bytes the cleaning phases read, and seconds to clean a log's dirty section."""
    if dirty_bytes <= 0:
        return CleanEstimate(0, 0.0, 0.0, 0.0)
    passes = max(1, math.ceil(dirty_keys / p.keys_per_pass)) if dirty_keys > 0 else 1
    share = dirty_bytes / passes
    bytes_read = sum(clean_bytes + i * share for i in range(1, passes + 1))
    return CleanEstimate(passes, bytes_read, bytes_read / p.rate, p.rate)


@dataclass(frozen=True)
class WallClock:
    """A broker's time to clean all its logs' dirty sections, and how it was found."""

    seconds: float
    summed_seconds: float  # one thread doing every clean in turn
    longest_seconds: float  # the longest single clean: no number of threads goes below it
    threads: int
    schedule_seconds: float  # the LPT schedule's makespan over ``threads``
    throttle_seconds: float  # bytes read / log.cleaner.io.max.bytes.per.second (0: no throttle)
    basis: str


def wall_clock(cleans: list[CleanEstimate], p: CleanerParams) -> WallClock:
    """The longest-processing-time schedule of ``cleans`` over ``p.threads`` threads, bounded below by
    the shared throttle (see the module's docstring)."""
    times = sorted((c.seconds for c in cleans if c.seconds > 0), reverse=True)
    threads = max(p.threads, 1)
    loads = [0.0] * min(threads, max(len(times), 1))
    for t in times:
        heapq.heapreplace(loads, loads[0] + t)
    schedule = max(loads)
    throttled = p.throttle is not None
    throttle = sum(c.bytes_read for c in cleans) / p.throttle if throttled else 0.0
    basis = (f"{len(times)} clean(s) scheduled longest first over {threads} thread(s)"
             + (f"; the shared throttle ({p.throttle:g} B/s) needs {throttle:.1f} s" if throttled else ""))
    if throttle > schedule:
        basis += ": the throttle bounds it"
    return WallClock(max(schedule, throttle), sum(times), times[0] if times else 0.0, threads, schedule, throttle,
                     basis)

"""The log cleaner's I/O rate, from successive samples of its throttler's byte count, and whether the
throttle (``log.cleaner.io.max.bytes.per.second``) holds the cleaner back.

Why: a cleaner that has work waiting but reads and writes at its throttle's rate is slowed by a setting,
not by a lack of threads, and the fix is to raise the setting (more threads would share the same
throttle). The collector takes the samples (the JMX exporter or Jolokia page, each refresh); the
computation is here so that it is defined once and tested without a broker.

Kafka facts relied on (``org.apache.kafka.storage.internals.utils.Throttler``, made by ``LogCleaner``
with a check interval of 300 ms, one for all cleaner threads): every amount the cleaner reads or writes
(``Cleaner.buildOffsetMapForSegment``, ``Cleaner.cleanInto``) is marked on the Meter
``kafka.utils:type=Throttler,name=cleaner-io`` and, once more than 300 ms have passed with a rate above
the desired one, the thread sleeps until the rate over that period equals it. A cleaner kept busy is
therefore held at the setting, and its count grows by the setting per second; an idle cleaner's count
stands still, so the rate is a load figure (idle time averaged in), never the speed of one clean (that
comes from ``log-cleaner.log``'s per-clean statistics: ``monitor.kafka.cleanerlog``).

The count grows in steps: the cleaner runs unthrottled for 300 ms, marking what it reads at full speed,
then sleeps for as long as those bytes take at the setting (4 MB at full speed against 500 KB/s: 8 s).
So the rate is taken over ``RATE_WINDOW_SECONDS`` of samples (like PromQL's ``rate(...[5m])``), not over
one refresh interval, whose two ends may fall before and after one step and miss the setting by far.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.model.comparison import Comparison
from monitor.model.topicconfig import no_throttle

RATE_WINDOW_SECONDS = 300.0  # the span of samples a rate is taken over (the oldest one within it, to now)


@dataclass(frozen=True)
class IoSample:
    """One reading of the throttler's count (bytes) at ``at`` (seconds, the collector's clock)."""

    at: float
    count: float


@dataclass(frozen=True)
class IoRate:
    """The cleaner's read plus write bytes per second over the window between two samples, or None
    with the reason in ``basis``."""

    bytes_per_second: float | None
    window_seconds: float | None
    basis: str

    def as_dict(self) -> dict:
        return {"bytes_per_second": self.bytes_per_second, "window_seconds": self.window_seconds,
                "basis": self.basis}


def io_rate(previous: IoSample | None, current: IoSample | None) -> IoRate:
    """The rate between two samples of the count; unknown (with why) without two usable samples."""
    if current is None:
        return IoRate(None, None, "no cleaner-io count on the broker's page")
    if previous is None:
        return IoRate(None, None, "one sample of the cleaner-io count so far: a rate needs two refreshes")
    window = current.at - previous.at
    if window <= 0:
        return IoRate(None, None, "two samples of the cleaner-io count at the same time")
    if current.count < previous.count:
        return IoRate(None, window, "the cleaner-io count went down (the broker restarted): a rate needs two "
                                    "samples since")
    delta = current.count - previous.count
    return IoRate(delta / window, window,
                  f"{delta:.0f} bytes over the {window:.0f} s between two samples of "
                  "kafka.utils:type=Throttler,name=cleaner-io")


def windowed(samples: list[IoSample], current: IoSample | None,
             window: float = RATE_WINDOW_SECONDS) -> tuple[list[IoSample], IoRate]:
    """The samples to keep after ``current`` (those within ``window`` of it, and the newest one before
    that: the window's start) and the rate from the oldest kept to ``current``. A count that went down
    (the broker restarted) starts the history again."""
    if current is None:
        return samples, io_rate(samples[-1] if samples else None, None)
    if samples and current.count < samples[-1].count:
        return [current], io_rate(samples[-1], current)
    kept = samples + [current]
    while len(kept) > 2 and current.at - kept[1].at >= window:
        kept.pop(0)
    return kept, io_rate(kept[0] if len(kept) > 1 else None, current)


def throttle_ratio(rate: IoRate | None, limit: float | None) -> float | None:
    """The rate as a fraction of the throttle; None when either is unknown or there is no throttle."""
    if rate is None or rate.bytes_per_second is None or limit is None or limit <= 0 or no_throttle(limit):
        return None
    return rate.bytes_per_second / limit


# The log cleaner runs at its I/O throttle (the cause ``throttled_cleaner`` of monitor.verdicts.causes, alerted by
# CleanerThrottled): its read plus write rate, over the collector's refresh window, at least this fraction of
# log.cleaner.io.max.bytes.per.second. Kafka's Throttler holds a busy cleaner at exactly the setting over
# each 300 ms period it sleeps in; the 10 % below it are the moments a busy cleaner does not mark bytes
# (choosing the next log, swapping segments, writing the checkpoint) and a window that starts inside a
# sleep (the bytes a sleep pays for are marked before it, so a window can also end above 1).
CLEANER_IO_AT_THROTTLE = Comparison(">=", 0.9)


def at_throttle(rate: IoRate | None, limit: float | None) -> bool | None:
    """Whether the cleaner runs at its throttle (``CLEANER_IO_AT_THROTTLE``); None when it cannot be told,
    False where there is no throttle."""
    if limit is not None and no_throttle(limit):
        return False
    ratio = throttle_ratio(rate, limit)
    if ratio is None:
        return None
    return CLEANER_IO_AT_THROTTLE.holds(ratio)

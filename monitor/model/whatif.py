"""What other settings would do: a compacted partition's steady size, cleans per day and the bytes its
cleaner reads and writes per day under other ``min.cleanable.dirty.ratio``, ``segment.ms``,
``segment.bytes`` and ``delete.retention.ms`` values. Pure arithmetic over what the audit observed
(``spark_analysis.whatif`` gathers it per partition); no Spark, no broker.

Why a steady-state model: operators change these settings to trade disk for cleaner work, and what a
change costs follows from a few of Kafka's rules once the write rate and the live data are known:

* **When a log is cleaned** (``LogCleanerManager.grabFilthiestCompactedLog``): its cleanable ratio,
  ``dirty / (clean + dirty)`` over the bytes below the first uncleanable offset, must be *above*
  ``min.cleanable.dirty.ratio``. The active segment is never cleanable (``firstUncleanableOffset`` is at
  most its base offset), so the dirty bytes grow one closed segment at a time: a segment rolls at
  ``segment.bytes`` or ``segment.ms`` after its first batch (``LogSegment.shouldRoll``), whichever comes
  first, so it holds ``S = min(segment.bytes, W * segment.ms)`` at the write rate ``W``. The cleaner
  takes the log at the k-th roll since its last clean, ``k = floor(r / (1 - r) * C / S) + 1`` (the
  smallest k with ``k S / (C + k S) > r``), C the clean section, and within ``log.cleaner.backoff.ms``
  of it (it looks again that often when idle). That delay is at both ends of an interval, so cleans come
  every k rolls; only when rolls come faster than the cleaner looks does it add to the interval.
* **What a clean reads and writes** (``Cleaner.doClean``): the offset map is built over the dirty
  section (read once), then every segment from the log start to the end of the dirty section is copied
  (``cleanSegments``: the clean section and the dirty one read again, what is kept written). In a steady
  state the kept bytes are the clean section again: each live key's latest record, and the tombstones
  still inside their horizon.
* **Tombstones** (KIP-534, ``LogCleaner``): the first clean that meets a tombstone stamps its batch with
  a delete horizon of that clean's time plus ``delete.retention.ms``; a clean after the horizon drops it.
  So a tombstone stays about ``delete.retention.ms`` plus one clean interval; at a steady rate the
  tombstone bytes kept are the tombstone write rate times that.

Assumptions (said in the report and on the docs page): a steady write rate (the one observed over the
partition's uncleaned tail); a stable key set (as many live keys as now: updates, not new keys, which
makes the live bytes the clean section; the key distribution then does not change the sizes, since the
ratio counts bytes, only whether a clean fits the offset map); tombstones written at the observed share
of the records; one partition cleaned as soon as it is eligible (the cleaner's queue behind other logs,
``max.compaction.lag.ms`` and ``min.compaction.lag.ms`` are left out). A partition whose write rate
cannot be known has every figure unknown, with the reason, never a guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from monitor.model.topicconfig import BROKER_DEFAULTS

DAY_SECONDS = 86_400.0
DEFAULT_BACKOFF_MS = BROKER_DEFAULTS["log.cleaner.backoff.ms"]  # Kafka's default
RATIOS = (0.1, 0.25, 0.5, 0.75)  # the ratio grid's fixed values, besides the topic's own
SCALES = (0.5, 2.0)  # segment.ms, segment.bytes and delete.retention.ms: halved and doubled
SETTINGS = ("min.cleanable.dirty.ratio", "segment.ms", "segment.bytes", "delete.retention.ms")
CURRENT = "current"
_FIXED_POINT_ROUNDS = 60


@dataclass(frozen=True)
class Settings:
    """The settings the model varies (Kafka's units: a ratio, ms, bytes, ms)."""

    min_cleanable_dirty_ratio: float
    segment_ms: int
    segment_bytes: int
    delete_retention_ms: int

    def with_value(self, name: str, value) -> "Settings":
        return replace(self, **{name.replace(".", "_"): value})


@dataclass(frozen=True)
class Observed:
    """What the audit saw of one partition. ``write_bytes_per_second`` None: unknown (``unknown_reason``
    says why); ``live_bytes``: the live keys' latest records (the clean section once settled);
    ``tombstone_share``: the share of written bytes that are tombstones."""

    write_bytes_per_second: float | None
    live_bytes: float
    tombstone_share: float = 0.0
    backoff_ms: int = DEFAULT_BACKOFF_MS
    unknown_reason: str | None = None


@dataclass(frozen=True)
class Outcome:
    """One partition's steady state under one setting; every figure None when unknown (``unknown_reason``).
    ``cleans_per_day`` 0 and ``size_bytes`` None: never cleaned (ratio 1), the log only grows."""

    size_bytes: float | None  # the mean size on disk over a clean cycle
    peak_bytes: float | None  # just before a clean
    cleans_per_day: float | None
    read_bytes_per_day: float | None
    written_bytes_per_day: float | None
    clean_interval_seconds: float | None
    segment_bytes: float | None  # what a segment holds when it rolls
    tombstone_bytes: float | None  # tombstones kept in the clean section
    unknown_reason: str | None = None


def unknown(reason: str) -> Outcome:
    return Outcome(None, None, None, None, None, None, None, None, reason)


def segment_size(s: Settings, write_bytes_per_second: float) -> float:
    """Bytes a segment holds when it rolls: segment.bytes or segment.ms's worth of writes, the fewer."""
    return min(float(s.segment_bytes), write_bytes_per_second * s.segment_ms / 1000.0)


def segments_to_clean(ratio: float, clean_bytes: float, seg: float) -> int:
    """The closed dirty segments at which the cleanable ratio first passes ``ratio``: the smallest k with
    ``k seg / (clean + k seg) > ratio`` (Kafka compares with ``>``)."""
    if ratio <= 0 or clean_bytes <= 0:
        return 1
    need = ratio / (1.0 - ratio) * clean_bytes / seg
    return int(math.floor(need + 1e-12)) + 1


def steady(obs: Observed, s: Settings) -> Outcome:
    """The partition's steady state under ``s`` (see the module's docstring for the rules and assumptions)."""
    if obs.write_bytes_per_second is None:
        return unknown(obs.unknown_reason or "write rate unknown")
    w = float(obs.write_bytes_per_second)
    if not 0 <= s.min_cleanable_dirty_ratio <= 1:
        raise ValueError(f"min.cleanable.dirty.ratio {s.min_cleanable_dirty_ratio}: must be between 0 and 1")
    if w <= 0:  # nothing written: nothing to clean, the log stays as it settles
        live = float(obs.live_bytes)
        return Outcome(live, live, 0.0, 0.0, 0.0, None, 0.0, 0.0)
    seg = segment_size(s, w)
    if seg <= 0:
        return unknown("segment.ms or segment.bytes is 0: no segment can hold a record")
    if s.min_cleanable_dirty_ratio >= 1:  # the ratio is never above 1: only max.compaction.lag.ms would clean
        return Outcome(None, None, 0.0, 0.0, 0.0, None, seg, None,
                       "never cleaned at min.cleanable.dirty.ratio 1 (unless max.compaction.lag.ms forces it): "
                       "the log grows by every write")
    backoff = obs.backoff_ms / 1000.0
    roll = seg / w  # seconds between rolls
    # a clean takes the log up to its active segment, which began ``phase`` before the clean: the pickup
    # delay (up to the backoff) counts at both ends of an interval, unless rolls come faster than the
    # cleaner looks, and then the roll before each clean is a uniform phase back
    phase = min(backoff, roll) / 2.0
    late = max(0.0, backoff - roll) / 2.0
    tomb_rate = w * max(0.0, min(obs.tombstone_share, 1.0))
    tombs = 0.0
    for _ in range(_FIXED_POINT_ROUNDS):  # the clean section holds the tombstones, whose stay is one interval
        clean = obs.live_bytes + tombs
        k = segments_to_clean(s.min_cleanable_dirty_ratio, clean, seg)
        interval = k * roll + late
        nxt = tomb_rate * (s.delete_retention_ms / 1000.0 + interval)
        if abs(nxt - tombs) <= 1e-9 * max(1.0, nxt):
            tombs = nxt
            break
        tombs = nxt
    clean = obs.live_bytes + tombs
    k = segments_to_clean(s.min_cleanable_dirty_ratio, clean, seg)
    interval = k * roll + late
    dirty = w * interval  # written in one interval: what each clean takes in
    cleans = DAY_SECONDS / interval
    # above the clean section: every byte written since the roll before the last clean
    size = clean + w * (phase + interval / 2.0)
    peak = clean + k * seg + w * backoff
    return Outcome(size, peak, cleans, cleans * (clean + 2.0 * dirty), cleans * clean, interval, seg, tombs)


@dataclass(frozen=True)
class Variant:
    """One row of a topic's grid: which setting (``CURRENT`` for the topic's own values), its value."""

    setting: str
    value: float
    settings: Settings


def grid(current: Settings) -> list[Variant]:
    """The settings to compare: the topic's own; ``min.cleanable.dirty.ratio`` at ``RATIOS`` (those other
    than its own); ``segment.ms``, ``segment.bytes`` and ``delete.retention.ms`` halved and doubled. One
    setting changed at a time, so each row says what that setting alone would do."""
    out = [Variant(CURRENT, float("nan"), current)]
    for r in RATIOS:
        if not math.isclose(r, current.min_cleanable_dirty_ratio):
            out.append(Variant("min.cleanable.dirty.ratio", r, current.with_value("min.cleanable.dirty.ratio", r)))
    for name in SETTINGS[1:]:
        base = getattr(current, name.replace(".", "_"))
        for f in SCALES:
            v = max(1, int(base * f)) if base > 0 else base
            if v != base:
                out.append(Variant(name, float(v), current.with_value(name, v)))
    return out


@dataclass(frozen=True)
class TopicOutcome:
    """A topic's figures under one variant: the sums over its partitions, or None (``unknown_reason``)
    when any partition's is unknown (a sum of the known ones would pass for the topic's)."""

    setting: str
    value: float
    size_bytes: float | None
    peak_bytes: float | None
    cleans_per_day: float | None
    read_bytes_per_day: float | None
    written_bytes_per_day: float | None
    unknown_reason: str | None
    settings: Settings | None = None  # the values the row was figured with


_SUMMED = ("size_bytes", "peak_bytes", "cleans_per_day", "read_bytes_per_day", "written_bytes_per_day")


def topic_outcomes(partitions: list[Observed], current: Settings) -> list[TopicOutcome]:
    """The topic's grid (``grid``), each row summed over its partitions (``steady``)."""
    out = []
    for v in grid(current):
        per = [steady(p, v.settings) for p in partitions]
        reasons = sorted({o.unknown_reason for o in per if o.unknown_reason})
        sums = {}
        for k in _SUMMED:
            vals = [getattr(o, k) for o in per]
            sums[k] = None if not per or any(x is None for x in vals) else float(sum(vals))
        reason = "; ".join(reasons) if reasons else (None if per else "no partition audited")
        out.append(TopicOutcome(v.setting, v.value, unknown_reason=reason, settings=v.settings, **sums))
    return out


@dataclass(frozen=True)
class Writes:
    """The writes seen in a partition's uncleaned tail: bytes over the time their records span, or
    ``rate`` None with the reason."""

    rate: float | None
    bytes: int
    offsets: int
    span_ms: int
    reason: str | None = None


MIN_SPAN_MS = 1_000  # a tail spanning less time is too short to tell a rate from a burst


def observed_writes(segments: list[tuple], first_dirty: int) -> Writes:
    """The write rate from the segments at and after the one holding ``first_dirty``: no clean has
    rewritten them, so their bytes and offsets are what producers wrote, and their batch timestamps
    (the first batch's, the largest) bound when. ``segments``: (base offset, next offset, bytes, first
    batch's max timestamp, largest timestamp) in offset order. A clean keeps offsets but not the
    records between them, so the cleaned part of the log tells no rate."""
    segs = sorted(segments)
    start = max((i for i, s in enumerate(segs) if s[0] <= first_dirty), default=0)
    tail = segs[start:]
    if not tail:
        return Writes(None, 0, 0, 0, "no segment")
    size = sum(s[2] for s in tail)
    offsets = (tail[-1][1] if tail[-1][1] is not None else tail[-1][0]) - tail[0][0]
    first = [s[3] for s in tail if s[3] is not None and s[3] >= 0]
    last = [s[4] for s in tail if s[4] is not None and s[4] >= 0]
    if not first or not last:
        return Writes(None, size, offsets, 0, "the uncleaned tail's batches carry no timestamps")
    span = max(last) - min(first)
    if span < MIN_SPAN_MS:
        return Writes(None, size, offsets, max(span, 0),
                      f"the uncleaned tail spans {max(span, 0)} ms of writes (under {MIN_SPAN_MS} ms): too "
                      "short to tell a steady rate")
    return Writes(size / (span / 1000.0), size, offsets, span)


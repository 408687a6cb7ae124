"""Consumer groups that may miss intermediate updates on a compacted topic.

Compaction keeps each key's latest value; a consumer that reads a record after the cleaner has passed
it sees only the value that survived, not the updates in between. That is all a cache needs, but a CDC
or audit consumer needs every update. A group may miss some when:

* ``lag_past_min_compaction_lag``: its time lag (now minus the timestamp of the record at its committed
  offset) exceeds the topic's ``min.compaction.lag.ms``, and its committed offset lies below the partition
  leader's cleaner limit (``PartitionState.cleaner_limit_offset``: the lower of the active segment's base
  offset and the last stable offset): some record it has not read yet is old enough for the cleaner and
  lies where the cleaner may take it once the partition is picked. Kafka never cleans the active segment
  nor past the last stable offset (LogCleanerManager.cleanableOffsets), so a group whose unread records
  all sit there misses nothing yet, whatever its time lag; without that check, every group a record
  behind on a busy topic at ``min.compaction.lag.ms`` 0 (Kafka's default), or behind an open transaction,
  would hold. When the collector does not read the leader's log dirs the limit is unknown and the time
  lag alone decides (coarse: it may flag such groups);
* ``below_first_dirty_offset``: its committed offset lies below the first dirty offset of the partition
  leader's log (the cleaner's checkpoint): what it will read next is already compacted.

The inputs come from different sources (the admin API's group offsets and topic config; a broker's
log dirs for the first dirty offset and the cleaner limit). The exporter joins them when both snapshots are in
the same collector, rather than PromQL, because both offsets are per replica (each broker cleans its own
copy) and the one that matters is the leader's, which only the admin snapshot names; the rule table's
Python evaluator matches series one-to-one only. A condition whose inputs are missing is unknown (its
series is absent), never false.

Groups that need only each key's latest value are declared in ``monitor.yaml``
(``clusters[].latest_value_only_groups``, fnmatch patterns): their series carry
``latest_value_only="true"`` and ConsumerMayMissUpdates does not fire for them; every other group is
assumed to need every update, so the alert is on by default.

The time lag itself is exact when the collector may read the record at the committed offset (Read on
the topic), else interpolated from the log end offsets it samples (``interpolated_lag``); when neither
can tell, it is unknown with the reason, never absent without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Iterable

from monitor.model.comparison import Comparison

LAG = "lag_past_min_compaction_lag"
BELOW = "below_first_dirty_offset"
REASONS = (LAG, BELOW)
# Each reason in a person's words, for a page or a report (the label value stays the code)
REASON_WORDS = {LAG: "lags past min.compaction.lag.ms", BELOW: "reads below the cleaned offset"}
# The comparisons of each reason (ConsumerMayMissUpdates alerts on their outcome, the exporter's
# consumer_group_may_miss_updates): the group's time lag past the topic's min.compaction.lag.ms; its committed
# offset below the leader's cleaner limit (the lower of its active segment's base offset and its last stable
# offset: LogCleanerManager.cleanableOffsets caps the first uncleanable offset at both), where the leader's log
# is read; its committed offset below the leader's first dirty offset.
LAG_PAST_MIN_COMPACTION_LAG = Comparison(">")
COMMITTED_BELOW_CLEANER_LIMIT = Comparison("<")
COMMITTED_BELOW_FIRST_DIRTY = Comparison("<")


def latest_value_only(group: str, patterns: Iterable[str]) -> bool:
    """Whether the group is declared to need only each key's latest value (case-sensitive fnmatch)."""
    return any(fnmatchcase(group, p) for p in patterns)


def may_miss_updates(*, lag_seconds: float | None, min_compaction_lag_seconds: float | None, committed: int,
                     first_dirty_offset: int | None, cleaner_limit_offset: int | None) -> dict[str, bool | None]:
    """Each reason (``REASONS``) -> whether it holds, None when its inputs are unknown. The two offsets are
    the partition leader's (None: its log is not read here); without ``cleaner_limit_offset`` the time lag
    alone decides ``LAG``."""
    if lag_seconds is None or min_compaction_lag_seconds is None:
        lag = None
    else:
        lag = LAG_PAST_MIN_COMPACTION_LAG.holds(lag_seconds, min_compaction_lag_seconds) and (
            cleaner_limit_offset is None or COMMITTED_BELOW_CLEANER_LIMIT.holds(committed, cleaner_limit_offset))
    return {
        LAG: lag,
        BELOW: None if first_dirty_offset is None else
        COMMITTED_BELOW_FIRST_DIRTY.holds(committed, first_dirty_offset),
    }


# ------------------------------------------------------------------ time lag without Read
# The exact time lag reads the record at the committed offset (its timestamp), which needs Read on the
# topic. A read-only monitor (Describe, DescribeConfigs) has only the log end offsets the admin source
# samples at each refresh. From those, the time at which the log end offset passed the committed offset
# is interpolated between the two samples around it, as kafka-lag-exporter does (LookupTable.scala:
# a sliding table of (offset, time) points per partition, flat runs compressed to their two ends, a
# linear interpolation between the two points around the offset, an extrapolation from the table's
# trend when the offset is older than the table).

EXACT, INTERPOLATED, EXTRAPOLATED = "exact", "interpolated", "extrapolated"
METHODS = (EXACT, INTERPOLATED, EXTRAPOLATED)
# why a time lag is unknown (the label of consumer_group_lag_seconds_unknown)
TOO_FEW_SAMPLES = "too_few_samples"  # fewer than two log-end-offset samples yet
NO_WRITES_SAMPLED = "no_writes_sampled"  # the log end offset stood still over every sample
# the record at the committed offset was compacted away, and fewer than two samples to interpolate from: the
# first record after it was appended later than the one the group waits on, so its timestamp would understate
# the lag (a one-shot read after a clean: ``topics lint`` called a group days behind a few seconds behind)
RECORD_COMPACTED = "record_compacted"
UNKNOWN_REASONS = (TOO_FEW_SAMPLES, NO_WRITES_SAMPLED, RECORD_COMPACTED)
MAX_SAMPLES = 60  # points kept per partition (kafka-lag-exporter's default lookup table size)


@dataclass(frozen=True)
class TimeLag:
    """A group's time lag on one partition: seconds and how they were had (``METHODS``), or None with
    the reason (``UNKNOWN_REASONS``, or a text naming what failed)."""

    seconds: float | None
    method: str | None
    reason: str | None = None


def add_sample(samples: tuple, at: float, offset: int, limit: int = MAX_SAMPLES) -> tuple:
    """The (time, log end offset) samples of one partition with a new one: out-of-order times are
    ignored; an offset lower than the last (the topic was recreated, or truncated) starts the table
    again; a run of equal offsets keeps only its first and last point (its first says when the log end
    offset got there, its last that it still stood there); the oldest points go past ``limit``."""
    if samples and at <= samples[-1][0]:
        return samples
    if samples and offset < samples[-1][1]:
        return ((at, offset),)
    if len(samples) >= 2 and samples[-1][1] == offset == samples[-2][1]:
        return samples[:-1] + ((at, offset),)
    return (samples + ((at, offset),))[-limit:]


def interpolated_lag(samples: tuple, committed: int, now: float) -> TimeLag:
    """The time lag of a group at ``committed`` from the partition's log-end-offset ``samples``
    (``add_sample``): now minus the time the log end offset passed ``committed`` (when it reached
    ``committed + 1``: the record at the committed offset was appended then), interpolated between the
    two samples around it. Older than every sample: extrapolated back along the line from the first to
    the last sample (kafka-lag-exporter's choice), which dates it at or before the first sample.
    A group at or past the last sample's log end offset has lag 0."""
    if samples and committed >= samples[-1][1]:
        return TimeLag(0.0, INTERPOLATED)
    if len(samples) < 2:
        return TimeLag(None, None, TOO_FEW_SAMPLES)
    target = committed + 1
    for (t0, o0), (t1, o1) in zip(samples, samples[1:]):
        if o0 < target <= o1:
            at = t0 + (target - o0) * (t1 - t0) / (o1 - o0)
            return TimeLag(max(now - at, 0.0), INTERPOLATED)
    (t0, o0), (t1, o1) = samples[0], samples[-1]
    if o1 == o0:
        return TimeLag(None, None, NO_WRITES_SAMPLED)
    at = t1 - (o1 - target) * (t1 - t0) / (o1 - o0)
    return TimeLag(max(now - at, 0.0), EXTRAPOLATED)

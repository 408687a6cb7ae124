"""Which figure depends on which topic config: defined once, for the collector, the audit and the causes.

A figure made from a config value that is unknown (the admin API refused to describe the topic and
the config file does not give it: ``monitor.model.topicconfig``) is left out or null, never figured with
Kafka's defaults passed off as the topic's config. This table says which configs each figure reads;
the collector (its exported series), the audit (its partition columns) and the causes (the configs
their verdicts read) all take it from here, so a figure is never known in one and withheld in another.

What reads what, in Kafka's own source (core/.../log/LogCleanerManager.scala):

* ``cleanableOffsets`` bounds the cleanable range [firstDirty, firstUncleanable) by the last stable
  offset, the active segment and ``min.compaction.lag.ms`` only (the first dirty non-active segment
  whose largest timestamp is within the lag). ``max.compaction.lag.ms`` does not move it: it enters
  through ``maxCompactionDelay`` alone, which sets ``LogToClean.needCompactionNow`` and so only
  whether the log is picked (``grabFilthiestCompactedLog``: needCompactionNow and cleanableBytes > 0,
  or cleanableRatio > min.cleanable.dirty.ratio). So the first uncleanable offset, the cleanable bytes
  and ratio, what holds the head back, and every figure the audit derives from the cleanable range
  (the dirty keys, passes, clean time) read the min lag only; eligibility reads both lags and the ratio.
* ``delete.retention.ms``: which tombstones are past retention (and what a clean removes).
* ``LogConfig.maxSegmentMs``: a compacted log rolls by min(segment.ms, max.compaction.lag.ms), so the
  segment-age limit and the roll forecast read the max lag too; the roll forecast also segment.bytes.
* the delete half (``UnifiedLog.deleteOldSegments``): cleanup.policy, retention.ms, retention.bytes.
"""

from __future__ import annotations

MIN_RATIO = "min.cleanable.dirty.ratio"
MIN_LAG = "min.compaction.lag.ms"
MAX_LAG = "max.compaction.lag.ms"
DELETE_RETENTION = "delete.retention.ms"
SEGMENT_BYTES = "segment.bytes"
SEGMENT_MS = "segment.ms"
RETENTION = ("cleanup.policy", "retention.ms", "retention.bytes")
MAX_DECOMPRESSED = "max.decompressed.message.bytes"  # Kafka 4.4

# the cleanable range [first dirty, first uncleanable): cleanableOffsets reads the min lag, no other config
_RANGE = (MIN_LAG,)
# what a clean plus the delete half removes: the range, the tombstones past delete.retention.ms, retention
_CLEAN = _RANGE + (DELETE_RETENTION,) + RETENTION
_ROLL = (SEGMENT_BYTES, SEGMENT_MS, MAX_LAG)  # LogConfig.maxSegmentMs: max.compaction.lag.ms too

# by figure: the PartitionState field (monitor.model.compaction) or the audit's partition column of that name.
# A figure not named here (records, bytes, keys, tombstones counted, clean bytes, the first dirty
# offset, which is the checkpoint's) depends on no topic config.
DEPENDS: dict[str, tuple[str, ...]] = {
    # the cleanable range and what follows from it
    "first_uncleanable_offset": _RANGE, "uncleanable_reason": _RANGE, "cleanable_bytes": _RANGE,
    "cleanable_ratio": _RANGE, "not_yet_cleanable_bytes": _RANGE, "blocked_by": _RANGE,
    "dirty_distinct_keys": _RANGE, "cleaner_passes": _RANGE, "estimated_clean_seconds": _RANGE,
    # whether and when the cleaner picks the log
    "min_cleanable_dirty_ratio": (MIN_RATIO,),
    "compaction_delay_ms": (MAX_LAG,),
    "eligible": (MIN_RATIO,) + _RANGE + (MAX_LAG,), "eligible_seconds": (MIN_RATIO,) + _RANGE + (MAX_LAG,),
    # tombstones
    "delete_retention_ms": (DELETE_RETENTION,), "tombstones_past_retention": (DELETE_RETENTION,),
    "next_delete_horizon_ms": (DELETE_RETENTION,),  # an unstamped one: a delete.retention.ms after the next clean
    # what a clean and the delete half would remove
    "removable_records": _CLEAN, "reclaimable_bytes": _CLEAN, "next_clean_bytes": _CLEAN, "settled_bytes": _CLEAN,
    "batches_dropped": _CLEAN, "batches_rewritten": _CLEAN, "batches_stamped": _CLEAN,
    # an unstamped tombstone or marker goes one delete.retention.ms after the clean that stamps it
    "next_removable_ms": (DELETE_RETENTION,),
    "retention_deleted_segments": RETENTION, "retention_deleted_bytes": RETENTION,
    "projected_log_start_offset": RETENTION,
    # the active segment's roll (monitor.verdicts.forecasts.max_segment_ms, active_segment_roll)
    "segment_bytes": (SEGMENT_BYTES,), "max_segment_ms": (SEGMENT_MS, MAX_LAG), "active_segment_roll": _ROLL,
    # Kafka 4.4's per-record cap (the largest record below the active segment depends on no config)
    "max_decompressed_message_bytes": (MAX_DECOMPRESSED,),
}

# the collector's partition series (their names without the metric namespace) and the figure each is
# made from; a series not named here depends on no topic config
_SERIES = {
    "partition_cleanable_ratio": "cleanable_ratio", "partition_cleanable_bytes": "cleanable_bytes",
    "partition_compaction_blocked": "blocked_by", "partition_not_yet_cleanable_bytes": "not_yet_cleanable_bytes",
    "partition_first_uncleanable_offset": "first_uncleanable_offset",
    "partition_min_cleanable_dirty_ratio": "min_cleanable_dirty_ratio",
    "partition_eligible": "eligible", "partition_eligible_seconds": "eligible_seconds",
    "partition_compaction_delay_seconds": "compaction_delay_ms",
    "partition_delete_retention_seconds": "delete_retention_ms",
    "partition_tombstones_past_retention": "tombstones_past_retention",
    "partition_next_delete_horizon_timestamp_seconds": "next_delete_horizon_ms",
    "partition_segment_bytes": "segment_bytes", "partition_max_segment_age_seconds": "max_segment_ms",
    "partition_active_segment_roll_seconds": "active_segment_roll",
    "partition_max_decompressed_message_bytes": "max_decompressed_message_bytes",
}

# the order the configs are named in (a message listing the unknown ones)
_ORDER = (MIN_RATIO, MIN_LAG, MAX_LAG, DELETE_RETENTION, SEGMENT_BYTES, SEGMENT_MS) + RETENTION + (MAX_DECOMPRESSED,)


def configs_of(*figures: str) -> tuple[str, ...]:
    """The topic configs the named figures read together, each once, in a fixed order."""
    wanted = {k for f in figures for k in DEPENDS[f]}
    return tuple(k for k in _ORDER if k in wanted)


def series_depends(namespace: str) -> dict[str, tuple[str, ...]]:
    """The collector's map: each exported partition series (full name, ``<namespace>_partition_...``) made
    from a topic config, to the configs it reads; the collector leaves a series out when one is unknown."""
    return {f"{namespace}_{series}": DEPENDS[figure] for series, figure in _SERIES.items()}


def columns_depends(columns) -> dict[str, tuple[str, ...]]:
    """The audit's map: each of ``columns`` that depends on a topic config, to the configs it reads; the
    audit sets such a column null when one is unknown."""
    return {c: DEPENDS[c] for c in columns if c in DEPENDS}

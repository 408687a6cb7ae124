"""When things will happen to a partition: the cleanable ratio reaches the threshold, a clean is due by
max.compaction.lag.ms, the active segment rolls; and the one-shot write rate those are made from.

A cause's forecast (``monitor.verdicts.causes.explain``), the finder ``active_segment_only`` and the collector's
``partition_active_segment_roll_seconds`` use the same forecasts here. A figure that cannot be told is
``{"at_ms": None, ..., "reason": why}``, never a guess. Kafka facts relied on:

* LogConfig.maxSegmentMs: a compacted topic's active segment rolls after min(segment.ms,
  max.compaction.lag.ms); LogSegment.shouldRoll rolls it, on an append only, once the appended batch's
  timestamp is that far past the segment's first batch's (rollingBasedTimestamp), or once it would
  exceed segment.bytes. No append, no roll.
"""

from __future__ import annotations

from monitor.model.compaction import PartitionState
from monitor.model.topicconfig import LONG_MAX, TopicConfig
from monitor.contract.units import bytes_iec, duration_ms, rate as rate_text
from monitor.verdicts.facts import Facts, WriteRate, unknown_configs


def unknown_at(reason: str, code: str | None = None) -> dict:
    return {"at_ms": None, "in_seconds": None, "reason": reason, "code": code}


def _at(now_ms: int, at_ms: float, reason: str, code: str | None = None) -> dict:
    return {"at_ms": int(at_ms), "in_seconds": max(at_ms - now_ms, 0) / 1000, "reason": reason, "code": code}


def max_segment_ms(c: TopicConfig) -> int:
    """LogConfig.maxSegmentMs: a compacted topic's segments roll by max.compaction.lag.ms too."""
    if c.compacted and c.max_compaction_lag_ms > 0:
        return min(c.max_compaction_lag_ms, c.segment_ms)
    return c.segment_ms


# The roll forecast's codes (``forecast["active_segment_roll"]["code"]``): what rolls it when known
# (ROLLED_BY), why it cannot be told otherwise (ROLL_UNKNOWN). The exporter labels its series with them.
ROLLED_BY = ("segment_ms", "max_compaction_lag_ms", "segment_bytes")
ROLL_UNKNOWN = ("empty_segment", "no_writes", "write_rate_unknown")
ROLL_UNKNOWN_WORDS = {"empty_segment": "the active segment is empty", "no_writes": "no writes",
                      "write_rate_unknown": "write rate unknown"}  # each code for a page's cell


def active_segment_roll(state: PartitionState, config: TopicConfig, rate: WriteRate, now_ms: int) -> dict:
    """When the active segment rolls at the current write rate: ``{at_ms, in_seconds, reason, code}``
    (at_ms None when it cannot be told; code one of ``ROLLED_BY`` / ``ROLL_UNKNOWN``). The earlier of its
    time roll (first batch's timestamp + LogConfig.maxSegmentMs, reached only on an append) and its size
    roll (segment.bytes at the rate); at a rate of 0 nothing is appended, so it never rolls.
    ``explain``'s forecast and the collector's ``partition_active_segment_roll_seconds`` are this one.
    Not modelled: segment.jitter.ms (LogSegment.shouldRoll subtracts a random jitter below it; Kafka's
    default is 0), and the offset/time index filling up (a roll at any size)."""
    s, c, r = state, config, rate.bytes_per_second
    if s.active_segment_bytes <= 0:
        return unknown_at("the active segment is empty: the next append starts it", "empty_segment")
    limit = max_segment_ms(c)
    by = "segment.ms" if limit == c.segment_ms else "max.compaction.lag.ms"
    options = []
    if s.active_segment_first_timestamp >= 0 and limit < LONG_MAX:
        t = s.active_segment_first_timestamp + limit
        options.append((max(t, now_ms), f"{by}={limit} ({duration_ms(limit)}) after its first batch's timestamp, "
                        "on the next append",
                        by.replace(".", "_")))
    if r is not None and r > 0:
        left = max(c.segment_bytes - s.active_segment_bytes, 0)
        options.append((now_ms + left / r * 1000, f"segment.bytes={c.segment_bytes} ({bytes_iec(c.segment_bytes)}) "
                        f"reached at {rate_text(r)}",
                        "segment_bytes"))
    if r is not None and r <= 0:
        return unknown_at("no writes: a segment rolls only on an append", "no_writes")
    if not options:
        return unknown_at(f"write rate unknown ({rate.basis})", "write_rate_unknown")
    at, why, code = min(options)
    if r is None:
        why += f"; write rate unknown ({rate.basis}), so the append may come later"
    return _at(now_ms, at, why, code)


def roll_forecast(f: Facts) -> dict:
    return active_segment_roll(f.state, f.config, f.rate, f.now_ms)


def _threshold(f: Facts) -> dict:
    s, r = f.state, f.rate.bytes_per_second
    m = s.min_cleanable_dirty_ratio
    if s.cleanable_ratio_above_min:
        return _at(f.now_ms, f.now_ms, "already above min.cleanable.dirty.ratio")
    if s.blocked_by:
        return unknown_at(f"held back by {s.blocked_by}: new writes are not cleanable until it releases")
    if m >= 1:
        return unknown_at("min.cleanable.dirty.ratio is 1: the ratio can never exceed it")
    if r is None:
        return unknown_at(f"write rate unknown ({f.rate.basis})")
    if r <= 0:
        return unknown_at("no writes (a write rate of 0): no forecast from a rate of 0")
    total, dirty = s.clean_bytes + s.cleanable_bytes, s.cleanable_bytes
    need = (m * total - dirty) / (1 - m)
    if need <= 0:  # the ratio sits at the threshold (or nothing below the active segment): its bytes tip it
        roll = roll_forecast(f)
        if s.active_segment_bytes <= 0 or roll["at_ms"] is None:
            return unknown_at("only new writes can take the ratio above it, once their segment rolls"
                              + (f"; the active segment's roll: {roll['reason']}" if roll["at_ms"] is None else ""))
        return _at(f.now_ms, roll["at_ms"], f"when the active segment rolls: its {bytes_iec(s.active_segment_bytes)} "
                                            f"then count as dirty ({roll['reason']})", "active_segment_roll")
    return _at(f.now_ms, f.now_ms + need / r * 1000,
               f"{bytes_iec(need)} more dirty at {rate_text(r)} (counted once their segment rolls)")


def _next_clean_due(f: Facts) -> dict:
    s, lag = f.state, f.config.max_compaction_lag_ms
    if lag >= LONG_MAX:
        return unknown_at("max.compaction.lag.ms is not set: no clean is ever forced")
    if s.compaction_delay_ms > 0:
        return _at(f.now_ms, f.now_ms - s.compaction_delay_ms, "overdue: max.compaction.lag.ms has passed")
    if s.first_dirty_timestamp is not None:
        return _at(f.now_ms, s.first_dirty_timestamp + lag,
                   "the oldest dirty segment's first batch timestamp + max.compaction.lag.ms")
    if s.active_segment_bytes > 0 and s.active_segment_first_timestamp >= 0:
        return _at(f.now_ms, s.active_segment_first_timestamp + lag,
                   "the active segment's first batch timestamp + max.compaction.lag.ms (it rolls by then)")
    return unknown_at("nothing dirty")


def unknown_configs_at(unknown: tuple[str, ...]) -> dict:
    return unknown_at(f"topic config unknown ({', '.join(unknown)})")


def roll_at(state: PartitionState, config: TopicConfig, sources: dict, rate: WriteRate, now_ms: int) -> dict:
    """The roll forecast a cause made at ``now_ms`` holds (``forecast``'s "active_segment_roll"), without the cause:
    what the collector's page exports at its render, whatever refresh the partition's cause was built at."""
    unknown = unknown_configs(sources)
    return unknown_configs_at(unknown) if unknown else active_segment_roll(state, config, rate, now_ms)


def forecast(f: Facts) -> dict:
    if f.unknown_configs:
        why = unknown_configs_at(f.unknown_configs)["reason"]
        return {k: unknown_at(why) for k in ("threshold", "next_clean_due", "active_segment_roll")} | {
            "write_rate_bytes_per_second": f.rate.bytes_per_second, "write_rate_basis": f.rate.basis}
    return {"threshold": _threshold(f), "next_clean_due": _next_clean_due(f), "active_segment_roll": roll_forecast(f),
            "write_rate_bytes_per_second": f.rate.bytes_per_second, "write_rate_basis": f.rate.basis}


def rate_from_dirty_section(state: PartitionState, now_ms: int) -> WriteRate:
    """A one-shot write rate: the dirty section's bytes over the time since its first batch's timestamp
    (what ``explain`` uses; the collector measures it between refreshes instead)."""
    start = state.first_dirty_timestamp
    if start is None and state.active_segment_first_timestamp >= 0 and state.active_segment_bytes > 0:
        start = state.active_segment_first_timestamp
    if start is None:
        return WriteRate(None, "no batch timestamp in the dirty section")
    dirty, span = state.log_bytes - state.clean_bytes, now_ms - start
    if span <= 0:
        return WriteRate(None, "the dirty section's first timestamp is not in the past")
    return WriteRate(dirty * 1000 / span, f"one-shot: {bytes_iec(dirty)} of the dirty section over the "
                                          f"{duration_ms(span)} since its first batch's timestamp")

"""monitor.model.whatif: the steady-state model's rules (Kafka's clean trigger, segment rolls, the
tombstones' stay) and its direction: a lower ratio means more cleans and cleaner bytes, a smaller log."""

import math

import pytest

from monitor.model.whatif import (CURRENT, DAY_SECONDS, Observed, Settings, grid, observed_writes,
                                  segments_to_clean, steady, topic_outcomes)

BASE = Settings(min_cleanable_dirty_ratio=0.5, segment_ms=1_000, segment_bytes=1 << 30, delete_retention_ms=60_000)
OBS = Observed(write_bytes_per_second=50_000.0, live_bytes=250_000.0, tombstone_share=0.0, backoff_ms=0)


def test_segments_to_clean_is_kafkas_strict_comparison():
    # C = 100, S = 100: at k = 1 the ratio is exactly 0.5, not above it: the second roll cleans
    assert segments_to_clean(0.5, 100, 100) == 2
    assert segments_to_clean(0.49, 100, 100) == 1
    assert segments_to_clean(0.0, 100, 100) == 1
    assert segments_to_clean(0.75, 100, 100) == 4  # 3 segments: 300/400 = 0.75, not above


def test_cycle_by_hand():
    o = steady(OBS, BASE)
    # S = 50 kB (segment.ms 1 s at 50 kB/s), need 250 kB dirty: 5 segments are exactly 0.5, the 6th cleans
    assert o.segment_bytes == 50_000
    assert o.clean_interval_seconds == pytest.approx(6.0)
    assert o.cleans_per_day == pytest.approx(DAY_SECONDS / 6)
    assert o.size_bytes == pytest.approx(250_000 + 6 * 50_000 / 2)  # the writes since the last clean, on average
    assert o.peak_bytes == pytest.approx(250_000 + 6 * 50_000)
    # each clean reads the clean section once and the dirty one twice (offset map, then copy), writes the clean
    assert o.read_bytes_per_day == pytest.approx(o.cleans_per_day * (250_000 + 2 * 300_000))
    assert o.written_bytes_per_day == pytest.approx(o.cleans_per_day * 250_000)


def test_lower_ratio_more_cleans_more_bytes_smaller_log():
    outs = [steady(OBS, BASE.with_value("min.cleanable.dirty.ratio", r)) for r in (0.05, 0.1, 0.25, 0.5, 0.75, 0.9)]
    for lo, hi in zip(outs, outs[1:]):
        assert lo.cleans_per_day >= hi.cleans_per_day
        assert lo.read_bytes_per_day >= hi.read_bytes_per_day
        assert lo.written_bytes_per_day >= hi.written_bytes_per_day
        assert lo.size_bytes <= hi.size_bytes
    assert outs[0].cleans_per_day > outs[-1].cleans_per_day and outs[0].size_bytes < outs[-1].size_bytes


def test_smaller_segments_mean_a_smaller_tail():
    small, big = (steady(OBS, BASE.with_value("segment.ms", ms)) for ms in (250, 4_000))
    assert small.size_bytes < big.size_bytes and small.peak_bytes < big.peak_bytes
    # segment.bytes bounds the segment when it fills first
    capped = steady(OBS, BASE.with_value("segment.bytes", 10_000))
    assert capped.segment_bytes == 10_000


def test_tombstones_stay_delete_retention_plus_an_interval():
    obs = Observed(50_000.0, 250_000.0, tombstone_share=0.1, backoff_ms=0)
    short, long_ = (steady(obs, BASE.with_value("delete.retention.ms", d)) for d in (10_000, 600_000))
    assert short.tombstone_bytes == pytest.approx(5_000 * (10 + short.clean_interval_seconds))
    assert long_.tombstone_bytes > short.tombstone_bytes and long_.size_bytes > short.size_bytes
    assert steady(OBS, BASE).tombstone_bytes == 0


def test_the_backoff_delays_both_ends_of_an_interval_unless_rolls_come_faster():
    # rolls every 1 s, the cleaner looks every 0.5 s: a clean every 6 rolls, the log half a look bigger
    looks = steady(Observed(50_000.0, 250_000.0, backoff_ms=500), BASE)
    assert looks.clean_interval_seconds == pytest.approx(6.0)
    assert looks.size_bytes == pytest.approx(250_000 + 50_000 * (0.25 + 3.0))
    # the cleaner looks every 15 s: rolls are a uniform phase before each clean, the interval longer by
    # half the backoff less half a roll
    slow = steady(Observed(50_000.0, 250_000.0, backoff_ms=15_000), BASE)
    assert slow.clean_interval_seconds == pytest.approx(6.0 + 7.0)
    assert slow.size_bytes > looks.size_bytes > steady(OBS, BASE).size_bytes


def test_unknown_write_rate_is_unknown_never_zero():
    o = steady(Observed(None, 250_000.0, unknown_reason="records path: no segments"), BASE)
    assert o.unknown_reason == "records path: no segments"
    assert o.size_bytes is None and o.cleans_per_day is None and o.read_bytes_per_day is None
    rows = topic_outcomes([OBS, Observed(None, 1.0, unknown_reason="why")], BASE)
    assert all(r.size_bytes is None and r.unknown_reason == "why" for r in rows)


def test_edges():
    idle = steady(Observed(0.0, 1_000.0), BASE)
    assert idle.cleans_per_day == 0 and idle.size_bytes == 1_000
    never = steady(OBS, BASE.with_value("min.cleanable.dirty.ratio", 1.0))
    assert never.cleans_per_day == 0 and never.size_bytes is None and "never cleaned" in never.unknown_reason
    empty = steady(Observed(50_000.0, 0.0, backoff_ms=0), BASE.with_value("min.cleanable.dirty.ratio", 0.9))
    assert empty.clean_interval_seconds == pytest.approx(1.0)  # nothing clean: any dirty segment passes
    with pytest.raises(ValueError, match="between 0 and 1"):
        steady(OBS, BASE.with_value("min.cleanable.dirty.ratio", 1.5))


def test_grid_changes_one_setting_at_a_time():
    g = grid(BASE)
    assert g[0].setting == CURRENT and g[0].settings == BASE and math.isnan(g[0].value)
    ratios = [v.value for v in g if v.setting == "min.cleanable.dirty.ratio"]
    assert ratios == [0.1, 0.25, 0.75]  # 0.5 is the topic's own: the current row
    assert [v.value for v in g if v.setting == "segment.ms"] == [500, 2_000]
    assert [v.value for v in g if v.setting == "delete.retention.ms"] == [30_000, 120_000]
    for v in g[1:]:
        changed = [f for f in ("min_cleanable_dirty_ratio", "segment_ms", "segment_bytes", "delete_retention_ms")
                   if getattr(v.settings, f) != getattr(BASE, f)]
        assert len(changed) == 1


def test_topic_sums_partitions():
    rows = {(r.setting, r.value): r for r in topic_outcomes([OBS, OBS], BASE) if r.setting == CURRENT}
    (row,) = rows.values()
    assert row.cleans_per_day == pytest.approx(2 * steady(OBS, BASE).cleans_per_day)
    assert row.unknown_reason is None


def test_observed_writes_from_the_uncleaned_tail():
    segs = [(0, 100, 9_000, 0, 50_000),  # cleaned: tells no rate
            (100, 200, 10_000, 60_000, 61_000), (200, 300, 10_000, 61_000, 62_000), (300, 350, 5_000, 62_000, 62_500)]
    w = observed_writes(segs, first_dirty=100)
    assert w.bytes == 25_000 and w.offsets == 250 and w.span_ms == 2_500 and w.rate == pytest.approx(10_000)
    short = observed_writes(segs[-1:], first_dirty=300)
    assert short.rate is None and "too short" in short.reason
    assert observed_writes([(0, 10, 100, -1, -1)], 0).rate is None

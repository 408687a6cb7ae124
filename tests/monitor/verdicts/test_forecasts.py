"""The forecasts (monitor.verdicts.forecasts) on real segment files (tests/causefixtures.py): the one-shot write rate
and when the active segment rolls, expected from the files' sizes, the batches' timestamps and Kafka's rules."""

from __future__ import annotations

import pytest

from causefixtures import T0, batch_max_ts, build, file_size, plain
from monitor.model.topicconfig import TopicConfig
from monitor.verdicts.facts import WriteRate
from monitor.verdicts.forecasts import ROLL_UNKNOWN, ROLLED_BY, active_segment_roll, rate_from_dirty_section


def test_one_shot_rate_from_the_dirty_section(tmp_path):
    state, _, sums = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=20)
    now = T0 + 10_000
    r = rate_from_dirty_section(state, now)
    dirty = sums[1].size + sums[2].size
    assert r.bytes_per_second == pytest.approx(dirty * 1000 / (now - batch_max_ts(20, 40)))
    assert r.basis.startswith("one-shot")


def test_roll_forecast_codes_and_the_age_it_counts_from(tmp_path):
    cfg = TopicConfig(cleanup_policy=("compact",), segment_ms=60_000, segment_bytes=1_000_000)
    now = T0 + 30_000
    state, _, sums = build(tmp_path, [plain(0, 20), plain(20, 25)], cfg, now=now, checkpoint=20)
    first_ts = batch_max_ts(20, 25)
    assert state.active_segment_age_ms(now) == now - first_ts
    slow = active_segment_roll(state, cfg, WriteRate(1.0, "given"), now)  # segment.bytes is days away
    assert slow["code"] == "segment_ms" and slow["at_ms"] == first_ts + 60_000
    assert slow["in_seconds"] * 1000 + state.active_segment_age_ms(now) == 60_000
    left = 1_000_000 - file_size(sums[1])
    fast = active_segment_roll(state, cfg, WriteRate(left / 10, "given"), now)  # full in 10 s
    assert fast["code"] == "segment_bytes" and fast["in_seconds"] == 10
    lag = TopicConfig(cleanup_policy=("compact",), segment_ms=60_000, max_compaction_lag_ms=45_000)
    assert active_segment_roll(state, lag, WriteRate(1.0, "given"), now)["code"] == "max_compaction_lag_ms"
    none = active_segment_roll(state, cfg, WriteRate(0.0, "measured"), now)
    assert none["at_ms"] is None and none["code"] == "no_writes"
    empty, _, _ = build(tmp_path / "e", [plain(0, 20), []], cfg, now=now, checkpoint=20)
    assert empty.active_segment_age_ms(now) is None
    assert active_segment_roll(empty, cfg, WriteRate(1.0, "given"), now)["code"] == "empty_segment"
    assert {"segment_ms", "segment_bytes", "max_compaction_lag_ms"} == set(ROLLED_BY)
    assert {"empty_segment", "no_writes", "write_rate_unknown"} == set(ROLL_UNKNOWN)


def test_a_ratio_that_only_the_active_segments_bytes_can_tip_is_reached_when_it_rolls(tmp_path):
    """Everything dirty is in the active segment (clean 0, cleanable 0): no more bytes are needed, but they count
    only once the segment rolls, so the threshold comes with the roll, not "now (0 more dirty bytes at 0 B/s)"."""
    from monitor.verdicts.causes import explain

    cfg = TopicConfig(cleanup_policy=("compact",), segment_ms=60_000)
    now = T0 + 30_000
    state, ecfg, _ = build(tmp_path, [plain(0, 5)], cfg, now=now)  # one segment: the active one
    c = explain(state, ecfg, now_ms=now, write_rate=WriteRate(5.0, "given"))
    assert c.cause == "active_segment_only" and state.clean_bytes == state.cleanable_bytes == 0
    threshold, roll = c.forecast["threshold"], c.forecast["active_segment_roll"]
    assert threshold["at_ms"] == roll["at_ms"] == batch_max_ts(0, 5) + 60_000 and threshold["in_seconds"] > 0
    assert threshold["reason"].startswith("when the active segment rolls") and "0 B/s" not in threshold["reason"]

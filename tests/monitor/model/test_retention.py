"""``monitor.model.retention`` against the cases Kafka's UnifiedLog.deleteOldSegments is written for (its
rules quoted in the module doc); the real broker's log start after its retention check is in
tests/spark_analysis/test_audit_retention.py."""

from __future__ import annotations

from monitor.model.retention import RetentionSegment as S
from monitor.model.retention import project_retention

NOW = 1_000_000
HOUR = 3_600_000


def run(segs, **kw):
    args = dict(retention_ms=-1, retention_bytes=-1, now_ms=NOW, log_start_offset=segs[0].base_offset,
                log_end_offset=kw.pop("leo", 400))
    args.update(kw)
    return project_retention(segs, **args)


SEGS = [S(0, 100, NOW - 10 * HOUR), S(100, 100, NOW - 5 * HOUR), S(200, 100, NOW - 9 * HOUR),
        S(300, 50, NOW - 1000)]


def test_time_retention_deletes_a_prefix_and_stops_at_the_first_young_segment():
    r = run(SEGS, retention_ms=6 * HOUR)
    # segment 200 is old enough but lies after 100, which is not: retention only removes a prefix
    assert r.deleted == (0,) and r.log_start_offset == 100 and r.deleted_bytes == 100
    assert r.by_reason == {"retention.ms": (0,)} and not r.rolls_active


def test_age_is_strictly_greater_than_retention_ms():
    assert not run([S(0, 10, NOW - HOUR), S(10, 10, NOW)], retention_ms=HOUR, leo=20).moves
    assert run([S(0, 10, NOW - HOUR - 1), S(10, 10, NOW)], retention_ms=HOUR, leo=20).deleted == (0,)


def test_size_retention_keeps_at_least_retention_bytes():
    # 350 bytes, at most 200 kept: diff 150 -> the first segment (100) goes, the second (100) would leave 150 < 200
    r = run(SEGS, retention_bytes=200)
    assert r.deleted == (0,) and r.log_start_offset == 100
    assert not run(SEGS, retention_bytes=350).moves  # size == retention.bytes: diff 0, no segment fits in it
    assert not run(SEGS, retention_bytes=351).moves  # size < retention.bytes: nothing to do


def test_size_then_time_each_on_what_the_other_left():
    r = run(SEGS, retention_bytes=250, retention_ms=4 * HOUR)
    assert r.by_reason == {"retention.bytes": (0,), "retention.ms": (100, 200)}
    assert r.log_start_offset == 300 and r.deleted_bytes == 300


def test_the_active_segment_goes_too_after_a_roll_when_every_segment_is_expired():
    r = run(SEGS, retention_ms=100)
    assert r.deleted == (0, 100, 200, 300) and r.rolls_active and r.log_start_offset == 400


def test_an_empty_last_segment_is_never_deleted():
    segs = [S(0, 100, NOW - 10 * HOUR), S(100, 0, -1)]
    r = run(segs, retention_ms=HOUR, leo=100)
    assert r.deleted == (0,) and r.log_start_offset == 100 and not r.rolls_active


def test_nothing_at_or_above_the_high_watermark():
    r = run(SEGS, retention_ms=100, high_watermark=150)
    assert r.deleted == (0,) and r.log_start_offset == 100


def test_without_the_delete_policy_only_the_log_start_counts():
    r = run(SEGS, retention_ms=100, delete_policy=False, log_start_offset=120)
    assert r.deleted == (0,) and r.by_reason == {"log_start": (0,)} and r.log_start_offset == 120

"""The LogCleanerManager model on hand-built segment summaries (real-broker agreement is in
tests/collectors/test_collect_kafka.py)."""

import pytest

from monitor.model.compaction import partition_state
from monitor.model.summary import SegmentSummary, add_tombstone
from monitor.model.topicconfig import LONG_MAX, TopicConfig

NOW = 10_000_000


def seg(base, size, nxt, max_ts=NOW - 1000, first_ts=None, tomb=(), horizon=-1):
    s = SegmentSummary(f"/x/{base:020d}.log", base, size=size, next_offset=nxt, max_timestamp=max_ts,
                       first_batch_max_timestamp=max_ts if first_ts is None else first_ts)
    for off, ts in tomb:
        add_tombstone(s, off, ts, horizon)
    return s


CFG = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.5)


def test_no_checkpoint_everything_below_active_is_dirty():
    st = partition_state("t", 0, [seg(0, 100, 10), seg(10, 100, 20), seg(20, 50, 25)], CFG, NOW)
    assert (st.first_dirty_offset, st.first_uncleanable_offset) == (0, 20)
    assert (st.clean_bytes, st.cleanable_bytes, st.cleanable_ratio) == (0, 200, 1.0)
    assert st.eligible and st.cleanable_ratio_above_min and st.uncleanable_reason == "active_segment"


def test_checkpoint_mid_segment_counts_in_both():
    segs = [seg(0, 100, 10), seg(10, 100, 20), seg(20, 100, 30), seg(30, 10, 31)]
    st = partition_state("t", 0, segs, CFG, NOW, checkpoint=15)
    assert st.clean_bytes == 200 and st.cleanable_bytes == 200  # segment 10 in both
    assert st.cleanable_ratio == pytest.approx(0.5) and not st.cleanable_ratio_above_min  # strictly greater


def test_checkpoint_out_of_range_falls_back_to_log_start():
    segs = [seg(100, 100, 110), seg(110, 10, 111)]
    assert partition_state("t", 0, segs, CFG, NOW, checkpoint=5).first_dirty_offset == 100
    assert partition_state("t", 0, segs, CFG, NOW, checkpoint=500).first_dirty_offset == 100
    assert partition_state("t", 0, segs, CFG, NOW, checkpoint=105, log_start_offset=100).first_dirty_offset == 105


def test_min_compaction_lag_blocks_recent_segments():
    cfg = TopicConfig(cleanup_policy=("compact",), min_compaction_lag_ms=60_000)
    segs = [seg(0, 100, 10, max_ts=NOW - 120_000), seg(10, 100, 20, max_ts=NOW - 1000), seg(20, 10, 21)]
    st = partition_state("t", 0, segs, cfg, NOW, checkpoint=0)
    assert st.first_uncleanable_offset == 10 and st.uncleanable_reason == "min_compaction_lag"
    assert st.cleanable_bytes == 100 and st.uncleaned_bytes == 200 and st.blocked_by == "min_compaction_lag"
    everything_recent = [seg(0, 100, 10, max_ts=NOW - 1), seg(10, 10, 11)]
    st = partition_state("t", 0, everything_recent, cfg, NOW)
    assert st.cleanable_bytes == 0 and st.cleanable_ratio == 0 and st.uncleaned_ratio == 1.0 and not st.eligible


def test_max_compaction_lag_overdue_forces_eligibility():
    cfg = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.99, max_compaction_lag_ms=60_000)
    segs = [seg(0, 100, 10), seg(10, 100, 20, first_ts=NOW - 100_000), seg(20, 10, 21)]
    st = partition_state("t", 0, segs, cfg, NOW, checkpoint=10)
    assert st.compaction_delay_ms == 40_000 and st.needs_compaction_now and st.eligible and not st.cleanable_ratio_above_min
    assert partition_state("t", 0, segs, TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.99,
                                                     max_compaction_lag_ms=LONG_MAX), NOW,
                           checkpoint=10).compaction_delay_ms == 0


def test_tombstones_by_section_and_against_retention():
    cfg = TopicConfig(cleanup_policy=("compact",), delete_retention_ms=5_000)
    segs = [seg(0, 100, 10, tomb=[(2, NOW - 9_000), (8, NOW - 1_000)], horizon=NOW - 10),
            seg(10, 100, 20, tomb=[(12, NOW - 6_000)]), seg(20, 10, 21, tomb=[(20, NOW - 10)])]
    st = partition_state("t", 0, segs, cfg, NOW, checkpoint=5)
    assert st.tombstones == 4 and st.tombstones_clean == 1 and st.tombstones_dirty == 3
    assert st.oldest_tombstone_age_ms == 9_000
    assert st.tombstones_past_retention == 2 and st.tombstones_past_delete_horizon == 2


def test_checkpoint_problems_against_the_log():
    """A cleaner checkpoint or log start offset past the log end, or negative, is a problem of the
    partition; a cleaner checkpoint below the log start is not (Kafka resets it to the log start)."""
    from monitor.model.compaction import checkpoint_problems

    segs = [seg(0, 1000, 100), seg(100, 1000, 200), seg(200, 0, None)]  # log end 200 (empty active)
    assert checkpoint_problems(0, segs, checkpoint=200, log_start_offset=0) == {}
    assert checkpoint_problems(0, segs, checkpoint=201) == {"cleaner": "offset 201 is past the log end offset 200"}
    assert checkpoint_problems(0, segs, checkpoint=-1, log_start_offset=300) == {
        "cleaner": "negative offset -1", "log_start": "offset 300 is past the log end offset 200"}
    assert checkpoint_problems(0, segs, checkpoint=50, log_start_offset=100) == {}  # below the start: Kafka's reset
    assert partition_state("t", 0, segs, TopicConfig(), NOW, checkpoint=50, log_start_offset=100).first_dirty_offset == 100

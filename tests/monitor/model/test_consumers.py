"""Which groups may miss intermediate updates (monitor.model.consumers): each condition at and around its
bound, unknown inputs kept unknown, and the latest-value-only declaration's patterns."""

from __future__ import annotations

from monitor.model.consumers import (BELOW, EXTRAPOLATED, INTERPOLATED, LAG, MAX_SAMPLES, NO_WRITES_SAMPLED,
                               TOO_FEW_SAMPLES, TimeLag, add_sample, interpolated_lag, latest_value_only,
                               may_miss_updates)


def test_each_condition_at_its_bound_and_unknown_when_an_input_is():
    def f(**kw):
        args = dict(lag_seconds=10.0, min_compaction_lag_seconds=60.0, committed=100, first_dirty_offset=100,
                    cleaner_limit_offset=None)
        return may_miss_updates(**{**args, **kw})

    assert f() == {LAG: False, BELOW: False}  # at the first dirty offset: reads nothing compacted
    assert f(lag_seconds=60.0)[LAG] is False and f(lag_seconds=60.5)[LAG] is True  # strictly past the lag
    assert f(committed=99)[BELOW] is True
    assert f(min_compaction_lag_seconds=0.0, lag_seconds=0.0)[LAG] is False  # caught up: nothing to miss
    assert f(lag_seconds=None)[LAG] is None and f(min_compaction_lag_seconds=None)[LAG] is None
    assert f(first_dirty_offset=None)[BELOW] is None


def test_the_time_lag_counts_only_while_an_unread_record_lies_below_the_leaders_cleaner_limit():
    # Kafka never cleans the active segment nor past the last stable offset (LogCleanerManager.cleanableOffsets):
    # a group whose unread records all sit there misses nothing yet, at min.compaction.lag.ms 0 (Kafka's
    # default) too. ``limit``: PartitionState.cleaner_limit_offset, the lower of the two
    def lag(committed, limit, lag_seconds=5.0, min_lag=0.0):
        return may_miss_updates(lag_seconds=lag_seconds, min_compaction_lag_seconds=min_lag, committed=committed,
                                first_dirty_offset=None, cleaner_limit_offset=limit)[LAG]

    assert lag(committed=500, limit=500) is False  # its next record is the first the cleaner may not take
    assert lag(committed=510, limit=500) is False  # a few records behind, past the limit
    assert lag(committed=499, limit=500) is True  # one unread record the cleaner may take
    assert lag(committed=10, limit=500, lag_seconds=30.0, min_lag=60.0) is False  # not past the lag: no
    assert lag(committed=10, limit=500, lag_seconds=60.5, min_lag=60.0) is True
    # the leader's log not read here: the time lag alone, as before
    assert lag(committed=510, limit=None) is True
    assert lag(committed=510, limit=None, lag_seconds=0.0) is False
    # an unknown time lag stays unknown whatever the limit
    assert lag(committed=10, limit=500, lag_seconds=None) is None
    assert lag(committed=510, limit=500, lag_seconds=None) is None


def test_latest_value_only_patterns():
    pats = ("cache-*", "ui-state")
    assert latest_value_only("cache-orders", pats) and latest_value_only("ui-state", pats)
    assert not latest_value_only("ui-state-2", pats) and not latest_value_only("Cache-orders", pats)
    assert not latest_value_only("cdc", ())  # nothing declared: every group needs every update


# ------------------------------------------------------------------ time lag from log-end-offset samples

def table(*points):
    out = ()
    for at, offset in points:
        out = add_sample(out, at, offset)
    return out


def test_the_lag_is_interpolated_between_the_two_samples_around_the_committed_offset():
    # the log end offset went 100 -> 200 between t=1000 and t=1100: offset 149's record (the log end
    # passing 149, reaching 150) was appended half way, at 1050
    samples = table((1000.0, 100), (1100.0, 200), (1200.0, 300))
    got = interpolated_lag(samples, 149, now=1300.0)
    assert got == TimeLag(250.0, INTERPOLATED)
    # the record at the last offset of a step was appended by the step's end at the latest
    assert interpolated_lag(samples, 199, now=1300.0) == TimeLag(200.0, INTERPOLATED)
    assert interpolated_lag(samples, 299, now=1300.0) == TimeLag(100.0, INTERPOLATED)


def test_a_group_at_the_last_sampled_log_end_offset_has_no_time_lag():
    assert interpolated_lag(table((1000.0, 100), (1100.0, 200)), 200, now=5000.0) == TimeLag(0.0, INTERPOLATED)
    assert interpolated_lag(table((1000.0, 100)), 100, now=5000.0) == TimeLag(0.0, INTERPOLATED)


def test_one_sample_or_none_is_unknown_with_its_reason():
    assert interpolated_lag((), 5, now=10.0) == TimeLag(None, None, TOO_FEW_SAMPLES)
    assert interpolated_lag(table((1000.0, 100)), 5, now=2000.0) == TimeLag(None, None, TOO_FEW_SAMPLES)


def test_older_than_every_sample_is_extrapolated_from_the_samples_trend():
    samples = table((1000.0, 100), (1100.0, 200))  # 1 offset per second
    # offset 49 reached 50 at 1000 - 50 = 950
    assert interpolated_lag(samples, 49, now=1200.0) == TimeLag(250.0, EXTRAPOLATED)
    # offset 99's record made the log end 100: at the first sample
    assert interpolated_lag(samples, 99, now=1200.0) == TimeLag(200.0, EXTRAPOLATED)


def test_a_log_end_that_stood_still_over_every_sample_cannot_date_an_older_offset():
    samples = table((1000.0, 100), (1100.0, 100), (1200.0, 100))
    assert interpolated_lag(samples, 40, now=1300.0) == TimeLag(None, None, NO_WRITES_SAMPLED)


def test_the_table_compresses_flat_runs_ignores_old_times_restarts_on_a_lower_offset_and_slides():
    assert table((1.0, 5), (2.0, 5), (3.0, 5), (4.0, 5)) == ((1.0, 5), (4.0, 5))
    assert table((1.0, 5), (2.0, 6), (2.0, 9), (1.5, 9)) == ((1.0, 5), (2.0, 6))
    assert table((1.0, 5), (2.0, 6), (3.0, 2)) == ((3.0, 2),)
    long = table(*((float(i), i) for i in range(MAX_SAMPLES + 10)))
    assert len(long) == MAX_SAMPLES and long[0] == (10.0, 10)
    # after a flat run, the records written next are dated from the run's last point
    samples = table((1000.0, 100), (1100.0, 100), (1200.0, 100), (1300.0, 200))
    assert interpolated_lag(samples, 149, now=1400.0) == TimeLag(150.0, INTERPOLATED)

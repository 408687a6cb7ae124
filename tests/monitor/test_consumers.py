"""Which groups may miss intermediate updates (monitor.consumers): each condition at and around its
bound, unknown inputs kept unknown, and the latest-value-only declaration's patterns."""

from __future__ import annotations

from monitor.consumers import BELOW, LAG, latest_value_only, may_miss_updates


def test_each_condition_at_its_bound_and_unknown_when_an_input_is():
    def f(**kw):
        args = dict(lag_seconds=10.0, min_compaction_lag_seconds=60.0, committed=100, first_dirty_offset=100)
        return may_miss_updates(**{**args, **kw})

    assert f() == {LAG: False, BELOW: False}  # at the first dirty offset: reads nothing compacted
    assert f(lag_seconds=60.0)[LAG] is False and f(lag_seconds=60.5)[LAG] is True  # strictly past the lag
    assert f(committed=99)[BELOW] is True
    assert f(min_compaction_lag_seconds=0.0, lag_seconds=0.0)[LAG] is False  # caught up: nothing to miss
    assert f(lag_seconds=None)[LAG] is None and f(min_compaction_lag_seconds=None)[LAG] is None
    assert f(first_dirty_offset=None)[BELOW] is None


def test_latest_value_only_patterns():
    pats = ("cache-*", "ui-state")
    assert latest_value_only("cache-orders", pats) and latest_value_only("ui-state", pats)
    assert not latest_value_only("ui-state-2", pats) and not latest_value_only("Cache-orders", pats)
    assert not latest_value_only("cdc", ())  # nothing declared: every group needs every update

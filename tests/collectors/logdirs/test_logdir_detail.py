"""Which partitions' records are read first (collectors.logdirs.detail.detail_priority), and that the detail
phase keeps to that order and to its budget on an injected clock."""

from __future__ import annotations

from types import SimpleNamespace

from collectors.logdirs.detail import PRIORITIES, detail_priority


def _state(**kw):
    base = dict(eligible=False, needs_compaction_now=False, faults=0, blocked_by=None, hanging_transactions=0)
    return SimpleNamespace(**{**base, **kw})


def _seg(horizon=-1):
    return SimpleNamespace(earliest_delete_horizon=horizon)


def test_eligible_then_unhealthy_then_past_horizon_then_the_rest():
    now = 10_000
    assert PRIORITIES[detail_priority(_state(eligible=True, faults=1), [_seg(5)], now)] == "eligible"
    assert PRIORITIES[detail_priority(_state(needs_compaction_now=True), [_seg()], now)] == "eligible"
    assert PRIORITIES[detail_priority(_state(blocked_by="last_stable_offset"), [_seg(5)], now)] == "unhealthy"
    assert PRIORITIES[detail_priority(_state(faults=2), [_seg()], now)] == "unhealthy"
    assert PRIORITIES[detail_priority(_state(), [_seg(), _seg(now)], now)] == "past_delete_horizon"
    assert PRIORITIES[detail_priority(_state(), [_seg(now + 1)], now)] == "other"
    assert PRIORITIES[detail_priority(_state(), [_seg()], now)] == "other"


def test_a_slice_reads_in_queue_order_and_stops_at_its_end():
    from collectors.logdirs.detail import DETAIL_SLICE_SECONDS, read_details

    clock = SimpleNamespace(now=0.0)
    read = []

    class Reader:  # each segment's records take 4 s of the budget's clock
        budget = SimpleNamespace(clock=lambda: clock.now, debt_seconds=lambda: 0.0)

        def detail(self, path, stop):
            read.append(path)
            clock.now += 4

    queue = sorted([(3, ("t", 1), ["rest-a", "rest-b"]), (0, ("t", 0), ["eligible"]),
                    (2, ("t", 2), ["horizon"]), (1, ("u", 0), ["faulty"])])
    read_details(Reader(), queue)
    assert DETAIL_SLICE_SECONDS == 10.0
    assert read == ["eligible", "faulty", "horizon"]  # 12 s: the slice ends after the third


def test_a_slice_waits_out_the_header_pass_debt_by_not_reading():
    """The header pass charges without waiting; a refresh that finds the budget in debt reads no record
    and does not sleep (its page stays fresh); once the debt is paid by time, records are read again."""
    from collectors.logdirs.detail import read_details
    from monitor.fileio.iobudget import IoBudget

    clock = SimpleNamespace(now=0.0)
    slept = []
    budget = IoBudget(1000, clock=lambda: clock.now, sleep=slept.append)
    budget.charge(5000)  # the header pass: 4 s of debt past the 1 s burst
    read = []

    class Reader:
        def __init__(self):
            self.budget = budget

        def detail(self, path, stop):
            read.append(path)
            budget.take(100)
            clock.now += 0.1

    read_details(Reader(), [(0, ("t", 0), ["a"])])
    assert read == [] and slept == [] and budget.debt_seconds() == 4.0
    clock.now += 4.0
    read_details(Reader(), [(0, ("t", 0), ["a"])])
    assert read == ["a"]


def test_a_long_header_refresh_gets_a_longer_slice():
    from collectors.logdirs.detail import (DETAIL_SLICE_MAX_SECONDS, DETAIL_SLICE_SECONDS, DETAIL_SLICE_SHARE_RATIO,
                                          slice_seconds)

    assert slice_seconds(0.5) == DETAIL_SLICE_SECONDS
    assert slice_seconds(15.0) == 15.0 * DETAIL_SLICE_SHARE_RATIO  # three quarters of the time reading records
    assert slice_seconds(60.0) == DETAIL_SLICE_MAX_SECONDS  # the page never more than a refresh interval stale

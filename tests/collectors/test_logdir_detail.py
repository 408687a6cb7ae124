"""Which partitions' records are read first (collectors.logdir_detail.detail_priority), and that the detail
phase keeps to that order and to its budget on an injected clock."""

from __future__ import annotations

from types import SimpleNamespace

from collectors.logdir_detail import PRIORITIES, detail_priority


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
    from collectors.logdir_detail import DETAIL_SLICE_SECONDS, read_details

    clock = SimpleNamespace(now=0.0)
    read = []

    class Reader:  # each segment's records take 4 s of the budget's clock
        budget = SimpleNamespace(clock=lambda: clock.now)

        def detail(self, path, stop):
            read.append(path)
            clock.now += 4

    queue = sorted([(3, ("t", 1), ["rest-a", "rest-b"]), (0, ("t", 0), ["eligible"]),
                    (2, ("t", 2), ["horizon"]), (1, ("u", 0), ["faulty"])])
    read_details(Reader(), queue)
    assert DETAIL_SLICE_SECONDS == 10.0
    assert read == ["eligible", "faulty", "horizon"]  # 12 s: the slice ends after the third

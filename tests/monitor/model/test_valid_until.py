"""``monitor.model.compaction.valid_until_ms``: a state folded at one instant is the state a fold gives at any
later instant before it (but the ``AS_OF_FOLD`` figures, taken at that instant from what the state keeps), on
segments whose delete horizons pass and stop being rejected as the clock moves (tests/horizonfixtures.py)."""

from __future__ import annotations

import dataclasses

from horizonfixtures import CFG, DAY, NOW, segment
from monitor.kafka.record.horizon import TIMESTAMP_AFTER_MAX_MS
from monitor.model.compaction import AS_OF_FOLD, partition_state, valid_until_ms
from monitor.model.summary import summarize


def _same(kept, now_ms: int, fresh) -> bool:
    return all((AS_OF_FOLD[f.name](kept, now_ms) if f.name in AS_OF_FOLD else getattr(kept, f.name))
               == getattr(fresh, f.name) for f in dataclasses.fields(kept))


def test_a_state_holds_until_its_valid_until_and_a_horizon_moves_it(tmp_path):
    summaries = [summarize(segment(tmp_path, far=True).path, 0)[0]]
    t, end, steps = NOW - 500, NOW + DAY + TIMESTAMP_AFTER_MAX_MS + 10_000, []
    while t < end:
        kept = partition_state("t", 0, summaries, CFG, t)
        until = valid_until_ms(kept, summaries, CFG, t)
        assert until > t
        for probe in {t + 1, (t + min(until, end)) // 2, min(until, end) - 1}:  # before it: the same state
            if probe < until:
                assert _same(kept, probe, partition_state("t", 0, summaries, CFG, probe)), (t, probe)
        steps.append(until)
        t = until
    # where the state moved: the pending tombstones' and marker's horizons passing, and the far horizon no
    # longer rejected (a clean starting then could have set it)
    assert {NOW + 2_000, NOW + 5_000, NOW + 1} <= set(steps)
    moved = [u for u in steps if u < end and not _same(partition_state("t", 0, summaries, CFG, u - 1), u,
                                                       partition_state("t", 0, summaries, CFG, u))]
    assert NOW + 2_000 in moved and NOW + 5_000 in moved

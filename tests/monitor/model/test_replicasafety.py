"""monitor.model.replicasafety: a replica out of the ISR against delete.retention.ms and
producer.id.expiration.ms, and the comparison of a follower's copy with its leader's."""

from __future__ import annotations

import math

from monitor.model.replicasafety import IN_SYNC, OUT, PAST_LIMIT, assess, resurrected


def test_in_sync_out_and_past_the_limit():
    assert assess(None, 86_400_000).state == IN_SYNC
    half = assess(43_200.0, 86_400_000, 172_800_000)
    assert (half.state, half.ratio, half.past_producer_expiration) == (OUT, 0.5, False)
    past = assess(86_400.0, 86_400_000)
    assert past.state == PAST_LIMIT and past.ratio == 1.0
    assert past.past_producer_expiration is None  # unknown limit: unknown, not false
    assert assess(90_000.0, 10**12, 86_400_000).past_producer_expiration is True
    assert assess(1.0, 0).state == PAST_LIMIT and math.isinf(assess(1.0, 0).ratio)  # delete.retention.ms 0


def test_a_lower_bound_and_offline_are_carried():
    r = assess(10.0, 100_000, lower_bound=True, offline=True)
    assert r.lower_bound and r.offline and r.state == OUT


def test_only_keys_alive_on_the_follower_and_absent_from_the_leader_are_resurrected():
    leader = {b"kept": (10, False), b"deleted-but-tombstone-kept": (11, True)}
    follower = {b"kept": (3, False), b"deleted-but-tombstone-kept": (4, False), b"gone": (5, False),
                b"gone-here-too": (6, True), b"retained-away": (0, False)}
    found = resurrected(leader, follower, leader_log_start=1, leader_log_end=12)
    assert found.keys == (b"gone",)  # a tombstone the leader still holds is not lost; a follower tombstone neither
    text = found.explain("orders", 0, "1", "3")
    assert "Cause:" in text and "Evidence:" in text and "Fix:" in text and "b'gone'" in text
    assert resurrected(leader, {b"kept": (3, False)}).keys == ()
    assert "nothing came back" in resurrected(leader, {}).explain("orders", 0, "1", "3")

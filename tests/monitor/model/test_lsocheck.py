"""The log's LSO against the leader's (``monitor.model.lsocheck``): when they agree despite the time between
the two reads, which side holds a disagreement, which source the model uses, and how long the same
disagreement lasts."""

from __future__ import annotations

import pytest

from monitor.model.lsocheck import LeaderLso, LsoDisagreement, check_lso, persist


def leader(lso: int, hw: int, leader_id: int = 1) -> LeaderLso:
    return LeaderLso(leader_id, lso, hw, 0.0)


@pytest.mark.parametrize("log_lso, log_end, admin, agree, held_by", [
    (100, 100, leader(130, 130), True, None),  # no open transaction on either side: ends differ by writes
    (50, 100, leader(50, 130), True, None),  # the same open transaction holds both
    (50, 100, leader(130, 130), False, "log"),  # the log sees a transaction open the leader sees ended
    (50, 100, leader(70, 130), False, "log"),
    (100, 100, leader(40, 130), False, "admin"),  # the leader holds an LSO the log sees stable
    (60, 100, leader(40, 130), False, "admin"),
])
def test_agreement_and_the_side_that_holds_the_lower_lso(log_lso, log_end, admin, agree, held_by):
    c = check_lso(log_lso, log_end, 0, admin, "1")
    assert (c.agree, c.held_by, c.source, c.log, c.admin, c.value) == (agree, held_by, "log", log_lso,
                                                                      admin.last_stable_offset, log_lso)
    assert (c.detail is None) == agree
    if not agree:
        assert str(min(log_lso, admin.last_stable_offset)) in c.detail


def test_no_admin_value_is_nothing_to_compare():
    for admin in (None, leader(-1, -1)):
        c = check_lso(50, 100, 0, admin, "1")
        assert (c.source, c.agree, c.admin, c.held_by, c.value) == ("log", None, None, None, 50)


@pytest.mark.parametrize("faults, broker_id, admin, source", [
    (0, "1", leader(70, 130), "log"),  # a complete fold wins even on the leader
    (2, "1", leader(70, 130), "admin"),  # faults on the leader's own replica: its LSO, within the log read
    (2, "2", leader(70, 130), "log"),  # a follower: the leader's LSO is not this replica's
    (2, None, leader(70, 130), "log"),  # unknown broker id: cannot tell
    (2, "1", leader(130, 130), "admin"),  # past the end read: a damaged tail shortens the log read
])
def test_the_admin_value_wins_only_over_an_incomplete_fold_on_the_leader(faults, broker_id, admin, source):
    c = check_lso(50, 100, faults, admin, broker_id)
    assert c.source == source
    assert c.value == (admin.last_stable_offset if source == "admin" else 50)
    if source == "admin":
        assert "read fault" in c.detail and "this broker leads" in c.detail


def test_a_disagreement_lasts_while_the_same_side_holds_the_same_offset():
    stuck = check_lso(50, 100, 0, leader(130, 130), "1")
    first = persist(None, stuck, 10.0)
    assert first == LsoDisagreement("log", 50, 10.0)
    # the leader moves on (new writes), the log still holds 50: the same disagreement, since 10
    assert persist(first, check_lso(50, 120, 0, leader(160, 160), "1"), 20.0) is first
    # the log now holds another offset (a new short transaction): a new disagreement
    assert persist(first, check_lso(55, 120, 0, leader(160, 160), "1"), 30.0) == LsoDisagreement("log", 55, 30.0)
    # the other side holds: new, too
    assert persist(first, check_lso(100, 100, 0, leader(50, 130), "1"), 40.0) == LsoDisagreement("admin", 50, 40.0)
    assert persist(first, check_lso(100, 100, 0, leader(130, 130), "1"), 50.0) is None  # agree
    assert persist(first, check_lso(50, 100, 0, None, "1"), 60.0) is None  # nothing to compare

"""The delete-horizon line and the verdict on tombstones past their horizon (monitor.verdicts.horizons), on
states built from segments as a broker stores them (tests/monitor/model/test_horizoncount.py)."""

from __future__ import annotations

from dataclasses import replace

from horizonfixtures import CFG, NOW, segment, state_of
from monitor.model.summary import scan_headers, summarize
from monitor.verdicts.causes import explain
from monitor.contract.units import timestamp_utc as utc
from monitor.verdicts.horizons import describe


def test_the_line_says_each_state_and_when_the_first_stamped_one_goes(tmp_path):
    st = state_of([summarize(segment(tmp_path).path, 0)[0]])
    ev = explain(st, CFG, now_ms=NOW).evidence
    line = describe(ev["delete_horizons"])
    assert line.startswith("tombstones: 2 never stamped (the next clean that keeps them stamps them; removable "
                           "1 d after it), 3 stamped, the first removable from " + utc(NOW + 5_000))
    assert "1 past its horizon (the next clean removes it); markers: 1 never stamped" in line
    assert "1 stamped, the first removable from " + utc(NOW + 2_000) in line


def test_headers_first_says_tombstones_are_unknown_not_none(tmp_path):
    st = state_of([scan_headers(segment(tmp_path).path, 0)[0]])
    line = describe(explain(st, CFG, now_ms=NOW).evidence["delete_horizons"])
    assert line.startswith("tombstones: unknown until the partition's records are read")
    assert "markers: 1 never stamped" in line


def test_tombstones_past_horizon_on_a_quiet_partition_say_why_and_how_to_get_a_clean(tmp_path):
    st = state_of([summarize(segment(tmp_path).path, 0)[0]])
    c = explain(st, CFG, now_ms=NOW, bootstrap="b:9092")
    past = c.evidence["tombstones_past_horizon"]
    assert c.cause == "active_segment_only" and past["tombstones_past_delete_horizon"] == 1
    assert "a passed horizon does not make a log eligible" in past["why"]
    assert "--add-config max.compaction.lag.ms=86400000" in past["fix"][0] and "b:9092" in past["fix"][0]


def test_when_a_clean_is_waited_for_the_fix_is_the_causes(tmp_path):
    st = replace(state_of([summarize(segment(tmp_path).path, 0)[0]]), eligible=True, cleanable_bytes=10,
                 uncleaned_bytes=10)
    c = explain(st, CFG, now_ms=NOW)
    assert c.cause == "waiting"
    assert c.evidence["tombstones_past_horizon"]["fix"] == list(c.fix)


def test_no_verdict_without_tombstones_past_horizon(tmp_path):
    st = state_of([scan_headers(segment(tmp_path).path, 0)[0]])  # unknown tombstones: no verdict either
    assert "tombstones_past_horizon" not in explain(st, CFG, now_ms=NOW).evidence

"""monitor.verdicts.accuracy: two audit runs paired partition by partition; only a partition the cleaner has been
over since the first run carries an error, a partition written to between the runs or not yet cleaned
says so, and the totals sum the cleaned ones. (The same on two real audits and the Audit page:
tests/dashboards/test_audit_accuracy.py.)"""

from __future__ import annotations

import pytest

from monitor.verdicts.accuracy import CLEANED, MISSING, NOT_CLEANED, WRITTEN, baseline, compare_runs, totals


def part(p: int, bytes_: int, reclaimable: float = 0.0, *, checkpoint=None, uncleanable=100, last_ts=1000,
         topic="orders") -> dict:
    return {"topic": topic, "partition": p, "bytes": bytes_, "reclaimable_bytes": reclaimable,
            "checkpoint_offset": checkpoint, "first_uncleanable_offset": uncleanable, "last_timestamp": last_ts}


def test_each_status_and_the_totals():
    before = [part(0, 10_000, 8_000), part(1, 10_000, 5_000), part(2, 10_000, 4_000), part(3, 10_000, 1_000),
              part(4, 500, 0.0, uncleanable=0)]
    after = [part(0, 2_500, checkpoint=100), part(1, 6_000, checkpoint=40),  # the cleaner stopped at 40 < 100
             part(2, 12_000, checkpoint=100, last_ts=2000),  # written to after the first run
             part(4, 500, uncleanable=0)]  # 3 is gone; 4: nothing below its active segment, nothing to clean
    rows = {r.partition: r for r in compare_runs(before, after)}
    assert {p: r.status for p, r in rows.items()} == {0: CLEANED, 1: NOT_CLEANED, 2: WRITTEN, 3: MISSING, 4: CLEANED}
    r0 = rows[0]
    assert (r0.actual_bytes, r0.error_bytes, r0.error_ratio) == (7_500, -500.0, pytest.approx(-500 / 8_000))
    assert "40, below 100" in rows[1].detail and rows[1].error_bytes is None
    assert "from 1000 to 2000" in rows[2].detail and rows[2].actual_bytes is None
    assert (rows[4].actual_bytes, rows[4].error_ratio) == (0, None) and "nothing was predicted" in rows[4].detail
    tot = totals(list(rows.values()))
    assert (tot.partitions, tot.predicted_bytes, tot.actual_bytes, tot.error_bytes) == (2, 8_000.0, 7_500, -500.0)
    assert tot.left_out == {NOT_CLEANED: 1, WRITTEN: 1, MISSING: 1}


def test_a_moved_active_segment_is_a_write_too():
    [r] = compare_runs([part(0, 10_000, 8_000)], [part(0, 4_000, checkpoint=150, uncleanable=150)])
    assert r.status == WRITTEN and "first uncleanable offset moved from 100 to 150" in r.detail


def test_nothing_cleaned_has_no_ratio():
    tot = totals(compare_runs([part(0, 10, 5.0)], []))
    assert (tot.partitions, tot.error_ratio, tot.left_out) == (0, None, {MISSING: 1})


def test_the_baseline_is_the_run_just_before():
    runs = ["run-20261123T070000Z", "run-20261123T070000Z-2", "run-20261123T080000Z"]
    assert baseline(runs, "run-20261123T080000Z") == "run-20261123T070000Z-2"
    assert baseline(runs, "run-20261123T070000Z-2") == "run-20261123T070000Z"
    assert baseline(runs, "run-20261123T070000Z") is None


def test_a_run_whose_topic_config_was_unknown_predicted_nothing_and_is_left_out():
    from monitor.verdicts.accuracy import NO_PREDICTION

    why = "delete.retention.ms, min.compaction.lag.ms unknown: the admin API did not answer: 127.0.0.1:9"
    before = [part(0, 10_000, 8_000), {**part(1, 10_000), "reclaimable_bytes": None, "config_unknown_reason": why}]
    after = [part(0, 2_500, checkpoint=100), part(1, 2_000, checkpoint=100)]
    rows = {r.partition: r for r in compare_runs(before, after)}
    assert rows[1].status == NO_PREDICTION and rows[1].predicted_bytes is None and rows[1].detail == why
    assert rows[1].error_bytes is None and rows[1].actual_bytes is None  # no 0 passed off as a prediction
    tot = totals(list(rows.values()))
    assert (tot.partitions, tot.predicted_bytes, tot.left_out) == (1, 8_000.0, {NO_PREDICTION: 1})


def test_charted_rows_and_how_an_error_is_written():
    from monitor.verdicts.accuracy import charted, signed_bytes, signed_ratio

    rows = {r.partition: r.as_dict() for r in compare_runs(
        [part(0, 10_000, 8_000), part(1, 10_000, 0.0), part(2, 10_000, 0.0), part(3, 10_000, 1_000)],
        [part(0, 3_000, checkpoint=100), part(1, 9_000, checkpoint=100), part(2, 10_000, checkpoint=100),
         part(3, 10_000, checkpoint=50)])}
    # predicted, or reclaimed without a prediction: charted; nothing either way, or not cleaned: table only
    assert [p for p, r in sorted(rows.items()) if charted(r)] == [0, 1]
    assert signed_bytes(-1000) == "-1000 B" and signed_bytes(3 * 2**20) == "+3.0 MiB"  # units.bytes_iec's sizes
    assert signed_ratio(-0.125) == "-12 %" and signed_ratio(0.5) == "+50 %"
    # two significant digits, never scientific notation (``.2g`` wrote 1.5 as "+1.5e+02 %")
    assert signed_ratio(1.5) == "+150 %" and signed_ratio(-0.000018) == "-0.0018 %" and signed_ratio(0) == "+0 %"

"""The audit runs as the Audit pages read them (``dashboards.auditruns``): the runs newest first, each
one's status from its marker alone (a run being written, one whose file was truncated, one whose marker
is damaged), a complete run's summary, and a run's rows with unknowns as None. The pages themselves, on
a real audit's output, are tests/dashboards/test_audit_runs.py."""

from __future__ import annotations

import json
import math

import pandas as pd

from dashboards import auditruns
from monitor.contract.auditrun import COMPLETE, DAMAGED, IN_PROGRESS, MARKER, SUMMARY, marker_text

NUMBERS = {"bytes": 10, "reclaimable_bytes": 4, "estimated_clean_seconds": 0.5, "tombstones_past_retention": 0,
           "faults": 0}


def _run(base, name: str, *, marker: bool = True) -> None:
    run = base / name
    run.mkdir(parents=True)
    (run / SUMMARY).write_text(json.dumps(NUMBERS))
    if marker:
        (run / MARKER).write_text(marker_text(name, 0, {SUMMARY: (run / SUMMARY).stat().st_size}))


def test_the_runs_newest_first_whatever_their_state(tmp_path):
    for name in ("run-20261101T000000Z", "run-20261126T000000Z"):
        _run(tmp_path, name)
    _run(tmp_path, "run-20261127T000000Z", marker=False)  # being written
    (tmp_path / ".tmp-run-20261128T000000Z").mkdir()  # the audit's temporary folder is not a run
    (tmp_path / "notes").mkdir()
    assert auditruns.audit_runs(str(tmp_path)) == ["run-20261127T000000Z", "run-20261126T000000Z",
                                                   "run-20261101T000000Z"]
    assert auditruns.audit_runs(str(tmp_path / "missing")) == [] and auditruns.audit_runs(None) == []


def test_a_runs_status_from_its_marker(tmp_path):
    _run(tmp_path, "run-a")
    _run(tmp_path, "run-b", marker=False)
    _run(tmp_path, "run-c")
    (tmp_path / "run-c" / SUMMARY).write_text("{}")  # truncated after the marker was written
    _run(tmp_path, "run-d")
    (tmp_path / "run-d" / MARKER).write_bytes(b"\xff\x00")
    assert auditruns.audit_status(str(tmp_path), "run-a") == (COMPLETE, [])
    assert auditruns.audit_status(str(tmp_path), "run-b")[0] == IN_PROGRESS
    status, problems = auditruns.audit_status(str(tmp_path), "run-c")
    assert status == DAMAGED and problems[0].startswith(f"{SUMMARY}: 2 bytes, the run wrote")
    status, problems = auditruns.audit_status(str(tmp_path), "run-d")
    assert status == DAMAGED and problems[0].startswith(f"{MARKER}: binary content")


def test_a_complete_run_gives_its_summary_and_empty_tables_it_lacks(tmp_path):
    _run(tmp_path, "run-a")
    got = auditruns.audit_run(str(tmp_path), "run-a")
    assert got["status"] == COMPLETE and got["summary"]["reclaimable_bytes"] == 4
    assert got["partitions"].empty and got["problems"] == []


def test_rows_with_unknowns_as_none():
    df = pd.DataFrame({"topic": ["t", "u"], "reclaimable_bytes": [4.0, math.nan]})
    assert auditruns.records(df) == [{"topic": "t", "reclaimable_bytes": 4.0},
                                     {"topic": "u", "reclaimable_bytes": None}]

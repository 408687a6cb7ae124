"""A run folder's marker and summary, read as the dashboard reads them: every damage a named problem."""

import json

import pytest

from monitor.contract.auditrun import MARKER, SUMMARY, RunDamaged, marker_text, read_marker, read_summary, size_problems

GOOD = {"bytes": 10, "reclaimable_bytes": 4, "estimated_clean_seconds": 0.5, "tombstones_past_retention": 0,
        "faults": 0, "run": "run-x"}


def test_marker_round_trip_and_sizes():
    files = {"summary.json": 120, "topics/part-0.parquet": 900}
    assert read_marker(marker_text("run-x", 1, files).encode()) == files
    assert size_problems(files, dict(files)) == []
    got = [str(p) for p in size_problems(files, {"summary.json": 60})]
    assert got == ["summary.json: 60 bytes, the run wrote 120 (truncated or overwritten)",
                   "topics/part-0.parquet: missing"]


@pytest.mark.parametrize("raw, reason", [
    (b"", "empty"),
    (json.dumps(GOOD).encode()[:25], "not JSON: Unterminated string starting at byte 14 (truncated?)"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "binary content, not JSON text (byte 0)"),
    (b"[1, 2]", "a JSON list, expected an object"),
    (b'"text"', "a JSON str, expected an object"),
    (json.dumps({**GOOD, "bytes": None}).encode(), "bytes is null"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "faults"}).encode(), "faults is missing"),
    (json.dumps({**GOOD, "reclaimable_bytes": "4"}).encode(), "reclaimable_bytes is '4', not a number"),
    (b'{"bytes": NaN, "reclaimable_bytes": 1, "estimated_clean_seconds": 1, "tombstones_past_retention": 1, '
     b'"faults": 0}', "bytes is nan, not a number"),
])
def test_damaged_summary_names_file_and_problem(raw, reason):
    with pytest.raises(RunDamaged) as exc:
        read_summary(raw)
    assert exc.value.file == SUMMARY and exc.value.reason.startswith(reason), exc.value.reason
    assert str(exc.value) == f"{SUMMARY}: {exc.value.reason}"


def test_damaged_marker():
    for raw in (b"", b"[]", b'{"files": [1]}', b'{"files": {"a": "1"}}', b"\xff\xfe"):
        with pytest.raises(RunDamaged) as exc:
            read_marker(raw)
        assert exc.value.file == MARKER


def test_good_summary():
    assert read_summary(json.dumps(GOOD).encode()) == GOOD


def test_unknown_configs_lists_the_topics_with_unknown_values_and_why():
    from monitor.contract.auditrun import unknown_configs

    summary = {"topic_configs": {"b": {"source": "unknown", "unknown": ["delete.retention.ms"], "reason": "refused"},
                                 "a": {"source": "config", "unknown": ["min.compaction.lag.ms"], "reason": "down"},
                                 "c": {"source": "admin", "unknown": [], "reason": None}}}
    assert unknown_configs(summary) == {"a": "down", "b": "refused"}
    assert list(unknown_configs(summary)) == ["a", "b"]
    assert unknown_configs({}) == {}  # a run from before #22

"""The Audit page on run folders that are half written or damaged (issue #17): a run without its
completion marker is in progress, a damaged one is damaged with the file named, never an exception.
One real audit (local Spark) is copied and damaged in each way."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dashpages import page
from monitor.contract import units
from monitor.contract.auditrun import MARKER, SUMMARY, marker_text, read_marker
from recordfixtures import three_v2_batches

pytestmark = pytest.mark.slow  # one real Spark audit (the module's fixture)


@pytest.fixture(scope="module")
def audited(_spark_sessions, tmp_path_factory):
    """A complete run of a real audit over one partition's segment."""
    spark = _spark_sessions.get(kafka_source=False)  # the session's shared local Spark (the spark fixture is per test)
    from spark_analysis.job import build_parser, run

    tmp = tmp_path_factory.mktemp("audited")
    three_v2_batches(tmp / "logs" / "orders-0" / "00000000000000000000.log")
    base, summary = run(build_parser().parse_args(["--input", str(tmp / "logs"), "--out", str(tmp / "out")]),
                        spark=spark)
    return Path(base), summary


def copy_run(audited, tmp_path: Path, name: str = "run-20990101T000000Z") -> Path:
    dst = tmp_path / "audits" / name
    shutil.copytree(audited[0], dst)
    return dst


def reseal(run: Path) -> None:
    """The marker rewritten to the files' present sizes: a damage the marker does not see, so the
    content checks must."""
    files = {str(f.relative_to(run)): f.stat().st_size for f in run.rglob("*") if f.is_file()}
    files.pop(MARKER)
    (run / MARKER).write_text(marker_text(run.name, 0, files))


def a_parquet_file(run: Path, table: str = "topics") -> Path:
    return next(p for p in (run / table).iterdir() if p.suffix == ".parquet")


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


SUMMARY_DAMAGE = {
    "truncated": (lambda p: truncate(p), "not JSON: "),
    "empty": (lambda p: p.write_bytes(b""), "empty"),
    "a list": (lambda p: p.write_text(json.dumps([json.loads(p.read_text())])), "a JSON list, expected an object"),
    "binary": (lambda p: p.write_bytes(b"\x00\xff" * 64), "binary content, not JSON text (byte 1)"),
    "null fields": (lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "bytes": None,
                                                       "faults": None})), "bytes is null"),
}


def test_a_complete_run_shows_its_figures(audited, tmp_path, monkeypatch):
    run = copy_run(audited, tmp_path)
    at = page("audit", monkeypatch, audit_dir=run.parent)
    assert not at.error and not at.info
    got = {m.label: m.value for m in at.metric}
    assert got["Scanned"] == units.bytes_iec(audited[1]["bytes"])


def test_a_run_from_before_the_counted_projections_shows_its_estimate_as_such(audited, tmp_path, monkeypatch):
    """A run written before #32 has ``projected_bytes`` (a byte-share estimate) where a run now has
    ``next_clean_bytes`` and ``settled_bytes``: the page shows it, labelled estimated, with no settled size."""
    import pyarrow.parquet as pq

    run = copy_run(audited, tmp_path)
    path = a_parquet_file(run)
    t = pq.read_table(path)
    old = t.drop_columns([c for c in t.column_names if c in {"settled_bytes", "projection_method",
                                                             "next_clean_unknown_partitions",
                                                             "settled_unknown_partitions"}])
    old = old.rename_columns(["projected_bytes" if c == "next_clean_bytes" else c for c in old.column_names])
    pq.write_table(old, path)
    summary = json.loads((run / SUMMARY).read_text())
    for k in ("next_clean_bytes", "settled_bytes", "projection_method", "next_clean_unknown_partitions",
              "settled_unknown_partitions"):
        summary.pop(k)
    summary["projected_bytes"] = 300.5
    (run / SUMMARY).write_text(json.dumps(summary))
    reseal(run)
    at = page("audit", monkeypatch, audit_dir=run.parent)
    assert not at.exception
    got = {m.label: m.value for m in at.metric}
    assert (got["Projection"], got["Settled"]) == ("estimated", "unknown")
    assert any("A run from before issue 32" in c.value for c in at.caption)


def test_a_run_without_its_marker_is_in_progress_and_the_newest_complete_one_is_shown(audited, tmp_path, monkeypatch):
    done = copy_run(audited, tmp_path, "run-20990101T000000Z")
    writing = copy_run(audited, tmp_path, "run-20990101T000001Z")
    (writing / MARKER).unlink()
    at = page("audit", monkeypatch, audit_dir=done.parent)
    assert at.selectbox(key="audit.run").value == done.name  # the newest complete run, not the one being written
    assert at.selectbox(key="audit.run").options == [f"{writing.name} (in progress)", done.name]
    at.selectbox(key="audit.run").set_value(writing.name).run()
    assert not at.exception
    assert [i.value for i in at.info] == [f"Run {writing.name} is in progress: no {MARKER}: the run is still being "
                                          f"written, failed, or predates completion markers (run the audit again)"]
    assert not at.metric


@pytest.mark.parametrize("damage", sorted(SUMMARY_DAMAGE))
@pytest.mark.parametrize("sealed", [False, True], ids=["marker-disagrees", "marker-agrees"])
def test_a_damaged_summary_is_named(audited, tmp_path, monkeypatch, damage, sealed):
    run = copy_run(audited, tmp_path)
    wrote = read_marker((run / MARKER).read_bytes())[SUMMARY]
    do, reason = SUMMARY_DAMAGE[damage]
    do(run / SUMMARY)
    if sealed:
        reseal(run)
    at = page("audit", monkeypatch, audit_dir=run.parent)
    assert len(at.error) == 1 and not at.metric
    msg = at.error[0].value
    size = (run / SUMMARY).stat().st_size
    assert msg.startswith(f"Run {run.name} is damaged: {SUMMARY}: ")
    if sealed:
        assert reason in msg, msg
    else:
        assert f"{SUMMARY}: {size} bytes, the run wrote {wrote} (truncated or overwritten)" in msg


@pytest.mark.parametrize("sealed", [False, True], ids=["marker-disagrees", "marker-agrees"])
def test_a_truncated_parquet_table_is_named(audited, tmp_path, monkeypatch, sealed):
    run = copy_run(audited, tmp_path)
    part = a_parquet_file(run)
    truncate(part)
    if sealed:
        reseal(run)
    at = page("audit", monkeypatch, audit_dir=run.parent)
    msg = at.error[0].value
    if sealed:
        assert msg.startswith(f"Run {run.name} is damaged: topics: cannot read the Parquet table (")
    else:
        assert f"topics/{part.name}: {part.stat().st_size} bytes, the run wrote" in msg


def test_a_damaged_marker_or_a_missing_file_is_named(audited, tmp_path, monkeypatch):
    run = copy_run(audited, tmp_path)
    (run / MARKER).write_bytes(b"[]")
    at = page("audit", monkeypatch, audit_dir=run.parent)
    assert at.error[0].value == f"Run {run.name} is damaged: {MARKER}: a JSON list, expected an object"
    shutil.rmtree(run)
    run = copy_run(audited, tmp_path)
    (run / "report.html").unlink()
    at = page("audit", monkeypatch, audit_dir=run.parent)
    assert at.error[0].value == f"Run {run.name} is damaged: report.html: missing"

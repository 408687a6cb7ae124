"""The HTML report's earlier run (``spark_analysis.earlier``): the newest complete run before this one in
the output location, by the completion marker's rule (``monitor.contract.auditrun``), and the report's section
comparing it (``monitor.verdicts.accuracy``, as the Audit page). Run folders written here with pyarrow, as the
audit lays them out; a real two-run audit's report is in tests/dashboards/test_audit_accuracy.py."""

from __future__ import annotations

import html
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from monitor.verdicts.accuracy import CLEANED, NOT_CLEANED
from monitor.contract.auditrun import MARKER, marker_text
from spark_analysis.earlier import earlier_run
from spark_analysis.report import ACCURACY_TITLE, NO_EARLIER, accuracy_html


def partition(topic: str, bytes_: int, reclaimable: float | None, checkpoint: int | None, uncleanable: int) -> dict:
    return {"topic": topic, "partition": 0, "bytes": bytes_, "reclaimable_bytes": reclaimable,
            "checkpoint_offset": checkpoint, "first_uncleanable_offset": uncleanable, "last_timestamp": 1000,
            "config_unknown_reason": None}


def write_run(out: Path, name: str, rows: list[dict], marker: bool = True) -> Path:
    run = out / name
    (run / "partitions").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), run / "partitions" / "part-0.parquet")
    (run / "summary.json").write_text("{}")
    if marker:
        files = {str(f.relative_to(run)): f.stat().st_size for f in run.rglob("*") if f.is_file()}
        (run / MARKER).write_text(marker_text(name, 0, files))
    return run


BEFORE = [partition("orders", 5000, 1000.0, None, 40), partition("users", 3000, 500.0, None, 30)]
AFTER = [partition("orders", 4100, 0.0, 40, 40), partition("users", 3000, 500.0, 10, 30)]


def test_the_newest_complete_earlier_run_is_chosen(tmp_path):
    out = tmp_path / "audits"
    write_run(out, "run-20260101T000000Z", [partition("orders", 1, 1.0, None, 0)])
    write_run(out, "run-20260102T000000Z", BEFORE)
    write_run(out, "run-20260103T000000Z", BEFORE, marker=False)  # in progress
    damaged = write_run(out, "run-20260103T000001Z", BEFORE)
    (damaged / "summary.json").write_text("{ }")  # another size than the marker lists
    write_run(out, "run-20260105T000000Z", AFTER)  # later than the run being written
    (out / ".tmp-run-20260104T000000Z").mkdir()  # the run being written, under its temporary name
    got = earlier_run(pafs.LocalFileSystem(), str(out), "run-20260104T000000Z")
    assert got.run == "run-20260102T000000Z" and got.error is None
    assert got.partitions == BEFORE


def test_no_earlier_run_and_an_unreadable_one(tmp_path):
    out = tmp_path / "audits"
    fs = pafs.LocalFileSystem()
    assert earlier_run(fs, str(out), "run-20260104T000000Z") is None  # no output location yet
    write_run(out, "run-20260105T000000Z", AFTER)
    assert earlier_run(fs, str(out), "run-20260104T000000Z") is None  # only a later run
    run = write_run(out, "run-20260101T000000Z", BEFORE)
    part = run / "partitions" / "part-0.parquet"
    part.write_bytes(part.read_bytes()[:20])
    files = {str(f.relative_to(run)): f.stat().st_size for f in run.rglob("*") if f.is_file() and f.name != MARKER}
    (run / MARKER).write_text(marker_text(run.name, 0, files))  # sealed as it is: the marker cannot tell
    got = earlier_run(fs, str(out), "run-20260104T000000Z")
    assert got.run == run.name and got.partitions is None
    assert got.error.startswith(f"{run.name}/partitions: cannot read the Parquet table (")
    assert "No comparison: " + html.escape(got.error) in accuracy_html("run-20260104T000000Z", AFTER, got)


def test_the_report_section_compares_as_the_page_does(tmp_path):
    out = tmp_path / "audits"
    write_run(out, "run-20260102T000000Z", BEFORE)
    got = earlier_run(pafs.LocalFileSystem(), str(out), "run-20260104T000000Z")
    section = accuracy_html("run-20260104T000000Z", AFTER, got)
    # orders: predicted 1000, reclaimed 5000 - 4100 = 900, error -100 = -10 %; users: the cleaner's
    # checkpoint (10) is below what the prediction covered (30): left out
    assert section.startswith(f"<h2>{ACCURACY_TITLE}</h2>")
    assert ("Run run-20260102T000000Z predicted 1,000 B reclaimable in the 1 partition(s) the cleaner has been "
            "over since; the broker reclaimed 900 B: error -100 B (-10 %); left out: 1 not cleaned yet.") in section
    assert section.count('<div class="chart">') == 1 and "orders-0" in section and "users-0" not in section.split(
        "<table>")[0]
    body = section.split("<tbody>")[1]
    assert body.index(f"<td>{CLEANED}</td>") < body.index(f"<td>{NOT_CLEANED}</td>")
    assert "<td>orders</td><td>0</td><td>cleaned</td><td>1,000 B</td><td>5,000 B</td><td>4,100 B</td><td>900 B</td>" \
           "<td>-100 B</td><td>-10 %</td>" in body


def test_with_no_earlier_run_the_section_says_so_in_one_line():
    section = accuracy_html("run-20260104T000000Z", AFTER, None)
    assert section == f"<h2>{ACCURACY_TITLE}</h2><p>{NO_EARLIER}</p>"

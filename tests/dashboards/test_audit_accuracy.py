"""The Audit page's accuracy panel from two real audit runs (issue 15): a partition the real broker
holds from its cleaner (``min.cleanable.dirty.ratio=1.0``) is audited, released and cleaned by the
broker, and audited again. The panel pairs the runs (``monitor.verdicts.accuracy``): the prediction is the
first run's reclaimable bytes, what the broker reclaimed is the partition's ``.log`` bytes before less
after, measured here on the copies the runs read. Both runs' summary.json read by a strict JSON parser."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from dashpages import page
from kafkatools import (cleaner_checkpoint, compacted, copy_partition, create_topic, partition_dir, set_topic_config,
                        unique_topic, wait_cleaned_up_to_active, write_rounds)
from monitor.contract import units
from monitor.verdicts.accuracy import CLEANED, signed_bytes
from monitor.kafka.checkpoint import format_checkpoint
from monitor.model.estimate import UNTHROTTLED

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def log_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.glob("*.log"))


def strict(text: str):
    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def two_runs(kafka, _spark_sessions, tmp_path_factory):
    from spark_analysis.job import build_parser, run

    spark = _spark_sessions.get(kafka_source=False)
    tmp = tmp_path_factory.mktemp("accuracy")
    t = create_topic(kafka.bootstrap, unique_topic("accuracy"), **compacted(**{"min.cleanable.dirty.ratio": 1.0}))
    write_rounds(kafka.bootstrap, t, 4, keys=300)  # four rolled rounds of the same keys: three superseded
    out = tmp / "audits"

    def audit(name: str) -> tuple[Path, Path]:
        root = tmp / name
        part = copy_partition(partition_dir(kafka.log_dir, t), root)
        cp = cleaner_checkpoint(kafka.log_dir, t)
        if cp is not None:  # the broker's own checkpoint of this partition, as its log dir holds it
            (root / "cleaner-offset-checkpoint").write_text(format_checkpoint({(t, 0): cp}))
        base, _ = run(build_parser().parse_args(["--input", str(root), "--out", str(out)]), spark=spark)
        return Path(base), part

    before = audit("before")
    set_topic_config(kafka.bootstrap, t, **{"min.cleanable.dirty.ratio": 0.01})
    wait_cleaned_up_to_active(kafka.log_dir, t)
    after = audit("after")
    return t, out, before, after


def test_both_summaries_are_strict_json(two_runs):
    _, _, (run1, _), (run2, _) = two_runs
    for run in (run1, run2):
        summary = strict((run / "summary.json").read_text())
        assert summary["cleaner"]["io_max_bytes_per_second"] is None  # no throttle given: null, with why
        assert summary["cleaner"]["io_max_bytes_per_second_reason"] == UNTHROTTLED


def test_the_audit_page_shows_predicted_against_reclaimed(two_runs, monkeypatch):
    t, out, (run1, part1), (run2, part2) = two_runs
    predicted = pq.read_table(run1 / "partitions").to_pylist()[0]["reclaimable_bytes"]
    reclaimed = log_bytes(part1) - log_bytes(part2)  # the files themselves, not the audit's figures
    assert predicted > 0 and reclaimed > 0

    at = page("audit", monkeypatch, audit_dir=out)
    assert at.selectbox(key="audit.run").value == run2.name  # the newest run, compared with the one before
    assert at.selectbox(key="audit.accuracy.baseline").value == run1.name
    assert "Prediction against what the broker reclaimed" in [h.value for h in at.subheader]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Predicted (cleaned partitions)"] == units.bytes_iec(predicted)
    assert metrics["Reclaimed by the broker"] == units.bytes_iec(reclaimed)
    error = reclaimed - predicted
    assert metrics["Error"] == signed_bytes(error)
    # the page's conclusions say it first, in the same words
    assert (f"Projection accuracy: run {run1.name} predicted {units.bytes_iec(predicted)} for the 1 partition the "
            f"cleaner has been over since; the broker reclaimed {units.bytes_iec(reclaimed)} (error "
            f"{signed_bytes(error)}") in at.markdown[0].value
    table = next(d.value for d in at.dataframe if "Error" in d.value.columns)
    [row] = table.to_dict("records")
    assert (row["Topic"], row["Partition"], row["Status"]) == (t, "0", CLEANED)
    assert (row["Predicted"], row["Reclaimed"], row["Error"]) == (units.bytes_iec(predicted),
                                                                 units.bytes_iec(reclaimed), signed_bytes(error))
    details = next(d.value for d in at.table if "Size in the earlier run" in d.value.columns)  # in its expander
    [row] = details.to_dict("records")
    assert (row["Size in the earlier run"], row["Size in this run"]) == (units.bytes_iec(log_bytes(part1)),
                                                                          units.bytes_iec(log_bytes(part2)))
    charts = [c for c in at.get("plotly_chart")]
    assert any("Prediction against what the broker reclaimed" in c.proto.spec for c in charts)


def said(v: float) -> str:  # bytes as the report writes them: exact below a MiB
    return f"{v:,.0f} B" if abs(v) < 2**20 else f"{v / 2**20:,.1f} MiB"


def test_the_later_runs_html_report_compares_as_the_page_does(two_runs):
    """The report of the run after the clean holds the same comparison as the Audit page, with its chart;
    the first run's report says in one line that it has none to compare with."""
    from spark_analysis.report import ACCURACY_TITLE, NO_EARLIER

    t, _, (run1, part1), (run2, part2) = two_runs
    predicted = pq.read_table(run1 / "partitions").to_pylist()[0]["reclaimable_bytes"]
    reclaimed = log_bytes(part1) - log_bytes(part2)
    error = reclaimed - predicted
    report = (run2 / "report.html").read_text()
    section = report.split(f"<h2>{ACCURACY_TITLE}</h2>")[1].split("<h2>")[0]
    assert (f"Run {run1.name} predicted {said(predicted)} reclaimable in the 1 partition(s) the cleaner has been "
            f"over since; the broker reclaimed {said(reclaimed)}: error {signed_bytes(error)}") in section
    assert f"less its size in {run2.name}" in section
    assert f"<td>{t}</td><td>0</td><td>{CLEANED}</td><td>{said(predicted)}</td><td>{said(log_bytes(part1))}</td>" \
           f"<td>{said(log_bytes(part2))}</td><td>{said(reclaimed)}</td>" in section
    assert '<div class="chart">' in section and f"{ACCURACY_TITLE}, per partition" in section
    first = (run1 / "report.html").read_text()
    assert f"<h2>{ACCURACY_TITLE}</h2><p>{NO_EARLIER}</p>" in first


def test_the_first_run_alone_says_what_the_panel_needs(two_runs, monkeypatch):
    _, out, (run1, _), _ = two_runs
    at = page("audit", monkeypatch, audit_dir=out)
    at.selectbox(key="audit.run").select(run1.name).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Needs an earlier complete run" in c.value for c in at.caption)

"""The Audit page's what-if section (#34): a real audit (local Spark) of two compacted topics whose
records were written 10 and 50 ms apart (a write rate the uncleaned tail tells) shows, for the topic
picked (the one a setting changes most first), the chart of size against cleaner bytes per day and the
table of every setting, labelled, with the assumptions; a run from before the table says so instead."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

from dashboards import figures
from dashpages import page
from monitor.contract.auditrun import MARKER, SUMMARY, marker_text
from monitor.contract.whatif import ASSUMPTIONS, CHART_TITLE
from recordfixtures import items, v2, write

pytestmark = pytest.mark.slow  # one real Spark audit


@pytest.fixture(scope="module")
def audited(_spark_sessions, tmp_path_factory):
    spark = _spark_sessions.get(kafka_source=False)
    from spark_analysis.job import build_parser, run

    tmp = tmp_path_factory.mktemp("whatif-page")
    part = tmp / "logs" / "orders-0"
    for base in (0, 300):  # two segments of 100 keys updated round robin, 15 batches of 20 records each
        write(part / f"{base:020d}.log", [v2(items(range(o, o + 20), distinct=100, step_ms=10))
                                          for o in range(base, base + 300, 20)])
    users = tmp / "logs" / "users-0"  # a second topic: the page charts and lists one at a time
    write(users / f"{0:020d}.log", [v2(items(range(o, o + 20), distinct=40, step_ms=50)) for o in range(0, 200, 20)])
    base, _ = run(build_parser().parse_args(["--input", str(tmp / "logs"), "--out", str(tmp / "out")]), spark=spark)
    return tmp / "out", base


def test_the_page_charts_and_lists_each_setting(audited, monkeypatch):
    out, base = audited
    every = pq.read_table(f"{base}/whatif").to_pandas()
    first = figures.whatif_topics(figures.whatif_points(every))[0]
    written = [r for r in every.to_dict("records") if r["topic"] == first]
    current = next(r for r in written if r["setting"] == "current")
    assert current["write_bytes_per_second"] > 0 and current["size_bytes"] > 0 and current["unknown_reason"] is None
    at = page("audit", monkeypatch, audit_dir=out)
    picker = at.selectbox(key="audit.whatif.topic")
    assert picker.options == figures.whatif_topics(figures.whatif_points(every)) and set(picker.options) == {
        "orders", "users"} and picker.value == first
    assert "What if: other cleaner settings" in [h.value for h in at.subheader]
    assert any(ASSUMPTIONS in c.value for c in at.caption)
    table = next(d.value for d in at.dataframe if "Cleans per day" in d.value.columns)
    shown = table.to_dict("records")
    assert len(shown) == len(written) and {r["Setting"] for r in shown} >= {
        "current", "min.cleanable.dirty.ratio 0.1", "min.cleanable.dirty.ratio 0.75", "segment.ms 3.5 d",
        "segment.ms 14 d", "delete.retention.ms 12 h", "delete.retention.ms 2 d"}
    ratios = sorted((r for r in written if r["setting"] == "min.cleanable.dirty.ratio"),
                    key=lambda r: r["value"])
    assert [r["cleans_per_day"] for r in ratios] == sorted((r["cleans_per_day"] for r in ratios), reverse=True)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    chart = next(c for c in charts if CHART_TITLE in json.dumps(c.get("layout", {}).get("title", "")))
    # one point per distinct figure, labelled with its settings (all of them in the hover), axes with units
    [trace] = chart["data"]
    assert trace["name"] == first and trace["mode"] == "markers+text" and len(trace["x"]) >= 2
    assert sum(len(c.split("<br>")) for c in trace["customdata"]) == len(written)
    assert any(t.startswith("current") for t in trace["text"])
    assert chart["layout"]["xaxis"]["title"]["text"].endswith("B")
    assert chart["layout"]["yaxis"]["title"]["text"].endswith("B/day")
    other = next(t for t in picker.options if t != first)  # picked: the other topic's chart and rows
    picker.set_value(other).run()
    [trace] = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                   if CHART_TITLE in json.dumps(json.loads(c.proto.spec).get("layout", {}).get("title", "")))["data"]
    assert trace["name"] == other
    table = next(d.value for d in at.dataframe if "Cleans per day" in d.value.columns)
    assert len(table) == len(every[every["topic"] == other]) and "Topic" not in table.columns


def test_a_run_from_before_the_table_says_so(audited, monkeypatch, tmp_path):
    out, base = audited
    run = tmp_path / "audits" / "run-20990101T000000Z"
    shutil.copytree(base, run)
    shutil.rmtree(run / "whatif")
    summary = json.loads((run / SUMMARY).read_text())
    summary["tables"].remove("whatif")
    (run / SUMMARY).write_text(json.dumps(summary))
    files = {str(f.relative_to(run)): f.stat().st_size for f in run.rglob("*") if f.is_file() and f.name != MARKER}
    (run / MARKER).write_text(marker_text(run.name, 0, files))
    at = page("audit", monkeypatch, audit_dir=run.parent)
    assert "Not in this run: audits from before issue 34 have no what-if table." in [c.value for c in at.caption]
    assert not any("Cleans per day" in d.value.columns for d in at.dataframe)

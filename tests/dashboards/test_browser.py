"""The dashboard served for real over a real broker's state and read in headless Chromium (Debian's
chromium and chromedriver) as a person reads it (issue #41, item 6): every page, at 1366 and 1920
pixels, without an exception box, ``None``/``nan``/scientific notation in its text, charts or any
data-grid cell, a table that scrolls sideways, nor a deprecation line in the dashboard's log
(tests/browsercheck.py); each live page with its panels, each a chart or the sentence saying why there
is none. The screenshots are kept in test-artifacts/screenshots/PAGE-WIDTH.png; the problems found,
one a line, in test-artifacts/screenshots/problems.txt."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from browsercheck import log_problems, page_problems
from cli import demo as cli_demo
from cli import demo_scenario
from kafkatools import unique_topic, wait_records
from procs import prometheus_query
from tests_support_browser import NO_AUTOREFRESH, PAGES, WIDTHS, browser, screenshot, visit, widen
from waiting import wait_for

pytestmark = pytest.mark.kafka
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
# page path -> panels, each a chart or the sentence saying why there is none (too few samples yet, nothing
# to show): the heatmap; the six broker gauges; the causes, the heatmap and the picked partition's history;
# tombstone history, per-topic bars, the delete-horizon states and the consumer risk
PANELS = {"": 1, "brokers": 6, "partitions": 3, "tombstones": 4}
# the pages that show the audit's runs (their view reads dashboards.auditruns: the Audit page's), by their
# path (a view's file name); the others read Prometheus and the collector, and are read while the audit runs
VIEWS = Path(__file__).resolve().parents[2] / "dashboards" / "views"
AUDIT_PAGES = {v.stem for v in VIEWS.glob("*.py") if "auditruns" in v.read_text()}
# the sentence is markdown or a caption (st.caption's own test id, not stMarkdownContainer)
NO_CHART = """return Array.from(document.querySelectorAll(
    '[data-testid="stMarkdownContainer"], [data-testid="stCaptionContainer"]'))
  .filter(e => /: no chart|no chart,|No partition's delete-horizon series/.test(e.innerText)).length;"""


def test_every_page_reads_right_in_chromium_at_1366_and_1920_pixels(kafka, tmp_path, monkeypatch):
    for name, value in NO_AUTOREFRESH.items():  # for the dashboard the stack starts (it inherits the environment)
        monkeypatch.setenv(name, value)
    assert AUDIT_PAGES and AUDIT_PAGES <= {p.path for p in PAGES}, AUDIT_PAGES  # else read before its run
    t = demo_scenario.FAST
    names = demo_scenario.Names(unique_topic("browser"))  # this test's own topics on the session broker
    demo_scenario.create_topics(kafka.bootstrap, t, names=names)
    work = demo_scenario.Workload(kafka.bootstrap, t, names=names)
    work.start()
    stop, audited, audit = threading.Event(), [], None
    try:
        wait_records(kafka.bootstrap, names.flood, 3, 50)
        demo_scenario.stopped_consumer(kafka.bootstrap, names.flood, names.group)  # the tombstones page's consumer risk
        with cli_demo.stack(kafka, tmp_path / "stack", t) as run, browser() as d:
            # the Audit page's run: the demo's audit (local Spark) of the broker's log dir, beside the rest
            audit = threading.Thread(target=lambda: audited.append(
                cli_demo.run_audit(kafka, run.audit_dir, tmp_path / "audit.log", stop)))
            audit.start()
            scraped = f'count_over_time(kafka_compaction_partition_cleanable_ratio{{topic="{names.healthy}"}}[5m])'
            wait_for(lambda: any(float(r["value"][1]) >= 3 for r in prometheus_query(run.prometheus_url, scraped)),
                     60, f"three scrapes of {names.healthy} in Prometheus (history to draw)")
            problems = []

            def read(pages):  # each page loaded (its script run) once, then laid out at the other width
                for page in pages:
                    for width in WIDTHS:
                        state = visit(d, run.dashboard_url, page, width) if width == WIDTHS[0] else widen(d, width)
                        screenshot(d, SHOTS / f"{page.name}-{width}.png")
                        assert state["title"], f"{page.title} at {width} px: no title"
                        if page.path in PANELS and state["charts"] + d.execute_script(NO_CHART) != PANELS[page.path]:
                            problems.append(f"{page.title} ({width} px) page: {state['charts']} chart(s) and "
                                            f"{d.execute_script(NO_CHART)} sentence(s) saying why none, "
                                            f"for {PANELS[page.path]} panels")
                        problems.extend(page_problems(d, f"{page.title} ({width} px)"))

            # the pages that read no audit run while the audit runs (a minute of Spark the test waited out
            # idle before), the Audit page once its run is written
            read([p for p in PAGES if p.path not in AUDIT_PAGES])
            audit.join(600)
            assert audited and audited[0] in (0, 1), f"the audit failed: {(tmp_path / 'audit.log').read_text()[-3000:]}"
            assert any((r / "_SUCCESS").exists() for r in run.audit_dir.glob("run-*")), "no complete audit run"
            read([p for p in PAGES if p.path in AUDIT_PAGES])
            problems += log_problems(tmp_path / "stack" / "dashboard.log")
            (SHOTS / "problems.txt").write_text("".join(f"{p}\n" for p in problems))
            assert problems == [], "\n".join(problems)
    finally:
        stop.set()  # an audit still under way is stopped (its process group)
        if audit is not None:
            audit.join(60)
        work.stop()

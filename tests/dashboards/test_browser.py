"""The dashboard served for real and opened in headless Chromium (Debian's chromium and
chromedriver): every page renders its charts without a Streamlit error box. Screenshots are kept
in test-artifacts/screenshots/."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli import demo as cli_demo
from cli import demo_scenario
from kafkatools import unique_topic, wait_records
from procs import prometheus_query
from tests_support_browser import browser, wait_rendered
from waiting import wait_for

pytestmark = pytest.mark.kafka
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
# path -> panels, each a chart or the sentence saying why there is none (too few samples yet, nothing to show):
# the heatmap; the six broker gauges; the causes, the heatmap and the picked partition's history; tombstone
# history, per-topic bars, the delete-horizon states and the consumer risk; none on the audit page
PAGES = {"": 1, "brokers": 6, "partitions": 3, "tombstones": 4, "audit": 0}
NO_CHART = """return Array.from(document.querySelectorAll('[data-testid="stMarkdownContainer"]'))
  .filter(e => /: no chart|no chart,|No partition's delete-horizon series/.test(e.innerText)).length;"""


def test_every_page_renders_in_chromium(kafka, tmp_path):
    t = demo_scenario.FAST
    names = demo_scenario.Names(unique_topic("browser"))  # this test's own topics on the session broker
    demo_scenario.create_topics(kafka.bootstrap, t, names=names)
    work = demo_scenario.Workload(kafka.bootstrap, t, names=names)
    work.start()
    try:
        wait_records(kafka.bootstrap, names.flood, 3, 50)
        demo_scenario.stopped_consumer(kafka.bootstrap, names.flood, names.group)  # the tombstones page's third chart
        with cli_demo.stack(kafka, tmp_path / "stack", t) as run, browser() as d:
            scraped = f'count_over_time(kafka_compaction_partition_cleanable_ratio{{topic="{names.healthy}"}}[5m])'
            wait_for(lambda: any(float(r["value"][1]) >= 3 for r in prometheus_query(run.prometheus_url, scraped)),
                     60, f"three scrapes of {names.healthy} in Prometheus (history to draw)")
            SHOTS.mkdir(parents=True, exist_ok=True)
            for path, charts in PAGES.items():
                name = path or "overview"
                d.get(f"{run.dashboard_url}/{path}")
                state = wait_rendered(d, 0)
                d.save_screenshot(str(SHOTS / f"{name}.png"))
                assert state["errors"] == 0, f"{name}: Streamlit error box shown"
                assert state["charts"] + d.execute_script(NO_CHART) == charts, f"{name}: {state}"
                assert state["title"], name
    finally:
        work.stop()

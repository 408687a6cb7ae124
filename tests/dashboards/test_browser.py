"""The dashboard served for real and opened in headless Chromium (Debian's chromium and
chromedriver): every page renders its charts without a Streamlit error box. Screenshots are kept
in test-artifacts/screenshots/."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cli import demo as cli_demo
from tests_support_browser import browser, wait_rendered  # noqa: F401

pytestmark = pytest.mark.kafka
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
PAGES = {"": 1, "brokers": 6, "partitions": 1, "tombstones": 3}


def test_every_page_renders_in_chromium(kafka, tmp_path):
    t = cli_demo.FAST
    cli_demo.create_topics(kafka.bootstrap, t)
    work = cli_demo.Workload(kafka.bootstrap, t)
    work.start()
    try:
        with cli_demo.stack(kafka, tmp_path / "stack", t) as run, browser() as d:
            time.sleep(3 * t.scrape_s + 2)  # a few scrapes, so there is history to draw
            SHOTS.mkdir(parents=True, exist_ok=True)
            for path, min_charts in {**PAGES, "audit": 0}.items():
                name = path or "overview"
                d.get(f"{run.dashboard_url}/{path}")
                state = wait_rendered(d, min_charts)
                d.save_screenshot(str(SHOTS / f"{name}.png"))
                assert state["errors"] == 0, f"{name}: Streamlit error box shown"
                assert state["charts"] >= min_charts, f"{name}: {state}"
                assert state["title"], name
    finally:
        work.stop()

"""Headless Chromium through Debian's chromedriver, with the flags this machine needs."""

from __future__ import annotations

import shutil
import tempfile
import time
from contextlib import contextmanager

import pytest

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1500,2600", "--hide-scrollbars"]


@contextmanager
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.fail("chromium and chromedriver are missing: ./dev installs Debian's chromium and chromium-driver")
    o = Options()
    o.binary_location = chromium
    for f in FLAGS:
        o.add_argument(f)
    profile = tempfile.mkdtemp(prefix="chromium-")
    o.add_argument(f"--user-data-dir={profile}")
    d = webdriver.Chrome(service=Service(driver), options=o)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


RENDER_STATE = """
const q = s => document.querySelectorAll(s);
return {
  title: (document.querySelector('h1') || {}).innerText || '',
  skeleton: q('[data-testid="stSkeleton"]').length,
  running: q('[data-testid="stStatusWidget"]').length,
  errors: q('[data-testid="stException"]').length,
  charts: q('.js-plotly-plot .main-svg').length > 0 ? q('.js-plotly-plot').length : 0,
};
"""


def wait_rendered(d, min_charts: int, timeout: float = 60) -> dict:
    """Wait until the page has its title, no skeleton, no running script and enough charts."""
    deadline = time.time() + timeout
    state = {}
    while time.time() < deadline:
        state = d.execute_script(RENDER_STATE)
        if state["title"] and not state["skeleton"] and not state["running"] and state["charts"] >= min_charts:
            time.sleep(1.0)  # let plotly finish drawing
            return d.execute_script(RENDER_STATE)
        time.sleep(0.5)
    return state

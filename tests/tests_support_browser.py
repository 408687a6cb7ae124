"""Headless Chromium through Debian's chromedriver, with the flags this machine needs."""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from waiting import wait_for

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
    # a page's own script may hold Chromium's main thread for long on a loaded 2-core machine (drawing a
    # page of grids and charts): the checks' scripts wait for it, up to this, not Selenium's 30 s
    d.set_script_timeout(SCRIPT_TIMEOUT)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


SCRIPT_TIMEOUT = 180

RENDER_STATE = """
const q = s => document.querySelectorAll(s);
return {
  title: (document.querySelector('h1') || {}).innerText || '',
  // Streamlit's own word for its script: 'initial' before the first run, 'running', 'notRunning' after
  script: (document.querySelector('[data-testid="stApp"]') || {getAttribute: () => ''})
    .getAttribute('data-test-script-state'),
  skeleton: q('[data-testid="stSkeleton"]').length,
  running: q('[data-testid="stStatusWidget"]').length,
  errors: q('[data-testid="stException"]').length,
  charts: q('.js-plotly-plot').length,
  drawn: Array.from(q('.js-plotly-plot')).filter(p => p.querySelector('.main-svg')).length,
  grids: q('[data-testid="stDataFrame"]').length,
  // a data grid draws its canvas, and the accessibility table in it, a moment after the script's run
  grids_drawn: Array.from(q('[data-testid="stDataFrame"]')).filter(g => g.querySelector('table[role="grid"]')).length,
};
"""


def wait_rendered(d, min_charts: int, timeout: float = 60) -> dict:
    """Wait until the page has its title, its script has run (Streamlit's ``data-test-script-state``),
    no skeleton, no running script, at least ``min_charts`` charts, every one drawn by Plotly, and every
    data grid drawn; return that state."""
    last = {}

    def rendered():
        s = last["state"] = d.execute_script(RENDER_STATE)
        done = (s["title"] and s["script"] == "notRunning" and not s["skeleton"] and not s["running"]
                and s["drawn"] == s["charts"] >= min_charts and s["grids_drawn"] == s["grids"])
        return s if done else None

    try:
        return wait_for(rendered, timeout, f"the page {d.current_url} rendered with {min_charts} or more charts drawn",
                        interval=0.5)
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}; its state then: {last.get('state')}") from None


# --------------------------------------------------------------------------- the dashboard's pages


@dataclass(frozen=True)
class Page:
    """One page of the dashboard (dashboards/app.py): its URL path (Streamlit's, from the view's file
    name), the file name of its screenshots and the name a person knows it by."""
    path: str
    name: str
    title: str


PAGES = (Page("", "overview", "Overview"), Page("brokers", "brokers", "Brokers"),
         Page("partitions", "partitions", "Partitions"), Page("tombstones", "tombstones", "Tombstones"),
         Page("config_review", "config-review", "Config review"), Page("audit", "audit", "Audit"))
# the laptop and the desktop: no table may scroll sideways at the first
WIDTHS = (1366, 1920)
# the dashboard's switch for its refresh reruns (dashboards/ui.py auto_refresh), for ``visit``
NO_AUTOREFRESH = {"COMPACTION_MONITOR_NO_AUTOREFRESH": "1"}
# a screenshot is the whole page, down to this height
MAX_HEIGHT = 4000

CONTENT_HEIGHT = """
const els = [document.documentElement, ...document.querySelectorAll(
  '[data-testid="stMain"], [data-testid="stAppViewContainer"], [data-testid="stMainBlockContainer"]')];
return Math.max(...els.map(e => e.scrollHeight));
"""


def viewport(d, width: int, height: int) -> None:
    """The page's viewport exactly ``width`` x ``height`` CSS pixels (a window's size includes its frame)."""
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def visit(d, base_url: str, page: Page, width: int, min_charts: int = 0, timeout: float = 180) -> dict:
    """``page`` opened at ``width`` pixels and rendered (``wait_rendered``, within ``timeout`` seconds: a
    page's script takes long on a loaded 2-core machine), then the viewport made as tall as the page (up
    to ``MAX_HEIGHT``), so that a screenshot shows all of it; its render state. Run the dashboard with
    ``NO_AUTOREFRESH`` in its environment: a page rerun every few seconds while its grids are read
    changes under the reader, and one whose run outlasts the interval is never done."""
    viewport(d, width, 1000)
    d.get(f"{base_url}/{page.path}")
    wait_rendered(d, min_charts, timeout)
    viewport(d, width, min(max(d.execute_script(CONTENT_HEIGHT), 600), MAX_HEIGHT))
    return wait_rendered(d, min_charts, timeout)  # charts redraw for the new height


# every drawn chart as wide as its box: Plotly has redrawn for the viewport's width (Streamlit re-renders a
# chart when its container's width changes)
CHARTS_FIT = """
return Array.from(document.querySelectorAll('.js-plotly-plot')).every(p => {
  const svg = p.querySelector('.main-svg');
  return svg && Math.abs(Number(svg.getAttribute('width')) - p.clientWidth) <= 1;
});
"""


def widen(d, width: int, min_charts: int = 0, timeout: float = 180) -> dict:
    """The page ``visit`` opened, laid out again at ``width`` pixels without loading it again: a page's
    script does not know the window's width (Streamlit runs it on the server), so a second load would
    only run it again; the layout, the grids and the charts follow the viewport. Waits until the document
    is ``width`` wide and every chart redrawn to its box, then as ``visit`` does; its render state."""
    viewport(d, width, 1000)
    wait_for(lambda: d.execute_script("return document.documentElement.clientWidth") == width
             and d.execute_script(CHARTS_FIT), timeout, f"{d.current_url} laid out at {width} px", interval=0.25)
    wait_rendered(d, min_charts, timeout)
    viewport(d, width, min(max(d.execute_script(CONTENT_HEIGHT), 600), MAX_HEIGHT))
    return wait_rendered(d, min_charts, timeout)


def screenshot(d, path: Path) -> Path:
    """The viewport saved as a small PNG (256 colours, optimized: a dashboard's flat colours survive it)."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    raw = path.with_suffix(".raw.png")
    d.save_screenshot(str(raw))
    with Image.open(raw) as im:
        im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    raw.unlink()
    return path

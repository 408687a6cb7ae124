"""The Prometheus URL the demo prints is a page that opens on the Prometheus that runs: Debian's 2.x
package, built without the React UI, answers 404 on ``/alerts`` (its alerts page is ``/classic/alerts``);
Prometheus 3 serves ``/alerts``. ``cli.demo.alerts_page`` asks the running one. Here a real Prometheus (the
one ./dev installs) on loopback, with the demo's own Prometheus config."""

from __future__ import annotations

import shutil
import urllib.error
import urllib.request

import pytest
import yaml

from cli.demo import ALERTS_PAGES, alerts_page, prometheus_config
from cli.demo_scenario import FAST
from localkafka.processes import free_port, process

pytestmark = pytest.mark.slow  # starts Prometheus


def status(url: str) -> int:
    try:
        return urllib.request.urlopen(url, timeout=10).status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_printed_alerts_page_opens(tmp_path):
    prom = shutil.which("prometheus")
    if prom is None:
        pytest.fail("prometheus is missing: ./dev installs Debian's prometheus")
    rules = tmp_path / "rules.yml"
    rules.write_text("groups: []\n")
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(prometheus_config(rules, free_port(), FAST)))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with process([prom, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'data'}",
                  f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"], tmp_path / "prometheus.log",
                 f"{url}/-/ready"):
        page = alerts_page(url)
        assert page is not None and page.removeprefix(url) in ALERTS_PAGES
        assert status(page) == 200
        assert "alert" in urllib.request.urlopen(page, timeout=10).read().decode().lower()
        answers = {path: status(url + path) for path in ALERTS_PAGES}
        # the first page that answers is the one printed: where /alerts is a 404 (Debian's 2.x), /classic/alerts
        assert page == url + next(p for p in ALERTS_PAGES if answers[p] == 200), answers
        assert alerts_page(f"http://127.0.0.1:{free_port()}") is None  # nothing listening: no page, not a guess

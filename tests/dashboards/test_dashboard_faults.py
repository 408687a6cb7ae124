"""The dashboard against a source that misbehaves (tests/faultserver.py as the collector's /metrics):
each page shows the source down with the reason, within the refresh interval, and raises nothing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from dashboards import sources
from faultserver import FaultServer

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

VIEWS = Path(__file__).resolve().parents[2] / "dashboards" / "views"
REFRESH = 2  # seconds: the fetch deadline is capped by it (sources.fetch_deadline)


@pytest.fixture
def fs():
    server = FaultServer(ok_body=b"kafka_compaction_source_up{kind=\"jmx\"} 1.0\n")
    yield server
    server.close()


def page(name: str, monkeypatch, **env) -> AppTest:
    from streamlit.testing.v1 import AppTest  # here, not at the top: collecting the fast tier skips its 0.4 s

    monkeypatch.setenv("COMPACTION_MONITOR_NO_AUTOREFRESH", "1")
    monkeypatch.setenv("COMPACTION_MONITOR_REFRESH", str(REFRESH))
    for var in ("COMPACTION_MONITOR_CONFIG", "COMPACTION_MONITOR_PROMETHEUS_URL", "COMPACTION_MONITOR_COLLECTOR_URL",
                "COMPACTION_MONITOR_AUDIT_DIR"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(f"COMPACTION_MONITOR_{k.upper()}", str(v))
    at = AppTest.from_file(str(VIEWS / f"{name}.py"), default_timeout=60)  # a hang past it fails the test
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_fetch_deadline_is_within_the_refresh_interval():
    assert sources.fetch_deadline(10, 2) == 2 and sources.fetch_deadline(10, 30) == 10
    assert sources.fetch_deadline(7, 0) == 7


@pytest.mark.parametrize("mode, kind", [("drip", "deadline"), ("drip_headers", "deadline"), ("hang", "timeout"),
                                        ("endless", "too_large"), ("claims_huge", "too_large"), ("close", "read"),
                                        ("500", "http"), ("garbage", "parse"), ("html", "parse")])
@pytest.mark.parametrize("where", ["collector_url", "prometheus_url"])
def test_a_bad_source_is_shown_down_with_the_reason(fs, monkeypatch, mode, kind, where):
    fs.set_mode(mode)
    url = fs.url if where == "collector_url" else fs.url.removesuffix("/metrics")
    at = page("overview", monkeypatch, **{where: url})
    errors = [e.value for e in at.error]
    assert any(f"({kind})" in e and fs.url.removesuffix("/metrics") in e for e in errors), errors
    fs.set_mode("ok")


def test_the_page_recovers_with_the_source(fs, monkeypatch):
    fs.set_mode("drip")
    assert page("overview", monkeypatch, collector_url=fs.url).error
    fs.set_mode("ok")
    at = page("overview", monkeypatch, collector_url=fs.url)
    assert not [e.value for e in at.error if "Cannot read the data source" in e.value]


def _collector(body: str) -> FaultServer:
    return FaultServer(ok_body=body.encode())


@pytest.mark.parametrize("jmx_up, said", [
    (None, "No broker cleaner gauges: give the collector each broker's JMX exporter or Jolokia URL."),
    (0.0, "No broker cleaner gauges in this refresh: their source is down (above); they come back with its next "
          "good refresh."),
])
def test_the_brokers_page_tells_no_gauges_configured_from_their_source_down(monkeypatch, jmx_up, said):
    """Without the cleaner gauges the page said "give the collector each broker's JMX URL" even when one was
    given and its source was only down this refresh (the collector drops a down source's samples)."""
    lines = ['kafka_compaction_source_up{cluster="c",source="log_dirs:c:1",kind="log_dirs"} 1.0']
    if jmx_up is not None:
        lines.append(f'kafka_compaction_source_up{{cluster="c",source="jmx:c:1",kind="jmx"}} {jmx_up}')
    server = _collector("\n".join(lines) + "\n")
    try:
        at = page("brokers", monkeypatch, collector_url=server.url)
        assert [i.value for i in at.info if i.value.startswith("No broker cleaner gauges")] == [said]
    finally:
        server.close()

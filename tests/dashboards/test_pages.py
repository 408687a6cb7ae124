"""Every dashboard page with AppTest, fed by a real collector and a real Prometheus over the local
broker running the demo's scenario; and the unreachable, empty and no-audit states."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from cli import demo as cli_demo

pytestmark = pytest.mark.kafka
VIEWS = Path(__file__).resolve().parents[2] / "dashboards" / "views"


def wait_alerts(prom: str, names: set, timeout: float = 120) -> list:
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = cli_demo.alerts(prom)
        if names <= {a["labels"]["alertname"] for a in got if a["state"] == "firing"}:
            return got
        time.sleep(1)
    raise TimeoutError(f"alerts {names} did not fire; last: {[(a['labels']['alertname'], a['state']) for a in got]}")


@pytest.fixture(scope="module")
def live(kafka, tmp_path_factory):
    """The demo's scenario on the session broker, with the collector and Prometheus over it."""
    t = cli_demo.FAST
    cli_demo.create_topics(kafka.bootstrap, t)
    work = cli_demo.Workload(kafka.bootstrap, t)
    work.start()
    time.sleep(2)
    cli_demo.stopped_consumer(kafka.bootstrap)
    try:
        with cli_demo.stack(kafka, tmp_path_factory.mktemp("dash"), t, dashboard=False) as run:
            wait_alerts(run.prometheus_url, {"ConsumerMayMissTombstones"})
            yield run
    finally:
        work.stop()


def page(name: str, monkeypatch, **env) -> AppTest:
    monkeypatch.setenv("COMPACTION_MONITOR_NO_AUTOREFRESH", "1")
    for var in ("COMPACTION_MONITOR_CONFIG", "COMPACTION_MONITOR_PROMETHEUS_URL", "COMPACTION_MONITOR_COLLECTOR_URL",
                "COMPACTION_MONITOR_AUDIT_DIR"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(f"COMPACTION_MONITOR_{k.upper()}", str(v))
    at = AppTest.from_file(str(VIEWS / f"{name}.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def charts(at) -> int:
    return len(at.get("plotly_chart"))


def test_overview_from_prometheus(live, monkeypatch):
    """The on-call engineer opens the overview: the held-back topic and the stopped group are counted,
    and Prometheus' firing alerts are listed; the counts are those of the alerts."""
    at = page("overview", monkeypatch, prometheus_url=live.prometheus_url)
    m = metrics(at)
    assert int(m["Held back"]) >= 3  # the three partitions of demo.lagging-cdc, held by min.compaction.lag.ms
    assert int(m["Groups at risk"]) >= 1 and int(m["Dead threads"]) == 0 and int(m["Sources down"]) == 0
    alerts = at.dataframe[0].value
    firing = alerts[alerts["state"] == "firing"]
    assert "ConsumerMayMissTombstones" in set(firing["alert"])
    groups = firing[firing["alert"] == "ConsumerMayMissTombstones"][["cluster", "group"]].drop_duplicates()
    assert int(m["Groups at risk"]) == len(groups) and cli_demo.GROUP in set(groups["group"])
    lagging = firing[firing["alert"] == "CompactionLagging"]
    assert int(m["Lagging partitions"]) == len(lagging[["cluster", "broker", "topic", "partition"]].drop_duplicates())
    # held back by design is not lagging: nothing of it is cleanable (other tests' topics may lag)
    assert cli_demo.LAGGING not in set(lagging["topic"]) and cli_demo.HEALTHY not in set(lagging["topic"])
    assert charts(at) == 1  # the heatmap
    assert not any("not evaluated" in c.value for c in at.caption)


def test_brokers_show_gauges_over_time(live, monkeypatch):
    at = page("brokers", monkeypatch, prometheus_url=live.prometheus_url)
    assert charts(at) == 6


def test_partitions_table_and_drill_down(live, monkeypatch):
    """The engineer finds which partitions are uncleaned and why: min.compaction.lag.ms holds them back,
    so nothing is cleanable and they are not lagging."""
    at = page("partitions", monkeypatch, prometheus_url=live.prometheus_url)
    table = at.dataframe[0].value
    lag = table[table["topic"] == cli_demo.LAGGING]
    assert len(lag) == 3 and (lag["uncleaned_ratio"] == 1.0).all() and (lag["cleanable_ratio"] == 0.0).all()
    assert (lag["blocked"] == "min_compaction_lag").all() and not lag["lagging"].any()
    assert (lag["threshold"] == 0.5).all() and (lag["uncleaned_bytes"] > 0).all() and (lag["cleanable_bytes"] == 0).all()
    at.selectbox(key="partitions.pick").set_value(f"{cli_demo.LAGGING}-1").run()
    assert not at.exception
    assert any("min_compaction_lag" in w.value for w in at.warning)
    assert metrics(at)["Uncleaned ratio"] == "1.00" and metrics(at)["Kafka's cleanable ratio"] == "0.00"
    at.multiselect(key="partitions.topics").set_value([cli_demo.HEALTHY]).run()
    assert set(at.dataframe[0].value["topic"]) == {cli_demo.HEALTHY}


def test_tombstones_and_groups_at_risk(live, monkeypatch):
    at = page("tombstones", monkeypatch, prometheus_url=live.prometheus_url)
    groups = [df for df in (d.value for d in at.dataframe) if "group" in df.columns and "time lag (s)" in df.columns]
    assert groups and cli_demo.GROUP in set(groups[0]["group"])
    assert (groups[0][groups[0]["group"] == cli_demo.GROUP]["time lag (s)"] > 4).all()  # > delete.retention.ms
    assert charts(at) >= 3  # history, per-topic bars, consumer risk


def test_collector_only_evaluates_alerts_in_python(live, monkeypatch):
    """Without Prometheus the pages still show health, from the collector's current values."""
    at = page("overview", monkeypatch, collector_url=live.collector_url)
    alerts = at.dataframe[0].value
    assert "ConsumerMayMissTombstones" in set(alerts["alert"])
    assert set(alerts["state"]) == {"active"}
    assert "TombstonesPilingUp" not in set(alerts["alert"])  # needs an hour of history, and says so
    assert any(c.value.startswith("TombstonesPilingUp is not evaluated without Prometheus") for c in at.caption)
    at = page("brokers", monkeypatch, collector_url=live.collector_url)
    assert charts(at) == 6


def _lines(chart, axis: str) -> list[float]:
    """Where a Plotly chart draws its horizontal (``y``) or vertical (``x``) threshold lines."""
    spec = json.loads(chart.proto.spec)
    return [sh[f"{axis}0"] for sh in spec["layout"].get("shapes", []) if sh.get(f"{axis}0") == sh.get(f"{axis}1")]


def test_thresholds_come_from_the_loaded_config(live, tmp_path, monkeypatch):
    """monitor.yaml's thresholds, not Thresholds() defaults, are what the pages draw and evaluate with."""
    cfg = tmp_path / "m.yaml"
    cfg.write_text(yaml.safe_dump({"thresholds": {"clean_time_seconds": 1234, "consumer_lag_warning_fraction": 0.3}}))
    at = page("brokers", monkeypatch, collector_url=live.collector_url, config=cfg)
    assert [1234] in [_lines(c, "y") for c in at.get("plotly_chart")]
    default = page("brokers", monkeypatch, collector_url=live.collector_url)
    assert [1234] not in [_lines(c, "y") for c in default.get("plotly_chart")]
    at = page("tombstones", monkeypatch, collector_url=live.collector_url, config=cfg)
    assert any(0.3 in _lines(c, "x") and 1 in _lines(c, "x") for c in at.get("plotly_chart"))
    monkeypatch.setenv("COMPACTION_MONITOR_CONFIG", str(cfg))
    monkeypatch.setenv("COMPACTION_MONITOR_COLLECTOR_URL", live.collector_url)
    from dashboards import data

    settings = data.settings_from_env()
    assert settings.thresholds.clean_time_seconds == 1234
    # the collector's real samples, evaluated with the loaded thresholds: the stopped group is past
    # delete.retention.ms whatever the warning fraction, so it stays critical
    alerts = data.alerts(settings, data.current(settings))
    risk = alerts[alerts["alert"] == "ConsumerMayMissTombstones"]
    assert set(risk[risk["group"] == cli_demo.GROUP]["severity"]) == {"critical"}


def test_unreachable_sources_say_so(monkeypatch):
    from localkafka.broker import free_port

    port = free_port()
    for env in ({"prometheus_url": f"http://127.0.0.1:{port}"}, {"collector_url": f"http://127.0.0.1:{port}/metrics"}):
        for name in ("overview", "brokers", "partitions", "tombstones"):
            at = page(name, monkeypatch, **env)
            assert any("Cannot read the data source" in e.value and str(port) in e.value for e in at.error), name
    at = page("overview", monkeypatch)
    assert any("no data source configured" in e.value for e in at.error)


def test_no_compacted_topic_and_no_audit(kafka, tmp_path, monkeypatch):
    """A collector that only sees a broker's JMX page: no partitions to show, and no audit yet."""
    port = cli_demo.free_port()
    cfg = {"listen": {"address": "127.0.0.1", "port": port},
           "clusters": [{"name": "j", "brokers": [{"id": 1, "jmx_url": kafka.jmx_url}]}]}
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(cfg))
    url = f"http://127.0.0.1:{port}/metrics"
    import sys

    with cli_demo.process([sys.executable, "-m", "cli", "collect", "--config", str(tmp_path / "m.yaml")],
                          tmp_path / "c.log", url):
        deadline = time.time() + 30
        while 'kind="jmx",source="jmx:j:1"} 1.0' not in urllib.request.urlopen(url).read().decode():
            assert time.time() < deadline, "the collector's JMX source never came up"
            time.sleep(0.2)
        for name in ("partitions", "tombstones"):
            at = page(name, monkeypatch, collector_url=url)
            assert any("No compacted partition" in i.value for i in at.info), name
        at = page("brokers", monkeypatch, collector_url=url)
        assert charts(at) == 6
    (tmp_path / "audits").mkdir()
    at = page("audit", monkeypatch, audit_dir=tmp_path / "audits")
    assert any("No audit yet" in i.value for i in at.info)


def test_audit_page_shows_runs_and_picks_older_ones(live, kafka, spark, tmp_path, monkeypatch):
    from spark_analysis.job import build_parser, run

    out = tmp_path / "audits"
    args = build_parser().parse_args(["--input", kafka.log_dir, "--out", str(out)])
    first, s1 = run(args, spark=spark)
    time.sleep(1.1)
    second, s2 = run(args, spark=spark)
    at = page("audit", monkeypatch, audit_dir=out)
    m = metrics(at)
    assert m["Scanned"].endswith("MiB") and charts(at) >= 2
    assert at.selectbox(key="audit.run").value == Path(second).name
    at.selectbox(key="audit.run").set_value(Path(first).name).run()
    assert not at.exception
    keys = at.dataframe[0].value
    assert cli_demo.LAGGING in set(keys["topic"])

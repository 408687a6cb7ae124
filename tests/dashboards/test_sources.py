"""The dashboard's sources (``dashboards.sources``) read into one shape over real HTTP: a collector's
text page and Prometheus' API answers (served by tests/faultserver.py, whose "ok" body is the answer),
only our series kept, a source that answers something else named with the reason, never its password."""

from __future__ import annotations

import json

import pytest

from dashboards import sources
from faultserver import FaultServer
from monitor.contract.metricnames import PREFIX

PAGE = (b'# TYPE kafka_compaction_source_up gauge\n'
        b'kafka_compaction_source_up{cluster="c",source="jmx:1",kind="jmx"} 1.0\n'
        b'# TYPE kafka_compaction_partition_log_bytes gauge\n'
        b'kafka_compaction_partition_log_bytes{cluster="c",broker="1",topic="t",partition="0"} 4096.0\n'
        b'# TYPE python_gc_objects_collected counter\n'
        b'python_gc_objects_collected_total{generation="0"} 7.0\n')


@pytest.fixture
def served():
    servers = []

    def serve(body: bytes) -> FaultServer:
        servers.append(FaultServer(ok_body=body))
        return servers[-1]

    yield serve
    for s in servers:
        s.close()


def test_a_collector_page_gives_our_series_only(served):
    got = sources.collector_samples(served(PAGE).url)
    assert sorted(got["name"]) == [PREFIX + "partition_log_bytes", PREFIX + "source_up"]
    assert set(sources.LABELS) <= set(got.columns)  # every label column, None where a series has none
    row = sources.metric(got, "partition_log_bytes").iloc[0]
    assert (row["topic"], row["partition"], row["value"], row["group"]) == ("t", "0", 4096.0, None)
    assert sources.metric(got, PREFIX + "source_up")["kind"].tolist() == ["jmx"]  # with or without the prefix


def test_prometheus_answers_in_the_same_shape(served):
    vector = {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": PREFIX + "source_up", "cluster": "c", "kind": "jmx"}, "value": [1.0, "1"]}]}}
    got = sources.prometheus_samples(served(json.dumps(vector).encode()).url.removesuffix("/metrics"))
    assert got[["name", "cluster", "kind", "value"]].values.tolist() == [[PREFIX + "source_up", "c", "jmx", 1.0]]
    matrix = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"cluster": "c"}, "values": [[100.0, "1"], [160.0, "2.5"]]}]}}
    hist = sources.prometheus_range(served(json.dumps(matrix).encode()).url.removesuffix("/metrics"), "q")
    assert hist["value"].tolist() == [1.0, 2.5] and str(hist["time"].dt.tz) == "UTC"
    alerts = {"status": "success", "data": {"alerts": [
        {"labels": {"alertname": "CompactionLagging", "severity": "warning", "topic": "t", "partition": "0"},
         "annotations": {"summary": "s"}, "state": "firing", "activeAt": "2026-11-26T00:00:00Z"},
        {"labels": {}, "state": "firing"}]}}  # no alertname: not an alert row
    rows = sources.prometheus_alerts(served(json.dumps(alerts).encode()).url.removesuffix("/metrics"))
    assert rows[["alert", "state", "topic", "since"]].values.tolist() == [
        ["CompactionLagging", "firing", "t", "2026-11-26T00:00:00Z"]]


@pytest.mark.parametrize("body, why", [
    (b"not json", "not JSON"),
    (json.dumps({"status": "error", "error": "bad query"}).encode(), "bad query"),
    (json.dumps({"status": "success", "data": {"result": [{"metric": {}}]}}).encode(), "not a Prometheus vector"),
])
def test_an_answer_that_is_not_prometheus_is_named(served, body, why):
    base = served(body).url.removesuffix("/metrics")
    with pytest.raises(sources.SourceError, match=why) as e:
        sources.prometheus_samples(base)
    assert e.value.kind == "parse" and f"{base}/api/v1/query" in str(e.value)


def test_a_source_error_never_shows_the_urls_password():
    with pytest.raises(sources.SourceError) as e:
        sources.collector_samples("http://monitor:s3cret@127.0.0.1:9/metrics")  # port 9: nothing listens
    assert e.value.kind == "connect" and "s3cret" not in str(e.value) and "127.0.0.1:9" in str(e.value)


def test_settings_come_from_monitor_yaml_and_the_environment(tmp_path, monkeypatch):
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("collector_url: http://127.0.0.1:9308/metrics\naudit_dir: /audits\n"
                   "timeouts:\n  dashboard: 20\n")
    monkeypatch.setenv("COMPACTION_MONITOR_CONFIG", str(cfg))
    monkeypatch.setenv("COMPACTION_MONITOR_REFRESH", "5")
    monkeypatch.setenv("COMPACTION_MONITOR_AUDIT_DIR", "/elsewhere")
    for var in ("COMPACTION_MONITOR_PROMETHEUS_URL", "COMPACTION_MONITOR_COLLECTOR_URL"):
        monkeypatch.delenv(var, raising=False)
    s = sources.settings_from_env()
    assert (s.mode, s.collector_url, s.audit_dir) == ("collector", "http://127.0.0.1:9308/metrics", "/elsewhere")
    assert s.fetch_deadline == 5  # timeouts.dashboard, capped by the refresh interval
    with pytest.raises(sources.SourceError, match="no data source configured"):
        sources.current(sources.Settings())

"""Every query of the Grafana dashboard parses and returns data from a real Prometheus.

No Grafana server can be installed on this machine (none in Debian's or any reachable registry), so,
as issue #15 allows, the dashboard is checked through Prometheus' HTTP API instead: a real Prometheus
(Debian's package), configured from deploy/prometheus.yml with the rendered rules loaded, scrapes the
real collector over the session's real broker, which holds a cleaned compacted topic with tombstones
and a consumer group lagging past delete.retention.ms. Each query of the committed dashboard JSON is
sent to ``/api/v1/query`` with the template variables substituted as Grafana substitutes them
(``$cluster`` -> the cluster picked, ``$__rate_interval`` -> a duration) and must parse and return at
least one series. The cluster variable's own query is answered too, and the alert panel keeps the
alert of a collector that does not answer its scrape (no cluster label) with a cluster picked. Queries whose data exists only in a
fault are checked for parsing only; they are listed in FAULT_ONLY with the reason, and the panel table
says the same. The Streamlit pages drawing the same charts are run (AppTest) against the same
Prometheus: they send exactly the panel table's queries, and get data back.

The collector runs at its default granularity; the partition panels use the series exported for every
partition at any granularity, except the one listed in FAULT_ONLY."""

from __future__ import annotations

import json
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from confluent_kafka import TopicPartition

from kafkatools import (commit_offsets, compacted, create_topic, produce, producer, unique_topic, wait_cleaned,
                        watermarks, write_rounds)
from dashboards.panelqueries import promql
from monitor.contract.panels import PANELS, instantiate
from procs import free_port
from promstack import collector_and_prometheus
from waiting import wait_for

pytestmark = pytest.mark.kafka
ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "compaction.json"
CLUSTER = "grafana"
# (panel title, refId): why the query has no series on a healthy broker
FAULT_ONLY = {
    ("Cleaner I/O rate", "B"): "the throttle line: drawn only where log.cleaner.io.max.bytes.per.second is set "
                               "(Kafka's default, Double.MAX_VALUE, is no throttle; the session broker has none)",
    ("Tombstones past their delete horizon", "A"): "exported for every partition on main today, but at the "
                                                   "default granularity of the cardinality work only for "
                                                   "partitions with tombstones past their horizon (unhealthy)",
}


def query(prom: str, q: str) -> tuple[list | None, str | None]:
    """Prometheus' result for the instant query ``q``, or its error."""
    try:
        with urllib.request.urlopen(f"{prom}/api/v1/query?query={urllib.parse.quote(q)}", timeout=10) as r:
            body = json.load(r)
    except urllib.error.HTTPError as exc:  # 400 bad_data: the query does not parse
        return None, exc.read().decode(errors="replace")
    return (body["data"]["result"], None) if body["status"] == "success" else (None, body.get("error"))


def dashboard_queries() -> list[tuple[str, str, str]]:
    """(panel title, refId, PromQL as Grafana sends it) for every target of the committed dashboard."""
    doc = json.loads(DASHBOARD.read_text())
    out = []
    for p in doc["panels"]:
        for t in p.get("targets", []):
            out.append((p["title"], t["refId"], instantiate(t["expr"], cluster=CLUSTER, rate_interval="1m")))
    return out


def test_fault_only_list_is_the_panel_tables():
    """The queries this test checks for parsing only are those the panel table marks fault-only."""
    marked = {(p.title, chr(ord("A") + i)) for p in PANELS for i, q in enumerate(p.queries) if q.fault_only}
    assert marked == set(FAULT_ONLY)


def lagging_group(bootstrap: str, topic: str) -> str:
    """A group committed at a record written twenty minutes ago: its time lag is far past the topic's
    delete.retention.ms (1 s)."""
    old_ms = int(time.time() * 1000) - 1_200_000
    p = producer(bootstrap)
    for i in range(5):
        p.produce(topic, key=f"old{i}".encode(), value=b"v", partition=0, timestamp=old_ms + i)
    assert p.flush(30) == 0
    group = unique_topic("grafana-lagging")
    _, high = watermarks(bootstrap, topic)
    commit_offsets({"bootstrap.servers": bootstrap, "group.id": group}, [TopicPartition(topic, 0, high - 5)])
    return group


def streamlit_queries(page: str, prom: str, monkeypatch) -> dict[str, int]:
    """The range queries a Streamlit page sends to ``prom`` (through the real data layer), with how many
    rows each brought back."""
    from streamlit.testing.v1 import AppTest

    from dashboards import sources

    sent: dict[str, int] = {}
    real = sources.prometheus_range

    def recording(base, q, *args, **kw):
        rows = real(base, q, *args, **kw)
        sent[q] = len(rows)
        return rows

    monkeypatch.setattr(sources, "prometheus_range", recording)
    monkeypatch.setenv("COMPACTION_MONITOR_NO_AUTOREFRESH", "1")
    monkeypatch.setenv("COMPACTION_MONITOR_PROMETHEUS_URL", prom)
    for var in ("COMPACTION_MONITOR_CONFIG", "COMPACTION_MONITOR_COLLECTOR_URL", "COMPACTION_MONITOR_AUDIT_DIR"):
        monkeypatch.delenv(var, raising=False)
    at = AppTest.from_file(str(ROOT / "dashboards" / "views" / f"{page}.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return sent


def test_every_dashboard_query_returns_data_from_a_real_prometheus(kafka, tmp_path, monkeypatch):
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.fail("prometheus is missing: ./dev installs Debian's prometheus package")
    topic = create_topic(kafka.bootstrap, unique_topic("grafana"), **compacted())
    write_rounds(kafka.bootstrap, topic, 3, keys=50, tombstones=range(10))
    wait_cleaned(kafka.log_dir, topic)  # a clean happened: the broker's max-clean-time gauge has a value
    group = lagging_group(kafka.bootstrap, topic)
    # last, so that they stay in the active segment, which the cleaner never touches
    produce(kafka.bootstrap, topic, [(f"k{i}".encode(), None) for i in range(10, 20)])

    cport = free_port()
    cfg = {
        "listen": {"address": "127.0.0.1", "port": cport},
        "clusters": [{"name": CLUSTER, "bootstrap_servers": kafka.bootstrap,
                      "brokers": [{"id": 1, "jmx_url": kafka.jmx_url, "log_dirs": [kafka.log_dir]}]}],
        "intervals": {"jmx": 1, "log_dirs": 1, "admin": 2, "consumer_groups": 2},
        "thresholds": {"consumer_lag_for": "1s"},
    }
    queries = dashboard_queries()
    assert len(queries) >= 20
    dead = f"127.0.0.1:{free_port()}"  # a second collector of the job that never answers: up == 0
    with collector_and_prometheus(cfg, tmp_path, prometheus, extra_targets=(dead,)) as prom:
        for title, ref, q in queries:  # parse: an error now is an error later
            _, error = query(prom, q)
            assert error is None, f"{title} {ref}: {q}: {error}"
        empty: list[str] = []

        def all_answer():
            empty[:] = [f"{title} {ref}: {q}" for title, ref, q in queries
                        if (title, ref) not in FAULT_ONLY and not query(prom, q)[0]]
            return not empty

        try:
            wait_for(all_answer, 120, "every dashboard query to return a series", interval=1)
        except TimeoutError:
            pytest.fail("queries without data:\n" + "\n".join(empty))
        # what the queries return is this cluster's, and the lagging group is the one alerted
        alerts_q = instantiate(next(q for t, _, q in queries if t == "Compaction alerts"), CLUSTER)
        alerts, _ = query(prom, alerts_q)
        assert {(a["metric"]["alertname"], a["metric"].get("group")) for a in alerts} >= \
            {("ConsumerMayMissTombstones", group)}
        # with this cluster picked: its alerts, and the dead collector's CompactionMonitorDown (from up == 0:
        # Prometheus' series of the scrape, with no cluster label), pending or firing
        down = wait_for(lambda: [a["metric"] for a in query(prom, alerts_q)[0]
                                 if a["metric"]["alertname"] == "CompactionMonitorDown"
                                 and a["metric"].get("instance") == dead], 60,
                        "the dead collector's CompactionMonitorDown in the alert panel", interval=1)
        assert [d.get("cluster") for d in down] == [None]
        alerts, _ = query(prom, alerts_q)
        assert all(s["metric"].get("cluster") == CLUSTER for s in alerts if s["metric"].get("instance") != dead)
        tombstones, _ = query(prom, next(q for t, _, q in queries if t == "Tombstones on disk per topic"))
        assert float(next(s for s in tombstones if s["metric"]["topic"] == topic)["value"][1]) >= 10
        # the Streamlit pages that draw the same charts ask the same Prometheus the same queries, and get data
        brokers = streamlit_queries("brokers", prom, monkeypatch)
        assert set(brokers) == {promql(k) for k in ("dirty_ratio", "since_last_run", "clean_time",
                                                     "buffer_utilization", "recopy", "dead_threads")}
        assert all(brokers.values()), brokers
        tombstones_page = streamlit_queries("tombstones", prom, monkeypatch)
        assert list(tombstones_page) == [promql("tombstones")] and tombstones_page[promql("tombstones")] > 0
        # the cluster variable's query (label_values(kafka_compaction_source_up, cluster)) offers the cluster
        with urllib.request.urlopen(f"{prom}/api/v1/label/cluster/values?match[]=kafka_compaction_source_up",
                                    timeout=10) as r:
            assert CLUSTER in json.load(r)["data"]

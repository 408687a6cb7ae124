"""Cardinality (issue 14 point 3): ``collect --once`` over a log dir of 300 healthy, fully cleaned
compacted partitions gives at most 4 series per partition by default, every series at ``--granularity
partition``, every series of an unhealthy partition in both; topic aggregates; topic allow and deny
patterns; the dashboard's loader and the rule evaluator give the same partitions and alerts from both.

The partitions are copies of one partition the real broker wrote and cleaned (tombstones kept: a day's
delete.retention.ms), with the cleaner's checkpoint where the broker left it; one more topic's copy has
no checkpoint entry at 0 (never cleaned: eligible, so unhealthy)."""

from __future__ import annotations

import shutil
from collections import Counter

import pytest
from prometheus_client.parser import text_string_to_metric_families

from clirun import Ran, run_cli
from dashboards import alertrows, sources
from dashboards import tables as dashtables
from kafkatools import (compacted, consume_all, copy_partition, create_topic, partition_dir, unique_topic,
                        wait_cleaned_up_to_active, write_rounds)
from monitor.settings.config import Thresholds
from monitor.verdicts.health import SETTLED

pytestmark = pytest.mark.kafka

HEALTHY = 300
KEYS = ("cluster", "broker", "topic", "partition")


@pytest.fixture(scope="module")
def log_dir(kafka, tmp_path_factory):
    root = tmp_path_factory.mktemp("cardinality")
    t = create_topic(kafka.bootstrap, unique_topic("card"), **compacted(**{"delete.retention.ms": 86_400_000}))
    write_rounds(kafka.bootstrap, t, 3, keys=40, tombstones=range(0, 40, 4))
    cp = wait_cleaned_up_to_active(kafka.log_dir, t)
    src = copy_partition(partition_dir(kafka.log_dir, t), root / "src")
    tombstones = sum(1 for m in consume_all(kafka.bootstrap, t) if m.value() is None)  # Kafka's own read
    out = root / "logdir"
    out.mkdir()
    healthy, dirty = unique_topic("healthy"), unique_topic("dirty")
    lines = []
    for p in range(HEALTHY):
        shutil.copytree(src, out / f"{healthy}-{p}")
        lines.append(f"{healthy} {p} {cp}")
    shutil.copytree(src, out / f"{dirty}-0")
    lines.append(f"{dirty} 0 0")  # never cleaned: every segment below the active one is cleanable
    (out / "cleaner-offset-checkpoint").write_text(f"0\n{len(lines)}\n" + "\n".join(lines) + "\n")
    return {"dir": out, "healthy": healthy, "dirty": dirty, "tombstones": tombstones}


def collect(log_dir, *flags) -> Ran:
    return run_cli("collect", "--once", "--log-dir", str(log_dir["dir"]), *flags)


@pytest.fixture(scope="module")
def pages(log_dir):
    got = {}
    for granularity in ("topic", "partition"):
        proc = collect(log_dir, *(["--granularity", granularity] if granularity == "partition" else []))
        assert proc.returncode == 0, proc.stderr
        got[granularity] = proc.stdout
    return got


def series(text: str) -> list:
    return [s for fam in text_string_to_metric_families(text) for s in fam.samples]


def per_partition(text: str, topic: str) -> Counter:
    return Counter(s.labels["partition"] for s in series(text)
                   if s.labels.get("topic") == topic and "partition" in s.labels)


def test_a_healthy_partition_costs_at_most_four_series_by_default(log_dir, pages):
    count = per_partition(pages["topic"], log_dir["healthy"])
    assert len(count) == HEALTHY
    assert max(count.values()) <= 4, count.most_common(3)
    full = per_partition(pages["partition"], log_dir["healthy"])
    assert len(full) == HEALTHY and min(full.values()) > 4  # the default really drops series
    # the unhealthy one keeps every series at both granularities
    assert per_partition(pages["topic"], log_dir["dirty"]) == per_partition(pages["partition"], log_dir["dirty"])
    total = {g: len(series(p)) for g, p in pages.items()}
    print(f"series: default {total['topic']}, partition {total['partition']}")


def test_topic_aggregates(log_dir, pages):
    for text in pages.values():
        got = {(s.name, s.labels.get("cause")): s.value for s in series(text)
               if s.labels.get("topic") == log_dir["healthy"] and "partition" not in s.labels}
        assert got[("kafka_compaction_topic_tombstones", None)] == HEALTHY * log_dir["tombstones"] > 0
        assert got[("kafka_compaction_topic_max_cleanable_ratio", None)] == 0.0
        assert got[("kafka_compaction_topic_cleanable_bytes", None)] == 0.0
        assert got[("kafka_compaction_topic_unhealthy_partitions", None)] == 0.0
        causes = [c for (n, c) in got if n == "kafka_compaction_topic_compaction_cause"]
        assert len(causes) == 1 and causes[0] in SETTLED
        dirty = {(s.name, s.labels.get("cause")): s.value for s in series(text)
                 if s.labels.get("topic") == log_dir["dirty"] and "partition" not in s.labels}
        assert dirty[("kafka_compaction_topic_compaction_cause", "waiting")] == 1.0
        assert dirty[("kafka_compaction_topic_max_cleanable_ratio", None)] == 1.0
        assert dirty[("kafka_compaction_topic_unhealthy_partitions", None)] == 1.0


def test_dashboard_and_rules_see_the_same_at_both_granularities(log_dir, pages):
    tables, fired = {}, {}
    for granularity, text in pages.items():
        samples = sources.samples_from_text(text, granularity)
        alerts = alertrows.evaluated_alerts(samples, Thresholds())
        tables[granularity] = dashtables.partitions_table(samples, alerts)
        fired[granularity] = sorted(map(tuple, alerts[["alert", "topic", "partition"]].astype(str).values))
    cols = ["topic", "partition", "cause", "cleanable_ratio", "lagging"]
    assert len(tables["topic"]) == HEALTHY + 1
    assert tables["topic"][cols].equals(tables["partition"][cols])
    assert fired["topic"] == fired["partition"] == [("CompactionLagging", log_dir["dirty"], "0")]
    dirty = tables["topic"][tables["topic"]["topic"] == log_dir["dirty"]].iloc[0]
    assert dirty["lagging"] and dirty["log_bytes"] > 0  # an unhealthy partition's detail is there


def test_topic_allow_and_deny_patterns(log_dir):
    deny = collect(log_dir, "--topics-deny", "healthy-.*")
    assert deny.returncode == 0, deny.stderr
    topics = {s.labels["topic"] for s in series(deny.stdout) if "topic" in s.labels}
    assert topics == {log_dir["dirty"]}
    allow = collect(log_dir, "--topics-allow", "healthy-.*", "--topics-allow", "nothing")
    topics = {s.labels["topic"] for s in series(allow.stdout) if "topic" in s.labels}
    assert topics == {log_dir["healthy"]}
    partial = collect(log_dir, "--topics-allow", "healthy")  # the whole name must match
    assert not any("topic" in s.labels for s in series(partial.stdout))
    bad = collect(log_dir, "--topics-deny", "(")
    assert bad.returncode == 2 and "--topics-deny" in bad.stderr and "'('" in bad.stderr


def test_dashboard_pages_render_a_default_granularity_page(log_dir, pages, monkeypatch):
    """The Streamlit pages over a collector page at the default granularity (served as is, by a server
    this test starts and stops): no error, a healthy partition's drill-down says what is not exported."""
    import http.server
    import threading

    from streamlit.testing.v1 import AppTest

    body = pages["topic"].encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("COMPACTION_MONITOR_NO_AUTOREFRESH", "1")
        for var in ("COMPACTION_MONITOR_CONFIG", "COMPACTION_MONITOR_PROMETHEUS_URL", "COMPACTION_MONITOR_AUDIT_DIR"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("COMPACTION_MONITOR_COLLECTOR_URL", f"http://127.0.0.1:{server.server_address[1]}/metrics")
        views = sources.__file__.rsplit("/", 1)[0] + "/views"
        for name in ("overview", "partitions", "tombstones"):
            at = AppTest.from_file(f"{views}/{name}.py", default_timeout=120)
            at.run()
            assert not at.exception, (name, [e.value for e in at.exception])
            # the only error boxes: the unhealthy partition's alert (the drill-down starts at the most uncleaned),
            # and on the overview its cause, waiting, whose alert (CompactionLagging) fires
            assert all(e.value.startswith(("CompactionLagging", "**waiting** on 1 partition(s)")) for e in at.error), \
                (name, [e.value for e in at.error])
            if name == "partitions":
                at.selectbox(key="partitions.pick").select(f"{log_dir['healthy']}-7").run()
                assert not at.exception, [e.value for e in at.exception]
                shown = {m.label: m.value for m in at.metric}
                assert shown["Uncleaned ratio"] == "not exported" and shown["Kafka's cleanable ratio"] == "0.00"
    finally:
        server.shutdown()
        server.server_close()

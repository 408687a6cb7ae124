"""The collector against the 3-broker SASL_SSL cluster's JMX exporters as many operators run them: the
bare catch-all rule (``rules: [{pattern: ".*"}]``, lowercased), behind HTTP Basic auth (the ``kafka_cluster``
fixture). ``collect --once`` with ``jmx_username`` and ``jmx_password`` by reference reports every JMX
source up in the catch-all shape with the cleaner gauges the page carries (read by the test's own literal
lookup of each MBean's sample); with a wrong password each source is down as ``unauthorized`` and no
password is in any output."""

from __future__ import annotations

import os

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from boundedhttp import get_text
from clirun import Ran, run_cli
from kafkatools import client_config, cluster_brokers
from waiting import wait_for

pytestmark = pytest.mark.slow

# MBean (kafka.log:type=T,name=N) -> (the catch-all page's sample name, the collector's series, Kafka's unit
# to the series' base unit); the cleaner gauges that are on the page whatever the cleaner did so far
GAUGES = {
    "DeadThreadCount": ("kafka_log_logcleaner_value", "kafka_compaction_broker_cleaner_dead_threads", 1.0),
    "max-buffer-utilization-percent": ("kafka_log_logcleaner_value",
                                       "kafka_compaction_broker_cleaner_max_buffer_utilization_ratio", 0.01),
    "cleaner-recopy-percent": ("kafka_log_logcleaner_value", "kafka_compaction_broker_cleaner_recopy_ratio", 0.01),
    "max-dirty-percent": ("kafka_log_logcleanermanager_value", "kafka_compaction_broker_max_dirty_ratio", 0.01),
}  # not time-since-last-run-ms: a clock, it moves between any two reads
UNCLEANABLE = ("kafka_log_logcleanermanager_value", "uncleanable-partitions-count",
               "kafka_compaction_broker_uncleanable_partitions")


def samples(text: str) -> list:
    return [s for f in text_string_to_metric_families(text) for s in f.samples]


def page_gauges(page: str) -> dict:
    """MBean -> value, and the per-log-dir uncleanable count, from a catch-all page (the test's lookup)."""
    found = {}
    for s in samples(page):
        for mbean, (name, _, _) in GAUGES.items():
            if s.name == name and s.labels.get("name") == mbean:
                found[mbean] = s.value
        if s.name == UNCLEANABLE[0] and s.labels.get("name") == UNCLEANABLE[1]:
            found[("uncleanable", s.labels["logDirectory"].strip('"'))] = s.value
    return found


def monitor_yaml(cluster, tmp_path, **jmx) -> str:
    client = {k: v for k, v in client_config(cluster, "monitor").items() if k != "bootstrap.servers"}
    cfg = {"timeouts": {"jmx": 60}, "clusters": [{"name": "c3", "bootstrap_servers": cluster.bootstrap,
                                                  "client": client, "brokers": cluster_brokers(cluster, **jmx)}]}
    path = tmp_path / "monitor.yaml"
    path.write_text(yaml.safe_dump(cfg))
    path.chmod(0o600)
    return str(path)


def collect_once(path: str, env: dict | None = None) -> Ran:
    return run_cli("collect", "--once", "--config", path, env=env)


def test_catch_all_pages_behind_basic_auth_read_with_the_page_values(kafka_cluster, tmp_path):
    brokers = kafka_cluster.brokers()
    auth = (kafka_cluster.jmx_username, open(kafka_cluster.jmx_password_file).read())
    assert kafka_cluster.jmx_exporter_config == "jmx-exporter-catchall.yaml" and auth[0]
    path = monitor_yaml(kafka_cluster, tmp_path)

    def pages():
        return {b.node_id: get_text(b.jmx_url, deadline=60, max_bytes=1 << 24, auth=auth) for b in brokers}

    def steady():
        """Pages before and after one collect --once that agree (a cleaner pass of another test in
        between moves the gauges: then try again)."""
        before = pages()
        proc = collect_once(path)
        after = pages()
        same = all(page_gauges(before[n]) == page_gauges(after[n]) for n in before)
        return (before, proc) if same else None

    before, proc = wait_for(steady, 300, "pages that do not move across one collect --once", interval=1)
    assert proc.returncode == 0, proc.stderr
    series = samples(proc.stdout)

    def value(name, **labels):
        hits = [s.value for s in series if s.name == name and labels.items() <= s.labels.items()]
        assert len(hits) == 1, (name, labels, hits)
        return hits[0]

    for b in brokers:
        node = str(b.node_id)
        src = f"jmx:c3:{node}"
        assert value("kafka_compaction_source_up", source=src) == 1.0
        assert value("kafka_compaction_source_shape_info", source=src, shape="catch_all", also_on_page="") == 1.0
        on_page = page_gauges(before[b.node_id])
        assert set(GAUGES) <= set(on_page), on_page
        for mbean, (_, exported, factor) in GAUGES.items():
            assert value(exported, broker=node) == pytest.approx(on_page[mbean] * factor), (node, mbean)
        dirs = {k[1]: v for k, v in on_page.items() if isinstance(k, tuple)}
        assert list(dirs) == [b.log_dir], dirs  # the node's one log dir, as Kafka names it
        assert value(UNCLEANABLE[2], broker=node, log_dir=b.log_dir) == dirs[b.log_dir]
    assert auth[1] not in proc.stdout + proc.stderr


def test_wrong_exporter_credentials_put_each_source_down_as_unauthorized(kafka_cluster, tmp_path):
    wrong = "not-the-" + "password-" + os.urandom(6).hex()
    right = open(kafka_cluster.jmx_password_file).read()
    proc = collect_once(monitor_yaml(kafka_cluster, tmp_path, jmx_password="${env:JMX_PW}"), {"JMX_PW": wrong})
    assert proc.returncode == 1
    series = samples(proc.stdout)
    for b in kafka_cluster.brokers():
        src = f"jmx:c3:{b.node_id}"
        assert [s.value for s in series if s.name == "kafka_compaction_source_up" and s.labels["source"] == src] == [0.0]
        errors = {s.labels["error"]: s.value for s in series
                  if s.name == "kafka_compaction_source_errors_total" and s.labels["source"] == src}
        assert errors == {"unauthorized": 1.0}, errors
        assert f"{b.jmx_url}: HTTP 401: unauthorized (credentials refused)" in proc.stderr, proc.stderr
    # the other sources are unaffected: the admin API as monitor, the log dirs
    assert [s.value for s in series if s.name == "kafka_compaction_source_up" and s.labels["kind"] == "admin"] == [1.0]
    for secret in (wrong, right, kafka_cluster.password("monitor")):
        assert secret not in proc.stdout + proc.stderr

"""monitor.yaml against the schema derived from the config dataclasses: every bad shape is a
ConfigError naming its key path and the expected shape (never another exception), every problem is
reported once, and the schema follows the dataclasses' fields."""

from __future__ import annotations

import copy
import dataclasses
import math
import shutil
import subprocess
from typing import ClassVar

import pytest

from monitor.settings.config import (BrokerConfig, ClusterConfig, Config, ConfigError, Intervals, Thresholds, Timeouts,
                            load_config, parse_config, to_data)
from monitor.settings.configschema import PROMETHEUS_DURATION, config_schema, dataclass_schema, problems

FULL = {
    "listen": {"address": "127.0.0.1", "port": 9700},
    "clusters": [{
        "name": "prod", "bootstrap_servers": ["k1:9093", "k2:9093"],
        "client": {"security.protocol": "SASL_SSL", "sasl.password": "hunter2", "enable.ssl.certificate.verification": False},
        "brokers": [{"id": 1, "jmx_url": "http://k1:7071/metrics", "log_dirs": ["/data/a", "/data/b"],
                     "cleaner_log": "/var/log/kafka/log-cleaner.log"},
                    {"id": "b2", "jolokia_url": "https://k2:8778/jolokia", "log_dirs": "/data/c"}],
        "metric_names": {"max_dirty_percent": "my_metric", "dead_thread_count": ["a", "b"]},
        "topics": {"orders": {"min.cleanable.dirty.ratio": 0.3, "cleanup.policy": "compact,delete"}, "t2": None},
        "consumer_groups": False,
        "transaction_max_timeout_ms": 3_600_000,
    }],
    "intervals": {"jmx": 10, "log_dirs": 0.5},
    "timeouts": {"jmx": 2.5, "max_page_bytes": 1024},
    "thresholds": {"lagging_for": "1h30m", "buffer_utilization_ratio": 0.9, "consumer_lag_warning_fraction": 1},
    "prometheus_url": "http://prom:9090", "audit_dir": "/audits", "collector_url": "http://c:9690/metrics",
}

CLUSTER_KEYS = ", ".join(f.name for f in dataclasses.fields(ClusterConfig))  # a cluster's keys, in order


def _yaml_problems(tmp_path, text: str) -> list[str]:
    p = tmp_path / "monitor.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    assert all(line.startswith(f"{p}: ") for line in exc.value.lines)
    return [line[len(f"{p}: "):] for line in exc.value.lines]


@pytest.mark.parametrize("text, expected", [
    # the six shapes of issue #17, each a traceback before
    ("clusters:\n  - topics: [orders, payments]\n",
     "clusters[0].topics: expected a mapping of topic -> its Kafka topic configs, got a list (2 items)"),
    ("clusters:\n  - topics: {orders: compact}\n",
     "clusters[0].topics.orders: expected a mapping of Kafka topic configs (min.cleanable.dirty.ratio: 0.3, ...), "
     "got 'compact'"),
    ("clusters:\n  - client: SASL_SSL\n",
     "clusters[0].client: expected a mapping of librdkafka properties (security.protocol: SASL_SSL, ...), "
     "got 'SASL_SSL'"),
    ("clusters:\n  - brokers: [{id: 1, log_dirs: 5}]\n",
     "clusters[0].brokers[0].log_dirs: expected a path or a list of paths, got 5"),
    ("clusters:\n  - bootstrap_servers: [9092]\n",
     "clusters[0].bootstrap_servers[0]: expected a host:port string, got 9092"),
    ("intervals: {jmx: .inf}\n", "intervals.jmx: expected a finite number of seconds above 0, got inf"),
    # more of the same kind
    ("intervals: {admin: .nan}\n", "intervals.admin: expected a finite number of seconds above 0, got nan"),
    ("intervals: {jmx: 0}\n", "intervals.jmx: expected a finite number of seconds above 0, got 0"),
    ("timeouts: {jmx: -.inf}\n", "timeouts.jmx: expected a finite number of seconds above 0, got -inf"),
    ("timeouts: {max_page_bytes: 0}\n", "timeouts.max_page_bytes: expected a whole number of bytes, at least 1, got 0"),
    ("timeouts: {max_page_bytes: 1.5}\n",
     "timeouts.max_page_bytes: expected a whole number of bytes, at least 1, got 1.5"),
    ("thresholds: {cleaner_stalled_seconds: .inf}\n",
     "thresholds.cleaner_stalled_seconds: expected a finite number >= 0, got inf"),
    ("thresholds: {buffer_utilization_ratio: 1.5}\n",
     "thresholds.buffer_utilization_ratio: expected a finite number >= 0 and <= 1, got 1.5"),
    ("thresholds: {lagging_for: 30 minutes}\n",
     "thresholds.lagging_for: expected a Prometheus duration such as 30m or 1h30m, got '30 minutes'"),
    ("thresholds: {lagging_for: 30}\n",
     "thresholds.lagging_for: expected a Prometheus duration such as 30m or 1h30m, got 30"),
    ("thresholds: {monitor_job: ''}\n", "thresholds.monitor_job: expected a non-empty string, got ''"),
    ("listen: {port: true}\n", "listen.port: expected a port from 0 to 65535 (0: any), got True"),
    ("listen: 9690\n", "listen: expected a mapping of address, port, got 9690"),
    ("clusters: {name: prod}\n", f"clusters: expected a list of mappings of {CLUSTER_KEYS}, got a mapping"),
    ("clusters: [prod]\n", f"clusters[0]: expected a mapping of {CLUSTER_KEYS}, got 'prod'"),
    ("clusters:\n  - consumer_groups: 'yes'\n", "clusters[0].consumer_groups: expected true or false, got 'yes'"),
    ("clusters:\n  - bootstrap_servers: []\n",
     "clusters[0].bootstrap_servers: expected host:port[,host:port...] or a list of host:port, got a list (0 items)"),
    ("clusters:\n  - brokers: [{id: [1]}]\n", "clusters[0].brokers[0].id: expected the broker's node.id (or a name), "
                                              "got a list (1 item)"),
    ("clusters:\n  - brokers: [{id: 1, cleaner_log: [a, b]}]\n",
     "clusters[0].brokers[0].cleaner_log: expected one path (the broker's log-cleaner.log), got a list (2 items)"),
    ("clusters:\n  - topics: {123: {segment.ms: 1}}\n",
     "clusters[0].topics.123: expected a name (a string: quote 123), got int 123"),
    ("clusters:\n  - topics: {orders: {segment.ms: {a: 1}}}\n",
     "clusters[0].topics.orders.segment.ms: expected a Kafka topic config value (a string or number), got a mapping"),
    ("clusters:\n  - topics: {orders: {segment.ms: .inf}}\n",
     "clusters[0].topics.orders.segment.ms: segment.ms=inf: not a number"),
    ("clusters:\n  - metric_names: {max_dirty_percent: 5}\n",
     "clusters[0].metric_names.max_dirty_percent: expected a metric name or a list of them, got 5"),
    ("prometheus_url: prom:9090\n", "prometheus_url: expected an http:// or https:// URL, got 'prom:9090' (no http:// or https:// in front)"),
    ("- a\n- b\n", "(top level): expected a mapping of listen, clusters, intervals, timeouts, thresholds, "
                   "prometheus_url, audit_dir, collector_url, granularity, topics_allow, topics_deny, role, state_dir, io_budget_bytes_per_second, got a list (2 items)"),
    ("just text\n", "(top level): expected a mapping of listen, clusters, intervals, timeouts, thresholds, "
                    "prometheus_url, audit_dir, collector_url, granularity, topics_allow, topics_deny, role, state_dir, io_budget_bytes_per_second, got 'just text'"),
])
def test_a_bad_shape_is_one_problem_naming_key_and_shape(tmp_path, text, expected):
    assert _yaml_problems(tmp_path, text) == [expected]


def test_every_problem_once_in_the_files_order(tmp_path):
    got = _yaml_problems(tmp_path, """
listen: {port: 70000, host: x}
clusters:
  - name: a
    client: SASL
    brokers: [{jmx_url: "http://x"}]
intervals: {jmx: .inf, log_dirs: -1}
thresholds: {lagging_for: soon}
""")
    assert [line.split(": ", 1)[0] for line in got] == [
        "listen.port", "listen.host", "clusters[0].client", "clusters[0].brokers[0].id", "intervals.jmx",
        "intervals.log_dirs", "thresholds.lagging_for"]
    assert got[1].startswith("listen.host: unknown key (allowed: address, port)")
    assert got[3] == "clusters[0].brokers[0].id: is required (the broker's node.id (or a name))"


def test_secrets_are_not_shown_in_problems(tmp_path):
    got = _yaml_problems(tmp_path, """
clusters:
  - client: {sasl.password: [hunter2], ssl.key.password: {x: s3cr3t}, ssl.key.pem: [pem1]}
    brokers: [{id: 1, jmx_url: "ftp://admin:pa55@k1/metrics"}]
""")
    text = "\n".join(got)
    assert "hunter2" not in text and "s3cr3t" not in text and "pa55" not in text and "pem1" not in text
    assert "clusters[0].client.ssl.key.pem: expected a string, number or boolean, got (a value, not shown" in text
    assert "clusters[0].client.sasl.password: expected a string, number or boolean, got (a value, not shown" in text
    assert "got 'ftp://admin:***@k1/metrics'" in text


def test_full_example_reads_and_round_trips():
    cfg = parse_config(FULL)
    c = cfg.clusters[0]
    assert c.bootstrap_servers == "k1:9093,k2:9093" and c.brokers[0].id == "1" and c.brokers[1].id == "b2"
    assert c.brokers[0].log_dirs == ("/data/a", "/data/b") and c.brokers[1].log_dirs == ("/data/c",)
    assert c.client["enable.ssl.certificate.verification"] is False and c.consumer_groups is False
    assert cfg.intervals == Intervals(jmx=10, log_dirs=0.5) and cfg.timeouts == Timeouts(jmx=2.5, max_page_bytes=1024)
    assert cfg.thresholds.lagging_for == "1h30m" and cfg.thresholds.consumer_lag_warning_fraction == 1
    assert (cfg.listen_address, cfg.listen_port) == ("127.0.0.1", 9700)
    assert parse_config(to_data(cfg)) == cfg
    assert parse_config(to_data(Config())) == Config() == parse_config(None) == parse_config({})


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, path + (i,))


ODD = [None, True, -1, 0, 2**63, 1.5, math.inf, -math.inf, math.nan, "", "x", "http://h:1", [], [1], ["a"], {},
       {"a": 1}, {1: "a"}]


@pytest.mark.slow  # every place in a full config times every odd shape: thousands of parses
def test_no_shape_anywhere_escapes_as_another_exception():
    """Every place in a full config, replaced by every odd shape: a Config or a ConfigError, never
    another exception; and what parses has the types the dataclasses declare."""
    seen = 0
    for path in _paths(FULL):
        for odd in ODD:
            data = copy.deepcopy(FULL)
            if path:
                node = data
                for p in path[:-1]:
                    node = node[p]
                node[path[-1]] = odd
            else:
                data = odd
            try:
                cfg = parse_config(data)
            except ConfigError as exc:
                assert exc.lines and all(": " in line for line in exc.lines)
                continue
            seen += 1
            _check_types(cfg)
    assert seen > 50  # nulls for optional keys, other valid values


def _check_types(obj):
    import typing

    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        tp = hints[f.name]
        if dataclasses.is_dataclass(v):
            _check_types(v)
        elif isinstance(v, tuple):
            for x in v:
                _check_types(x) if dataclasses.is_dataclass(x) else None
                assert dataclasses.is_dataclass(x) or isinstance(x, str), (f.name, v)
        elif tp is float:
            assert isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v), (f.name, v)
        elif tp is int:
            assert isinstance(v, int) and not isinstance(v, bool), (f.name, v)
        elif tp is bool:
            assert isinstance(v, bool), (f.name, v)
        elif tp is dict:
            assert isinstance(v, dict), (f.name, v)
        elif tp in (str, str | None):
            assert v is None or isinstance(v, str), (f.name, v)


def test_the_schema_is_the_dataclasses_fields():
    """Each config dataclass' fields are exactly its known keys, and their defaults pass."""
    s = config_schema()["properties"]
    cluster = s["clusters"]["items"]
    for cls, node in ((Thresholds, s["thresholds"]), (Intervals, s["intervals"]), (Timeouts, s["timeouts"]),
                      (ClusterConfig, cluster), (BrokerConfig, cluster["properties"]["brokers"]["items"])):
        assert list(node["properties"]) == [f.name for f in dataclasses.fields(cls)], cls
        assert node["additionalProperties"] is False
    assert problems(to_data(Config(clusters=(ClusterConfig(brokers=(BrokerConfig(id="1"),)),)))) == []


def test_a_new_field_gets_its_shape_from_its_type_and_name():
    """What another alert's threshold would get by being added to Thresholds: no second definition."""
    @dataclasses.dataclass(frozen=True)
    class New:
        NUMBERS: ClassVar[dict] = {}
        stuck_for: str = "10m"
        queue_ratio: float = 0.5
        queue_bytes: float = 1e9
        retries: int = 3
        on: bool = True
        owner: str | None = None

    props = dataclass_schema(New)["properties"]
    assert list(props) == ["stuck_for", "queue_ratio", "queue_bytes", "retries", "on", "owner"]
    assert props["stuck_for"]["pattern"] == PROMETHEUS_DURATION
    assert props["queue_ratio"]["maximum"] == 1 and props["queue_ratio"]["finite"] is True
    assert "maximum" not in props["queue_bytes"] and props["queue_bytes"]["minimum"] == 0
    assert props["retries"]["type"] == "integer" and props["on"]["type"] == "boolean"
    assert props["owner"]["type"] == ["string", "null"]


DURATIONS = ["0", "1h30m", "30m", "0s", "1y2w", "90s", "500ms", "1d1h", "30 minutes", "1.5h", "", "m", "1m1h",
             "-5m", "10", "00", "5M"]


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_duration_pattern_agrees_with_promtool(tmp_path):
    """A *_for threshold is accepted exactly when Prometheus accepts it as a rule's ``for:``."""
    import re

    import yaml

    for d in DURATIONS:
        rules = tmp_path / "r.yml"
        rules.write_text(yaml.safe_dump({"groups": [{"name": "g", "rules": [
            {"alert": "A", "expr": "vector(1)", "for": d}]}]}))
        promtool_ok = subprocess.run(["promtool", "check", "rules", str(rules)], capture_output=True).returncode == 0
        assert bool(re.match(PROMETHEUS_DURATION, d)) == promtool_ok, d
        assert (problems({"thresholds": {"lagging_for": d}}) == []) == promtool_ok, d

"""Config errors name the key and the reason; flags build a working config on their own."""

import pytest

from monitor.settings.config import ConfigError, load_config, parse_config


def test_defaults_and_full_example(tmp_path):
    p = tmp_path / "monitor.yaml"
    p.write_text("""
listen: {address: 127.0.0.1, port: 9700}
clusters:
  - name: prod
    bootstrap_servers: [k1:9093, k2:9093]
    client: {security.protocol: SASL_SSL, sasl.mechanism: SCRAM-SHA-512}
    brokers:
      - {id: 1, jmx_url: "http://k1:7071/metrics", log_dirs: /data/kafka}
    topics:
      orders: {min.cleanable.dirty.ratio: 0.3}
    transaction_max_timeout_ms: 3600000
intervals: {jmx: 10}
thresholds: {consumer_lag_warning_fraction: 0.2}
""")
    cfg = load_config(p)
    c = cfg.clusters[0]
    assert cfg.listen_port == 9700 and c.bootstrap_servers == "k1:9093,k2:9093"
    assert c.brokers[0].log_dirs == ("/data/kafka",) and c.client["security.protocol"] == "SASL_SSL"
    assert cfg.intervals.jmx == 10 and cfg.intervals.log_dirs == 60 and cfg.thresholds.consumer_lag_warning_fraction == 0.2
    assert c.transaction_max_timeout_ms == 3_600_000
    assert parse_config({"clusters": [{"name": "x"}]}).clusters[0].transaction_max_timeout_ms is None
    groups = parse_config({"clusters": [{"latest_value_only_groups": ["cache-*", "ui"]}]}).clusters[0]
    assert groups.latest_value_only_groups == ("cache-*", "ui")
    assert parse_config({"clusters": [{"name": "x"}]}).clusters[0].latest_value_only_groups == ()


@pytest.mark.parametrize("data, key, reason", [
    ({"listen": {"port": "x"}}, "listen.port", "expected a port from 0 to 65535"),
    ({"listen": {"port": 70000}}, "listen.port", "expected a port from 0 to 65535 (0: any), got 70000"),
    ({"intervals": {"jmx": -1}}, "intervals.jmx", "seconds above 0, got -1"),
    ({"nope": 1}, "nope", "unknown key"),
    ({"clusters": [{"brokers": [{"jmx_url": "http://x"}]}]}, "clusters[0].brokers[0].id", "is required"),
    ({"clusters": [{"brokers": [{"id": 1, "jmx_url": "ftp://x"}]}]}, "clusters[0].brokers[0].jmx_url",
     "expected an http:// or https:// URL, got 'ftp://x'"),
    ({"clusters": [{"topics": {"t": {"min.cleanable.dirty.ratio": 2}}}]},
     "clusters[0].topics.t.min.cleanable.dirty.ratio", "between 0 and 1"),
    ({"clusters": [{"metric_names": {"bogus": "x"}}]}, "clusters[0].metric_names.bogus", "unknown key (allowed: max_dirty_percent"),
    ({"clusters": [{"name": "a"}, {"name": "a"}]}, "clusters", "unique"),
    ({"clusters": [{"transaction_max_timeout_ms": "15m"}]}, "clusters[0].transaction_max_timeout_ms",
     "expected a whole number of ms between 1 and 2147483647 (an int), got '15m'"),
    ({"clusters": [{"transaction_max_timeout_ms": 0}]}, "clusters[0].transaction_max_timeout_ms", "got 0"),
    ({"clusters": [{"transaction_max_timeout_ms": 2**31}]}, "clusters[0].transaction_max_timeout_ms", "got 2147483648"),
    ({"clusters": [{"latest_value_only_groups": {"a": 1}}]}, "clusters[0].latest_value_only_groups",
     "expected a consumer group name or fnmatch pattern, or a list of them"),
    ({"clusters": [{"latest_value_only_groups": ["ok", 3]}]}, "clusters[0].latest_value_only_groups[1]", "got 3"),
])
def test_errors_name_key_and_reason(data, key, reason):
    with pytest.raises(ConfigError) as exc:
        parse_config(data, "monitor.yaml")
    assert exc.value.key == key and reason in exc.value.reason and str(exc.value).startswith("monitor.yaml: ")

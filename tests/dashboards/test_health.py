"""The Python health rules mirror the Prometheus alert rules (for dashboards without Prometheus)."""

import pandas as pd

from alerts.render import alerts
from dashboards.health import evaluate
from monitor.config import Thresholds

P = {"cluster": "c", "broker": "1", "topic": "t", "partition": "0"}
B = {"cluster": "c", "broker": "1"}


def s(name, value, **labels):
    return {"name": "kafka_compaction_" + name, **labels, "value": value}


def firing_samples():
    return pd.DataFrame([
        s("broker_cleaner_dead_threads", 1, **B),
        s("broker_cleaner_time_since_last_run_seconds", 5000, **B), s("partition_eligible", 1, **P),
        s("partition_dirty_ratio", 0.9, **P), s("partition_min_cleanable_dirty_ratio", 0.5, **P),
        s("partition_compaction_delay_seconds", 60, **P),
        s("broker_uncleanable_partitions", 2, **B, log_dir="/d"),
        s("broker_cleaner_max_buffer_utilization_ratio", 0.95, **B),
        s("broker_cleaner_max_clean_time_seconds", 4000, **B),
        s("partition_tombstones_past_delete_horizon", 3, **P),
        s("consumer_group_lag_retention_ratio", 1.4, cluster="c", group="g", topic="t", partition="0"),
        s("source_up", 0, cluster="c", source="jmx:c:1", kind="jmx"),
    ])


def test_every_rule_without_history_has_a_python_twin():
    names = set(evaluate(firing_samples())["alert"])
    expected = {a.name for a in alerts(Thresholds())} - {"TombstonesPilingUp"}  # needs a rate over hours
    assert names == expected


def test_near_misses_do_not_fire():
    quiet = pd.DataFrame([
        s("broker_cleaner_dead_threads", 0, **B), s("partition_dirty_ratio", 0.55, **P),
        s("partition_min_cleanable_dirty_ratio", 0.5, **P), s("partition_eligible", 0, **P),
        s("broker_cleaner_time_since_last_run_seconds", 5000, **B),
        s("consumer_group_lag_retention_ratio", 0.4, cluster="c", group="g", topic="t", partition="0"),
        s("source_up", 1, cluster="c", source="x", kind="jmx")])
    assert evaluate(quiet).empty


def test_consumer_warning_then_critical():
    w = evaluate(pd.DataFrame([s("consumer_group_lag_retention_ratio", 0.8, cluster="c", group="g", topic="t",
                                 partition="0")]))
    assert list(w["severity"]) == ["warning"]
    c = evaluate(pd.DataFrame([s("consumer_group_lag_retention_ratio", 1.0, cluster="c", group="g", topic="t",
                                 partition="0")]))
    assert list(c["severity"]) == ["critical"]

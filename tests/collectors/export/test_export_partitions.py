"""collectors.export.partitions: the partitions area maps each partition's facts to its series. A read
partition has its cause and its figures; an unreadable one its unknown cause and why its state is
unknown, and counts as unhealthy in its topic without adding figures; granularity topic keeps a healthy
partition's default series only. Real inputs: tests/collectors/factsfixtures.py."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

import factsfixtures as ff
from collectors.export import metrics as M
from collectors.export.partitions import CONFIG_DEPENDS, PartitionCollector
from collectors.export.view import View
from collectors.export.facts import from_statuses


def _registry(store, view=None):
    reg = CollectorRegistry(auto_describe=False)
    reg.register(PartitionCollector(store, clock=lambda: 200.0, view=view))
    return reg


def test_a_read_partition_has_its_cause_and_figures_an_unreadable_one_its_unknown_cause(tmp_path):
    store = ff.store(tmp_path)
    reg = _registry(store, View("partition"))
    [ld] = from_statuses(store.statuses(), 200.0).log_dirs
    read = ld.partitions[0]  # orders-0 (orders-2 is read too)
    lb = {"cluster": "c", "broker": "1", "topic": "orders"}
    assert reg.get_sample_value(M.P_CAUSE, lb | {"partition": "0", "cause": read.cause.cause}) == 1.0
    assert reg.get_sample_value(M.P_LOG_BYTES, lb | {"partition": "0"}) == read.state.log_bytes > 0
    assert reg.get_sample_value(M.P_END, lb | {"partition": "0"}) == 40  # offsets 0..39 written
    assert reg.get_sample_value(M.P_CAUSE, lb | {"partition": "1", "cause": "unknown"}) == 1.0
    assert reg.get_sample_value(M.P_STATE_UNKNOWN, lb | {"partition": "1", "reason": "segments_changing"}) == 1.0
    assert reg.get_sample_value(M.P_LOG_BYTES, lb | {"partition": "1"}) is None  # no figure made up
    # the topic: both partitions' causes, the worst said; the unknown one unhealthy; only the read one summed
    assert reg.get_sample_value(M.T_CAUSE, lb | {"cause": "unknown"}) == 1.0
    assert reg.get_sample_value(M.T_UNHEALTHY, lb) >= 1.0
    assert reg.get_sample_value(M.T_LOG_BYTES, lb) == sum(f.state.log_bytes for f in ld.partitions)
    assert [f.partition for f in ld.partitions] == [0, 2]
    assert reg.get_sample_value(M.LOG_DIR_UP, {"cluster": "c", "broker": "1", "log_dir": str(tmp_path / "b1")}) == 1.0


def test_granularity_topic_keeps_a_healthy_partitions_default_series_only(tmp_path):
    """orders-0 waits for the cleaner (unhealthy: every series out), orders-2 has only its active segment
    dirty (settled: the default series and its cause only)."""
    store = ff.store(tmp_path)
    every, default = (_registry(store, View(g)) for g in ("partition", "topic"))
    causes = {f.partition: f.cause.cause for f in from_statuses(store.statuses(), 200.0).log_dirs[0].partitions}
    assert causes == {0: "waiting", 2: "active_segment_only"}
    lb = {"cluster": "c", "broker": "1", "topic": "orders"}
    assert M.P_FIRST_DIRTY not in M.PARTITION_DEFAULT
    assert every.get_sample_value(M.P_FIRST_DIRTY, lb | {"partition": "2"}) == 30.0
    assert default.get_sample_value(M.P_FIRST_DIRTY, lb | {"partition": "2"}) is None
    assert default.get_sample_value(M.P_FIRST_DIRTY, lb | {"partition": "0"}) == 0.0
    for p, cause in causes.items():  # the cause series, always
        assert default.get_sample_value(M.P_CAUSE, lb | {"partition": str(p), "cause": cause}) == 1.0


def test_every_config_dependence_names_a_declared_metric():
    assert set(CONFIG_DEPENDS) <= set(M.METRICS)

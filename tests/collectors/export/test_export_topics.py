"""collectors.export.topics: the topics area maps the admin source's snapshot (its own types, filled as it
fills them) to each compacted topic's config, partitions, replicas and leaders' LSOs, and the
configuration review's findings from the refresh's facts."""

from __future__ import annotations

from dataclasses import replace

from prometheus_client import CollectorRegistry

import factsfixtures as ff
from collectors.export import metrics as M
from collectors.export.topics import ConfigReviewCollector, TopicCollector
from collectors.export.view import View
from collectors.serving.runner import Store
from monitor.model.topicconfig import TopicConfig

T = {"cluster": "c", "topic": "orders"}


def _registry(snapshot, view=None, *classes):
    store = Store()
    store.register("admin:c", "admin", "c")
    store.success("admin:c", snapshot, 0.0, 100.0)
    reg = CollectorRegistry(auto_describe=False)
    for cls in classes or (TopicCollector,):
        reg.register(cls(store, clock=lambda: 200.0, view=view))
    return reg


def test_kafkas_no_maximum_is_inf_and_each_replica_is_named(tmp_path):
    reg = _registry(ff.admin())
    assert reg.get_sample_value(M.T_MAX_LAG, T) == float("inf")  # max.compaction.lag.ms default: Long.MAX_VALUE
    assert reg.get_sample_value(M.T_MIN_RATIO, T) == TopicConfig().min_cleanable_dirty_ratio
    assert reg.get_sample_value(M.T_PARTITIONS, T) == 3
    assert reg.get_sample_value(M.P_REPLICA_INFO, T | {"broker": "1", "partition": "0", "role": "leader"}) == 1
    assert reg.get_sample_value(M.P_REPLICA_INFO, T | {"broker": "2", "partition": "0", "role": "follower"}) == 1
    limited = replace(ff.admin(), topics={"orders": replace(ff.admin().topics["orders"],
                                                            config=TopicConfig(cleanup_policy=("compact",), max_compaction_lag_ms=60_000))})
    assert _registry(limited).get_sample_value(M.T_MAX_LAG, T) == 60.0


def test_the_leaders_lso_at_granularity_topic_only_where_a_transaction_holds_it(tmp_path):
    lso = T | {"broker": "1", "partition": "0"}
    assert _registry(ff.admin(stable=40, latest=40)).get_sample_value(M.P_LEADER_LSO, lso) is None
    assert _registry(ff.admin(stable=40, latest=40), View("partition")).get_sample_value(M.P_LEADER_LSO, lso) == 40
    assert _registry(ff.admin(stable=30, latest=40)).get_sample_value(M.P_LEADER_LSO, lso) == 30


def test_the_review_finds_from_the_refreshs_facts(tmp_path):
    """A group lagging two days behind on a topic whose deletes are kept one day (Kafka's default
    delete.retention.ms): the review's pitfall, found from the group lags the facts joined."""
    store = ff.store(tmp_path, groups=(ff.lag(0, lag_seconds=172_800.0),))
    reg = CollectorRegistry(auto_describe=False)
    reg.register(ConfigReviewCollector(store, clock=lambda: 200.0))
    assert reg.get_sample_value(M.T_CONFIG_FINDING, T | {
        "check": "delete_retention_below_consumer_lag", "setting": "delete.retention.ms", "current": "86400000",
        "suggested": "345600000"}) == 1.0
    calm = CollectorRegistry(auto_describe=False)
    calm.register(ConfigReviewCollector(ff.store(tmp_path / "calm", groups=(ff.lag(0, lag_seconds=60.0),)),
                                        clock=lambda: 200.0))
    assert not [s for f in calm.collect() for s in f.samples if s.labels["check"].startswith("delete_retention")]

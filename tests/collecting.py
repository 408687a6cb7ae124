"""Helpers the collector tests share: a collector over one local broker, a refresh that must succeed,
and a partition series read from its registry."""

from __future__ import annotations

from collectors.app import build
from monitor.config import BrokerConfig, ClusterConfig, Config


def make_collector(state, granularity: str = "partition"):
    """The collector, as `collect` builds it, over the local broker ``state`` (cluster "local"); every
    series of every partition by default (the tests read healthy partitions' detail: granularity topic,
    the collector's default, is tested in test_cardinality_kafka and test_granularity)."""
    cfg = Config(granularity=granularity, clusters=(ClusterConfig(
        name="local", bootstrap_servers=state.bootstrap,
        brokers=(BrokerConfig(id=str(state.node_id), jmx_url=state.jmx_url, log_dirs=(state.log_dir,)),)),))
    return build(cfg)


def refresh(col):
    """Refresh every source once; every one must succeed. Returns the registry to read."""
    assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
    return col.registry


def pval(reg, name, topic, partition=0, **extra):
    """A partition series of the local broker (node 1) in cluster "local"."""
    return reg.get_sample_value(name, {"cluster": "local", "broker": "1", "topic": topic,
                                       "partition": str(partition), **extra})

"""Helpers the collector tests share: a collector over one local broker, a refresh that must succeed,
a partition series read from its registry, and ``collect --once`` over a config, in-process
(tests/clirun.py)."""

from __future__ import annotations

import yaml

from clirun import Ran, run_cli
from collectors.app import build
from monitor.settings.config import BrokerConfig, ClusterConfig, Config


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


def collect_once(config: dict, tmp_path, env: dict | None = None) -> Ran:
    """``compaction-monitor collect --once`` over ``config`` (written as monitor.yaml, mode 0600: it may
    name secrets), in-process with ``env`` set; its exposition is the stdout."""
    path = tmp_path / "monitor.yaml"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return run_cli("collect", "--once", "--config", path, env=env)

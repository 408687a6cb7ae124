"""What the admin API adds to the log's own view, against a real broker: the brokers'
transaction.max.timeout.ms (which open transactions are hanging), with the source of the value.
Expected values come from the broker's own settings (set at its start) and from the timestamps the
test writes."""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path

import pytest

from collectors.app import build, run_logdir
from kafkatools import (compacted, copy_partition, create_topic, own_broker, partition_dir, transactional_producer,
                        unique_topic)
from monitor.config import BrokerConfig, ClusterConfig, Config

pytestmark = pytest.mark.kafka

TIMEOUT = "transaction.max.timeout.ms"


def logdir_rows(log_dir: str, topic: str, dst: Path, **cluster) -> list[dict]:
    """``logdir --format json`` rows of ``topic``'s partition 0, read from a copy of the live partition
    (with the broker's cleaner checkpoint) that no segment swap cut through; the config file names the
    topic compacted (the cleaner may not have a checkpoint for it yet) and has ``cluster``'s keys."""
    if dst.exists():
        shutil.rmtree(dst)
    copy_partition(partition_dir(log_dir, topic), dst)
    shutil.copy(Path(log_dir) / "cleaner-offset-checkpoint", dst)
    out, err = io.StringIO(), io.StringIO()
    config = Config(clusters=(ClusterConfig(topics={topic: {"cleanup.policy": "compact"}}, **cluster),))
    assert run_logdir([dst], config=config, fmt="json", out=out, err=err) == 0, err.getvalue()
    return [r for r in json.loads(out.getvalue()) if r["topic"] == topic]


@pytest.mark.slow
def test_the_brokers_transaction_max_timeout_is_read_used_and_named(tmp_path_factory, tmp_path):
    """A broker whose transaction.max.timeout.ms is 1 h, and a transaction open since 30 min (its
    records' timestamps): hanging by Kafka's default (15 min), not by the broker's own value. The
    collector reads the broker's value through the admin API over the config file's (1 min, which would
    call it hanging); ``logdir`` has no broker to ask and takes the config file's, else the default."""
    broker_value, file_value = 3_600_000, 60_000
    with own_broker(tmp_path_factory.mktemp("kafka-txn-timeout"), "kafka txn timeout",
                    **{TIMEOUT: broker_value}) as state:
        t = create_topic(state.bootstrap, unique_topic("txn-timeout"), **compacted())
        opened_at = int(time.time() * 1000) - 30 * 60_000
        p = transactional_producer(state.bootstrap, f"{t}-open")
        p.begin_transaction()
        for i in range(10):
            p.produce(t, key=f"k{i}".encode(), value=b"v" * 20, partition=0, timestamp=opened_at)
        assert p.flush(30) == 0

        cfg = Config(clusters=(ClusterConfig(
            name="local", bootstrap_servers=state.bootstrap, transaction_max_timeout_ms=file_value,
            brokers=(BrokerConfig(id=str(state.node_id), log_dirs=(state.log_dir,)),)),))
        col = build(cfg)
        try:
            assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
            [snap] = [s.snapshot for s in col.store.statuses() if s.kind == "log_dirs"]
            assert (snap.transaction_max_timeout.value, snap.transaction_max_timeout.source) == (broker_value, "admin")
            [rep] = [r for r in snap.partitions if r.state.topic == t]
            [txn] = rep.state.open_transactions
            assert txn.first_timestamp == opened_at and txn.age_ms >= 30 * 60_000
            assert rep.state.hanging_transactions == 0  # 30 min < the broker's 1 h
        finally:
            col.close()

        [row] = logdir_rows(state.log_dir, t, tmp_path / "with-file", transaction_max_timeout_ms=2 * broker_value)
        assert (row["transaction_max_timeout_ms"], row["transaction_max_timeout_ms_source"]) == (
            2 * broker_value, "config")
        assert row["hanging_transactions"] == 0
        [row] = logdir_rows(state.log_dir, t, tmp_path / "default")
        assert (row["transaction_max_timeout_ms"], row["transaction_max_timeout_ms_source"]) == (900_000, "default")
        assert row["hanging_transactions"] == 1  # 30 min > Kafka's default 15 min
        assert row["open_transactions"][0]["first_timestamp"] == opened_at
        p.abort_transaction(30)

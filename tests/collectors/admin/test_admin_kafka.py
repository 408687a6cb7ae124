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

from cli.logdir_cmd import run_logdir
from collectors.app import build
from kafkatools import (compacted, copy_partition, create_topic, own_broker, partition_dir, transactional_producer,
                        unique_topic)
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from waiting import wait_for

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
            brokers=(BrokerConfig(id=str(state.node_id), log_dirs=(state.log_dir,)),)),),
            granularity="partition")  # reads a healthy partition's detail
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


# ------------------------------------------------------------------ the LSO from the log and from the leader

LSO_GAUGE = "kafka_compaction_partition_last_stable_offset"
LEADER_LSO_GAUGE = "kafka_compaction_partition_leader_last_stable_offset"
DISAGREEMENT = "kafka_compaction_partition_last_stable_offset_disagreement_seconds"


def _end(bootstrap: str, topic: str, level) -> int:
    """ListOffsets(latest): the broker's LSO at READ_COMMITTED, its high watermark at READ_UNCOMMITTED."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    return admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=level)[tp].result(30).offset


def broker_lso_and_hw(bootstrap: str, topic: str) -> tuple[int, int]:
    from confluent_kafka import IsolationLevel

    return _end(bootstrap, topic, IsolationLevel.READ_COMMITTED), _end(bootstrap, topic, IsolationLevel.READ_UNCOMMITTED)


def wait_stable_end(bootstrap: str, topic: str) -> int:
    """Wait until the broker's LSO reaches its high watermark (a commit returns before the coordinator
    has written the partition's marker); return it."""
    return wait_for(lambda: (lambda lso, hw: lso if lso == hw else None)(*broker_lso_and_hw(bootstrap, topic)),
                    60, f"{topic}'s LSO to reach its end")


def _transaction(p, topic: str, prefix: str, n: int = 20) -> None:
    p.begin_transaction()
    for i in range(n):
        p.produce(topic, key=f"{prefix}-{i}".encode(), value=f"{prefix}-value-{i}".encode() * 4, partition=0)
    assert p.flush(30) == 0


def _report(col, topic: str):
    [snap] = [s.snapshot for s in col.store.statuses() if s.kind == "log_dirs"]
    [rep] = [r for r in snap.partitions if r.state.topic == topic]
    return snap, rep


def _copy_collector(kafka, root: Path):
    """A collector whose log dir is ``root`` (a copy of partitions) and whose admin source is the
    session's broker: the copy is read as broker ``kafka.node_id``'s replica."""
    return build(Config(clusters=(ClusterConfig(
        name="local", bootstrap_servers=kafka.bootstrap, consumer_groups=False,
        brokers=(BrokerConfig(id=str(kafka.node_id), log_dirs=(str(root),)),)),),
        granularity="partition"))  # the tests read healthy partitions' detail


def _copy(kafka, topic: str, root: Path) -> Path:
    copy_partition(partition_dir(kafka.log_dir, topic), root)
    shutil.copy(Path(kafka.log_dir) / "cleaner-offset-checkpoint", root)
    return root / f"{topic}-0"


def test_an_open_transaction_gives_the_same_lso_from_the_log_and_the_leader(kafka):
    """With a transaction left open, the LSO the log gives equals the leader's (ListOffsets at
    READ_COMMITTED, asked by the test itself), and every exported LSO value is that offset."""
    from collecting import make_collector, pval, refresh

    b = kafka.bootstrap
    t = create_topic(b, unique_topic("lso-agree"), **compacted())
    done = transactional_producer(b, f"{t}-done")
    _transaction(done, t, "committed")
    done.commit_transaction(30)
    p = transactional_producer(b, f"{t}-open")
    col = make_collector(kafka)
    try:
        _transaction(p, t, "open")
        from kafkatools import produce, roll

        roll(b, t)
        produce(b, t, [(f"k{i}".encode(), b"later") for i in range(20)])
        lso, hw = broker_lso_and_hw(b, t)
        assert lso < hw  # the broker holds its LSO at the open transaction
        reg = refresh(col)
        _, rep = _report(col, t)
        assert (rep.lso_check.log, rep.lso_check.admin, rep.lso_check.agree, rep.lso_check.source) == (
            lso, lso, True, "log")
        assert rep.state.last_stable_offset_source == "log" and rep.lso_disagreement is None
        assert rep.state.open_transactions[0].first_offset == lso
        assert pval(reg, LSO_GAUGE, t) == lso
        assert pval(reg, LEADER_LSO_GAUGE, t) == lso  # broker "1" is the leader: the single broker
        assert pval(reg, "kafka_compaction_partition_first_uncleanable_offset", t) == lso
        assert pval(reg, "kafka_compaction_partition_open_transactions", t) == 1
        assert pval(reg, "kafka_compaction_partition_log_end_offset", t) == hw
        assert pval(reg, DISAGREEMENT, t, lso_source="log") == 0.0
        assert pval(reg, DISAGREEMENT, t, lso_source="admin") is None
    finally:
        col.close()
        p.abort_transaction(30)


def test_a_log_read_before_a_commit_disagrees_with_the_leader_and_the_log_wins(kafka, tmp_path):
    """The log dir read is a copy taken while a transaction was open; the leader has committed it since.
    The two disagree, the log holds the lower LSO, the model uses the log's (what a cleaner on that copy
    would see), and the same disagreement is kept across refreshes (its start does not move)."""
    from collecting import pval

    b = kafka.bootstrap
    t = create_topic(b, unique_topic("lso-disagree"), **compacted())
    p = transactional_producer(b, f"{t}-open")
    _transaction(p, t, "open")
    open_lso, _ = broker_lso_and_hw(b, t)
    _copy(kafka, t, tmp_path / "copy")
    p.commit_transaction(30)
    lso = wait_stable_end(b, t)  # committed: the leader's LSO is its end
    assert lso > open_lso

    col = _copy_collector(kafka, tmp_path / "copy")
    try:
        assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
        first_snap, rep = _report(col, t)
        c = rep.lso_check
        assert (c.log, c.admin, c.agree, c.held_by, c.source) == (open_lso, lso, False, "log", "log")
        assert f"the log holds the LSO at {open_lso}" in c.detail and f"says {lso}" in c.detail
        assert rep.state.last_stable_offset == open_lso and rep.state.last_stable_offset_source == "log"
        since = rep.lso_disagreement.since
        assert (rep.lso_disagreement.held_by, rep.lso_disagreement.offset, since) == ("log", open_lso,
                                                                                      first_snap.taken_at)

        assert col.runner.refresh_all()
        snap, rep = _report(col, t)
        assert rep.lso_disagreement.since == since < snap.taken_at  # the same disagreement, still
        reg = col.registry
        assert pval(reg, LSO_GAUGE, t) == open_lso and pval(reg, LEADER_LSO_GAUGE, t) == lso
        assert pval(reg, DISAGREEMENT, t, lso_source="log") >= snap.taken_at - since > 0
        assert pval(reg, DISAGREEMENT, t, lso_source="admin") is None
    finally:
        col.close()


def test_a_fold_broken_by_a_corrupt_marker_gives_way_to_the_leaders_lso(kafka, tmp_path):
    """In a copy of a committed transaction's partition, the COMMIT marker's batch is damaged (its CRC
    no longer matches): the fold misses it and sees the transaction open. This broker leads the
    partition, so the leader's LSO is this replica's own: the model uses it, and says so."""
    from dumpcompare import dump
    from kafkatools import roll, segment_bases

    b = kafka.bootstrap
    # never cleaned (no ratio exceeds 1.0): the copy keeps the marker whenever it is taken
    t = create_topic(b, unique_topic("lso-fault"), **compacted(**{"min.cleanable.dirty.ratio": 1.0}))
    p = transactional_producer(b, f"{t}-done")
    _transaction(p, t, "committed")
    p.commit_transaction(30)
    wait_stable_end(b, t)
    roll(b, t)  # the transaction and its marker below the active segment
    lso = wait_stable_end(b, t)
    folder = _copy(kafka, t, tmp_path / "copy")
    first, active = segment_bases(folder)
    _, batches = dump([folder / f"{first:020d}.log"])
    [marker] = [x for x in batches if x.is_control]
    assert marker.is_transactional and marker.last_offset == active - 1
    segment = folder / f"{first:020d}.log"
    data = bytearray(segment.read_bytes())
    data[marker.position + marker.size - 1] ^= 0xFF  # a byte the batch's CRC covers
    segment.write_bytes(bytes(data))

    col = _copy_collector(kafka, tmp_path / "copy")
    try:
        assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
        snap, rep = _report(col, t)
        assert (t, 0) in snap.partition_errors and rep.state.faults == 1
        c = rep.lso_check
        assert (c.log, c.admin, c.agree, c.held_by, c.source) == (first, lso, False, "log", "admin")
        assert "read fault" in c.detail and "this broker leads the partition" in c.detail
        assert rep.state.last_stable_offset == lso and rep.state.last_stable_offset_source == "admin"
        # the transaction the damaged fold saw open holds nothing back: only the active segment does
        assert rep.state.first_uncleanable_offset == active and rep.state.uncleanable_reason == "active_segment"
        assert rep.state.blocked_by is None
    finally:
        col.close()

"""A genuinely hanging transaction on a real broker (KIP-664): a transactional batch of a producer id the
coordinator never gave out, appended because the broker's transaction.partition.verification.enable is
off. No coordinator will ever end it; only ``kafka-transactions.sh abort`` can. The expected values come
from the broker: its own ``kafka-transactions.sh find-hanging`` (producer id, start offset), its
READ_COMMITTED ListOffsets (the LSO) and, after the abort, its high watermark."""

from __future__ import annotations

import io
import json
import time

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from collecting import make_collector, pval, refresh
from cli.logdir_cmd import run_logdir
from kafkatools import compacted, create_topic, own_broker, partition_dir, produce, produce_raw, roll, localtools
from monitor.model.compaction import partition_state
from monitor.settings.config import Config
from monitor.kafka.logdir import scan_partition
from monitor.model.summary import summarize
from monitor.model.topicconfig import TopicConfig
from recordfixtures import Rec, v2
from waiting import wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

GHOST_PID, GHOST_EPOCH = 424_242, 5  # the coordinator of a fresh broker hands out ids from 0 on
AGE_MS = 3_600_000  # the batch's create time lies an hour back: past find-hanging's default 15 min


def _end(bootstrap: str, topic: str, level: IsolationLevel) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    return admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=level)[tp].result(30).offset


def _find_hanging(bootstrap: str, node_id: int) -> list[dict]:
    proc = localtools.transactions_tool(bootstrap, "find-hanging", "--broker-id", str(node_id))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()]
    assert lines[0][:6] == ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset"]
    return [dict(zip(lines[0], row)) for row in lines[1:]]


def _logdir_row(log_dir: str, topic: str) -> dict:
    """``logdir --topic-config TOPIC:cleanup.policy=compact`` (the cleaner, held at the LSO in the first
    segment, has no checkpoint for it yet, so nothing else says the topic is compacted)."""
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([log_dir], config=Config(), fmt="json", out=out, err=err,
                      topic_overrides={topic: {"cleanup.policy": "compact"}}) == 0, err.getvalue()
    return next(r for r in json.loads(out.getvalue()) if r["topic"] == topic)


def _hanging_with(log_dir: str, topic: str, timeout_ms: int, now_ms: int) -> int:
    """The partition's hanging count for a given transaction.max.timeout.ms, from its segments."""
    part = scan_partition(partition_dir(log_dir, topic))
    segs = [summarize(s.log, s.base_offset)[0] for s in part.segments]
    return partition_state(topic, 0, segs, TopicConfig(), now_ms, transaction_max_timeout_ms=timeout_ms
                           ).hanging_transactions


def test_kip664_hanging_transaction_found_counted_and_aborted(tmp_path):
    with own_broker(tmp_path / "broker", "kip-664 broker", **{"transaction.partition.verification.enable": "false"}
                    ) as state:
        b = state.bootstrap
        t = create_topic(b, "ghost", **compacted())
        produce(b, t, [(f"k{i}".encode(), b"before" * 8) for i in range(40)])
        written_at = int(time.time() * 1000) - AGE_MS
        batch = v2([Rec(i, written_at, f"ghost-{i}".encode(), b"never ends" * 4) for i in range(5)],
                   producer_id=GHOST_PID, producer_epoch=GHOST_EPOCH, base_sequence=0, transactional=True)
        error, first = produce_raw(b, t, batch.data, transactional_id="no-such-coordinator-state")
        assert error == 0 and first == 40
        produce(b, t, [(f"k{i}".encode(), b"after" * 8) for i in range(40)])
        roll(b, t)  # the hanging transaction's batch now lies below the active segment

        # the broker's own view: its tool lists it, its LSO is held at its first offset
        [found] = [h for h in _find_hanging(b, state.node_id) if h["Topic"] == t]
        assert (int(found["Partition"]), int(found["ProducerId"]), int(found["ProducerEpoch"])) == (
            0, GHOST_PID, GHOST_EPOCH)
        lso = _end(b, t, IsolationLevel.READ_COMMITTED)
        assert int(found["StartOffset"]) == lso == first
        assert _end(b, t, IsolationLevel.READ_UNCOMMITTED) > lso

        # ours, from the log itself (and checked against the broker's producer snapshot)
        row = _logdir_row(state.log_dir, t)
        assert [(x["producer_id"], x["producer_epoch"], x["first_offset"], x["first_timestamp"], x["hanging"])
                for x in row["open_transactions"]] == [(GHOST_PID, GHOST_EPOCH, lso, written_at, True)]
        assert row["last_stable_offset"] == lso and row["hanging_transactions"] == 1
        assert row["transactions_checked_with"] is not None and row["transaction_faults"] == []
        now_ms = int(time.time() * 1000)
        assert _hanging_with(state.log_dir, t, 2 * AGE_MS, now_ms) == 0  # open an hour: within 2 h it is not
        assert _hanging_with(state.log_dir, t, AGE_MS // 2, now_ms) == 1
        col = make_collector(state)
        try:
            reg = refresh(col)
            assert pval(reg, "kafka_compaction_partition_open_transactions", t) == 1
            assert pval(reg, "kafka_compaction_partition_hanging_transactions", t) == 1
            assert pval(reg, "kafka_compaction_partition_last_stable_offset", t) == lso

            # the fix find-hanging points to: abort it by its start offset
            proc = localtools.transactions_tool(b, "abort", "--topic", t, "--partition", found["Partition"],
                                                 "--start-offset", found["StartOffset"])
            assert proc.returncode == 0, proc.stderr[-2000:]
            end = wait_for(lambda: (lambda lo, hi: hi if lo == hi else None)(
                _end(b, t, IsolationLevel.READ_COMMITTED), _end(b, t, IsolationLevel.READ_UNCOMMITTED)), 60,
                f"{t}'s LSO to reach its high watermark after the abort")
            assert _find_hanging(b, state.node_id) == []
            row = _logdir_row(state.log_dir, t)
            assert row["open_transactions"] == [] and row["hanging_transactions"] == 0
            assert row["last_stable_offset"] == row["log_end_offset"] == end
            reg = refresh(col)
            assert pval(reg, "kafka_compaction_partition_open_transactions", t) == 0
            assert pval(reg, "kafka_compaction_partition_hanging_transactions", t) == 0
            assert pval(reg, "kafka_compaction_partition_last_stable_offset", t) == end
        finally:
            col.close()

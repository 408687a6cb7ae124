"""An open transaction holds the cleaner at the last stable offset: ``logdir`` reads it from the log
itself and says so, against a real broker. Expected values come from the broker (its LSO through the
admin API's READ_COMMITTED ListOffsets, its cleaner checkpoint) and from kafka-dump-log."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from cli.logdir_cmd import run_logdir
from dumpcompare import dump_partition
from kafkatools import (cleaner_checkpoint, compacted, copy_partition, create_topic, partition_dir, produce,
                        producer, roll, segment_bases, unique_topic)
from monitor.settings.config import Config
from collecting import make_collector, pval, refresh
from waiting import wait_for

pytestmark = pytest.mark.kafka


def _txn_producer(bootstrap: str, tid: str):
    # a transaction.timeout.ms far longer than the test, so the coordinator never aborts the open one
    p = producer(bootstrap, **{"transactional.id": tid, "transaction.timeout.ms": 600_000})
    p.init_transactions(30)
    return p


def _transaction(p, topic: str, prefix: str, n: int = 20) -> None:
    p.begin_transaction()
    for i in range(n):
        p.produce(topic, key=f"{prefix}-{i}".encode(), value=f"{prefix}-value-{i}".encode() * 4, partition=0)
    assert p.flush(30) == 0


def _end(bootstrap: str, topic: str, level=IsolationLevel.READ_COMMITTED) -> int:
    """ListOffsets(latest): the broker's LSO at READ_COMMITTED, its high watermark at READ_UNCOMMITTED."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    return admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=level)[tp].result(30).offset


def _hw(bootstrap: str, topic: str) -> int:
    return _end(bootstrap, topic, IsolationLevel.READ_UNCOMMITTED)


def _logdir_row(kafka, folder: Path, dst: Path) -> dict:
    if dst.exists():
        shutil.rmtree(dst)
    copy_partition(folder, dst)
    shutil.copy(Path(kafka.log_dir) / "cleaner-offset-checkpoint", dst)
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([dst], config=Config(), fmt="json", out=out, err=err) == 0, err.getvalue()
    [row] = json.loads(out.getvalue())
    return row


@pytest.fixture
def collector(kafka):
    col = make_collector(kafka)
    yield col
    col.close()


def test_open_transaction_holds_the_cleaner_at_the_lso(kafka, collector, tmp_path):
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("txn"), **compacted())
    folder = partition_dir(kafka.log_dir, t)
    produce(b, t, [(f"k{i}".encode(), b"plain" * 8) for i in range(50)])
    done = _txn_producer(b, f"{t}-done")
    _transaction(done, t, "committed")
    done.commit_transaction(30)
    _transaction(done, t, "aborted")
    done.abort_transaction(30)
    roll(b, t)
    hanging = _txn_producer(b, f"{t}-open")
    committed = False
    try:
        _transaction(hanging, t, "open")
        roll(b, t)  # the open transaction's data now sits below the active segment
        produce(b, t, [(f"k{i}".encode(), b"later" * 8) for i in range(50)])  # dirty data above the LSO
        roll(b, t)
        produce(b, t, [(b"k0", b"active")])

        lso = _end(b, t)
        assert lso < _hw(b, t)
        # the cleaner cleans what lies below the segment holding the LSO, never past the LSO
        lso_segment = max(x for x in segment_bases(folder) if x <= lso)
        cp = wait_for(lambda: (lambda v: v if v is not None and v >= lso_segment else None)(
            cleaner_checkpoint(kafka.log_dir, t)), 90, f"the cleaner to clean {t} up to its LSO's segment")
        assert cp <= lso

        # kafka-dump-log: the first batch of the open transaction's keys, and the markers of the other two
        _, batches = dump_partition(folder, tmp_path / "dump")
        first_open = next(x for x in batches if not x.is_control
                          and any(r.key == b"open-0" for r in x.records()))
        assert first_open.is_transactional and first_open.base_offset == lso
        markers = [r.control_type for x in batches if x.is_control for r in x.records()]
        assert markers == ["COMMIT", "ABORT"]

        row = _logdir_row(kafka, folder, tmp_path / "logdir")
        assert row["last_stable_offset"] == lso
        assert row["first_uncleanable_offset"] == lso
        assert row["uncleanable_reason"] == "last_stable_offset"
        assert row["first_dirty_offset"] == cp
        assert row["cleanable_bytes"] == 0 and row["cleanable_ratio"] == 0.0
        assert row["eligible"] is False
        assert row["uncleaned_bytes"] > 0 and row["blocked_by"] == "last_stable_offset"
        [txn] = row["open_transactions"]
        assert (txn["producer_id"], txn["producer_epoch"], txn["first_offset"], txn["first_timestamp"]) == (
            first_open.producer_id, first_open.producer_epoch, lso, first_open.max_timestamp)
        assert f"producer {first_open.producer_id} " in row["blocked_detail"]
        assert f"from offset {lso}," in row["blocked_detail"]
        # the row's cause names the open transaction, and the abort at the broker's LSO (monitor.verdicts.causes)
        assert row["cause"]["cause"] == "open_transaction"
        assert row["cause"]["evidence"]["transaction"]["producer_id"] == first_open.producer_id
        assert row["cause"]["fix"][0].endswith(f"abort --topic {t} --partition 0 --start-offset {lso}")

        reg = refresh(collector)
        assert pval(reg, "kafka_compaction_partition_last_stable_offset", t) == lso
        assert pval(reg, "kafka_compaction_partition_first_uncleanable_offset", t) == lso
        assert pval(reg, "kafka_compaction_partition_open_transactions", t) == 1
        assert pval(reg, "kafka_compaction_partition_oldest_open_transaction_age_seconds", t) is not None
        assert pval(reg, "kafka_compaction_partition_compaction_blocked", t, reason="last_stable_offset") == 1

        hanging.commit_transaction(30)
        committed = True
    finally:
        if not committed:  # a failed assertion: leave no transaction open on the session's broker
            hanging.abort_transaction(30)
        del hanging
    wait_for(lambda: _end(b, t) == _hw(b, t) or None, 30, f"{t}'s LSO to reach its end")
    roll(b, t)  # the commit marker below the active segment: the cleaner may pass the old LSO
    wait_for(lambda: (lambda v: v if v is not None and v > lso else None)(cleaner_checkpoint(kafka.log_dir, t)),
             90, f"the cleaner to clean {t} past the old LSO {lso}")
    row = _logdir_row(kafka, folder, tmp_path / "logdir")
    assert row["open_transactions"] == [] and row["blocked_detail"] is None
    assert row["last_stable_offset"] == row["log_end_offset"]
    assert row["uncleanable_reason"] == "active_segment"
    assert row["cause"]["cause"] != "open_transaction"
    reg = refresh(collector)
    assert pval(reg, "kafka_compaction_partition_open_transactions", t) == 0
    assert pval(reg, "kafka_compaction_partition_oldest_open_transaction_age_seconds", t) is None
    assert pval(reg, "kafka_compaction_partition_last_stable_offset", t) == row["log_end_offset"]

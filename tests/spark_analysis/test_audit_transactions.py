"""The audit on transactional partitions written by a real broker: aborted data and the markers a clean
may drop count as removable as Kafka's cleaner decides (monitor.model.txncleaner), and nothing at or past
the last stable offset does. Expected values come from the broker: the size its cleaner leaves, its
LSO (ListOffsets at READ_COMMITTED), and kafka-dump-log's batches of the same files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from dumpcompare import dump
from kafkatools import (copy_partition, create_topic, partition_dir, produce, producer, roll, set_topic_config,
                        unique_topic, wait_cleaned_up_to_active)
from monitor.model.summary import summarize
from monitor.model.topicconfig import TopicConfig
from monitor.model.txncleaner import RETAINED_EMPTY_BATCH_BYTES
from monitor.model.txnindex import txn_index_faults
from spark_analysis.inputs import list_inputs, read_checkpoints

pytestmark = pytest.mark.kafka

DAY = 86_400_000
CFG = {"cleanup.policy": "compact", "segment.ms": 300, "min.cleanable.dirty.ratio": 1.0,
       "delete.retention.ms": DAY, "min.compaction.lag.ms": 0}
PAD = b"v" * 200


def txn_producer(bootstrap: str, tid: str):
    p = producer(bootstrap, **{"transactional.id": tid, "transaction.timeout.ms": 600_000, "linger.ms": 20})
    p.init_transactions(30)
    return p


def write(p, topic: str, keys) -> None:
    for k in keys:
        p.produce(topic, key=k.encode(), value=PAD + k.encode(), partition=0)
    assert p.flush(30) == 0


def size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.glob("*.log"))


def summaries(folder: Path) -> list:
    return [summarize(f, int(f.name[:-4]))[0] for f in sorted(folder.glob("*.log"))]


def fill_transactional(b: str, t: str) -> None:
    """Plain rounds and two transactional producers, interleaved: commits that overwrite keys, aborts
    that would overwrite keys (and add keys only aborted data holds), an abort whose data spans a
    segment roll, a plain round overwriting part of it all; every transaction decided."""
    a, c = txn_producer(b, f"{t}-a"), txn_producer(b, f"{t}-c")
    produce(b, t, [(f"k{i}".encode(), PAD + b"plain") for i in range(600)])
    roll(b, t, wait=0.4)
    a.begin_transaction()
    write(a, t, [f"k{i}" for i in range(0, 300)])
    c.begin_transaction()
    write(c, t, [f"k{i}" for i in range(300, 600)] + [f"only-aborted-{i}" for i in range(200)])
    a.commit_transaction(30)
    c.abort_transaction(30)
    roll(b, t, wait=0.4)
    a.begin_transaction()
    write(a, t, [f"k{i}" for i in range(100, 400)])
    roll(b, t, wait=0.4)
    write(a, t, [f"k{i}" for i in range(400, 500)])
    a.abort_transaction(30)
    c.begin_transaction()
    write(c, t, [f"k{i}" for i in range(0, 200)])
    c.commit_transaction(30)
    produce(b, t, [(f"k{i}".encode(), PAD + b"again") for i in range(0, 600, 3)])
    roll(b, t, wait=0.4)


@pytest.fixture(scope="module")
def txn_cleaned(kafka, tmp_path_factory):
    """A transactional topic copied before the broker cleans it (min.cleanable.dirty.ratio 1.0 keeps it
    dirty), then cleaned by the broker (ratio 0.01 forces the clean); the size the broker left."""
    root = tmp_path_factory.mktemp("txn-audit")
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("txnaudit"), **CFG)
    fill_transactional(b, t)
    folder = partition_dir(kafka.log_dir, t)
    before = copy_partition(folder, root / "before" / "data", suffixes=(".log", ".txnindex"))
    set_topic_config(b, t, **{"min.cleanable.dirty.ratio": 0.01})
    wait_cleaned_up_to_active(kafka.log_dir, t)
    after = copy_partition(folder, root / "after", suffixes=(".log", ".txnindex"))
    return {"topic": t, "before": before, "input": root / "before", "after": after}


def run_audit_of(spark, inputs, topic):
    from spark_analysis.audit import AuditInputs, run_audit

    paths = [str(inputs)]
    cps, starts = read_checkpoints(paths)
    return run_audit(spark, AuditInputs(kind="segments", files=list_inputs("segments", paths), checkpoints=cps,
                                        log_starts=starts, topic_configs={topic: TopicConfig.from_strings(CFG)}))


def test_projected_size_of_a_transactional_partition_is_what_the_broker_left(spark, txn_cleaned):
    """Aborted batches below the bound go (the producer's last kept as an empty batch), aborted records
    supersede nothing, markers stay (the first clean only sets their delete horizon): the projection
    of the copy taken before the clean is the size the broker's clean left, counted (``monitor.model.nextclean``)."""
    t = txn_cleaned["topic"]
    [row] = [r.asDict() for r in run_audit_of(spark, txn_cleaned["input"], t).partitions.collect()]
    after = size(txn_cleaned["after"])
    assert row["bytes"] == size(txn_cleaned["before"])
    assert (row["next_clean_bytes"], row["projection_method"]) == (after, "counted"), (row, after)
    assert row["reclaimable_bytes"] == row["bytes"] - after
    _, batches = dump(sorted(txn_cleaned["before"].glob("*.log")))
    # after the clean: no aborted key is left, the markers are all still there, and the cleaned
    # .txnindex files agree with the cleaned log (entries only with their retained markers)
    _, cleaned = dump(sorted(txn_cleaned["after"].glob("*.log")))
    assert not any(r.key and r.key.startswith(b"only-aborted") for x in cleaned for r in x.records())
    markers = lambda bs: [(x.producer_id, x.base_offset) for x in bs if x.is_control]  # noqa: E731
    assert markers(cleaned) == markers(batches)
    kept_empty = [x for x in cleaned if not x.is_control and x.records_count == 0]
    assert all(x.size == RETAINED_EMPTY_BATCH_BYTES for x in kept_empty)
    after_sums = summaries(txn_cleaned["after"])
    assert txn_index_faults(after_sums, after_sums[-1].base_offset) == []
    before_sums = summaries(txn_cleaned["before"])
    assert txn_index_faults(before_sums, before_sums[0].base_offset) == []


def _end(bootstrap: str, topic: str, level) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    return admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=level)[tp].result(30).offset


def test_nothing_at_or_past_the_last_stable_offset_counts_as_removable(kafka, tmp_path):
    """An open transaction holds the LSO: the audit's bound is the segment holding the broker's LSO, an
    aborted transaction below it is removable (its batches' sizes, by hand from kafka-dump-log), one
    after it and the overwrites after it are not."""
    from spark_analysis.audit.tables import partition_row
    from spark_analysis.partition_audit import PartitionTask, audit_partition
    from spark_analysis.rows import rows_of
    import pyarrow as pa
    from monitor.model.estimate import CleanerParams

    b = kafka.bootstrap
    t = create_topic(b, unique_topic("txnlso"), **CFG)
    a, hang = txn_producer(b, f"{t}-a"), txn_producer(b, f"{t}-open")
    produce(b, t, [(f"k{i}".encode(), PAD) for i in range(100)])
    a.begin_transaction()
    write(a, t, [f"early-{i}" for i in range(100)])
    a.abort_transaction(30)
    roll(b, t, wait=0.4)
    hang.begin_transaction()
    decided = False
    try:
        write(hang, t, ["open-0"])
        roll(b, t, wait=0.4)
        a.begin_transaction()
        write(a, t, [f"late-{i}" for i in range(100)])
        a.abort_transaction(30)
        produce(b, t, [(f"k{i}".encode(), PAD + b"new") for i in range(100)])
        roll(b, t, wait=0.4)
        lso = _end(b, t, IsolationLevel.READ_COMMITTED)
        assert lso < _end(b, t, IsolationLevel.READ_UNCOMMITTED)
        folder = copy_partition(partition_dir(kafka.log_dir, t), tmp_path)
        hang.abort_transaction(30)
        decided = True
    finally:
        if not decided:
            hang.abort_transaction(30)
    files = sorted((str(f), f.stat().st_size) for f in folder.glob("*.log"))
    task = PartitionTask(t, 0, files, TopicConfig.from_strings(CFG), int(time.time() * 1000))
    table = pa.Table.from_batches(list(audit_partition(task, lambda u: open(u, "rb"))))
    [facts] = rows_of(table, "facts")
    [totals] = rows_of(table, "key_totals")
    bases = sorted(int(Path(u).name[:-4]) for u, _ in files)
    assert facts["first_uncleanable_offset"] == lso
    upper = max(x for x in bases if x <= lso)
    _, batches = dump(sorted(folder.glob("*.log")))
    early = [x for x in batches if not x.is_control and any(r.key.startswith(b"early-") for r in x.records())]
    late = [x for x in batches if not x.is_control and any(r.key.startswith(b"late-") for r in x.records())]
    assert all(x.base_offset < upper for x in early) and all(x.base_offset >= lso for x in late)
    pid = early[0].producer_id
    last_data = max(x.last_offset for x in batches if not x.is_control and x.producer_id == pid)
    assert last_data > upper  # a's last data is the late abort's: every early batch goes whole
    # the projection counts the aborted data (TxnCleaning's totals are not counted beside it)
    assert facts["txn_removable_records"] is None and facts["txn_reclaimable_bytes"] is None
    assert facts["projected_removable_records"] == sum(x.records_count for x in early)
    # the plain overwrites past the LSO supersede nothing: the first round's keys stay
    assert totals["removable_records"] == 0 and totals["share_reclaimable_bytes"] == 0
    row = partition_row(facts, totals, CleanerParams())
    assert row["next_clean_bytes"] == row["bytes"] - sum(x.size for x in early)  # counted the same way

"""The records path: kafka-dump-log dumps (``kafka-dumps``) and a live topic (Spark's Kafka source,
``topic_input``) arrive as a DataFrame of records, one row per record, partitions mixed.

Why not a groupBy per key: the fold (``partition_fold``) is the one definition of what a clean keeps,
and it folds a partition's records in offset order. So the records are grouped per partition by
Spark (repartitioned by topic and partition, sorted by offset within) and each task runs the same
fold as the segments path (``mapInArrow``). The fold needs Kafka's bounds first: they come from a
small aggregate per segment (sizes, offsets, timestamps), judged on the driver as the segments path's
tasks judge headers (``partition_audit.bounds_for``), and reach the tasks as plain JSON.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from monitor.model.summary import SegmentSummary
from spark_analysis.audit.shapes import AuditInputs, Found, collect_small

NARROW = ["topic", "partition", "segment", "segment_base_offset", "segment_bytes", "batch_position", "batch_bytes",
          "offset", "timestamp", "key", "key_size", "value_size", "record_bytes", "tombstone", "control",
          "producer_id"]
FOLDED = ["topic", "partition", "offset", "timestamp", "key_hash", "key", "key_size", "value_size", "record_bytes",
          "producer_id"]


def segment_table(data: DataFrame) -> list:
    """One row per segment: size, offsets, timestamps, record counts (from the records)."""
    return (data.groupBy("topic", "partition", "segment", "segment_base_offset")
            .agg(F.coalesce(F.max("segment_bytes"), F.max(F.col("batch_position") + F.col("batch_bytes"))).alias("size"),
                 (F.max("offset") + 1).alias("next_offset"),
                 F.max("timestamp").alias("max_timestamp"),
                 F.max(F.when(F.col("batch_position") == 0, F.col("timestamp"))).alias("first_batch_max_ts"),
                 F.min("offset").alias("first_offset"), F.min("timestamp").alias("min_timestamp"),
                 F.count(F.when(~F.col("control"), 1)).alias("records"),
                 F.count(F.when(F.col("control"), 1)).alias("control_records"))
            .collect())


def judge_partitions(inputs: AuditInputs, segs: list) -> list[tuple]:
    """(facts, Bounds) of every partition, judged on the driver from the small segment table."""
    from spark_analysis.keyfold import Bounds
    from spark_analysis.partition_audit import bounds_for, bucket_for, retention_for, retention_counts
    from spark_analysis.partition_audit import partition_facts as facts_of
    from spark_analysis.projection import estimated

    by_part: dict = {}
    for r in segs:
        by_part.setdefault((r["topic"], r["partition"]), []).append(r)
    judged = []
    for (topic, part), rows in sorted(by_part.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or -1)):
        summaries = []
        for r in rows:
            base = r["segment_base_offset"] if r["segment_base_offset"] is not None else r["first_offset"]
            summaries.append(SegmentSummary(
                r["segment"], base, size=int(r["size"] or 0), next_offset=r["next_offset"],
                max_timestamp=r["max_timestamp"] if r["max_timestamp"] is not None else -1,
                first_batch_max_timestamp=r["first_batch_max_ts"] if r["first_batch_max_ts"] is not None else -1))
        cfg = inputs.config(topic)
        st, upper = bounds_for(topic, part, summaries, cfg, inputs.now_ms, inputs.checkpoints.get((topic, part)),
                               inputs.log_starts.get((topic, part)), live_topic=inputs.kind == "topic")
        ts = [x for r in rows for x in (r["min_timestamp"], r["max_timestamp"]) if x is not None]
        counts = {"records": sum(r["records"] for r in rows), "control_records": sum(r["control_records"] for r in rows),
                  "first_timestamp": min(ts, default=None), "last_timestamp": max(ts, default=None)}
        retention = None if inputs.kind == "topic" else retention_for(st, summaries, cfg, inputs.now_ms)
        counts.update(retention_counts(retention))
        judged.append(({**facts_of(topic, part, st, len(rows), counts, cfg, 0), **estimated(inputs.kind)},
                       Bounds(topic, part, upper=upper, first_dirty=st.first_dirty_offset,
                              expired_before_ms=inputs.now_ms - cfg.delete_retention_ms, bucket_ms=0,
                              retained_from=retention.log_start_offset if retention and retention.moves else -1)))
    span = max(((f["last_timestamp"] or 0) - (f["first_timestamp"] or 0) for f, _ in judged), default=0)
    bucket = inputs.bucket_ms or bucket_for(span)
    per_topic: dict = {}
    for topic, _ in by_part:
        per_topic[topic] = per_topic.get(topic, 0) + 1
    return [({**f, "bucket_ms": bucket}, Bounds(**{**b.to_json(), "bucket_ms": bucket,
                                                  "key_hashes": per_topic[b.topic] > 1})) for f, b in judged]


def fold_partitions(bounds: dict, top_n: int, max_keys: int | None, window: int | None):
    """The ``mapInArrow`` function: records sorted by (topic, partition, offset) folded a partition at
    a time by ``PartitionFold``; ``bounds``: "topic/partition" -> ``Bounds.to_json()``."""

    def run(batches):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        from spark_analysis.keyfold import Bounds
        from spark_analysis.partition_fold import MAX_KEYS, WINDOW_RECORDS, PartitionFold, arrow_columns
        from spark_analysis.session import settle_worker

        settle_worker()

        acc, acc_key, pending, held = None, None, [], 0

        def fold_pending():
            t = pa.Table.from_batches(pending).combine_chunks()
            pending.clear()
            yield from acc.add(arrow_columns(t))

        for batch in batches:
            if not batch.num_rows:
                continue
            n = batch.num_rows
            topics, parts = batch.column("topic"), batch.column("partition")
            change = np.flatnonzero(pc.or_(pc.not_equal(topics.slice(1), topics.slice(0, n - 1)),
                                           pc.not_equal(parts.slice(1), parts.slice(0, n - 1))).to_numpy(zero_copy_only=False))
            for lo, hi in zip(np.concatenate(([0], change + 1)).tolist(), np.concatenate((change + 1, [n])).tolist()):
                run_ = batch.slice(lo, hi - lo)
                key = f"{topics[lo].as_py()}/{parts[lo].as_py()}"
                if key != acc_key:
                    if acc is not None:
                        if pending:
                            yield from fold_pending()
                        yield from acc.finish(top_n)
                    acc, acc_key, held = PartitionFold(Bounds(**bounds[key]), max_keys or MAX_KEYS), key, 0
                if acc.b.retained_from >= 0:  # compact,delete: retention deletes what lies below
                    run_ = run_.filter(pc.greater_equal(run_.column("offset"), acc.b.retained_from))
                pending.append(run_)
                held += run_.num_rows
                if held >= (window or WINDOW_RECORDS):
                    yield from fold_pending()
                    held = 0
        if acc is not None:
            if pending:
                yield from fold_pending()
            yield from acc.finish(top_n)

    return run


def audit_records(spark: SparkSession, inputs: AuditInputs, progress) -> Found:
    """Dumps, a live topic: Kafka's bounds per partition on the driver, then the fold a partition per task."""
    from pyspark import StorageLevel

    from spark_analysis.rows import ddl

    df = inputs.records
    faults = df.filter(F.col("fault_kind").isNotNull()).select("segment", "fault_kind", "fault_position", "fault_reason")
    data = (df.filter(F.col("fault_kind").isNull() & F.col("offset").isNotNull()).select(*NARROW)
            .persist(StorageLevel.MEMORY_AND_DISK))
    progress("building the segment table")
    segs = segment_table(data)
    if not segs:
        raise ValueError("no records were read: the input holds no segments (or only corrupt ones)")
    judged = judge_partitions(inputs, segs)
    bounds = {f"{b.topic}/{b.partition}": b.to_json() for _, b in judged}
    progress(f"folding the records of {len(judged)} partitions, a partition at a time in offset order")
    out = (data.filter(~F.col("control")).withColumn("key_hash", F.xxhash64("key")).select(*FOLDED)
           .repartition("topic", "partition").sortWithinPartitions("topic", "partition", "offset")
           .mapInArrow(fold_partitions(bounds, inputs.top_n, inputs.max_keys, inputs.window), ddl())
           .persist(StorageLevel.MEMORY_AND_DISK))
    return Found([f for f, _ in judged], collect_small(out), out,
                 [r.asDict() for r in faults.collect()])

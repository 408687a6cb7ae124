"""The compaction audit: what a full compaction would reclaim, how long the cleaner needs, where
tombstones build up, which keys and producers drive it.

Record-level work stays on the executors (windows and aggregations over the records frame); the
driver collects only small per-segment and per-partition tables, runs Kafka's LogCleanerManager
model from ``monitor.compaction`` on them, and broadcasts the bounds back.

What Kafka keeps, and so what is not counted as reclaimable:
* the active segment and whatever ``min.compaction.lag.ms`` holds back (above the bound U);
* control batches (transaction markers) and transactional data (aborted data is dropped by Kafka
  using ``.txnindex``, which the audit does not read: it is counted as kept);
* tombstones that are the latest record of their key and still inside ``delete.retention.ms``.
A record below U superseded by a later record of its key below U is removed; a tombstone that is the
latest of its key and older than ``delete.retention.ms`` is removed too (over at most two cleans).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from monitor.compaction import partition_state
from monitor.estimate import CleanerParams, estimate_clean
from monitor.summary import SegmentSummary
from monitor.topicconfig import TopicConfig


@dataclass
class AuditInputs:
    records: DataFrame
    kind: str  # segments | dumps | topic
    batches: DataFrame | None = None  # one row per batch from headers (segments): the cheap segment table
    checkpoints: dict = field(default_factory=dict)  # (topic, partition) -> first dirty offset
    log_starts: dict = field(default_factory=dict)
    topic_configs: dict = field(default_factory=dict)  # topic -> TopicConfig
    cleaner: CleanerParams = CleanerParams()
    now_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    bucket_ms: int | None = None  # tombstone build-up bucket; None: chosen from the time span
    top_n: int = 20


@dataclass
class AuditResult:
    partitions: DataFrame
    topics: DataFrame
    tombstone_buckets: DataFrame
    top_keys: DataFrame
    top_producers: DataFrame
    faults: DataFrame
    summary: dict


def _config(inputs: AuditInputs, topic: str) -> TopicConfig:
    return inputs.topic_configs.get(topic) or TopicConfig(cleanup_policy=("compact",))


def segment_table(data: DataFrame) -> list:
    """One row per segment: size, offsets, timestamps (the collector's SegmentSummary, from records)."""
    rows = (data.groupBy("topic", "partition", "segment", "segment_base_offset")
            .agg(F.coalesce(F.max("segment_bytes"), F.max(F.col("batch_position") + F.col("batch_bytes"))).alias("size"),
                 (F.max("offset") + 1).alias("next_offset"),
                 F.max("timestamp").alias("max_timestamp"),
                 F.max(F.when(F.col("batch_position") == 0, F.col("timestamp"))).alias("first_batch_max_ts"),
                 F.min("offset").alias("first_offset"))
            .collect())
    return rows


def segment_table_from_batches(batches: DataFrame) -> list:
    """The segment table from batch headers alone: no record is decoded for it."""
    return (batches.groupBy("topic", "partition", "segment", "segment_base_offset")
            .agg(F.max("segment_bytes").alias("size"), (F.max("last_offset") + 1).alias("next_offset"),
                 F.max("max_timestamp").alias("max_timestamp"),
                 F.max(F.when(F.col("batch_position") == 0, F.col("max_timestamp"))).alias("first_batch_max_ts"),
                 F.min("base_offset").alias("first_offset"))
            .collect())


def counts_from_batches(batches: DataFrame) -> dict:
    rows = (batches.groupBy("topic", "partition")
            .agg(F.sum(F.when(~F.col("control"), F.col("records")).otherwise(0)).alias("records"),
                 F.sum(F.when(F.col("control"), F.col("records")).otherwise(0)).alias("control_records"),
                 F.min("max_timestamp").alias("first_timestamp"), F.max("max_timestamp").alias("last_timestamp"))
            .collect())
    return {(r["topic"], r["partition"]): r for r in rows}


def partition_bounds(spark: SparkSession, inputs: AuditInputs, segs: list) -> tuple[DataFrame, list[dict]]:
    """Kafka's per-partition state on the driver, from the small segment table."""
    by_part: dict[tuple[str, int], list] = {}
    for r in segs:
        by_part.setdefault((r["topic"], r["partition"]), []).append(r)
    states = []
    for (topic, part), rows in sorted(by_part.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or -1)):
        rows.sort(key=lambda r: (r["segment_base_offset"] if r["segment_base_offset"] is not None else r["first_offset"]))
        summaries = []
        for r in rows:
            base = r["segment_base_offset"] if r["segment_base_offset"] is not None else r["first_offset"]
            summaries.append(SegmentSummary(
                r["segment"], base, size=int(r["size"] or 0), next_offset=r["next_offset"],
                max_timestamp=r["max_timestamp"] if r["max_timestamp"] is not None else -1,
                first_batch_max_timestamp=r["first_batch_max_ts"] if r["first_batch_max_ts"] is not None else -1))
        cfg = _config(inputs, topic)
        if inputs.kind == "topic":
            # a live topic has no segments: treat everything read as one closed, cleanable section
            summaries.append(SegmentSummary("<end>", summaries[-1].next_offset or 0, size=0))
        st = partition_state(topic, part, summaries, cfg, inputs.now_ms,
                             checkpoint=inputs.checkpoints.get((topic, part)),
                             log_start_offset=inputs.log_starts.get((topic, part)))
        # the real exclusive bound is segment aligned: the base of the segment holding firstUncleanable
        upper = max(s.base_offset for s in summaries if s.base_offset <= st.first_uncleanable_offset)
        states.append({
            "topic": topic, "partition": part, "state": st, "upper": upper,
            "retention_ms": cfg.delete_retention_ms, "segments": len(rows) - (1 if inputs.kind == "topic" else 0),
        })
    bounds = spark.createDataFrame(
        [(s["topic"], s["partition"], s["state"].first_dirty_offset, s["upper"], s["retention_ms"]) for s in states],
        "topic string, partition int, first_dirty long, upper long, retention_ms long")
    return bounds, states


NARROW = ["topic", "partition", "segment", "segment_base_offset", "segment_bytes", "batch_position", "batch_bytes",
          "offset", "timestamp", "key", "record_bytes", "tombstone", "control", "producer_id"]


def run_audit(spark: SparkSession, inputs: AuditInputs, progress=lambda msg: None) -> AuditResult:
    """One read of the input (cached narrow), one aggregation per key, small tables to the driver."""
    from pyspark import StorageLevel

    df = inputs.records
    faults = df.filter(F.col("fault_kind").isNotNull()).select("segment", "fault_kind", "fault_position", "fault_reason")
    data = (df.filter(F.col("fault_kind").isNull() & F.col("offset").isNotNull()).select(*NARROW)
            .withColumn("key_hash", F.xxhash64("key")))
    now = inputs.now_ms

    progress("building the segment table")
    if inputs.batches is not None:  # segments: from batch headers, and the records are read once per pass
        segs = segment_table_from_batches(inputs.batches)
        counts = counts_from_batches(inputs.batches)
    else:  # dumps, a live topic: only records to go by, so keep them for the passes below
        data = data.persist(StorageLevel.MEMORY_AND_DISK)
        segs = segment_table(data)
        counts = {(r["topic"], r["partition"]): r for r in (
            data.groupBy("topic", "partition").agg(F.count(F.when(~F.col("control"), 1)).alias("records"),
                                                   F.count(F.when(F.col("control"), 1)).alias("control_records"),
                                                   F.min("timestamp").alias("first_timestamp"),
                                                   F.max("timestamp").alias("last_timestamp")).collect())}
    if not segs:
        raise ValueError("no records were read: the input holds no segments (or only corrupt ones)")
    bounds, states = partition_bounds(spark, inputs, segs)

    progress("aggregating per key: superseded records, tombstones, what a clean would keep")
    j = data.filter(F.col("key").isNotNull() & ~F.col("control")).join(F.broadcast(bounds), ["topic", "partition"])
    eligible = F.col("offset") < F.col("upper")
    expired_ts = F.col("timestamp") < (F.lit(now) - F.col("retention_ms"))
    in_dirty = eligible & (F.col("offset") >= F.col("first_dirty"))
    last = F.struct("offset", "tombstone", "timestamp", "record_bytes", "producer_id")
    per_key = (j.groupBy("topic", "partition", "key_hash").agg(
        F.count("*").alias("updates"),
        F.sum("record_bytes").alias("bytes"),
        F.max(last).alias("last"),
        F.max(F.when(eligible, last)).alias("last_eligible"),
        F.count(F.when(eligible, 1)).alias("eligible_records"),
        F.sum(F.when(eligible, F.col("record_bytes")).otherwise(0.0)).alias("eligible_bytes"),
        F.max(F.when(in_dirty, 1).otherwise(0)).alias("dirty"),
        F.count(F.when(F.col("tombstone"), 1)).alias("tombstones"),
        F.count(F.when(F.col("tombstone") & expired_ts, 1)).alias("tombstones_expired"),
        F.first("key").alias("key"),
        F.first("retention_ms").alias("retention_ms"))
        .withColumn("last_eligible_expired_tombstone",
                    F.coalesce(F.col("last_eligible.tombstone") &
                               (F.col("last_eligible.timestamp") < F.lit(now) - F.col("retention_ms")), F.lit(False)))
        .withColumn("removable_records",
                    F.greatest(F.col("eligible_records") - 1, F.lit(0))
                    + F.col("last_eligible_expired_tombstone").cast("int"))
        .withColumn("reclaimable_bytes",
                    F.when(F.col("eligible_records") > 0,
                           F.col("eligible_bytes") - F.col("last_eligible.record_bytes")
                           + F.when(F.col("last_eligible_expired_tombstone"), F.col("last_eligible.record_bytes"))
                           .otherwise(0.0)).otherwise(0.0))
        .withColumn("obsolete_bytes", F.col("bytes") - F.col("last.record_bytes")))
    per_key = per_key.persist(StorageLevel.MEMORY_AND_DISK)
    per_part = (per_key.groupBy("topic", "partition").agg(
        F.count("*").alias("distinct_keys"),
        F.sum(F.col("updates") - 1).alias("obsolete_records"),
        F.sum("removable_records").alias("removable_records"),
        F.sum("reclaimable_bytes").alias("reclaimable_bytes"),
        F.sum("dirty").alias("dirty_distinct_keys"),
        F.sum("tombstones").alias("tombstones"),
        F.sum("tombstones_expired").alias("tombstones_past_retention"),
        F.count(F.when(F.col("last.tombstone"), 1)).alias("keys_last_tombstone")).collect())

    progress("estimating cleaning time")
    state_by = {(s["topic"], s["partition"]): s for s in states}
    rows = []
    for r in per_part:
        key = (r["topic"], r["partition"])
        s, c = state_by[key], counts.get(key) or {"records": 0, "control_records": 0, "first_timestamp": None,
                                                    "last_timestamp": None}
        st = s["state"]
        est = estimate_clean(st.clean_bytes, st.dirty_bytes, r["dirty_distinct_keys"], inputs.cleaner)
        size = st.log_bytes
        reclaim = float(r["reclaimable_bytes"] or 0.0)
        rows.append({
            "topic": r["topic"], "partition": r["partition"], "segments": s["segments"],
            "records": c["records"], "control_records": c["control_records"], "bytes": size,
            "distinct_keys": r["distinct_keys"], "obsolete_records": r["obsolete_records"],
            "removable_records": r["removable_records"], "reclaimable_bytes": reclaim,
            "projected_bytes": max(size - reclaim, 0.0),
            "first_dirty_offset": st.first_dirty_offset, "checkpoint_offset": st.checkpoint_offset,
            "first_uncleanable_offset": st.first_uncleanable_offset, "clean_bytes": st.clean_bytes,
            "dirty_bytes": st.dirty_bytes, "cleanable_ratio": st.cleanable_ratio,
            "min_cleanable_dirty_ratio": st.min_cleanable_dirty_ratio, "eligible": st.eligible,
            "dirty_distinct_keys": r["dirty_distinct_keys"], "cleaner_passes": est.passes,
            "estimated_clean_seconds": est.seconds, "tombstones": r["tombstones"],
            "tombstones_past_retention": r["tombstones_past_retention"],
            "keys_last_tombstone": r["keys_last_tombstone"],
            "delete_retention_ms": s["retention_ms"],
            "first_timestamp": c["first_timestamp"], "last_timestamp": c["last_timestamp"],
        })
    partitions = spark.createDataFrame(rows, PARTITION_DDL) if rows else spark.createDataFrame([], PARTITION_DDL)
    topics = (partitions.groupBy("topic").agg(
        F.count("*").alias("partitions"), F.sum("records").alias("records"), F.sum("bytes").alias("bytes"),
        F.sum("distinct_keys").alias("distinct_keys"), F.sum("obsolete_records").alias("obsolete_records"),
        F.sum("reclaimable_bytes").alias("reclaimable_bytes"), F.sum("projected_bytes").alias("projected_bytes"),
        F.sum("dirty_bytes").alias("dirty_bytes"), F.max("cleanable_ratio").alias("max_cleanable_ratio"),
        F.sum("estimated_clean_seconds").alias("estimated_clean_seconds"), F.sum("tombstones").alias("tombstones"),
        F.sum("tombstones_past_retention").alias("tombstones_past_retention"),
        F.sum("keys_last_tombstone").alias("keys_last_tombstone"))
        .orderBy(F.desc("reclaimable_bytes")))

    progress("tombstone build-up, top keys, top producers")
    span = max(((c["last_timestamp"] or 0) - (c["first_timestamp"] or 0) for c in counts.values()), default=0)
    bucket = inputs.bucket_ms or _bucket_for(span)
    retention = bounds.select("topic", "partition", "retention_ms")
    tomb_buckets = (data.filter(F.col("tombstone")).join(F.broadcast(retention), ["topic", "partition"])
                    .withColumn("bucket_start_ms", F.floor(F.col("timestamp") / bucket) * bucket)
                    .groupBy("topic", "bucket_start_ms")
                    .agg(F.count("*").alias("tombstones"),
                         F.count(F.when(F.col("timestamp") < F.lit(now) - F.col("retention_ms"), 1))
                         .alias("past_retention"))
                    .withColumn("bucket_ms", F.lit(bucket))
                    .orderBy("topic", "bucket_start_ms"))
    rank = Window.partitionBy("topic").orderBy(F.desc("updates"), F.asc("key_hash"))
    top_keys = (per_key.groupBy("topic", "key_hash")
                .agg(F.sum("updates").alias("updates"), F.first("key").alias("key"),
                     F.sum("tombstones").alias("tombstones"), F.sum("obsolete_bytes").alias("obsolete_bytes"))
                .withColumn("rank", F.row_number().over(rank)).filter(F.col("rank") <= inputs.top_n)
                .orderBy("topic", "rank"))
    # obsolete bytes of a producer = all it wrote to keyed records - what it wrote that is still the latest
    written = (data.filter(F.col("key").isNotNull() & ~F.col("control")).groupBy("topic", "producer_id")
               .agg(F.sum("record_bytes").alias("written_bytes"), F.count("*").alias("records")))
    latest = (per_key.groupBy("topic", F.col("last.producer_id").alias("producer_id"))
              .agg(F.sum("last.record_bytes").alias("latest_bytes"), F.count("*").alias("latest_records")))
    prank = Window.partitionBy("topic").orderBy(F.desc("obsolete_bytes"), F.asc("producer_id"))
    top_producers = (written.join(latest, ["topic", "producer_id"], "left")
                     .select("topic", "producer_id", "records",
                             (F.col("written_bytes") - F.coalesce(F.col("latest_bytes"), F.lit(0.0))).alias("obsolete_bytes"),
                             (F.col("records") - F.coalesce(F.col("latest_records"), F.lit(0))).alias("obsolete_records"))
                     .withColumn("rank", F.row_number().over(prank)).filter(F.col("rank") <= inputs.top_n)
                     .orderBy("topic", "rank"))
    all_faults = faults.collect()
    vanished = [f for f in all_faults if f["fault_kind"] == "vanished"]
    fault_rows = [f for f in all_faults if f["fault_kind"] != "vanished"]
    summary = {
        "input_kind": inputs.kind,
        "generated_at_ms": now,
        "partitions": len(rows),
        "topics": len({r["topic"] for r in rows}),
        "records": sum(r["records"] for r in rows),
        "bytes": sum(r["bytes"] for r in rows),
        "reclaimable_bytes": sum(r["reclaimable_bytes"] for r in rows),
        "projected_bytes": sum(r["projected_bytes"] for r in rows),
        "dirty_bytes": sum(r["dirty_bytes"] for r in rows),
        "estimated_clean_seconds": sum(r["estimated_clean_seconds"] for r in rows),
        "tombstones": sum(r["tombstones"] for r in rows),
        "tombstones_past_retention": sum(r["tombstones_past_retention"] for r in rows),
        "faults": len(fault_rows),
        "vanished_segments": len(vanished),
        "fault_list": [{"file": f["segment"], "kind": f["fault_kind"], "position": f["fault_position"],
                        "reason": f["fault_reason"]} for f in fault_rows[:1000]],
        "cleaner": {"threads": inputs.cleaner.threads, "keys_per_pass": inputs.cleaner.keys_per_pass,
                    "throughput_bytes_per_second": inputs.cleaner.throughput,
                    "throughput_source": inputs.cleaner.throughput_source,
                    "io_max_bytes_per_second": inputs.cleaner.io_max_bytes_per_second},
        "tombstone_bucket_ms": bucket,
    }
    return AuditResult(partitions, topics, tomb_buckets, top_keys, top_producers, faults, summary)


def _bucket_for(span_ms: int) -> int:
    for b in (60_000, 3_600_000, 86_400_000):
        if span_ms / b <= 200:
            return b
    return 7 * 86_400_000


PARTITION_DDL = (
    "topic string, partition int, segments int, records long, control_records long, bytes long, "
    "distinct_keys long, obsolete_records long, removable_records long, reclaimable_bytes double, "
    "projected_bytes double, first_dirty_offset long, checkpoint_offset long, first_uncleanable_offset long, "
    "clean_bytes long, dirty_bytes long, cleanable_ratio double, min_cleanable_dirty_ratio double, "
    "eligible boolean, dirty_distinct_keys long, cleaner_passes int, estimated_clean_seconds double, "
    "tombstones long, tombstones_past_retention long, keys_last_tombstone long, delete_retention_ms long, "
    "first_timestamp long, last_timestamp long")

"""The compaction audit: what a full compaction would reclaim, how long the cleaner needs, where
tombstones build up, which keys and producers drive it.

Two ways to the same tables:
* segments: one Spark task per partition runs the whole partition's audit next to the decoder
  (``partition_audit``: Kafka's bounds from the batch headers, then the records folded per key in
  numpy) and hands Spark a row for the partition, its top keys and small totals. A partition with
  more keys than a task holds sends its key table in parts, which Spark merges here.
* dumps and a live topic: the records come as a DataFrame and Spark groups them per key.
The driver only ever collects per-partition and per-segment rows.

What Kafka keeps, and so what is not counted as reclaimable:
* the active segment and whatever ``min.compaction.lag.ms`` holds back (above the bound U);
* control batches (transaction markers) and transactional data (aborted data is dropped by Kafka
  using ``.txnindex``, which the audit does not read: it is counted as kept);
* tombstones that are the latest record of their key and still inside ``delete.retention.ms``.
A record below U superseded by a later record of its key below U is removed; a tombstone that is the
latest of its key and older than ``delete.retention.ms`` is removed too (over at most two cleans).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from monitor.estimate import CleanerParams, estimate_clean
from monitor.summary import SegmentSummary
from monitor.topicconfig import TopicConfig, effective_config


@dataclass
class AuditInputs:
    kind: str  # segments | dumps | topic
    records: DataFrame | None = None  # dumps, topic: the records
    files: list | None = None  # segments: [(uri, size)] of the *.log files, listed once on the driver
    checkpoints: dict = field(default_factory=dict)  # (topic, partition) -> first dirty offset
    log_starts: dict = field(default_factory=dict)
    topic_configs: dict = field(default_factory=dict)  # topic -> TopicConfig
    cleaner: CleanerParams = CleanerParams()
    now_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    bucket_ms: int | None = None  # tombstone build-up bucket; None: chosen from the time span
    top_n: int = 20
    max_keys: int | None = None  # keys one segments task holds before sending them in parts (tests lower it)


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
    """The caller's config for the topic (admin API or config file), else Kafka's defaults for a
    compacted topic: the audit reads its segments as a compacted topic's."""
    return effective_config(topic, admin=inputs.topic_configs.get(topic), compacted=True).config


def run_audit(spark: SparkSession, inputs: AuditInputs, progress=lambda msg: None) -> AuditResult:
    if inputs.kind == "segments":
        if inputs.files is None:
            raise ValueError("a segments audit needs the segment files (AuditInputs.files)")
        found = audit_segments(spark, inputs, progress)
    else:
        found = audit_records(spark, inputs, progress)
    return _result(spark, inputs, found, progress)


@dataclass
class Found:
    """What either path found, before the shared report tables."""

    rows: list  # PARTITION_DDL dicts
    bucket_ms: int
    top_keys: DataFrame  # topic, partition, key_hash, key, updates, tombstones, obsolete_bytes (candidates)
    producers: DataFrame  # topic, producer_id, written_bytes, records, latest_bytes, latest_records
    buckets: DataFrame  # topic, bucket_start_ms, tombstones, past_retention
    faults: DataFrame  # segment, fault_kind, fault_position, fault_reason
    fault_rows: list


# ----------------------------------------------------------------------------------- segments
def partition_tasks(inputs: AuditInputs) -> list:
    """One task per partition, its segments in offset order; the largest partitions first so that the
    long tasks do not start last."""
    from spark_analysis.arrow_rows import segment_base, topic_partition
    from spark_analysis.partition_audit import PartitionTask

    by_part: dict = {}
    for uri, size in inputs.files:
        by_part.setdefault(topic_partition(uri), []).append((uri, int(size)))
    tasks = []
    for (topic, part), files in by_part.items():
        if topic is None:
            continue
        files.sort(key=lambda f: (segment_base(f[0]) or 0, f[0]))
        extra = {"max_keys": inputs.max_keys} if inputs.max_keys else {}
        tasks.append(PartitionTask(topic, part, files, _config(inputs, topic), inputs.cleaner, inputs.now_ms,
                                   checkpoint=inputs.checkpoints.get((topic, part)),
                                   log_start=inputs.log_starts.get((topic, part)), bucket_ms=inputs.bucket_ms,
                                   top_n=inputs.top_n, **extra))
    return sorted(tasks, key=lambda t: -sum(size for _, size in t.files))


def audit_segments(spark: SparkSession, inputs: AuditInputs, progress) -> Found:
    from pyspark import StorageLevel

    from spark_analysis.sources import encode_tasks, register

    tasks = partition_tasks(inputs)
    if not tasks:
        raise ValueError("no records were read: the input holds no segments in <topic>-<partition> folders")
    register(spark)
    progress(f"auditing {len(tasks)} partitions, a task each: bounds from headers, records folded per key")
    out = (spark.read.format("kafka-segment-keys").option("tasks", encode_tasks(tasks)).load()
           .persist(StorageLevel.MEMORY_AND_DISK))
    small = (out.filter(F.col("kind").isin("partition", "fault"))
             .select("kind", "payload", "segment", "fault_kind", "fault_position", "fault_reason").collect())
    rows = [json.loads(r["payload"]) for r in small if r["kind"] == "partition"]
    fault_rows = [r for r in small if r["kind"] == "fault"]
    if not rows:
        raise ValueError("no records were read: the input holds only corrupt or vanished segments")
    bucket = max(r.pop("bucket_ms") for r in rows)  # the tasks' own (the given one, or by their span)
    top = out.filter(F.col("kind") == "top_key").select(
        "topic", "partition", "key_hash", "key", "updates", "tombstones", F.col("bytes").alias("obsolete_bytes"))
    producers = out.filter(F.col("kind") == "producer").select(
        "topic", "producer_id", F.col("bytes").alias("written_bytes"), F.col("updates").alias("records"),
        "latest_bytes", "latest_records")
    parted = {(r["topic"], r["partition"]) for r in rows if not r.pop("complete")}
    if parted:
        progress(f"merging the key tables of {len(parted)} partition(s) with more keys than a task holds")
        per_key = with_outcome(merge_key_parts(out.filter(F.col("kind") == "key")))
        per_key = per_key.persist(StorageLevel.MEMORY_AND_DISK)
        fill = {(t["topic"], t["partition"]): t for t in per_partition_totals(per_key)}
        for r in rows:
            if (r["topic"], r["partition"]) in parted:
                _fill_key_totals(r, fill.get((r["topic"], r["partition"]), {}), inputs.cleaner)
        top = top.unionByName(key_candidates(per_key))
        producers = producers.unionByName(latest_by_producer(per_key).select(
            "topic", "producer_id", F.lit(0.0).alias("written_bytes"), F.lit(0).cast("long").alias("records"),
            "latest_bytes", "latest_records"))
    buckets = (out.filter(F.col("kind") == "bucket")
               .withColumn("bucket_start_ms", F.floor(F.col("bucket_start_ms") / bucket) * bucket)
               .groupBy("topic", "bucket_start_ms")
               .agg(F.sum("tombstones").alias("tombstones"), F.sum("tombstones_expired").alias("past_retention")))
    faults = out.filter(F.col("kind") == "fault").select("segment", "fault_kind", "fault_position", "fault_reason")
    producers = producers.groupBy("topic", "producer_id").agg(
        F.sum("written_bytes").alias("written_bytes"), F.sum("records").alias("records"),
        F.sum("latest_bytes").alias("latest_bytes"), F.sum("latest_records").alias("latest_records"))
    return Found(rows, bucket, top, producers, buckets, faults, fault_rows)


def merge_key_parts(keys: DataFrame) -> DataFrame:
    """Partial key rows of the same partition and key folded as ``keyfold.fold`` does: sums, and the
    row with the highest offset for "latest"."""
    last = F.struct("last_offset", "last_timestamp", "last_bytes", "last_producer_id", "last_tombstone")
    le = F.struct("last_eligible_offset", "last_eligible_bytes", "last_eligible_tombstone", "last_eligible_expired")
    return (keys.groupBy("topic", "partition", "key_hash").agg(
        F.sum("updates").alias("updates"), F.sum("bytes").alias("bytes"), F.max(last).alias("last"),
        F.sum("eligible_records").alias("eligible_records"), F.sum("eligible_bytes").alias("eligible_bytes"),
        F.max(le).alias("le"), F.max("dirty").alias("dirty"), F.sum("tombstones").alias("tombstones"),
        F.sum("tombstones_expired").alias("tombstones_expired"), F.first("key").alias("key"))
        .select("topic", "partition", "key_hash", "key", "updates", "bytes", "last.*", "eligible_records",
                "eligible_bytes", "le.last_eligible_bytes", "le.last_eligible_tombstone", "le.last_eligible_expired",
                "dirty", "tombstones", "tombstones_expired")
        .select(*PER_KEY))


def _fill_key_totals(row: dict, totals: dict, cleaner: CleanerParams) -> None:
    for k in KEY_TOTALS:
        row[k] = totals.get(k) or (0.0 if k == "reclaimable_bytes" else 0)
    row["reclaimable_bytes"] = float(row["reclaimable_bytes"])
    row["projected_bytes"] = max(row["bytes"] - row["reclaimable_bytes"], 0.0)
    est = estimate_clean(row["clean_bytes"], row["dirty_bytes"], row["dirty_distinct_keys"], cleaner)
    row["cleaner_passes"], row["estimated_clean_seconds"] = est.passes, est.seconds


# ----------------------------------------------------------------------------- dumps, topic
NARROW = ["topic", "partition", "segment", "segment_base_offset", "segment_bytes", "batch_position", "batch_bytes",
          "offset", "timestamp", "key", "record_bytes", "tombstone", "control", "producer_id"]

# the per-key table of the Spark-side paths: one row per (topic, partition, key hash)
PER_KEY = ["topic", "partition", "key_hash", "key", "updates", "bytes", "last_offset", "last_timestamp", "last_bytes",
           "last_producer_id", "last_tombstone", "eligible_records", "eligible_bytes", "last_eligible_bytes",
           "last_eligible_tombstone", "last_eligible_expired", "dirty", "tombstones", "tombstones_expired"]
KEY_TOTALS = ["distinct_keys", "obsolete_records", "removable_records", "reclaimable_bytes", "dirty_distinct_keys",
              "tombstones", "tombstones_past_retention", "keys_last_tombstone"]


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


def partition_states(inputs: AuditInputs, segs: list) -> list[dict]:
    """Kafka's per-partition state on the driver, from the small segment table."""
    from spark_analysis.partition_audit import bounds_for

    by_part: dict = {}
    for r in segs:
        by_part.setdefault((r["topic"], r["partition"]), []).append(r)
    states = []
    for (topic, part), rows in sorted(by_part.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or -1)):
        summaries = []
        for r in rows:
            base = r["segment_base_offset"] if r["segment_base_offset"] is not None else r["first_offset"]
            summaries.append(SegmentSummary(
                r["segment"], base, size=int(r["size"] or 0), next_offset=r["next_offset"],
                max_timestamp=r["max_timestamp"] if r["max_timestamp"] is not None else -1,
                first_batch_max_timestamp=r["first_batch_max_ts"] if r["first_batch_max_ts"] is not None else -1))
        cfg = _config(inputs, topic)
        st, upper = bounds_for(topic, part, summaries, cfg, inputs.now_ms, inputs.checkpoints.get((topic, part)),
                               inputs.log_starts.get((topic, part)), live_topic=inputs.kind == "topic")
        ts = [x for r in rows for x in (r["min_timestamp"], r["max_timestamp"]) if x is not None]
        states.append({
            "topic": topic, "partition": part, "state": st, "upper": upper, "config": cfg,
            "retention_ms": cfg.delete_retention_ms, "segments": len(rows),
            "counts": {"records": sum(r["records"] for r in rows),
                       "control_records": sum(r["control_records"] for r in rows),
                       "first_timestamp": min(ts, default=None), "last_timestamp": max(ts, default=None)},
        })
    return states


def audit_records(spark: SparkSession, inputs: AuditInputs, progress) -> Found:
    """dumps, a live topic: records decoded in the JVM (or parsed from text), grouped per key by Spark."""
    from pyspark import StorageLevel

    from spark_analysis.partition_audit import bucket_for, partition_row

    df = inputs.records
    now = inputs.now_ms
    faults = df.filter(F.col("fault_kind").isNotNull()).select("segment", "fault_kind", "fault_position", "fault_reason")
    data = (df.filter(F.col("fault_kind").isNull() & F.col("offset").isNotNull()).select(*NARROW)
            .withColumn("key_hash", F.xxhash64("key"))).persist(StorageLevel.MEMORY_AND_DISK)
    progress("building the segment table")
    segs = segment_table(data)
    if not segs:
        raise ValueError("no records were read: the input holds no segments (or only corrupt ones)")
    states = partition_states(inputs, segs)
    bounds = spark.createDataFrame(
        [(s["topic"], s["partition"], s["state"].first_dirty_offset, s["upper"], s["retention_ms"]) for s in states],
        "topic string, partition int, first_dirty long, upper long, retention_ms long")
    span = max(((s["counts"]["last_timestamp"] or 0) - (s["counts"]["first_timestamp"] or 0) for s in states), default=0)
    bucket = inputs.bucket_ms or bucket_for(span)

    progress("aggregating per key: superseded records, tombstones, what a clean would keep")
    keyed = data.filter(F.col("key").isNotNull() & ~F.col("control"))
    j = keyed.join(F.broadcast(bounds), ["topic", "partition"])
    eligible = F.col("offset") < F.col("upper")
    expired_ts = F.col("timestamp") < (F.lit(now) - F.col("retention_ms"))
    in_dirty = eligible & (F.col("offset") >= F.col("first_dirty"))
    last = F.struct("offset", "tombstone", "timestamp", "record_bytes", "producer_id", expired_ts.alias("expired"))
    per_key = (j.groupBy("topic", "partition", "key_hash").agg(
        F.count("*").alias("updates"), F.sum("record_bytes").alias("bytes"), F.max(last).alias("last"),
        F.max(F.when(eligible, last)).alias("le"), F.count(F.when(eligible, 1)).alias("eligible_records"),
        F.sum(F.when(eligible, F.col("record_bytes")).otherwise(0.0)).alias("eligible_bytes"),
        F.max(in_dirty).alias("dirty"), F.count(F.when(F.col("tombstone"), 1)).alias("tombstones"),
        F.count(F.when(F.col("tombstone") & expired_ts, 1)).alias("tombstones_expired"), F.first("key").alias("key"))
        .select("topic", "partition", "key_hash", "key", "updates", "bytes",
                F.col("last.offset").alias("last_offset"), F.col("last.timestamp").alias("last_timestamp"),
                F.col("last.record_bytes").alias("last_bytes"), F.col("last.producer_id").alias("last_producer_id"),
                F.col("last.tombstone").alias("last_tombstone"), "eligible_records", "eligible_bytes",
                F.coalesce(F.col("le.record_bytes"), F.lit(0.0)).alias("last_eligible_bytes"),
                F.coalesce(F.col("le.tombstone"), F.lit(False)).alias("last_eligible_tombstone"),
                F.coalesce(F.col("le.tombstone") & F.col("le.expired"), F.lit(False)).alias("last_eligible_expired"),
                "dirty", "tombstones", "tombstones_expired"))
    per_key = with_outcome(per_key).persist(StorageLevel.MEMORY_AND_DISK)
    totals = {(t["topic"], t["partition"]): t for t in per_partition_totals(per_key)}
    rows = [partition_row(s["topic"], s["partition"], s["state"], s["segments"], s["counts"],
                          totals.get((s["topic"], s["partition"]), {}), s["config"], inputs.cleaner) for s in states]
    written = (keyed.groupBy("topic", "producer_id")
               .agg(F.sum("record_bytes").alias("written_bytes"), F.count("*").alias("records")))
    producers = (written.join(latest_by_producer(per_key), ["topic", "producer_id"], "left")
                 .select("topic", "producer_id", "written_bytes", "records",
                         F.coalesce("latest_bytes", F.lit(0.0)).alias("latest_bytes"),
                         F.coalesce("latest_records", F.lit(0)).alias("latest_records")))
    retention = bounds.select("topic", "partition", "retention_ms")
    buckets = (data.filter(F.col("tombstone")).join(F.broadcast(retention), ["topic", "partition"])
               .withColumn("bucket_start_ms", F.floor(F.col("timestamp") / bucket) * bucket)
               .groupBy("topic", "bucket_start_ms")
               .agg(F.count("*").alias("tombstones"),
                    F.count(F.when(F.col("timestamp") < F.lit(now) - F.col("retention_ms"), 1)).alias("past_retention")))
    return Found(rows, bucket, key_candidates(per_key), producers, buckets, faults, faults.collect())


# ------------------------------------------------------------------------------------ shared
def with_outcome(per_key: DataFrame) -> DataFrame:
    """What a full clean does to each key (as ``partition_audit.key_totals``): it keeps the latest
    eligible record, unless that is a tombstone past retention."""
    goes = F.col("last_eligible_expired")
    return (per_key
            .withColumn("removable_records", F.greatest(F.col("eligible_records") - 1, F.lit(0)) + goes.cast("int"))
            .withColumn("reclaimable_bytes",
                        F.when(F.col("eligible_records") > 0,
                               F.col("eligible_bytes") - F.col("last_eligible_bytes")
                               + F.when(goes, F.col("last_eligible_bytes")).otherwise(0.0)).otherwise(0.0))
            .withColumn("obsolete_bytes", F.col("bytes") - F.col("last_bytes")))


def per_partition_totals(per_key: DataFrame) -> list:
    return [r.asDict() for r in per_key.groupBy("topic", "partition").agg(
        F.count("*").alias("distinct_keys"),
        F.sum(F.col("updates") - 1).alias("obsolete_records"),
        F.sum("removable_records").alias("removable_records"),
        F.sum("reclaimable_bytes").alias("reclaimable_bytes"),
        F.sum(F.col("dirty").cast("int")).alias("dirty_distinct_keys"),
        F.sum("tombstones").alias("tombstones"),
        F.sum("tombstones_expired").alias("tombstones_past_retention"),
        F.count(F.when(F.col("last_tombstone"), 1)).alias("keys_last_tombstone")).collect()]


def key_candidates(per_key: DataFrame) -> DataFrame:
    return per_key.select("topic", "partition", "key_hash", "key", "updates", "tombstones", "obsolete_bytes")


def latest_by_producer(per_key: DataFrame) -> DataFrame:
    """What each producer wrote that is still the latest record of its key."""
    return (per_key.groupBy("topic", F.col("last_producer_id").alias("producer_id"))
            .agg(F.sum("last_bytes").alias("latest_bytes"), F.count("*").alias("latest_records")))


def _result(spark: SparkSession, inputs: AuditInputs, found: Found, progress) -> AuditResult:
    progress("estimates, top keys, top producers, tombstone build-up")
    rows = sorted(found.rows, key=lambda r: (r["topic"], r["partition"]))
    partitions = spark.createDataFrame(rows, PARTITION_DDL) if rows else spark.createDataFrame([], PARTITION_DDL)
    topics = spark.createDataFrame(topic_rows(rows), TOPIC_DDL) if rows else spark.createDataFrame([], TOPIC_DDL)
    bucket = found.bucket_ms
    tomb_buckets = found.buckets.withColumn("bucket_ms", F.lit(bucket)).orderBy("topic", "bucket_start_ms")
    # a key is a key of one partition: compaction never meets the same key in two partitions
    rank = Window.partitionBy("topic").orderBy(F.desc("updates"), F.asc("key_hash"), F.asc("partition"))
    top_keys = (found.top_keys.withColumn("rank", F.row_number().over(rank)).filter(F.col("rank") <= inputs.top_n)
                .orderBy("topic", "rank"))
    # obsolete bytes of a producer = all it wrote to keyed records - what it wrote that is still the latest
    prank = Window.partitionBy("topic").orderBy(F.desc("obsolete_bytes"), F.asc("producer_id"))
    top_producers = (found.producers
                     .select("topic", "producer_id", "records",
                             (F.col("written_bytes") - F.col("latest_bytes")).alias("obsolete_bytes"),
                             (F.col("records") - F.col("latest_records")).alias("obsolete_records"))
                     .withColumn("rank", F.row_number().over(prank)).filter(F.col("rank") <= inputs.top_n)
                     .orderBy("topic", "rank"))
    # the report tables are small by now (top N per topic, buckets): computed at once, side by side,
    # so that the Spark jobs' fixed costs overlap, and kept on the driver for the writers
    tomb_buckets, top_keys, top_producers = collect_together(spark, tomb_buckets, top_keys, top_producers)
    vanished = [f for f in found.fault_rows if f["fault_kind"] == "vanished"]
    fault_rows = [f for f in found.fault_rows if f["fault_kind"] != "vanished"]
    summary = {
        "input_kind": inputs.kind,
        "generated_at_ms": inputs.now_ms,
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
    return AuditResult(partitions, topics, tomb_buckets, top_keys, top_producers, found.faults, summary)


def collect_together(spark: SparkSession, *frames: DataFrame) -> list[DataFrame]:
    """Collect small DataFrames in parallel jobs; local DataFrames of the rows come back."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(frames)) as pool:
        rows = list(pool.map(lambda df: df.collect(), frames))
    return [spark.createDataFrame(r, df.schema) for r, df in zip(rows, frames)]


TOPIC_SUMS = ["records", "bytes", "distinct_keys", "obsolete_records", "reclaimable_bytes", "projected_bytes",
              "dirty_bytes", "estimated_clean_seconds", "tombstones", "tombstones_past_retention",
              "keys_last_tombstone"]
TOPIC_DDL = ("topic string, partitions long, records long, bytes long, distinct_keys long, obsolete_records long, "
             "reclaimable_bytes double, projected_bytes double, dirty_bytes long, max_cleanable_ratio double, "
             "estimated_clean_seconds double, tombstones long, tombstones_past_retention long, "
             "keys_last_tombstone long")


def topic_rows(rows: list[dict]) -> list[dict]:
    """Per-topic sums of the partition rows, the most reclaimable topic first."""
    out: dict = {}
    for r in rows:
        t = out.setdefault(r["topic"], {"topic": r["topic"], "partitions": 0, "max_cleanable_ratio": None,
                                        **{k: 0 for k in TOPIC_SUMS}})
        t["partitions"] += 1
        for k in TOPIC_SUMS:
            t[k] += r[k] or 0
        if r["cleanable_ratio"] is not None:
            t["max_cleanable_ratio"] = max(t["max_cleanable_ratio"] or 0.0, r["cleanable_ratio"])
    for t in out.values():
        t["reclaimable_bytes"] = float(t["reclaimable_bytes"])
        t["projected_bytes"] = float(t["projected_bytes"])
        t["estimated_clean_seconds"] = float(t["estimated_clean_seconds"])
    return sorted(out.values(), key=lambda t: -t["reclaimable_bytes"])


PARTITION_DDL = (
    "topic string, partition int, segments int, records long, control_records long, bytes long, "
    "distinct_keys long, obsolete_records long, removable_records long, reclaimable_bytes double, "
    "projected_bytes double, first_dirty_offset long, checkpoint_offset long, first_uncleanable_offset long, "
    "clean_bytes long, dirty_bytes long, cleanable_ratio double, min_cleanable_dirty_ratio double, "
    "eligible boolean, dirty_distinct_keys long, cleaner_passes int, estimated_clean_seconds double, "
    "tombstones long, tombstones_past_retention long, keys_last_tombstone long, delete_retention_ms long, "
    "first_timestamp long, last_timestamp long")

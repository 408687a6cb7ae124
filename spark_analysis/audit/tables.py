"""The audit's report tables, the same whichever path found the rows: partitions, topics, tombstone
buckets, top keys, top producers, faults and the summary.

Here key tables sent in parts are merged and finished (``merge``), each partition's row is made from
its facts and key totals (``partition_audit.partition_row``), and the small tables (top N per topic,
buckets) are computed side by side and kept on the driver for the writers.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from spark_analysis.audit import AuditInputs, AuditResult, Found


def report(spark: SparkSession, inputs: AuditInputs, found: Found, progress) -> AuditResult:
    from spark_analysis.merge import finish_key_parts
    from spark_analysis.partition_audit import partition_row

    out = found.out
    totals = sum_totals(found.totals)
    parted = {(f["topic"], f["partition"]) for f in found.facts} - set(totals)
    if parted:
        progress(f"merging the key tables of {len(parted)} partition(s) with more keys than a task holds")
        merged = finish_key_parts(out.filter(F.col("key").isNotNull()).select("key.*"), inputs.top_n).cache()
        totals.update(sum_totals(r["key_totals"].asDict() for r in
                                 merged.filter(F.col("key_totals").isNotNull()).select("key_totals").collect()))
        out = out.unionByName(merged)
    rows = [partition_row(f, totals.get((f["topic"], f["partition"]), {}), inputs.cleaner) for f in found.facts]
    bucket = max(f["bucket_ms"] for f in found.facts)  # the tasks' own (the given one, or by their span)
    progress("estimates, top keys, top producers, tombstone build-up")
    buckets = (out.filter(F.col("bucket").isNotNull()).select("bucket.*")
               .withColumn("bucket_start_ms", F.floor(F.col("bucket_start_ms") / bucket) * bucket)
               .groupBy("topic", "bucket_start_ms")
               .agg(F.sum("tombstones").alias("tombstones"), F.sum("past_retention").alias("past_retention")))
    top = out.filter(F.col("top_key").isNotNull()).select("top_key.*")
    producers = (out.filter(F.col("producer").isNotNull()).select("producer.*").groupBy("topic", "producer_id").agg(
        *(F.sum(c).alias(c) for c in ("written_bytes", "records", "latest_bytes", "latest_records"))))
    return tables(spark, inputs, rows, bucket, top, producers, buckets, found)


def sum_totals(parts) -> dict:
    """Partial key totals summed per (topic, partition): totals over disjoint keys add up."""
    out: dict = {}
    for t in parts:
        acc = out.setdefault((t["topic"], t["partition"]), {})
        for k, v in t.items():
            if k not in ("topic", "partition"):
                acc[k] = acc.get(k, 0) + (v or 0)
    return out


def tables(spark: SparkSession, inputs: AuditInputs, rows: list, bucket: int, top: DataFrame, producers: DataFrame,
           buckets: DataFrame, found: Found) -> AuditResult:
    rows = sorted(rows, key=lambda r: (r["topic"], r["partition"]))
    partitions = spark.createDataFrame(rows, PARTITION_DDL) if rows else spark.createDataFrame([], PARTITION_DDL)
    topics = spark.createDataFrame(topic_rows(rows), TOPIC_DDL) if rows else spark.createDataFrame([], TOPIC_DDL)
    tomb_buckets = buckets.withColumn("bucket_ms", F.lit(bucket)).orderBy("topic", "bucket_start_ms")
    # a key is a key of one partition: compaction never meets the same key in two partitions
    rank = Window.partitionBy("topic").orderBy(F.desc("updates"), F.asc("key_hash"), F.asc("partition"))
    top_keys = (top.withColumn("rank", F.row_number().over(rank)).filter(F.col("rank") <= inputs.top_n)
                .orderBy("topic", "rank"))
    # obsolete bytes of a producer = all it wrote to keyed records - what it wrote that is still the latest
    prank = Window.partitionBy("topic").orderBy(F.desc("obsolete_bytes"), F.asc("producer_id"))
    top_producers = (producers
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

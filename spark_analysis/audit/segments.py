"""The segments path: one Spark task per partition (``kafka-partition-audit``), planned here.

Why: a partition's segments hold everything its audit needs (Kafka's bounds from the batch headers,
then its records in offset order), so a task reads them where the decoder runs and hands Spark a few
rows; the driver only lists files and collects the per-partition rows.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from spark_analysis.audit import AuditInputs, Found, collect_small


def partition_tasks(inputs: AuditInputs) -> list:
    """One task per partition, its segments in offset order; the largest partitions first so that the
    long tasks do not start last."""
    from spark_analysis.arrow_rows import segment_base, topic_partition
    from spark_analysis.partition_audit import PartitionTask

    by_part: dict = {}
    for uri, size in inputs.files:
        by_part.setdefault(topic_partition(uri), []).append((uri, int(size)))
    tasks = []
    per_topic: dict = {}
    for topic, _ in by_part:
        per_topic[topic] = per_topic.get(topic, 0) + 1
    for (topic, part), files in by_part.items():
        if topic is None:
            continue
        files.sort(key=lambda f: (segment_base(f[0]) or 0, f[0]))
        extra = {k: v for k, v in (("max_keys", inputs.max_keys), ("window", inputs.window)) if v}
        tasks.append(PartitionTask(topic, part, files, inputs.config(topic), inputs.now_ms,
                                   checkpoint=inputs.checkpoints.get((topic, part)),
                                   log_start=inputs.log_starts.get((topic, part)), bucket_ms=inputs.bucket_ms,
                                   top_n=inputs.top_n, several_partitions=per_topic[topic] > 1, **extra))
    return sorted(tasks, key=lambda t: -sum(size for _, size in t.files))


def audit_segments(spark: SparkSession, inputs: AuditInputs, progress) -> Found:
    from pyspark import StorageLevel

    from spark_analysis.rows import rows_of
    from spark_analysis.sources import register
    from spark_analysis.sources.partition_audit import encode_tasks

    tasks = partition_tasks(inputs)
    if not tasks:
        raise ValueError("no records were read: the input holds no segments in <topic>-<partition> folders")
    register(spark)
    progress(f"auditing {len(tasks)} partitions, a task each: bounds from headers, records folded per key")
    out = (spark.read.format("kafka-partition-audit").option("tasks", encode_tasks(tasks)).load()
           .persist(StorageLevel.MEMORY_AND_DISK))
    small = collect_small(out)
    facts = rows_of(small, "facts")
    if not facts:
        raise ValueError("no records were read: the input holds only corrupt or vanished segments")
    return Found(facts, small, out, rows_of(small, "fault"))

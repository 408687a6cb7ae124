"""The segments path: one Spark task per partition (``kafka-partition-audit``), planned here.

Why: a partition's segments hold everything its audit needs (Kafka's bounds from the batch headers,
then its records in offset order), so a task reads them where the decoder runs and hands Spark a few
rows; the driver only lists files and collects the per-partition rows. A partition under several
log dirs (several brokers' replicas) is planned from one replica (``spark_analysis.replicas``), after a
small Spark job reads the log end offset of each of its replicas.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from spark_analysis import replicas
from spark_analysis.audit.shapes import AuditInputs, Found, collect_small


def partition_tasks(inputs: AuditInputs, ends: dict | None = None, replica_rows: list | None = None) -> list:
    """One task per partition, its segments in offset order; the largest partitions first so that the
    long tasks do not start last. A partition in several log dirs is planned from the replica
    ``replicas.choose`` picks, judged by its own log dir's checkpoints; ``ends``: (topic, partition,
    log dir) -> log end offset of those replicas (read here, on the driver, when not given); their
    rows go to ``replica_rows``."""
    from spark_analysis.arrow_rows import segment_base, topic_partition
    from spark_analysis.partition_audit import PartitionTask

    groups = replicas.group(inputs.files, topic_partition)
    if ends is None:
        ends = dict(map(replicas.end_of, replica_items(groups)))
    tasks = []
    per_topic: dict = {}
    for topic, _ in groups:
        per_topic[topic] = per_topic.get(topic, 0) + 1
    for (topic, part), dirs in groups.items():
        if topic is None:
            continue
        reps = [replicas.replica(topic, part, d, files, ends.get((topic, part, d)), inputs.log_dirs.get(d), segment_base)
                for d, files in dirs.items()]
        if len(reps) > 1:
            chosen, rule = replicas.choose(reps, inputs.leaders.get((topic, part)))
            if replica_rows is not None:
                replica_rows += replicas.rows(reps, chosen, rule)
        else:
            chosen = reps[0]
        files = sorted(chosen.files, key=lambda f: (segment_base(f[0]) or 0, f[0]))
        own = inputs.log_dirs.get(chosen.log_dir)
        cp = own.cleaner.get((topic, part)) if own else inputs.checkpoints.get((topic, part))
        start = own.starts.get((topic, part)) if own else inputs.log_starts.get((topic, part))
        extra = {k: v for k, v in (("max_keys", inputs.max_keys), ("window", inputs.window)) if v}
        tasks.append(PartitionTask(topic, part, files, inputs.config(topic), inputs.now_ms, checkpoint=cp,
                                   log_start=start, bucket_ms=inputs.bucket_ms, top_n=inputs.top_n,
                                   several_partitions=per_topic[topic] > 1, **extra))
    return sorted(tasks, key=lambda t: -sum(size for _, size in t.files))


def replica_items(groups: dict) -> list:
    """``((topic, partition, log dir), files)`` of every replica of a partition in several log dirs."""
    return [((t, p, d), files) for (t, p), dirs in sorted(groups.items()) if len(dirs) > 1
            for d, files in sorted(dirs.items())]


def replica_ends(spark: SparkSession, inputs: AuditInputs, progress) -> dict:
    """The log end offsets of the replicas of partitions found in several log dirs, a Spark task per
    replica (each reads its last segment's batch headers)."""
    from spark_analysis.arrow_rows import topic_partition

    items = replica_items(replicas.group(inputs.files, topic_partition))
    if not items:
        return {}
    progress(f"{len({k[:2] for k, _ in items})} partition(s) in several log dirs: reading the log end offset "
             f"of their {len(items)} replicas")
    sc = spark.sparkContext
    return dict(sc.parallelize(items, min(len(items), 4 * sc.defaultParallelism)).map(replicas.end_of).collect())


def audit_segments(spark: SparkSession, inputs: AuditInputs, progress) -> Found:
    from pyspark import StorageLevel

    from spark_analysis.rows import rows_of
    from spark_analysis.sources import register
    from spark_analysis.sources.partition_tasks import encode_tasks

    replica_rows: list = []
    tasks = partition_tasks(inputs, replica_ends(spark, inputs, progress), replica_rows)
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
    return Found(facts, small, out, rows_of(small, "fault"), replicas=replica_rows,
                 bytes_all_replicas=sum(size for _, size in dict(inputs.files).items()))

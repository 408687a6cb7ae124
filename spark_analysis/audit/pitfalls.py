"""Producer pitfalls in the audit's tables (issue 16): mistakes a compacted topic never recovers from
and Kafka does not report.

* ``empty_value_records``: records whose value is an empty string (length 0) instead of null. Such a
  record is no tombstone: the cleaner keeps it as the key's latest value for ever (a "delete" that
  deletes nothing); ``keys_last_empty_value`` counts the keys left that way.
* ``keys_in_several_partitions``: keys found in more than one partition of the same topic (a producer
  that chose partitions itself, or a changed partition count or partitioner). Compaction is per
  partition, so such a key keeps one value per partition and readers see several "latest" values.
  Per partition: its keys that some other partition of the topic also holds; per topic: its distinct
  keys held by two or more partitions. Keys are compared by their 64-bit hash (a collision between
  two different keys is possible in principle, at about n²/2⁶⁵ for n keys).
* ``keyless_records``: records without a key. A broker rejects them on a compacted topic today, but
  data written before the topic became compacted, or by other brokers, may hold them; the cleaner
  cannot compact them.
* ``value_bytes_p50/p90/p99/max``: the value-size distribution (``monitor.contract.valuesizes``: exact below
  128 bytes, within 1% above; the max exact). Tombstones have no value and are not counted.

The fold counts the first three per record or per key (``partition_fold``, ``keyfold``); the keys
found in several partitions need every partition of a topic at once, so Spark joins the partitions'
key hashes here, only for topics with more than one partition.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from monitor.contract import valuesizes

COUNTS = ("keyless_records", "empty_value_records", "value_records")
PARTITION_DDL = ("keyless_records long, empty_value_records long, keys_last_empty_value long, "
                 "keys_in_several_partitions long, value_bytes_p50 double, value_bytes_p90 double, "
                 "value_bytes_p99 double, value_bytes_max long")
TOPIC_DDL = PARTITION_DDL  # the same names: sums, the topic's distinct keys, percentiles of all its values
SUMMARY_KEYS = ("keyless_records", "empty_value_records", "keys_last_empty_value", "keys_in_several_partitions")


def record_stats(parts: list) -> dict:
    """``record_stats`` rows per (topic, partition): counts summed, the largest value kept."""
    out: dict = {}
    for r in parts:
        acc = out.setdefault((r["topic"], r["partition"]), {k: 0 for k in COUNTS} | {"value_bytes_max": None})
        for k in COUNTS:
            acc[k] += r[k] or 0
        if r["value_bytes_max"] is not None:
            acc["value_bytes_max"] = max(acc["value_bytes_max"] or 0, r["value_bytes_max"])
    return out


def histograms(parts: list, by_topic: bool = False) -> dict:
    """``value_size`` rows as histograms per (topic, partition), or per topic."""
    out: dict = {}
    for r in parts:
        key = r["topic"] if by_topic else (r["topic"], r["partition"])
        h = out.setdefault(key, {})
        h[r["bucket"]] = h.get(r["bucket"], 0) + r["records"]
    return out


def keys_in_several_partitions(out: DataFrame, topics: set) -> tuple[dict, dict]:
    """(per (topic, partition), per topic) counts of keys found in more than one partition of their
    topic, from the fold's ``partition_key`` rows and, where a key table went out in parts, its ``key``
    rows; one Spark job over the key hashes, only for ``topics`` (those with several partitions)."""
    if not topics:
        return {}, {}
    cols = ["topic", "partition", "key_hash"]
    hashes = (out.filter(F.col("partition_key").isNotNull()).select(*(f"partition_key.{c}" for c in cols))
              .unionByName(out.filter(F.col("key").isNotNull()).select(*(f"key.{c}" for c in cols)))
              .filter(F.col("topic").isin(sorted(topics))))
    shared = (hashes.groupBy("topic", "key_hash").agg(F.collect_set("partition").alias("partitions"))
              .filter(F.size("partitions") > 1).persist())
    per_topic = {r["topic"]: r["n"] for r in shared.groupBy("topic").agg(F.count("*").alias("n")).collect()}
    per_part = {(r["topic"], r["partition"]): r["n"] for r in
                shared.select("topic", F.explode("partitions").alias("partition"))
                .groupBy("topic", "partition").agg(F.count("*").alias("n")).collect()}
    shared.unpersist()
    return per_part, per_topic


def columns(stats: dict | None, hist: dict | None, keys_last_empty: int, several: int) -> dict:
    """The pitfall columns of one partition or topic (``PARTITION_DDL``)."""
    stats = stats or {}
    out = {"keyless_records": stats.get("keyless_records", 0), "empty_value_records": stats.get("empty_value_records", 0),
           "keys_last_empty_value": keys_last_empty, "keys_in_several_partitions": several}
    out.update(valuesizes.summary(hist or {}, stats.get("value_bytes_max")))
    return out

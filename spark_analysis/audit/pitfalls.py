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
found in several partitions need every partition of a topic at once: each task sends its partition's
key hashes packed (``key_hashes`` rows, 8 bytes a key), and Spark brings a range of a topic's hashes
from every partition to one task that counts them in numpy, only for topics with more than one
partition; when every such topic's hashes together fit one such task, the driver collects them and
counts them with the same function (no shuffle).
"""

from __future__ import annotations

import pyarrow.compute as pc
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


GROUP_HASHES = 1 << 22  # key hashes (of all its partitions) one task of the count holds: 32 MiB
SHARED_DDL = "topic string, partition int, shared long"  # partition null: the topic's distinct keys


def keys_in_several_partitions(out: DataFrame, topics: set, keys: dict | None = None) -> tuple[dict, dict]:
    """(per (topic, partition), per topic) counts of keys found in more than one partition of their
    topic, from the fold's ``key_hashes`` rows, only for ``topics`` (those with several partitions).

    Why packed hashes and numpy rather than a Spark join of a row per key: at the bench's 400,000
    keys the row-per-key join cost more than the whole fold of the records. A topic's hashes are
    cut by value into ranges of at most about ``GROUP_HASHES`` (``keys``: topic -> its partitions'
    distinct keys, from the key totals), Spark groups each range of every partition of the topic
    into one task (``shared_in_range``), and the counts of the ranges add up; all of them within
    ``GROUP_HASHES``, they are collected and counted on the driver, a topic at a time."""
    if not topics:
        return {}, {}
    keys = keys or {}
    ranges = {t: max(1, -(-int(keys.get(t) or 0) // GROUP_HASHES)) for t in sorted(topics)}
    packed = (out.filter(F.col("key_hashes").isNotNull()).select("key_hashes.*")
              .filter(F.col("topic").isin(sorted(topics))))
    if sum(int(keys.get(t) or 0) for t in topics) <= GROUP_HASHES:
        # what one task of the count would hold, every topic's: collected (a narrow job) and counted here by
        # the same function, without the shuffle and the Python workers of a grouped count (a second of a
        # small audit's few on two cores)
        table = packed.toArrow()
        each = [table.filter(pc.equal(table.column("topic"), t)) for t in sorted(topics)]
        counted = [r for t in each if t.num_rows for r in shared_in_range(t).to_pylist()]
    else:
        if max(ranges.values()) > 1:
            packed = packed.mapInArrow(split_ranges(ranges), "topic string, partition int, hashes binary, range int")
        else:
            packed = packed.withColumn("range", F.lit(0))
        counted = packed.groupBy("topic", "range").applyInArrow(shared_in_range, SHARED_DDL).collect()
    per_part: dict = {}
    per_topic: dict = {}
    for r in counted:
        acc, k = (per_topic, r["topic"]) if r["partition"] is None else (per_part, (r["topic"], r["partition"]))
        acc[k] = acc.get(k, 0) + r["shared"]
    return per_part, per_topic


def unpack(table) -> dict:
    """``key_hashes`` rows (an Arrow table or batch) as each partition's distinct hashes."""
    import numpy as np

    parts: dict = {}
    for p, blob in zip(table.column("partition").to_pylist(), table.column("hashes").to_pylist()):
        parts.setdefault(p, []).append(np.frombuffer(blob, dtype="<i8"))
    # one row is one key table's hashes, sorted and distinct already; rows of several parts may repeat
    return {p: hs[0] if len(hs) == 1 else np.unique(np.concatenate(hs)) for p, hs in parts.items()}


def shared_counts(parts: dict) -> tuple[dict, int]:
    """Of each partition's distinct hashes (partition -> numpy array): how many some other partition
    holds too, per partition, and how many distinct hashes two or more partitions hold."""
    import numpy as np

    if not parts:
        return {}, 0
    values, holders = np.unique(np.concatenate(list(parts.values())), return_counts=True)
    shared = values[holders > 1]
    return {p: int(np.isin(h, shared, assume_unique=True).sum()) for p, h in parts.items()}, len(shared)


def shared_in_range(table):
    """``applyInArrow``: one range of one topic's key hashes, every partition's -> ``SHARED_DDL`` rows."""
    import pyarrow as pa

    topic = table.column("topic")[0].as_py() if table.num_rows else None
    per, total = shared_counts(unpack(table))
    parts = sorted(per)
    return pa.table({"topic": [topic] * (len(parts) + 1), "partition": pa.array(parts + [None], pa.int32()),
                     "shared": pa.array([per[p] for p in parts] + [total], pa.int64())})


def split_ranges(ranges: dict):
    """``mapInArrow``: ``key_hashes`` rows cut into ``ranges[topic]`` ranges by hash value (the top 32
    bits of the hash as unsigned, scaled), one row per (partition, range) piece."""

    def run(batches):
        import numpy as np
        import pyarrow as pa

        for b in batches:
            out: dict = {"topic": [], "partition": [], "hashes": [], "range": []}
            for t, p, blob in zip(*(b.column(c).to_pylist() for c in ("topic", "partition", "hashes"))):
                h = np.frombuffer(blob, dtype="<i8")
                n = ranges.get(t, 1)
                r = (h.view(np.uint64) >> np.uint64(32)) * np.uint64(n) >> np.uint64(32)
                order = np.argsort(r, kind="stable")
                bounds = np.concatenate(([0], np.cumsum(np.bincount(r, minlength=n))))
                for i in range(n):
                    if bounds[i + 1] > bounds[i]:
                        out["topic"].append(t)
                        out["partition"].append(p)
                        out["hashes"].append(h[order[bounds[i]:bounds[i + 1]]].tobytes())
                        out["range"].append(i)
            yield pa.RecordBatch.from_pydict(out, schema=pa.schema([
                ("topic", pa.string()), ("partition", pa.int32()), ("hashes", pa.binary()), ("range", pa.int32())]))

    return run


def columns(stats: dict | None, hist: dict | None, keys_last_empty: int, several: int) -> dict:
    """The pitfall columns of one partition or topic (``PARTITION_DDL``)."""
    stats = stats or {}
    out = {"keyless_records": stats.get("keyless_records", 0), "empty_value_records": stats.get("empty_value_records", 0),
           "keys_last_empty_value": keys_last_empty, "keys_in_several_partitions": several}
    out.update(valuesizes.summary(hist or {}, stats.get("value_bytes_max")))
    return out

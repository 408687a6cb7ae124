"""One partition's records, in offset order, folded as they come: the key table (``keyfold``), what
each producer wrote, tombstones per time bucket. Every input feeds this same class, a window of
records at a time: segments from the decoder's arrays (``RecordWindow``), dumps and a live topic from
Arrow batches of the record schema (``arrow_columns``).

Memory is bounded whatever the partition size: records are folded a window at a time, and the key
table goes out as ``key`` rows (for Spark to merge, ``merge``) whenever it reaches ``max_keys``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from monitor.contract import valuesizes
from spark_analysis import rows
from spark_analysis.arrow_rows import RECORD_OVERHEAD
from spark_analysis.keyfold import (KEY_COLUMNS, NO_PRODUCER, Bounds, fold, key_totals, latest_by_producer,
                                    producer_ids, record_partials, top_keys)

WINDOW_RECORDS = 1 << 18  # records folded at a time
SIZE_BUCKETS = np.asarray(valuesizes.LOWER, dtype=np.int64)
MAX_KEYS = 2 << 20  # keys held per task before the table is emitted as it is (about 100 bytes a key)
HASH_CHUNK = 1 << 20  # key hashes per ``key_hashes`` row (8 MiB)


class RecordWindow:
    """Decoded segment batches waiting to be folded: the arrays' bytes and one entry per batch."""

    def __init__(self):
        self.pieces = {n: [] for n in ("offsets", "timestamps", "key_hashes", "key_sizes", "value_sizes", "keys")}
        self.counts, self.sizes, self.producers = [], [], []
        self.n = 0

    def add(self, batch, arr) -> None:
        for name, parts in self.pieces.items():
            parts.append(getattr(arr, name))
        k = len(arr)
        self.counts.append(k)
        self.sizes.append(batch.size)
        self.producers.append(batch.producer_id)
        self.n += k

    def columns(self) -> dict:
        """The window as numpy columns, with each record's share of its batch's bytes on disk."""
        c = {n: b"".join(p) for n, p in self.pieces.items()}
        ks = np.frombuffer(c["key_sizes"], dtype=np.int32)
        vs = np.frombuffer(c["value_sizes"], dtype=np.int32)
        counts = np.asarray(self.counts, dtype=np.int64)
        size = np.maximum(ks, 0).astype(np.float64) + np.maximum(vs, 0) + RECORD_OVERHEAD
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        nonempty = counts > 0
        producers = np.asarray(self.producers, dtype=np.int64)
        share = np.zeros(len(counts))
        share[nonempty] = np.asarray(self.sizes, dtype=np.float64)[nonempty] / np.add.reduceat(size, starts[nonempty])
        rb = size * np.repeat(share, counts)
        keyed = ks >= 0
        key_offsets = np.concatenate(([0], np.cumsum(np.maximum(ks, 0), dtype=np.int64))).astype(np.int32)
        keys = pa.Array.from_buffers(pa.binary(), len(ks), [None, pa.py_buffer(key_offsets), pa.py_buffer(c["keys"])])
        return {
            "offset": np.frombuffer(c["offsets"], dtype=np.int64),
            "timestamp": np.frombuffer(c["timestamps"], dtype=np.int64),
            "key_hash": np.frombuffer(c["key_hashes"], dtype=np.int64),
            "key_size": ks, "value_size": vs, "key": keys,
            "record_bytes": rb,
            "producer_id": np.repeat(producers, counts),
            # a batch has one producer: what each wrote is summed per batch, not per record
            "batch_producer_id": producers[nonempty],
            "batch_keyed_bytes": np.add.reduceat(np.where(keyed, rb, 0.0), starts[nonempty]),
            "batch_keyed_records": np.add.reduceat(keyed.astype(np.int64), starts[nonempty]),
        }


def arrow_columns(t: pa.Table | pa.RecordBatch) -> dict:
    """Records of the record schema (``schema``; ``key_hash`` added by Spark's ``xxhash64``) as the
    fold's columns. A record whose producer is unknown (a live topic) has ``NO_PRODUCER``."""
    def np_col(name, fill=None):
        col = t.column(name)
        if fill is not None:
            col = col.fill_null(fill)
        return np.asarray(col.to_numpy(zero_copy_only=False))

    key = t.column("key")
    return {
        "offset": np_col("offset"), "timestamp": np_col("timestamp", -1), "key_hash": np_col("key_hash"),
        "key_size": np_col("key_size", -1).astype(np.int32), "value_size": np_col("value_size", -1).astype(np.int32),
        "key": key.combine_chunks() if isinstance(key, pa.ChunkedArray) else key,
        "record_bytes": np_col("record_bytes", 0.0).astype(np.float64),
        "producer_id": np_col("producer_id", NO_PRODUCER).astype(np.int64),
    }


class PartitionFold:
    """The running aggregates of one partition: key table, producers, tombstone buckets."""

    def __init__(self, bounds: Bounds, max_keys: int = MAX_KEYS):
        self.b = bounds
        self.max_keys = max_keys
        self.keys: dict | None = None
        self.flushed = False  # the key table went out in parts: Spark merges them
        self.producers: dict[int, list] = {}  # producer id -> [bytes, records]
        self.buckets: dict[int, list] = {}  # bucket start -> [tombstones, past retention]
        # producer pitfalls, per record: keyless, empty values (length 0, not null), value sizes
        self.keyless = self.empty_values = self.values = 0
        self.value_max: int | None = None
        self.value_sizes: dict[int, int] = {}  # monitor.contract.valuesizes histogram

    def add(self, c: dict):
        """Fold one window (records in offset order, after every earlier window); yields the key
        table as ``key`` rows when it outgrew ``max_keys``."""
        self._count_tombstones(c)
        self._count_producers(c)
        self._count_pitfalls(c)
        part = record_partials(c, self.b)
        self.keys = fold([self.keys, part] if self.keys is not None else [part])
        if len(self.keys["key_hash"]) >= self.max_keys:
            yield self.key_batch()
            if self.b.key_hashes:
                yield key_hash_batch(self.b.topic, self.b.partition, self.keys["key_hash"])
            self.keys = None
            self.flushed = True

    def _count_tombstones(self, c: dict) -> None:
        tomb = c["value_size"] < 0
        if not tomb.any():
            return
        ts = c["timestamp"][tomb]
        start = (ts // self.b.bucket_ms) * self.b.bucket_ms
        past = ts < self.b.expired_before_ms
        uniq, inv = np.unique(start, return_inverse=True)
        for s, n, x in zip(uniq.tolist(), np.bincount(inv).tolist(), np.bincount(inv, weights=past).tolist()):
            acc = self.buckets.setdefault(s, [0, 0])
            acc[0] += n
            acc[1] += int(x)

    def _count_pitfalls(self, c: dict) -> None:
        """Records without a key, empty values and the value sizes (tombstones have none)."""
        vs = c["value_size"]
        self.keyless += int((c["key_size"] < 0).sum())
        self.empty_values += int((vs == 0).sum())
        sizes = vs[vs >= 0]
        if len(sizes):
            self.values += len(sizes)
            top = int(sizes.max())
            self.value_max = top if self.value_max is None else max(self.value_max, top)
            # the core's buckets (valuesizes.LOWER), found in numpy for a window at a time
            idx = np.searchsorted(SIZE_BUCKETS, sizes, side="right") - 1
            uniq, counts = np.unique(idx, return_counts=True)
            valuesizes.merge(self.value_sizes, dict(zip(uniq.tolist(), counts.tolist())))

    def _count_producers(self, c: dict) -> None:
        """Bytes and records each producer wrote to keyed records."""
        if "batch_producer_id" in c:
            pid, w, r = c["batch_producer_id"], c["batch_keyed_bytes"], c["batch_keyed_records"]
        else:
            keyed = c["key_size"] >= 0
            pid, w, r = c["producer_id"][keyed], c["record_bytes"][keyed], np.ones(int(keyed.sum()), dtype=np.int64)
        if not len(pid):
            return
        uniq, inv = np.unique(pid, return_inverse=True)
        for p, wb, rc in zip(uniq.tolist(), np.bincount(inv, weights=w).tolist(), np.bincount(inv, weights=r).tolist()):
            if rc:
                acc = self.producers.setdefault(p, [0.0, 0])
                acc[0] += wb
                acc[1] += int(rc)

    def key_batch(self) -> pa.RecordBatch:
        k = self.keys
        cols = {c.name: k[c.name] for c in KEY_COLUMNS}
        cols["last_producer_id"] = producer_ids(k["last_producer_id"])
        return rows.batch("key", len(k["key_hash"]), {"topic": self.b.topic, "partition": self.b.partition,
                                                      "key_hash": k["key_hash"], **cols})

    def finish(self, top_n: int):
        """The rest. A complete key table (never flushed): its totals, top keys and each producer's
        latest records; otherwise the last part of the key table, for Spark to merge and finish."""
        b, k = self.b, self.keys
        latest: dict = {}
        yield from self.pitfall_batches()
        if self.flushed:
            if k is not None and len(k["key_hash"]):
                yield self.key_batch()
                if b.key_hashes:
                    yield key_hash_batch(b.topic, b.partition, k["key_hash"])
        else:
            k = k if k is not None else {c.name: np.zeros(0) for c in KEY_COLUMNS} | {"key_hash": np.zeros(0)}
            yield rows.batch("key_totals", 1, {"topic": b.topic, "partition": b.partition, **key_totals(k)})
            if len(k["key_hash"]) and b.key_hashes:
                yield key_hash_batch(b.topic, b.partition, k["key_hash"])
            if len(k["key_hash"]):
                yield rows.batch("top_key", min(top_n, len(k["key_hash"])),
                                 {"topic": b.topic, "partition": b.partition, **top_keys(k, top_n)})
                latest = latest_by_producer(k)
        pids = sorted(set(self.producers) | set(latest))
        if pids:
            yield producer_batch(b.topic, pids, {p: self.producers.get(p, (0.0, 0)) for p in pids},
                                 {p: latest.get(p, (0.0, 0)) for p in pids})
        if self.buckets:
            starts = sorted(self.buckets)
            yield rows.batch("bucket", len(starts), {
                "topic": b.topic, "bucket_start_ms": starts, "tombstones": [self.buckets[s][0] for s in starts],
                "past_retention": [self.buckets[s][1] for s in starts]})


    def pitfall_batches(self):
        b = self.b
        yield rows.batch("record_stats", 1, {
            "topic": b.topic, "partition": b.partition, "keyless_records": self.keyless,
            "empty_value_records": self.empty_values, "value_records": self.values,
            "value_bytes_max": self.value_max})
        if self.value_sizes:
            buckets = sorted(self.value_sizes)
            yield rows.batch("value_size", len(buckets), {
                "topic": b.topic, "partition": b.partition, "bucket": buckets,
                "records": [self.value_sizes[x] for x in buckets]})


def producer_batch(topic: str, pids: list, written: dict, latest: dict) -> pa.RecordBatch:
    return rows.batch("producer", len(pids), {
        "topic": topic, "producer_id": producer_ids(pids),
        "written_bytes": [written[p][0] for p in pids], "records": [written[p][1] for p in pids],
        "latest_bytes": [latest[p][0] for p in pids], "latest_records": [latest[p][1] for p in pids]})


def key_hash_batch(topic: str, partition: int, hashes) -> pa.RecordBatch:
    """``key_hashes`` rows: a partition's key hashes (those of one key table or part of it, each once),
    packed as int64 little-endian, ``HASH_CHUNK`` a row (``audit.pitfalls`` unpacks them)."""
    h = np.ascontiguousarray(hashes, dtype="<i8")
    chunks = [h[i:i + HASH_CHUNK].tobytes() for i in range(0, len(h), HASH_CHUNK)]
    return rows.batch("key_hashes", len(chunks), {"topic": topic, "partition": partition, "hashes": chunks})

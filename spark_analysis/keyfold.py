"""Per-key folding on the executors: a task reads whole segments of one partition, in offset order,
and hands Spark one row per key instead of one row per record.

Why here and not in a Spark ``groupBy``: the audit's questions are per key within a partition, and
a partition's records arrive in offset order, so "the latest record of a key" is simply the last one
seen. Folding them in numpy next to the decoder (``RecordArrays``: no Python object per record)
leaves the JVM a few rows per key to merge, where a ``groupBy`` over records spends most of the audit
turning each record into a row. The rows are partial aggregates that merge with sums and "the later
row wins" (``merge_partials`` in the audit does the same in Spark): a partition split over several
tasks, or a task that flushed its key table to stay within memory, merges there.

Memory per task is bounded whatever the segment size: records are folded a window at a time, and
the key table is emitted and restarted once it holds ``max_keys`` keys.

What "eligible" means (the section below ``upper``), the dirty section and the retention cut-off
come from the driver's ``Bounds``; see ``spark_analysis.audit`` for what Kafka keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from monitor.record import SegmentReader
from spark_analysis.arrow_rows import RECORD_OVERHEAD

WINDOW_RECORDS = 1 << 18  # records folded at a time
MAX_KEYS = 2 << 20  # keys held per task before the table is emitted as it is (about 100 bytes a key)

# (name, Arrow type, fold): how two partial rows of the same key combine, earlier row first.
#   sum: added; or: any; last: the later row's; elig: the later row's among rows with eligible records
KEY_COLUMNS = [
    ("updates", pa.int64(), "sum"),
    ("bytes", pa.float64(), "sum"),
    ("last_offset", pa.int64(), "last"),
    ("last_timestamp", pa.int64(), "last"),
    ("last_bytes", pa.float64(), "last"),
    ("last_producer_id", pa.int64(), "last"),
    ("last_tombstone", pa.bool_(), "last"),
    ("eligible_records", pa.int64(), "sum"),
    ("eligible_bytes", pa.float64(), "sum"),
    ("last_eligible_offset", pa.int64(), "elig"),
    ("last_eligible_bytes", pa.float64(), "elig"),
    ("last_eligible_tombstone", pa.bool_(), "elig"),
    ("last_eligible_expired", pa.bool_(), "elig"),
    ("dirty", pa.bool_(), "or"),
    ("tombstones", pa.int64(), "sum"),
    ("tombstones_expired", pa.int64(), "sum"),
]

# One schema for everything a task reports; ``kind`` says which columns a row fills:
#   partition: the partition's audit row as JSON in ``payload`` (``complete`` false when key parts follow);
#   top_key: one of the partition's top keys by updates (``bytes`` is its obsolete bytes);
#   key: one key's partial aggregate, when the key table had to go out in parts;
#   producer: bytes and records a producer wrote to keyed records, and (complete) what is still latest;
#   bucket: tombstones in one time bucket; fault: a corrupt, truncated or vanished segment.
FIELDS = ([("kind", pa.string()), ("topic", pa.string()), ("partition", pa.int32()), ("key_hash", pa.int64()),
           ("key", pa.binary())]
          + [(n, t) for n, t, _ in KEY_COLUMNS]
          + [("producer_id", pa.int64()), ("latest_bytes", pa.float64()), ("latest_records", pa.int64()),
             ("bucket_start_ms", pa.int64()), ("bucket_ms", pa.int64()), ("segment", pa.string()),
             ("fault_kind", pa.string()), ("fault_position", pa.int64()), ("fault_reason", pa.string()),
             ("payload", pa.string())])
SCHEMA = pa.schema(FIELDS)


@dataclass(frozen=True)
class Bounds:
    """The driver's view of one partition: what a clean may touch and what counts as expired."""

    topic: str
    partition: int
    upper: int  # records below this offset are eligible (segment aligned, Kafka's firstUncleanable)
    first_dirty: int  # the cleaner checkpoint: eligible records from here on are dirty
    expired_before_ms: int  # now - delete.retention.ms: tombstones older than this are past retention
    bucket_ms: int  # tombstone build-up bucket


class RecordWindow:
    """Decoded batches waiting to be folded: the arrays' bytes and one entry per batch."""

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
            "batch_producer_id": producers[nonempty],
            "batch_keyed_bytes": np.add.reduceat(np.where(keyed, rb, 0.0), starts[nonempty]),
            "batch_keyed_records": np.add.reduceat(keyed.astype(np.int64), starts[nonempty]),
        }


def record_partials(c: dict, b: Bounds) -> dict:
    """Every keyed record as a partial row of its own (one update, itself the latest)."""
    keyed = c["key_size"] >= 0
    off, ts, rb = c["offset"][keyed], c["timestamp"][keyed], c["record_bytes"][keyed]
    tomb = c["value_size"][keyed] < 0
    eligible = off < b.upper
    expired = tomb & (ts < b.expired_before_ms)
    return {
        "key_hash": c["key_hash"][keyed], "key": c["key"].filter(pa.array(keyed)),
        "updates": np.ones(len(off), dtype=np.int64), "bytes": rb,
        "last_offset": off, "last_timestamp": ts, "last_bytes": rb, "last_producer_id": c["producer_id"][keyed],
        "last_tombstone": tomb,
        "eligible_records": eligible.astype(np.int64), "eligible_bytes": np.where(eligible, rb, 0.0),
        "last_eligible_offset": np.where(eligible, off, -1), "last_eligible_bytes": np.where(eligible, rb, 0.0),
        "last_eligible_tombstone": tomb & eligible, "last_eligible_expired": expired & eligible,
        "dirty": eligible & (off >= b.first_dirty),
        "tombstones": tomb.astype(np.int64), "tombstones_expired": expired.astype(np.int64),
    }


def fold(tables: list[dict]) -> dict:
    """Partial rows (earlier tables first, rows in offset order) folded to one row per key hash.
    Row order stands for time: a key's latest row is its highest row number, so the sort by hash
    need not be stable."""
    if len(tables) == 1:
        p = tables[0]
    else:
        p = {n: np.concatenate([t[n] for t in tables]) for n in ["key_hash"] + [c for c, _, _ in KEY_COLUMNS]}
        p["key"] = pa.concat_arrays([t["key"] for t in tables])
    h = p["key_hash"]
    n = len(h)
    if n == 0:
        return p
    order = np.argsort(h)
    hs = h[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(hs[1:], hs[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    groups = len(starts)
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.cumsum(new) - 1
    first, last = np.minimum.reduceat(order, starts), np.maximum.reduceat(order, starts)
    elig = np.maximum.reduceat(np.where(p["eligible_records"][order] > 0, order, -1), starts)
    has_elig, elig_rows = elig >= 0, np.maximum(elig, 0)
    out = {"key_hash": hs[starts], "key": p["key"].take(pa.array(first))}
    for name, _, how in KEY_COLUMNS:
        col = p[name]
        if how == "sum":
            out[name] = np.bincount(inv, weights=col, minlength=groups).astype(col.dtype)
        elif how == "or":
            out[name] = np.bincount(inv, weights=col, minlength=groups) > 0
        elif how == "last":
            out[name] = col[last]
        else:  # elig: the latest row that had eligible records; none: -1 / 0 / False
            out[name] = np.where(has_elig, col[elig_rows], -1 if name.endswith("offset") else 0).astype(col.dtype)
    return out


class PartitionFold:
    """The running aggregates of one task: key table, producers, tombstone buckets."""

    def __init__(self, bounds: Bounds, max_keys: int = MAX_KEYS):
        self.b = bounds
        self.max_keys = max_keys
        self.keys: dict | None = None
        self.flushed = False  # the key table went out in parts: Spark merges them
        self.producers: dict[int, list] = {}  # producer id -> [bytes, records]
        self.buckets: dict[int, list] = {}  # bucket start -> [tombstones, past retention]

    def add(self, c: dict):
        """Fold one window; yields a key table when it outgrew ``max_keys``."""
        self._count_tombstones(c)
        self._count_producers(c)
        part = record_partials(c, self.b)
        self.keys = fold([self.keys, part] if self.keys is not None else [part])
        if len(self.keys["key_hash"]) >= self.max_keys:
            yield self.key_batch()
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
        counts, pasts = np.bincount(inv), np.bincount(inv, weights=past)
        for s, n, x in zip(uniq.tolist(), counts.tolist(), pasts.tolist()):
            acc = self.buckets.setdefault(s, [0, 0])
            acc[0] += n
            acc[1] += int(x)

    def _count_producers(self, c: dict) -> None:
        """Bytes and records each producer wrote to keyed records (a batch has one producer)."""
        for pid, w, r in zip(c["batch_producer_id"].tolist(), c["batch_keyed_bytes"].tolist(),
                             c["batch_keyed_records"].tolist()):
            if r:
                acc = self.producers.setdefault(pid, [0.0, 0])
                acc[0] += w
                acc[1] += r

    def key_batch(self) -> pa.RecordBatch:
        k = self.keys
        n = len(k["key_hash"])
        cols = {"kind": pa.repeat("key", n),
                "key_hash": k["key_hash"], "key": k["key"], **{name: k[name] for name, _, _ in KEY_COLUMNS}}
        return rows_batch(n, self.b, cols)

    def finish(self, top_n: int | None):
        """The rest: with ``top_n`` (a complete key table), its top keys and each producer's latest
        records; otherwise the key table as parts, for Spark to merge."""
        latest: dict = {}
        k = self.keys
        if k is not None and len(k["key_hash"]):
            if top_n is None:
                yield self.key_batch()
            else:
                yield self.top_keys(top_n)
                uniq, inv = np.unique(k["last_producer_id"], return_inverse=True)
                lb, lr = np.bincount(inv, weights=k["last_bytes"]), np.bincount(inv)
                latest = {p: (b, r) for p, b, r in zip(uniq.tolist(), lb.tolist(), lr.tolist())}
        pids = sorted(set(self.producers) | set(latest))
        if pids:
            complete = top_n is not None
            yield rows_batch(len(pids), self.b, {
                "kind": ["producer"] * len(pids), "producer_id": pids,
                "bytes": [self.producers.get(p, [0.0, 0])[0] for p in pids],
                "updates": [self.producers.get(p, [0.0, 0])[1] for p in pids],
                "latest_bytes": [latest.get(p, (0.0, 0))[0] for p in pids] if complete else None,
                "latest_records": [latest.get(p, (0.0, 0))[1] for p in pids] if complete else None})
        if self.buckets:
            starts = sorted(self.buckets)
            yield rows_batch(len(starts), self.b, {
                "kind": ["bucket"] * len(starts), "bucket_start_ms": starts,
                "bucket_ms": [self.b.bucket_ms] * len(starts),
                "tombstones": [self.buckets[s][0] for s in starts],
                "tombstones_expired": [self.buckets[s][1] for s in starts]})

    def top_keys(self, n: int) -> pa.RecordBatch:
        """The ``n`` keys with the most updates (ties: lower key hash), with their obsolete bytes."""
        k = self.keys
        order = np.lexsort((k["key_hash"], -k["updates"]))[:n]
        return rows_batch(len(order), self.b, {
            "kind": ["top_key"] * len(order), "key_hash": k["key_hash"][order], "key": k["key"].take(pa.array(order)),
            "updates": k["updates"][order], "tombstones": k["tombstones"][order],
            "bytes": (k["bytes"] - k["last_bytes"])[order]})


def rows_batch(n: int, b: Bounds | None, cols: dict) -> pa.RecordBatch:
    base = {"topic": pa.repeat(b.topic if b else None, n), "partition": pa.repeat(b.partition if b else None, n)}
    arrays = []
    for name, typ in FIELDS:
        v = cols.get(name, base.get(name))
        if v is None:
            arrays.append(pa.nulls(n, type=typ))
        elif isinstance(v, pa.Array):
            arrays.append(v.cast(typ) if v.type != typ else v)
        else:
            arrays.append(pa.array(v, type=typ))
    return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


def fault_batch(segment: str, kind: str, position: int, reason: str) -> pa.RecordBatch:
    return rows_batch(1, None, {"kind": ["fault"], "segment": [segment], "fault_kind": [kind],
                            "fault_position": [position], "fault_reason": [reason]})

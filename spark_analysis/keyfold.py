"""The one record-level fold of the audit: what a full clean keeps of each key, in numpy.

Every input (segments, kafka-dump-log dumps, a live topic) reaches this fold a partition at a time,
in offset order, as numpy columns (``partition_fold``); nothing else in the audit decides what a
clean keeps. A record becomes a partial row of its key (``record_partials``), partial rows of the same
key merge by the rule each column declares in ``KEY_COLUMNS`` (``fold`` here; Spark's merge of key
tables sent in parts, ``merge``, is generated from the same table), and a key's outcome under a clean
(``outcome``) and the partition's totals (``key_totals``) are computed from the merged rows.

Why numpy next to the decoder and not a Spark ``groupBy``: the questions are per key within a
partition, and a partition's records arrive in offset order, so folding them where they are decoded
leaves Spark a few rows per partition instead of one row per record.

What "eligible" means (the section below ``upper``), the dirty section and the retention cut-off
come from ``Bounds``; see ``spark_analysis.audit`` for what Kafka keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa

SUM, MAX, ANY, LAST = "sum", "max", "any", "last"
NO_PRODUCER = np.iinfo(np.int64).min  # a live topic: a consumer does not see producer ids (null in the outputs)


class Column(NamedTuple):
    """A column of a key's partial row and how two partial rows of the same key merge:
    ``sum``, ``max`` (``or`` for booleans), ``any`` (equal in every row), or ``last`` (the value of the
    row with the highest ``by``, an offset)."""

    name: str
    type: pa.DataType
    merge: str
    by: str | None = None


KEY_COLUMNS = [
    Column("key", pa.binary(), ANY),
    Column("updates", pa.int64(), SUM),
    Column("bytes", pa.float64(), SUM),
    Column("last_offset", pa.int64(), MAX),
    Column("last_timestamp", pa.int64(), LAST, "last_offset"),
    Column("last_bytes", pa.float64(), LAST, "last_offset"),
    Column("last_producer_id", pa.int64(), LAST, "last_offset"),
    Column("last_tombstone", pa.bool_(), LAST, "last_offset"),
    Column("last_empty_value", pa.bool_(), LAST, "last_offset"),  # an empty string, not a tombstone
    Column("eligible_records", pa.int64(), SUM),
    Column("eligible_bytes", pa.float64(), SUM),
    Column("last_eligible_offset", pa.int64(), MAX),  # -1: no eligible record (then the columns below are 0)
    Column("last_eligible_bytes", pa.float64(), LAST, "last_eligible_offset"),
    Column("last_eligible_tombstone", pa.bool_(), LAST, "last_eligible_offset"),
    Column("last_eligible_expired", pa.bool_(), LAST, "last_eligible_offset"),
    Column("dirty", pa.bool_(), MAX),
    Column("tombstones", pa.int64(), SUM),
    Column("tombstones_expired", pa.int64(), SUM),
]
NUMERIC = [c for c in KEY_COLUMNS if c.name != "key"]


@dataclass(frozen=True)
class Bounds:
    """What a clean of one partition may touch and what counts as expired (from Kafka's state)."""

    topic: str
    partition: int
    upper: int  # records below this offset are eligible (segment aligned, Kafka's firstUncleanable)
    first_dirty: int  # the cleaner checkpoint: eligible records from here on are dirty
    expired_before_ms: int  # now - delete.retention.ms: tombstones older than this are past retention
    bucket_ms: int  # tombstone build-up bucket
    # the topic has several partitions: the fold sends its key hashes (``partition_key`` rows) so that
    # keys found in more than one partition can be counted across partitions
    key_hashes: bool = False
    # compact,delete: retention deletes the segments below this offset (``monitor.model.retention``); their
    # records are no key's record (-1: nothing deleted)
    retained_from: int = -1

    def to_json(self) -> dict:
        return dict(self.__dict__)


def record_partials(c: dict, b: Bounds) -> dict:
    """Every keyed record as a partial row of its own (one update, itself the latest)."""
    keyed = c["key_size"] >= 0
    off, ts, rb = c["offset"][keyed], c["timestamp"][keyed], c["record_bytes"][keyed]
    tomb = c["value_size"][keyed] < 0
    empty = c["value_size"][keyed] == 0
    eligible = off < b.upper
    expired = tomb & (ts < b.expired_before_ms)
    return {
        "key_hash": c["key_hash"][keyed], "key": c["key"].filter(pa.array(keyed)),
        "updates": np.ones(len(off), dtype=np.int64), "bytes": rb,
        "last_offset": off, "last_timestamp": ts, "last_bytes": rb, "last_producer_id": c["producer_id"][keyed],
        "last_tombstone": tomb, "last_empty_value": empty,
        "eligible_records": eligible.astype(np.int64), "eligible_bytes": np.where(eligible, rb, 0.0),
        "last_eligible_offset": np.where(eligible, off, -1), "last_eligible_bytes": np.where(eligible, rb, 0.0),
        "last_eligible_tombstone": tomb & eligible, "last_eligible_expired": expired & eligible,
        "dirty": eligible & (off >= b.first_dirty),
        "tombstones": tomb.astype(np.int64), "tombstones_expired": expired.astype(np.int64),
    }


def fold(tables: list[dict]) -> dict:
    """Partial rows folded to one row per key hash, each column by its ``merge`` rule (in any row
    order: ``last`` goes by the offset it names, not by the row's place)."""
    if len(tables) == 1:
        p = tables[0]
    else:
        p = {n: np.concatenate([t[n] for t in tables]) for n in ["key_hash"] + [c.name for c in NUMERIC]}
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
    group = np.empty(n, dtype=np.int64)  # each row's group (key) number
    group[order] = np.cumsum(new) - 1
    out = {"key_hash": hs[starts]}
    lasts: dict = {}
    for c in KEY_COLUMNS:
        col = p[c.name]
        if c.merge == ANY:
            out[c.name] = col.take(pa.array(order[starts]))
        elif c.merge == SUM:
            out[c.name] = np.zeros(groups, dtype=col.dtype)
            np.add.at(out[c.name], group, col)
        elif c.merge == MAX:
            out[c.name] = np.full(groups, _lowest(col.dtype), dtype=col.dtype)
            np.maximum.at(out[c.name], group, col)
        else:  # last: the value of the row holding the group's highest ``by`` (any of them on a tie)
            if c.by not in lasts:
                rows = np.flatnonzero(p[c.by] == out[c.by][group])
                lasts[c.by] = np.empty(groups, dtype=np.int64)
                lasts[c.by][group[rows]] = rows
            out[c.name] = col[lasts[c.by]]
    return out


def _lowest(dtype):
    return False if dtype == np.bool_ else np.iinfo(dtype).min if dtype.kind == "i" else -np.inf


def outcome(k: dict) -> dict:
    """What a full clean does to each key: it keeps the latest eligible record, unless that is a
    tombstone past retention; every earlier eligible record goes."""
    elig = k["eligible_records"]
    goes = k["last_eligible_expired"]
    kept = np.where(goes, 0.0, k["last_eligible_bytes"])
    return {
        "removable_records": np.maximum(elig - 1, 0) + goes,
        "reclaimable_bytes": np.where(elig > 0, k["eligible_bytes"] - kept, 0.0),
        "obsolete_bytes": k["bytes"] - k["last_bytes"],
    }


def key_totals(k: dict) -> dict:
    """A partition's key-derived totals (``rows.KEY_TOTALS``); sums over keys, so totals of disjoint
    sets of keys add up. ``share_reclaimable_bytes``: the records' byte shares a full clean removes, an
    estimate (the partition's reclaimable bytes are counted by ``monitor.model.nextclean``)."""
    o = outcome(k)
    return {
        "distinct_keys": int(len(k["updates"])), "obsolete_records": int((k["updates"] - 1).sum()),
        "removable_records": int(o["removable_records"].sum()),
        "share_reclaimable_bytes": float(o["reclaimable_bytes"].sum()),
        "dirty_distinct_keys": int(k["dirty"].sum()), "tombstones": int(k["tombstones"].sum()),
        "tombstones_past_retention": int(k["tombstones_expired"].sum()),
        "keys_last_tombstone": int(k["last_tombstone"].sum()),
        "keys_last_empty_value": int(k["last_empty_value"].sum()),
    }


def top_keys(k: dict, n: int) -> dict:
    """The ``n`` keys with the most updates (ties: lower key hash), with their obsolete bytes."""
    order = np.lexsort((k["key_hash"], -k["updates"]))[:n]
    return {"key_hash": k["key_hash"][order], "key": k["key"].take(pa.array(order)), "updates": k["updates"][order],
            "tombstones": k["tombstones"][order], "obsolete_bytes": outcome(k)["obsolete_bytes"][order]}


def latest_by_producer(k: dict) -> dict:
    """Per producer id: bytes and records that are still the latest record of their key."""
    uniq, inv = np.unique(k["last_producer_id"], return_inverse=True)
    return {int(p): (float(b), int(r)) for p, b, r in
            zip(uniq, np.bincount(inv, weights=k["last_bytes"]), np.bincount(inv))}


def from_arrow(batch) -> dict:
    """Key rows (``rows.ROW_TYPES["key"]`` fields) from Arrow back to the fold's numpy columns."""
    out = {"key_hash": batch.column("key_hash").to_numpy(zero_copy_only=False)}
    for c in KEY_COLUMNS:
        col = batch.column(c.name)
        if c.name == "key":
            out["key"] = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        elif c.name == "last_producer_id":
            out[c.name] = col.fill_null(NO_PRODUCER).to_numpy(zero_copy_only=False)
        else:
            out[c.name] = col.to_numpy(zero_copy_only=False)
    return out


def producer_ids(ids) -> pa.Array:
    """Producer ids for the outputs: ``NO_PRODUCER`` becomes null."""
    a = np.asarray(ids, dtype=np.int64)
    return pa.array(a, mask=a == NO_PRODUCER)

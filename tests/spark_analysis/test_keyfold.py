"""``spark_analysis.keyfold``: the audit's one record-level fold, against a record-by-record account of
what a full clean keeps (LogCleaner: the latest record of each key below the uncleanable offset, a
tombstone past delete.retention.ms removed too), whatever order and pieces the records are folded in.
Against the broker's own segments: tests/spark_analysis/test_partition_audit.py."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from spark_analysis.keyfold import (KEY_COLUMNS, NO_PRODUCER, Bounds, fold, from_arrow, key_totals, latest_by_producer,
                                    outcome, producer_ids, record_partials, top_keys)

NOW = 1_700_000_000_000
B = Bounds("t", 0, upper=60, first_dirty=20, expired_before_ms=NOW - 1000, bucket_ms=60_000)


def _records(seed: int, n: int = 80):
    """``n`` records in offset order: 9 keys (one null key now and then), tombstones, empty values,
    three producers, timestamps straddling the retention cut-off."""
    rnd = random.Random(seed)
    out = []
    for off in range(n):
        key = None if rnd.random() < 0.08 else f"k{rnd.randrange(9)}".encode()
        r = rnd.random()
        value_size = -1 if r < 0.2 else 0 if r < 0.27 else rnd.randrange(1, 300)
        out.append({"offset": off, "key": key, "value_size": value_size, "record_bytes": 20.0 + max(value_size, 0),
                    "timestamp": NOW - rnd.choice((5000, 10)), "producer_id": rnd.choice((1, 2, 3))})
    return out


def _columns(recs) -> dict:
    """The fold's input columns (``partition_fold``'s window) for these records."""
    return {"key_size": np.array([-1 if r["key"] is None else len(r["key"]) for r in recs], dtype=np.int32),
            "offset": np.array([r["offset"] for r in recs], dtype=np.int64),
            "timestamp": np.array([r["timestamp"] for r in recs], dtype=np.int64),
            "record_bytes": np.array([r["record_bytes"] for r in recs], dtype=np.float64),
            "value_size": np.array([r["value_size"] for r in recs], dtype=np.int32),
            "key_hash": np.array([hash(r["key"]) & 0x7FFFFFFFFFFF for r in recs], dtype=np.int64),
            "key": pa.array([r["key"] for r in recs], type=pa.binary()),
            "producer_id": np.array([r["producer_id"] for r in recs], dtype=np.int64)}


def _account(recs, b: Bounds) -> dict:
    """Record by record: per key, the latest eligible record stays (unless a tombstone past retention),
    every other eligible record goes."""
    by_key: dict = {}
    for r in recs:
        if r["key"] is not None:
            by_key.setdefault(r["key"], []).append(r)
    removable = reclaim = dirty = past = keys_tomb = keys_empty = obsolete = 0
    for rs in by_key.values():
        elig = [r for r in rs if r["offset"] < b.upper]
        obsolete += len(rs) - 1
        keys_tomb += rs[-1]["value_size"] < 0
        keys_empty += rs[-1]["value_size"] == 0
        past += sum(r["value_size"] < 0 and r["timestamp"] < b.expired_before_ms for r in rs)
        dirty += any(r["offset"] >= b.first_dirty for r in elig)
        if elig:
            last = elig[-1]
            goes = last["value_size"] < 0 and last["timestamp"] < b.expired_before_ms
            removable += len(elig) - 1 + goes
            reclaim += sum(r["record_bytes"] for r in elig) - (0 if goes else last["record_bytes"])
    return {"distinct_keys": len(by_key), "obsolete_records": obsolete, "removable_records": removable,
            "share_reclaimable_bytes": pytest.approx(reclaim), "dirty_distinct_keys": dirty,
            "tombstones": sum(r["key"] is not None and r["value_size"] < 0 for r in recs),
            "tombstones_past_retention": past, "keys_last_tombstone": keys_tomb, "keys_last_empty_value": keys_empty}


@pytest.mark.parametrize("seed", range(5))
def test_the_fold_keeps_what_a_clean_keeps(seed):
    recs = _records(seed)
    keys = fold([record_partials(_columns(recs), B)])
    assert key_totals(keys) == _account(recs, B)


@pytest.mark.parametrize("seed", range(5))
def test_pieces_folded_in_any_order_give_the_same_keys(seed):
    """A partition folded a window at a time, the windows' key tables in any order (and Spark's merge,
    generated from the same KEY_COLUMNS rules): the same key rows as one fold of every record."""
    recs = _records(seed, 120)
    whole = fold([record_partials(_columns(recs), B)])
    rnd = random.Random(seed)
    cuts = sorted(rnd.sample(range(1, len(recs)), 4))
    pieces = [fold([record_partials(_columns(recs[a:b]), B)]) for a, b in zip([0] + cuts, cuts + [len(recs)])]
    rnd.shuffle(pieces)
    merged = fold(pieces)
    for c in ["key_hash"] + [c.name for c in KEY_COLUMNS if c.name != "key"]:
        assert np.array_equal(merged[c], whole[c]), c
    assert merged["key"].to_pylist() == whole["key"].to_pylist()


def test_a_key_all_above_the_bound_is_kept_whole_and_counts_no_clean():
    recs = [{"offset": o, "key": b"late", "value_size": 5, "record_bytes": 25.0, "timestamp": NOW, "producer_id": 1}
            for o in (70, 71, 72)]
    keys = fold([record_partials(_columns(recs), B)])
    o = outcome(keys)
    assert list(keys["last_eligible_offset"]) == [-1] and list(o["removable_records"]) == [0]
    assert list(o["reclaimable_bytes"]) == [0.0] and list(o["obsolete_bytes"]) == [50.0]  # superseded, not cleanable yet


def test_a_latest_tombstone_past_retention_goes_too_and_one_inside_stays():
    old, new = NOW - 5000, NOW - 10
    recs = [{"offset": 1, "key": b"a", "value_size": 9, "record_bytes": 29.0, "timestamp": old, "producer_id": 1},
            {"offset": 2, "key": b"a", "value_size": -1, "record_bytes": 20.0, "timestamp": old, "producer_id": 1},
            {"offset": 3, "key": b"b", "value_size": 9, "record_bytes": 29.0, "timestamp": new, "producer_id": 1},
            {"offset": 4, "key": b"b", "value_size": -1, "record_bytes": 20.0, "timestamp": new, "producer_id": 1}]
    t = key_totals(fold([record_partials(_columns(recs), B)]))
    assert (t["removable_records"], t["share_reclaimable_bytes"]) == (3, 29.0 + 20.0 + 29.0)
    assert (t["tombstones"], t["tombstones_past_retention"], t["keys_last_tombstone"]) == (2, 1, 2)


def test_top_keys_by_updates_ties_by_key_hash():
    recs = [{"offset": o, "key": k, "value_size": 1, "record_bytes": 21.0, "timestamp": NOW, "producer_id": 1}
            for o, k in enumerate([b"x", b"y", b"x", b"z", b"y", b"x", b"w"])]
    keys = fold([record_partials(_columns(recs), B)])
    top = top_keys(keys, 3)
    assert top["key"].to_pylist()[0] == b"x" and list(top["updates"]) == [3, 2, 1]
    ones = [k for k, h in sorted(zip(keys["key"].to_pylist(), keys["key_hash"]), key=lambda p: p[1])
            if k in (b"z", b"w")]
    assert top["key"].to_pylist()[2] == ones[0]  # of the keys updated once, the lower hash
    assert list(top["obsolete_bytes"]) == [42.0, 21.0, 0.0]


def test_latest_by_producer_counts_only_each_keys_latest_record():
    recs = [{"offset": 0, "key": b"a", "value_size": 1, "record_bytes": 10.0, "timestamp": NOW, "producer_id": 1},
            {"offset": 1, "key": b"a", "value_size": 1, "record_bytes": 11.0, "timestamp": NOW, "producer_id": 2},
            {"offset": 2, "key": b"b", "value_size": 1, "record_bytes": 12.0, "timestamp": NOW, "producer_id": 1}]
    assert latest_by_producer(fold([record_partials(_columns(recs), B)])) == {1: (12.0, 1), 2: (11.0, 1)}


def test_key_rows_through_arrow_and_back_and_no_producer_is_null():
    recs = _records(7)
    recs[0]["producer_id"] = NO_PRODUCER  # a live topic's record: no producer id
    keys = fold([record_partials(_columns(recs), B)])
    table = pa.table({"key_hash": keys["key_hash"], **{c.name: (keys[c.name] if c.name != "last_producer_id"
                                                                 else producer_ids(keys[c.name])) for c in KEY_COLUMNS}})
    back = from_arrow(table)
    for c in ["key_hash"] + [c.name for c in KEY_COLUMNS if c.name != "key"]:
        assert np.array_equal(back[c], keys[c]), c
    ids = producer_ids([NO_PRODUCER, 5])
    assert ids.to_pylist() == [None, 5]

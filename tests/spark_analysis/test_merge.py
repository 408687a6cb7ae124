"""The fold's merge rules in their two forms: numpy (``keyfold.fold``) and Spark's aggregates generated
from the same column table (``merge.merge_key_parts``). Records split into parts, each part folded,
the parts merged both ways in any order: every column of every key equals the fold of all records in
one go."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from spark_analysis.keyfold import KEY_COLUMNS, LAST, Bounds, fold, from_arrow, record_partials
from spark_analysis.merge import merge_key_parts
from spark_analysis.partition_fold import PartitionFold
from spark_analysis.rows import ROW_TYPES, ddl

B = Bounds("t", 0, upper=6000, first_dirty=3000, expired_before_ms=50_000, bucket_ms=60_000)


def records(n: int, seed: int) -> dict:
    """``n`` records in offset order: 300 keys (some keyless records), tombstones, sizes, producers."""
    rng = np.random.default_rng(seed)
    kid = rng.integers(0, 300, n)
    keyless = rng.random(n) < 0.05
    key_size = np.where(keyless, -1, 6).astype(np.int32)
    keys = pa.array([None if k else f"k{i:05d}".encode() for i, k in zip(kid, keyless)], pa.binary())
    return {"offset": np.arange(n, dtype=np.int64) * 2, "timestamp": rng.integers(0, 100_000, n),
            "key_hash": np.where(keyless, 42, kid * 7919 - 1_000_003).astype(np.int64), "key_size": key_size,
            "value_size": np.where(rng.random(n) < 0.2, -1, rng.integers(0, 500, n)).astype(np.int32),
            "key": keys, "record_bytes": rng.random(n) * 100, "producer_id": rng.integers(0, 4, n)}


def window(c: dict, lo: int, hi: int) -> dict:
    return {k: (v.slice(lo, hi - lo) if isinstance(v, pa.Array) else v[lo:hi]) for k, v in c.items()}


def as_dict(k: dict) -> dict:
    """key hash -> every column of the key's row."""
    return {int(h): tuple(k[c.name][i].as_py() if c.name == "key" else k[c.name][i].item() for c in KEY_COLUMNS)
            for i, h in enumerate(k["key_hash"])}


def test_every_last_by_column_is_ordered_by_a_max_merged_column_and_names_are_unique():
    names = [c.name for c in KEY_COLUMNS]
    assert len(set(names)) == len(names)
    assert all(c.by in names and dict((x.name, x.merge) for x in KEY_COLUMNS)[c.by] == "max"
               for c in KEY_COLUMNS if c.merge == LAST)


@pytest.mark.parametrize("draw", [1, 2])  # two draws: the seed fixture's differs per test id
def test_parts_merged_by_numpy_and_by_spark_equal_one_fold_of_all_records(spark, seed, draw):
    c = records(8000, seed)
    whole = as_dict(fold([record_partials(c, B)]))
    # the fold as the tasks run it: windows of records, the key table sent in parts when it is full
    acc = PartitionFold(B, max_keys=120)
    batches = [b for lo in range(0, 8000, 700) for b in acc.add(window(c, lo, min(lo + 700, 8000)))]
    batches += list(acc.finish(top_n=5))
    parts = pa.Table.from_batches(batches)["key"].drop_null().combine_chunks()
    parts = pa.Table.from_batches([pa.RecordBatch.from_struct_array(parts)])
    assert parts.num_rows > len(whole)  # keys sent in several parts
    shuffled = parts.take(np.random.default_rng(seed).permutation(parts.num_rows))
    assert_same(as_dict(fold([from_arrow(shuffled)])), whole)
    df = spark.createDataFrame(shuffled.to_pylist(), ddl("key"))
    merged = pa.Table.from_pylist([r.asDict() for r in merge_key_parts(df).collect()], pa.schema(ROW_TYPES["key"]))
    assert_same(as_dict(from_arrow(merged)), whole)


def assert_same(got: dict, want: dict) -> None:
    """The same keys and columns; byte sums to 1e-9 relative (added in another order)."""
    assert got.keys() == want.keys()
    for h, row in want.items():
        assert got[h][0] == row[0] and got[h][1:] == pytest.approx(row[1:], rel=1e-9), h

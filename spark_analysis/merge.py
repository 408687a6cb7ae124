"""Key tables sent in parts, merged by Spark and finished by the one fold.

A task whose partition holds more keys than it keeps in memory sends its key table as ``key`` rows
(``partition_fold``). Spark merges the rows of the same (topic, partition, key hash) with aggregates
generated from the fold's column table (``keyfold.KEY_COLUMNS``: ``sum`` -> ``sum``, ``max`` ->
``max``, ``any`` -> ``any_value``, ``last`` by an offset -> ``max_by``), so the merge cannot drift
from the numpy fold. The merged keys then go back through ``keyfold`` (``mapInArrow``): the outcome of
a clean, the partition totals (additive, so each Arrow batch's totals are summed), top-key candidates
and each producer's latest records, in the row types of ``rows``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_analysis import rows
from spark_analysis.keyfold import ANY, KEY_COLUMNS, LAST, MAX, SUM, from_arrow, key_totals, latest_by_producer, top_keys
from spark_analysis.partition_fold import producer_batch

GROUP = ["topic", "partition", "key_hash"]


def merge_exprs() -> list[Column]:
    """One Spark aggregate per fold column, from its declared merge rule."""
    by_rule = {SUM: F.sum, MAX: F.max, ANY: F.any_value}
    out = []
    for c in KEY_COLUMNS:
        agg = F.max_by(c.name, c.by) if c.merge == LAST else by_rule[c.merge](c.name)
        out.append(agg.alias(c.name))
    return out


def merge_key_parts(keys: DataFrame) -> DataFrame:
    """``key`` rows (the ``key`` struct's fields) of the same partition and key merged to one row."""
    return keys.groupBy(*GROUP).agg(*merge_exprs()).select(*GROUP, *(c.name for c in KEY_COLUMNS))


def finish_merged(top_n: int):
    """The ``mapInArrow`` function that finishes merged key rows: each batch's totals, top keys and
    latest records per producer, per partition."""

    def run(batches):
        import pyarrow as pa
        import pyarrow.compute as pc

        for batch in batches:
            t = pa.Table.from_batches([batch])
            for topic, part in {(a, b) for a, b in zip(t["topic"].to_pylist(), t["partition"].to_pylist())}:
                one = t.filter(pc.and_(pc.equal(t["topic"], topic), pc.equal(t["partition"], part)))
                k = from_arrow(one)
                yield rows.batch("key_totals", 1, {"topic": topic, "partition": part, **key_totals(k)})
                n = min(top_n, len(k["key_hash"]))
                yield rows.batch("top_key", n, {"topic": topic, "partition": part, **top_keys(k, top_n)})
                latest = latest_by_producer(k)
                pids = sorted(latest)
                yield producer_batch(topic, pids, {p: (0.0, 0) for p in pids}, latest)

    return run


def finish_key_parts(keys: DataFrame, top_n: int) -> DataFrame:
    """Merged and finished: a DataFrame of the union (``rows.ddl()``) with key_totals, top_key and
    producer rows."""
    return merge_key_parts(keys).mapInArrow(finish_merged(top_n), rows.ddl())

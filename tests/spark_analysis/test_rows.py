"""The row types (``spark_analysis.rows``) and the output schema declared from them: the partitions
table's columns are declared once (``rows.PARTITION``), typed by the row types they are made from, and
the table builder makes exactly those columns."""

from __future__ import annotations

import pyarrow as pa

from spark_analysis.audit import pitfalls
from spark_analysis.audit.tables import CONFIG_DEPENDENT, PARTITION_DDL, config_of, partition_row
from spark_analysis.rows import KEY_TOTALS, PARTITION, PARTITION_COLUMNS, ROW_TYPES, SCHEMA, batch, rows_of
from spark_analysis.schema import SPARK_TYPES
from monitor.model.estimate import CleanerParams
from monitor.model.topicconfig import effective_config


def _ddl_columns(ddl: str) -> list[tuple[str, str]]:
    return [tuple(c.split(" ", 1)) for c in ddl.split(", ")]


def test_the_partitions_ddl_is_the_declared_columns_then_the_pitfalls():
    cols = _ddl_columns(PARTITION_DDL)
    assert [n for n, _ in cols] == PARTITION_COLUMNS + [n for n, _ in _ddl_columns(pitfalls.PARTITION_DDL)]
    assert len({n for n, _ in cols}) == len(cols)  # no column twice


def test_a_column_made_from_a_row_type_keeps_its_type():
    """Every partitions column a task's row type carries (facts, key totals, record stats) has that
    type in the table: a figure is never widened, narrowed or retyped on its way to the Parquet file."""
    typed = {}
    for kind in ("facts", "key_totals", "record_stats"):
        for n, t in ROW_TYPES[kind]:
            if n not in ("topic", "partition"):
                typed.setdefault(n, set()).add(SPARK_TYPES[t])
    spark_names = {"long": "bigint"}
    checked = 0
    for name, typ in _ddl_columns(PARTITION_DDL):
        if name in typed:
            assert typed[name] == {spark_names.get(typ, typ)}, name
            checked += 1
    assert checked >= 25  # most columns come straight from a row type


def test_the_table_builder_makes_exactly_the_declared_columns():
    facts = {n: (0.0 if t == pa.float64() else False if t == pa.bool_() else "t" if t == pa.string() else 0)
             for n, t in ROW_TYPES["facts"]}
    totals = {n: 1 for n, _ in KEY_TOTALS}
    row = partition_row(facts, totals, CleanerParams())
    row.update(config_of(effective_config("t", compacted=True)))
    assert set(PARTITION_COLUMNS) <= set(row) <= {n for n, _ in _ddl_columns(PARTITION_DDL)}
    assert set(row) - set(PARTITION_COLUMNS) == {"keys_last_empty_value"}  # a key total, a pitfalls column
    assert set(CONFIG_DEPENDENT) <= set(PARTITION_COLUMNS)
    # the facts that feed the tables but are no column of them
    assert set(n for n, _ in ROW_TYPES["facts"]) - set(PARTITION_COLUMNS) == {
        "bucket_ms", "txn_removable_records", "txn_reclaimable_bytes", "projected_removable_records", "decoder",
        "write_bytes_per_second", "write_offsets", "write_rate_unknown_reason",  # the what-if table's inputs
        "max_decompressed_record_bytes"}  # summary.json's decompressed_limit (only where a topic sets a cap)


def test_a_union_batch_sets_one_struct_and_rows_of_reads_it_back():
    b = batch("fault", 2, {"segment": ["a.log", "b.log"], "fault_kind": "corrupt", "fault_position": [0, 61]})
    table = pa.Table.from_batches([b], schema=SCHEMA)
    assert rows_of(table, "fault") == [
        {"segment": "a.log", "fault_kind": "corrupt", "fault_position": 0, "fault_reason": None},
        {"segment": "b.log", "fault_kind": "corrupt", "fault_position": 61, "fault_reason": None}]
    assert rows_of(table, "facts") == []


def test_spark_reads_the_partitions_ddl_as_the_arrow_fields(spark):
    """Spark's own parse of the DDL against the Arrow types it is generated from."""
    from pyspark.sql.pandas.types import from_arrow_schema

    parsed = spark.createDataFrame([], PARTITION_DDL).schema
    declared = from_arrow_schema(pa.schema(PARTITION))
    assert [(f.name, f.dataType) for f in parsed.fields[:len(PARTITION)]] == \
           [(f.name, f.dataType) for f in declared.fields]


def test_one_row_in_one_call_is_the_row_field_by_field(monkeypatch):
    """``batch`` converts one row of plain values (a value, a list or an Arrow array of one) in one call;
    built field by field (``_one_row`` refusing), the very same batch."""
    import pyarrow as pa

    from spark_analysis import rows

    cases = [
        ("facts", {"topic": "t", "partition": 3, "records": 10, "cleanable_ratio": 0.5, "eligible": True,
                   "txn_reclaimable_bytes": None, "next_clean_bytes": None, "projection_method": "counted",
                   "write_bytes_per_second": 1.25}),
        ("key_totals", {"topic": "t", "partition": 0, "distinct_keys": 0, "share_reclaimable_bytes": 0.0}),
        ("producer", {"topic": "t", "producer_id": pa.array([7], pa.int64()), "written_bytes": [1.5], "records": [2]}),
        ("key_hashes", {"topic": "t", "partition": 1, "hashes": [b"\x01" * 16]}),
        ("fault", {"segment": ["s.log"], "fault_kind": ["crc"], "fault_position": [61], "fault_reason": ["why"]}),
    ]
    fast = [rows.batch(kind, 1, cols) for kind, cols in cases]
    assert all(rows._one_row(cols) is not None for _, cols in cases)
    monkeypatch.setattr(rows, "_one_row", lambda cols: None)
    for (kind, cols), got in zip(cases, fast):
        want = rows.batch(kind, 1, cols)
        assert got.equals(want) and got.schema.equals(want.schema), kind

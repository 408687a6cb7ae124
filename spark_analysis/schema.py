"""One record schema for every input (segments, dumps, a live topic), in Spark and Arrow form.

A row is a record, or a fault (``fault_kind`` set, record columns null) so that corrupt input is
counted and listed without stopping the job."""

from __future__ import annotations

import pyarrow as pa

FIELDS = [
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("segment", pa.string()),  # file the record was read from
    ("segment_base_offset", pa.int64()),
    ("segment_bytes", pa.int64()),  # size of the segment file (constant per segment)
    ("batch_base_offset", pa.int64()),
    ("batch_position", pa.int64()),
    ("batch_bytes", pa.int32()),
    ("offset", pa.int64()),
    ("timestamp", pa.int64()),
    ("timestamp_type", pa.string()),
    ("key", pa.binary()),
    ("key_size", pa.int32()),
    ("value_size", pa.int32()),
    ("record_bytes", pa.float64()),  # the record's share of its batch's bytes on disk
    ("tombstone", pa.bool_()),
    ("control", pa.bool_()),
    ("transactional", pa.bool_()),
    ("producer_id", pa.int64()),
    ("compression", pa.string()),
    ("delete_horizon_ms", pa.int64()),
    ("fault_kind", pa.string()),
    ("fault_position", pa.int64()),
    ("fault_reason", pa.string()),
]
ARROW_SCHEMA = pa.schema(FIELDS)

SPARK_TYPES = {
    pa.string(): "string", pa.int32(): "int", pa.int64(): "bigint", pa.binary(): "binary",
    pa.float64(): "double", pa.bool_(): "boolean",
}
DDL = ", ".join(f"{name} {SPARK_TYPES[t]}" for name, t in FIELDS)
NAMES = [name for name, _ in FIELDS]

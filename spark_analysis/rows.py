"""The row types the audit's tasks hand Spark: one Arrow schema per output, and the union they travel in.

Why a union: a Spark Python data source (``DataSourceReader.read``) and ``mapInArrow`` return one
schema per DataFrame, and a task that reads a partition once produces several outputs (the
partition's facts, its key totals, top keys, key parts, producers, tombstone buckets, faults).
Reading the partition once per output would decode it several times, so each task yields one
DataFrame whose columns are the row types, each a struct with its own fields: in a row exactly one
struct is set. The audit persists that DataFrame once, collects every row but the key parts in one
job (a few per partition; ``rows_of`` picks one type) and leaves the key parts to Spark's merge
(``select("key.*")`` where ``key`` is set): every output keeps its own names and types, and no
column means two things.
"""

from __future__ import annotations

import pyarrow as pa

from spark_analysis.keyfold import KEY_COLUMNS
from spark_analysis.projection import HORIZON_COLUMNS
from spark_analysis.schema import SPARK_TYPES

_PART = [("topic", pa.string()), ("partition", pa.int32())]

# the key-derived totals of a partition; additive over keys, so partial totals sum
KEY_TOTALS = [
    ("distinct_keys", pa.int64()), ("obsolete_records", pa.int64()), ("removable_records", pa.int64()),
    # the byte shares a full clean removes (estimated: batch bytes spread over records); the partition's
    # reclaimable bytes follow the counted projection, this stays for the records path's estimate
    ("share_reclaimable_bytes", pa.float64()), ("dirty_distinct_keys", pa.int64()), ("tombstones", pa.int64()),
    ("tombstones_past_retention", pa.int64()), ("keys_last_tombstone", pa.int64()),
    # producer pitfalls: keys whose latest value is an empty string (not a tombstone: they never go away)
    ("keys_last_empty_value", pa.int64()),
]

ROW_TYPES: dict[str, list] = {
    # Kafka's view of a partition from its batch headers (``partition_audit.partition_facts``)
    "facts": _PART + [
        ("segments", pa.int32()), ("records", pa.int64()), ("control_records", pa.int64()), ("bytes", pa.int64()),
        ("first_dirty_offset", pa.int64()), ("checkpoint_offset", pa.int64()),
        ("first_uncleanable_offset", pa.int64()), ("clean_bytes", pa.int64()), ("cleanable_bytes", pa.int64()),
        ("cleanable_ratio", pa.float64()), ("min_cleanable_dirty_ratio", pa.float64()), ("eligible", pa.bool_()),
        ("delete_retention_ms", pa.int64()), ("first_timestamp", pa.int64()), ("last_timestamp", pa.int64()),
        ("bucket_ms", pa.int64()),
        # what one clean drops of aborted transactions and markers (monitor.model.txncleaner), from the record pass;
        # null where the projection counts them (the segments path, but a projection that could not start)
        ("txn_removable_records", pa.int64()), ("txn_reclaimable_bytes", pa.float64()),
        # compact,delete: what one retention check deletes (``monitor.model.retention``); null without delete
        ("retention_deleted_segments", pa.int32()), ("retention_deleted_bytes", pa.int64()),
        ("projected_log_start_offset", pa.int64()),
        # the two projections (``spark_analysis.projection``): after the next clean, and settled (after every
        # delete horizon has passed and another clean); counted from the segments (``monitor.model.nextclean``)
        # or estimated (dumps, a topic); null with the reason when unknown
        ("next_clean_bytes", pa.int64()), ("settled_bytes", pa.int64()), ("projection_method", pa.string()),
        ("projection_unknown_reason", pa.string()), ("projected_removable_records", pa.int64()),
        ("batches_dropped", pa.int64()), ("batches_rewritten", pa.int64()), ("batches_stamped", pa.int64()),
        # tombstones and markers by their delete horizon's state (``monitor.model.horizon``), and when the
        # next ones become removable
        *[(c, pa.int64()) for c in HORIZON_COLUMNS], ("next_removable_ms", pa.int64()),
        # the writes seen in the uncleaned tail (``monitor.model.whatif.observed_writes``), for the what-if model:
        # bytes per second over the time its batches span, the offsets it holds; null rate with the reason
        ("write_bytes_per_second", pa.float64()), ("write_offsets", pa.int64()),
        ("write_rate_unknown_reason", pa.string()),
        # the largest record of a compressed batch below the active segment (Kafka 4.4's
        # max.decompressed.message.bytes is checked against it), from the record pass; null on the records path
        ("max_decompressed_record_bytes", pa.int64()),
        # the record decoder the task ran ("c" or "python", ``monitor.kafka.record.v2.decoder``)
        ("decoder", pa.string())],
    "key_totals": _PART + KEY_TOTALS,
    # one key's partial aggregate, when a key table goes out in parts (merged by ``merge``)
    "key": _PART + [("key_hash", pa.int64())] + [(c.name, c.type) for c in KEY_COLUMNS],
    "top_key": _PART + [("key_hash", pa.int64()), ("key", pa.binary()), ("updates", pa.int64()),
                        ("tombstones", pa.int64()), ("obsolete_bytes", pa.float64())],
    # written_*: what a producer wrote to keyed records; latest_*: what of it is still the latest of its key
    "producer": [("topic", pa.string()), ("producer_id", pa.int64()), ("written_bytes", pa.float64()),
                 ("records", pa.int64()), ("latest_bytes", pa.float64()), ("latest_records", pa.int64())],
    "bucket": [("topic", pa.string()), ("bucket_start_ms", pa.int64()), ("tombstones", pa.int64()),
               ("past_retention", pa.int64())],
    # producer pitfalls counted per record as a partition is folded (``partition_fold``): records
    # without a key, records whose value is empty (length 0, not null), the largest value
    "record_stats": _PART + [("keyless_records", pa.int64()), ("empty_value_records", pa.int64()),
                             ("value_records", pa.int64()), ("value_bytes_max", pa.int64())],
    # the value-size histogram (``monitor.contract.valuesizes``): records per bucket, summed over windows
    "value_size": _PART + [("bucket", pa.int32()), ("records", pa.int64())],
    # a partition's key hashes, for topics of several partitions (keys found in more than one): a run
    # of them packed as int64 little-endian in one binary value (``partition_fold.key_hash_batch``),
    # not a row per key: a row per key costs the JVM more than the whole fold did
    "key_hashes": _PART + [("hashes", pa.binary())],
    "fault": [("segment", pa.string()), ("fault_kind", pa.string()), ("fault_position", pa.int64()),
              ("fault_reason", pa.string())],
}
STRUCTS = {kind: pa.struct(fields) for kind, fields in ROW_TYPES.items()}

# The audit's partitions table (``audit.tables.PARTITION_DDL``, before the producer-pitfall columns of
# ``audit.pitfalls``), declared here once: its columns in order, each typed by the row type it comes
# from (a partition's facts or key totals) or, for what the table builder adds, by ``PARTITION_ADDED``.
# The facts not named here (the tombstone bucket, a clean's transaction figures, the projection's removable
# records, which become removable_records, the decoder) feed the
# tables but are no column of them.
# reclaimable_bytes: bytes - next_clean_bytes (less what retention deletes), an integer like the projection
PARTITION_ADDED = [("reclaimable_bytes", pa.int64()), ("cleaner_passes", pa.int32()),
                   ("estimated_clean_seconds", pa.float64()), ("config_source", pa.string()),
                   ("config_unknown_reason", pa.string())]
PARTITION_COLUMNS = (
    "topic partition segments records control_records bytes distinct_keys obsolete_records removable_records "
    "reclaimable_bytes next_clean_bytes settled_bytes projection_method projection_unknown_reason batches_dropped "
    "batches_rewritten batches_stamped first_dirty_offset checkpoint_offset first_uncleanable_offset clean_bytes "
    "cleanable_bytes cleanable_ratio min_cleanable_dirty_ratio eligible dirty_distinct_keys cleaner_passes "
    "estimated_clean_seconds tombstones tombstones_past_retention keys_last_tombstone "
    + " ".join(HORIZON_COLUMNS) + " next_removable_ms delete_retention_ms "
    "first_timestamp last_timestamp retention_deleted_segments retention_deleted_bytes projected_log_start_offset "
    "config_source config_unknown_reason").split()
_TYPED = dict(ROW_TYPES["facts"] + KEY_TOTALS + PARTITION_ADDED)
PARTITION = [(name, _TYPED[name]) for name in PARTITION_COLUMNS]
SCHEMA = pa.schema([(kind, t) for kind, t in STRUCTS.items()])



def ddl(kind: str | None = None) -> str:
    """The union as a Spark DDL schema string, or the fields of one row type."""
    if kind:
        return fields_ddl(ROW_TYPES[kind])
    return ", ".join(f"`{k}` struct<{', '.join(f'{n}: {SPARK_TYPES[t]}' for n, t in fields)}>"
                     for k, fields in ROW_TYPES.items())


def fields_ddl(fields: list) -> str:
    """``(name, Arrow type)`` fields as a Spark DDL schema string."""
    return ", ".join(f"{n} {SPARK_TYPES[t]}" for n, t in fields)


_SCALARS = (str, bytes, int, float, bool, type(None))
_ONE_NULL: dict = {}  # kind -> its struct as one null row (Arrow arrays are immutable: shared)


def batch(kind: str, n: int, cols: dict) -> pa.RecordBatch:
    """``n`` rows of one type: its fields from ``cols`` (missing ones null), every other struct null.

    One row of plain values (a partition's facts, its key totals: most of a task's batches) is converted
    in one call, the other structs' null row made once: field by field it cost about 0.8 ms a facts row,
    a good part of a small partition's audit (``bench``: 3.9 ms a partition of 600 records)."""
    row = _one_row(cols) if n == 1 else None
    if row is not None:
        if not _ONE_NULL:
            _ONE_NULL.update({k: pa.nulls(1, type=t) for k, t in STRUCTS.items()})
        filled = pa.array([{name: row.get(name) for name, _ in ROW_TYPES[kind]}], type=STRUCTS[kind])
        return pa.RecordBatch.from_arrays([filled if k == kind else _ONE_NULL[k] for k in STRUCTS], schema=SCHEMA)
    arrays = []
    for name, typ in ROW_TYPES[kind]:
        v = cols.get(name)
        if v is None:
            arrays.append(pa.nulls(n, type=typ))
        elif isinstance(v, pa.Array):
            arrays.append(v.cast(typ) if v.type != typ else v)
        elif isinstance(v, (str, int, float, bool)):
            arrays.append(pa.repeat(pa.scalar(v, type=typ), n))
        else:
            arrays.append(pa.array(v, type=typ))
    filled = pa.StructArray.from_arrays(arrays, fields=list(STRUCTS[kind]))
    return pa.RecordBatch.from_arrays(
        [filled if k == kind else pa.nulls(n, type=t) for k, t in STRUCTS.items()], schema=SCHEMA)


def _one_row(cols: dict) -> dict | None:
    """``cols`` as one row of plain values (a value, or a list or Arrow array of one), or None when a
    value is anything else (``batch`` then builds the row field by field)."""
    row = {}
    for name, v in cols.items():
        t = type(v)
        if t in _SCALARS:
            row[name] = v
        elif t is list and len(v) == 1 and type(v[0]) in _SCALARS:
            row[name] = v[0]
        elif isinstance(v, pa.Array) and len(v) == 1:
            row[name] = v[0].as_py()
        else:
            return None
    return row


def fault_batch(segment: str, kind: str, position: int, reason: str) -> pa.RecordBatch:
    return batch("fault", 1, {"segment": [segment], "fault_kind": [kind], "fault_position": [position],
                              "fault_reason": [reason]})


def rows_of(table: pa.Table, kind: str) -> list[dict]:
    """The rows of one type in a table of the union (tests, one-process runs)."""
    col = table[kind]
    return [r for r in col.to_pylist() if r is not None]

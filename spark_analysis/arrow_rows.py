"""Records to Arrow batches, on the executors. No Spark import: this is plain reading code."""

from __future__ import annotations

import posixpath

import pyarrow as pa

from monitor.dump import DumpParser
from monitor.logdir import parse_partition_dir_name
from monitor.record import SegmentReader
from monitor.record.codecs import CodecError
from monitor.record.legacy import LegacyDecodeError
from monitor.record.v2 import RecordDecodeError
from spark_analysis.schema import ARROW_SCHEMA, NAMES

ROWS_PER_BATCH = 65536
RECORD_OVERHEAD = 8  # rough per-record framing, to share a batch's bytes between its records


def topic_partition(path: str) -> tuple[str | None, int | None]:
    """``.../orders-3/00000000000000001200.log`` -> ("orders", 3)."""
    parsed = parse_partition_dir_name(posixpath.basename(posixpath.dirname(path)))
    return parsed if parsed else (None, None)


def segment_base(path: str) -> int | None:
    stem = posixpath.basename(path).split(".")[0]
    return int(stem) if stem.isdigit() else None


class Columns:
    """Column lists filled batch by batch; ``flush()`` makes an Arrow RecordBatch."""

    def __init__(self):
        self.cols = {n: [] for n in NAMES}
        self.n = 0

    def add_batch(self, consts: dict, recs, rec_cols: dict) -> None:
        k = len(recs)
        for name, value in consts.items():
            self.cols[name].extend([value] * k)
        for name, values in rec_cols.items():
            self.cols[name].extend(values)
        self.n += k

    def add_fault(self, consts: dict, kind: str, position: int, reason: str) -> None:
        for name in NAMES:
            self.cols[name].append(consts.get(name))
        self.cols["fault_kind"][-1] = kind
        self.cols["fault_position"][-1] = position
        self.cols["fault_reason"][-1] = reason
        self.n += 1

    def flush(self) -> pa.RecordBatch:
        batch = pa.RecordBatch.from_arrays([pa.array(self.cols[n], type=ARROW_SCHEMA.field(n).type) for n in NAMES],
                                           schema=ARROW_SCHEMA)
        self.cols = {n: [] for n in NAMES}
        self.n = 0
        return batch


def _fill_nulls(consts: dict) -> dict:
    return {**{n: None for n in NAMES if n not in consts}, **consts}


def segment_batches(uri: str, size: int, opener):
    """Arrow batches for one segment file; faults become rows."""
    topic, partition = topic_partition(uri)
    seg_consts = {"topic": topic, "partition": partition, "segment": uri, "segment_base_offset": segment_base(uri),
                  "segment_bytes": size}
    cols = Columns()
    try:
        fh = opener(uri)
    except OSError as exc:
        cols.add_fault(seg_consts, "unreadable", 0, f"{uri}: cannot read: {exc}")
        yield cols.flush()
        return
    with fh:
        reader = SegmentReader(fh, name=uri, skip_corrupt=True)
        for batch in reader.batches():
            try:
                recs = batch.records()
            except (RecordDecodeError, LegacyDecodeError, CodecError) as exc:
                cols.add_fault(seg_consts, "corrupt", batch.position, f"{uri}: byte {batch.position}: {exc}")
                continue
            if not recs:
                continue
            _add(cols, seg_consts, batch, recs)
            if cols.n >= ROWS_PER_BATCH:
                yield cols.flush()
        for f in reader.faults:
            cols.add_fault(seg_consts, f.kind, f.position, str(f))
    if cols.n:
        yield cols.flush()


def _add(cols: Columns, seg_consts: dict, batch, recs) -> None:
    sizes = [(r.key_size if r.key_size > 0 else 0) + (r.value_size if r.value_size > 0 else 0) + RECORD_OVERHEAD
             for r in recs]
    share = batch.size / sum(sizes)
    control = batch.is_control
    consts = dict(seg_consts)
    consts.update({
        "batch_base_offset": batch.base_offset, "batch_position": batch.position, "batch_bytes": batch.size,
        "timestamp_type": batch.timestamp_type, "control": control, "transactional": batch.is_transactional,
        "producer_id": batch.producer_id, "compression": batch.compression,
        "delete_horizon_ms": batch.delete_horizon_ms, "fault_kind": None, "fault_position": None,
        "fault_reason": None,
    })
    vsizes = [r.value_size for r in recs]
    cols.add_batch(consts, recs, {
        "offset": [r.offset for r in recs],
        "timestamp": [r.timestamp for r in recs],
        "key": [r.key for r in recs],
        "key_size": [r.key_size for r in recs],
        "value_size": vsizes,
        "record_bytes": [s * share for s in sizes],
        "tombstone": [v < 0 and not control for v in vsizes],
    })


def dump_batches(uri: str, size: int, opener):
    """Arrow batches for one kafka-dump-log text file: the records of every segment it dumps."""
    cols = Columns()
    file_consts = {"topic": None, "partition": None, "segment": uri, "segment_base_offset": None,
                   "segment_bytes": None}
    try:
        fh = opener(uri)
    except OSError as exc:
        cols.add_fault(file_consts, "unreadable", 0, f"{uri}: cannot read: {exc}")
        yield cols.flush()
        return
    with fh:
        import io

        text = io.TextIOWrapper(fh, encoding="utf-8", errors="surrogateescape")
        parser = DumpParser(text, uri)
        sizes: dict[str, int] = {}
        for batch in parser.batches():
            seg = batch.file
            topic, partition = topic_partition(seg)
            recs = batch.records()
            if not recs:
                continue
            sizes[seg] = max(sizes.get(seg, 0), batch.position + batch.size)
            consts = {"topic": topic, "partition": partition, "segment": seg, "segment_base_offset": segment_base(seg),
                      "segment_bytes": None}
            _add(cols, consts, batch, recs)
            if cols.n >= ROWS_PER_BATCH:
                yield cols.flush()
        for p in parser.problems:
            cols.add_fault(file_consts, "dump_line", p.line, f"{uri}: line {p.line}: {p.reason}: {p.text[:120]}")
    if cols.n:
        yield cols.flush()

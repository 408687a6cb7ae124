"""Records to Arrow batches, on the executors. No Spark import: this is plain reading code."""

from __future__ import annotations

import posixpath

import numpy as np
import pyarrow as pa

from monitor.kafka.dump import DumpParser
from monitor.fileio.excerpt import excerpt
from monitor.kafka.kafkanames import offset_file
from monitor.kafka.logdir import parse_partition_dir_name
from monitor.kafka.record import SegmentReader
from spark_analysis.schema import ARROW_SCHEMA, NAMES

ROWS_PER_BATCH = 65536
RECORD_OVERHEAD = 8  # rough per-record framing, to share a batch's bytes between its records


def topic_partition(path: str) -> tuple[str | None, int | None]:
    """``.../orders-3/00000000000000001200.log`` -> ("orders", 3)."""
    parsed = parse_partition_dir_name(posixpath.basename(posixpath.dirname(path)))
    return parsed if parsed else (None, None)


def segment_base(path: str) -> int | None:
    """``.../00000000000000001200.log`` -> 1200; None for a name Kafka does not write for a segment
    (``5.log``, ``².log``: ``monitor.kafka.kafkanames``, the walk's one rule)."""
    found = offset_file(posixpath.basename(path))
    return found[0] if found is not None and found[1] == ".log" else None


PER_RECORD = ("offset", "timestamp", "key", "key_size", "value_size", "record_bytes", "tombstone")


class Columns:
    """Rows collected batch by batch: per-record columns as lists, per-batch columns as runs
    (value, length) that ``flush()`` expands in C (numpy repeat, dictionary decode)."""

    def __init__(self):
        self.per_record = {n: [] for n in PER_RECORD}
        self.runs: list[tuple[int, dict]] = []
        self.n = 0

    def add_batch(self, consts: dict, k: int, rec_cols: dict) -> None:
        self.runs.append((k, consts))
        for name, values in rec_cols.items():
            self.per_record[name].extend(values)
        self.n += k

    def add_fault(self, consts: dict, kind: str, position: int, reason: str) -> None:
        self.add_batch({**consts, "fault_kind": kind, "fault_position": position, "fault_reason": reason}, 1,
                       {n: [None] for n in PER_RECORD})

    def flush(self) -> pa.RecordBatch:
        lengths = np.fromiter((k for k, _ in self.runs), dtype=np.int64, count=len(self.runs))
        run_index = np.repeat(np.arange(len(self.runs), dtype=np.int32), lengths)
        arrays = []
        for name in NAMES:
            typ = ARROW_SCHEMA.field(name).type
            if name in self.per_record:
                arrays.append(pa.array(self.per_record[name], type=typ))
                continue
            values = [c.get(name) for _, c in self.runs]
            if all(v is None for v in values):
                arrays.append(pa.nulls(self.n, type=typ))
                continue
            dictionary = pa.array(values, type=typ)
            arrays.append(dictionary.take(pa.array(run_index)))
        batch = pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)
        self.per_record = {n: [] for n in PER_RECORD}
        self.runs = []
        self.n = 0
        return batch



def segment_batches(uri: str, size: int, opener, active: bool = True):
    """Arrow batches for one segment file; faults become rows. ``active``: the segment may be its
    partition's active one (``sources.files.may_be_appended``), where a batch cut short at the end is
    the append under way, not a fault (``reader.cut_tail_is_fault``); the rows of its whole batches
    are read as usual and the next read picks the rest up."""
    topic, partition = topic_partition(uri)
    seg_consts = {"topic": topic, "partition": partition, "segment": uri, "segment_base_offset": segment_base(uri),
                  "segment_bytes": size}
    cols = Columns()
    try:
        fh = opener(uri)
    except FileNotFoundError:
        # a live log dir: the cleaner or retention replaced the segment after it was listed
        cols.add_fault(seg_consts, "vanished", 0, f"{uri}: removed by the broker after it was listed")
        yield cols.flush()
        return
    except OSError as exc:
        cols.add_fault(seg_consts, "unreadable", 0, f"{uri}: cannot read: {exc}")
        yield cols.flush()
        return
    with fh:
        reader = SegmentReader(fh, name=uri, skip_corrupt=True)
        for batch, c in reader.decoded(columns=True):
            if not len(c):
                continue
            key_sizes = [-1 if k is None else len(k) for k in c.keys]
            _add(cols, seg_consts, batch, c.offsets, c.timestamps, c.keys, key_sizes, c.value_sizes)
            if cols.n >= ROWS_PER_BATCH:
                yield cols.flush()
        for f in reader.log_faults(active=active):
            cols.add_fault(seg_consts, f.kind, f.position, str(f))
    if cols.n:
        yield cols.flush()


def _add(cols: Columns, seg_consts: dict, batch, offsets, timestamps, keys, key_sizes, value_sizes) -> None:
    sizes = [(k if k > 0 else 0) + (v if v > 0 else 0) + RECORD_OVERHEAD for k, v in zip(key_sizes, value_sizes)]
    # a dump's record lines without their batch line (grep output) do not give the batch's size: each
    # record then counts its own key, value and framing, as a live topic's records do (topic_input)
    share = 1.0 if batch.size is None else batch.size / sum(sizes)
    control = batch.is_control
    consts = dict(seg_consts)
    consts.update({
        "batch_base_offset": batch.base_offset, "batch_position": batch.position, "batch_bytes": batch.size,
        "timestamp_type": batch.timestamp_type, "control": control, "transactional": batch.is_transactional,
        "producer_id": batch.producer_id, "compression": batch.compression,
        "delete_horizon_ms": batch.delete_horizon_ms, "fault_kind": None, "fault_position": None,
        "fault_reason": None,
    })
    cols.add_batch(consts, len(offsets), {
        "offset": offsets,
        "timestamp": timestamps,
        "key": keys,
        "key_size": key_sizes,
        "value_size": value_sizes,
        "record_bytes": [s * share for s in sizes],
        "tombstone": [False] * len(offsets) if control else [v < 0 for v in value_sizes],
    })


NOTE = "note"  # the fault kind of a note: what was read differently and why (the summary's notes, not a fault)


def dump_batches(uri: str, size: int, opener, active: bool = True):
    """Arrow batches for one kafka-dump-log text file: the records of every segment it dumps. ``active``
    is the segments' flag (``segment_batches``) and means nothing here: a dump prints whole batches."""
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

        from monitor.kafka.sniff import text_encoding

        head = fh.read(2)  # a byte order mark: PowerShell's ">" writes UTF-16 (as ``inspect`` reads it)
        fh.seek(0)
        text = io.TextIOWrapper(fh, encoding=text_encoding(head), errors="surrogateescape", newline="\n")
        parser = DumpParser(text, uri)
        for batch in parser.batches():
            seg = batch.file
            topic, partition = topic_partition(seg)
            recs = batch.records()
            if not recs:
                continue
            consts = {"topic": topic, "partition": partition, "segment": seg, "segment_base_offset": segment_base(seg),
                      "segment_bytes": None}
            _add(cols, consts, batch, [r.offset for r in recs], [r.timestamp for r in recs], [r.key for r in recs],
                 [r.key_size for r in recs], [r.value_size for r in recs])
            if cols.n >= ROWS_PER_BATCH:
                yield cols.flush()
        for p in parser.problems:
            cols.add_fault(file_consts, "dump_line", p.line, f"{uri}: line {p.line}: {p.reason}: {excerpt(p.text)}")
        for f, line in parser.skipped_sections:  # notes for the summary, as ``inspect`` gives them; no fault
            cols.add_fault(file_consts, NOTE, line, f"{uri}: line {line}: skipped the section of {f} "
                                                    "(an index holds no records)")
        if parser.batchless_records:
            cols.add_fault(file_consts, NOTE, 0, f"{uri}: {parser.batchless_records} record line(s) without their "
                                                 "batch line: batch fields they do not print are unknown (null)")
    if cols.n:
        yield cols.flush()

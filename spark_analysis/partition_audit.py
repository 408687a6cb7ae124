"""One partition's audit, start to end, on one executor: what the segments audit's tasks run.

Why a task per partition: compaction is per partition (Kafka cleans one partition with one thread,
its keys never meet another partition's), and everything the audit asks of a partition follows from
its own segments: Kafka's bounds from the batch headers (active segment, ``min.compaction.lag.ms``,
the checkpoint, the LSO and the aborted transactions from the transactional batches and markers),
then one pass over the records through the one fold (``partition_fold``), beside which one clean's
decisions on aborted data and markers are counted (``monitor.model.txncleaner``; aborted data is no key's
record). The same pass feeds the cleaner simulation's first pass (its offset maps: ``monitor.model.nextclean``,
``projection_reader``), whose second pass reads the batch headers only (the columns kept): what the next
clean leaves and what is left once every delete horizon has passed, with no second read of the records. The task
hands Spark the partition's facts, its key totals, top keys, producer and tombstone-bucket totals and
its faults (``rows``): no per-record or per-key rows cross into the JVM, unless a partition has more
keys than one task holds (then its key table goes out in parts and Spark merges them, ``merge``).

The task is plain JSON (``PartitionTask.to_json``), so the driver hands it to Spark as a string.
No Spark import here: plain reading code, tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from monitor.model.compaction import partition_state
from monitor.kafka.record import SegmentReader
from monitor.kafka.record.v2 import decoder
from monitor.model.retention import from_summaries, project_retention
from monitor.model.summary import SegmentSummary, fold_end, fold_header, largest_record_of_arrays, txn_event
from monitor.model.topicconfig import TopicConfig
from monitor.model.transactions import aborted_transactions
from monitor.model.txncleaner import TxnCleaning
from spark_analysis import projection, rows
from spark_analysis.arrow_rows import segment_base
from spark_analysis.keyfold import Bounds
from spark_analysis.partition_fold import MAX_KEYS, WINDOW_RECORDS, PartitionFold, RecordWindow
from spark_analysis.projection import Producers

BUCKETS_MS = (60_000, 3_600_000, 86_400_000, 7 * 86_400_000)


def bucket_for(span_ms: int) -> int:
    """The tombstone build-up bucket: the finest of minute, hour, day, week with at most 200 buckets."""
    for b in BUCKETS_MS[:-1]:
        if span_ms / b <= 200:
            return b
    return BUCKETS_MS[-1]


@dataclass
class PartitionTask:
    """What the driver sends: one partition's segments (offset order) and what to judge them by."""

    topic: str
    partition: int
    files: list  # [(uri, size)]
    config: TopicConfig
    now_ms: int
    checkpoint: int | None = None
    log_start: int | None = None
    bucket_ms: int | None = None  # None: chosen from the partition's time span
    top_n: int = 20
    max_keys: int = MAX_KEYS
    window: int = WINDOW_RECORDS
    several_partitions: bool = False  # the topic has other partitions in the audit (keys in several partitions)

    def to_json(self) -> dict:
        return {**self.__dict__, "files": [list(f) for f in self.files], "config": self.config.to_strings()}

    @classmethod
    def from_json(cls, d: dict) -> "PartitionTask":
        return cls(**{**d, "files": [tuple(f) for f in d["files"]], "config": TopicConfig.from_strings(d["config"])})


@dataclass
class HeaderScan:
    summaries: list = field(default_factory=list)
    records: int = 0
    control_records: int = 0
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    last_data_offsets: dict = field(default_factory=dict)  # producer id -> last offset of its last data batch
    producers: Producers = field(default_factory=Producers)  # each producer's last entry, as Kafka holds it


def scan_headers(files, opener) -> HeaderScan:
    """Kafka's segment facts from batch headers alone (no record decoded but the transaction markers',
    whose type is in their one record's key), with the transaction events (``monitor.model.summary``): the
    LSO and the aborted transactions follow. Faults are left to the record pass, which reports them; a
    segment that cannot be opened is left out here."""
    scan = HeaderScan()
    for uri, size in files:
        try:
            fh = opener(uri)
        except OSError:
            continue
        s = SegmentSummary(uri, segment_base(uri) or 0, size=size)
        txn = []
        with fh:
            for b in SegmentReader(fh, name=uri, skip_corrupt=True).batches(bodies=False):
                if b.is_transactional:
                    txn.append(b)
                if not b.is_control and b.producer_id >= 0:
                    scan.last_data_offsets[b.producer_id] = b.last_offset
                scan.producers.add(b)
                fold_header(s, b)
                n = b.records_count
                if b.is_control:
                    scan.control_records += n
                else:
                    scan.records += n
                first = b.max_timestamp if b.timestamp_type != "create" or _horizon(b) else b.base_timestamp
                if first is not None and first >= 0:
                    scan.first_timestamp = first if scan.first_timestamp is None else min(scan.first_timestamp, first)
                if b.max_timestamp >= 0 and (scan.last_timestamp is None or b.max_timestamp > scan.last_timestamp):
                    scan.last_timestamp = b.max_timestamp
        fold_end(s)
        keys = control_keys(uri, opener, [b.position for b in txn if b.is_control and b.records_count])
        for b in txn:
            e = txn_event(b, keys.get(b.position))
            if e is not None:
                s.add_txn_event(e)
        scan.summaries.append(s)
    return scan


def control_keys(uri: str, opener, positions: list) -> dict:
    """The record key of each control batch at ``positions`` (its type: COMMIT, ABORT, ...)."""
    out: dict = {}
    if not positions:
        return out
    try:
        fh = opener(uri)
    except OSError:
        return out
    with fh:
        for pos in positions:
            for batch, c in SegmentReader(fh, name=uri, start=pos, skip_corrupt=True).decoded(columns=True):
                if len(c):
                    out[pos] = c.keys[0]
                break
    return out


def _horizon(b) -> bool:
    return getattr(b, "has_delete_horizon", False)


def bounds_for(topic: str, partition: int, summaries: list, cfg: TopicConfig, now_ms: int, checkpoint: int | None,
               log_start: int | None, live_topic: bool = False) -> tuple:
    """Kafka's LogCleanerManager state for the partition, and the segment-aligned eligible bound."""
    summaries = sorted(summaries, key=lambda s: s.base_offset)
    if live_topic:  # a live topic has no segments: everything read is one closed, cleanable section
        summaries.append(SegmentSummary("<end>", summaries[-1].next_offset or 0, size=0))
    st = partition_state(topic, partition, summaries, cfg, now_ms, checkpoint=checkpoint, log_start_offset=log_start)
    # the real exclusive bound is segment aligned: the base of the segment holding firstUncleanable
    upper = max(s.base_offset for s in summaries if s.base_offset <= st.first_uncleanable_offset)
    return st, upper


def retention_for(st, summaries: list, cfg: TopicConfig, now_ms: int):
    """What the delete half of ``compact,delete`` removes now (``monitor.model.retention``), or None when the
    policy has no ``delete``. Records below its log start are no key's record: retention deletes them
    whole, whatever a clean would keep."""
    if not cfg.deletes:
        return None
    return project_retention(from_summaries(summaries), retention_ms=cfg.retention_ms,
                             retention_bytes=cfg.retention_bytes, now_ms=now_ms, log_start_offset=st.log_start_offset,
                             log_end_offset=st.log_end_offset)


def retention_counts(r) -> dict:
    """The facts' retention columns (null when the policy has no delete)."""
    if r is None:
        return {"retention_deleted_segments": None, "retention_deleted_bytes": None, "projected_log_start_offset": None}
    return {"retention_deleted_segments": len(r.deleted), "retention_deleted_bytes": r.deleted_bytes,
            "projected_log_start_offset": r.log_start_offset}


def partition_facts(topic: str, partition: int, st, segments: int, counts: dict, cfg: TopicConfig,
                    bucket_ms: int) -> dict:
    """Kafka's view of the partition (``rows.ROW_TYPES["facts"]``) from its state and record counts."""
    return {
        "topic": topic, "partition": partition, "segments": segments,
        "records": counts.get("records", 0), "control_records": counts.get("control_records", 0),
        "bytes": st.log_bytes, "first_dirty_offset": st.first_dirty_offset, "checkpoint_offset": st.checkpoint_offset,
        "first_uncleanable_offset": st.first_uncleanable_offset, "clean_bytes": st.clean_bytes,
        "cleanable_bytes": st.cleanable_bytes, "cleanable_ratio": st.cleanable_ratio,
        "min_cleanable_dirty_ratio": st.min_cleanable_dirty_ratio, "eligible": st.eligible,
        "delete_retention_ms": cfg.delete_retention_ms,
        "first_timestamp": counts.get("first_timestamp"), "last_timestamp": counts.get("last_timestamp"),
        "bucket_ms": bucket_ms,
        # null where the projection counts them (``TxnCleaning(counting=False)``)
        "txn_removable_records": counts.get("txn_removable_records", 0),
        "txn_reclaimable_bytes": _float(counts.get("txn_reclaimable_bytes", 0.0)),
        **{k: counts.get(k) for k in RETENTION_FACTS},
    }


def _float(x) -> float | None:
    return None if x is None else float(x)


RETENTION_FACTS = ("retention_deleted_segments", "retention_deleted_bytes", "projected_log_start_offset")


def audit_partition(task: PartitionTask, opener):
    """Arrow batches (``rows.SCHEMA``) for one partition: facts, key totals, top keys, producers,
    buckets, faults (or key parts instead of totals and top keys)."""
    scan = scan_headers(task.files, opener)
    if not scan.summaries:  # every segment vanished or is unreadable: the record pass says which
        yield from _record_pass(task, opener, None)
        return
    st, upper = bounds_for(task.topic, task.partition, scan.summaries, task.config, task.now_ms, task.checkpoint,
                           task.log_start)
    span = (scan.last_timestamp or 0) - (scan.first_timestamp or 0)
    b = Bounds(task.topic, task.partition, upper=upper, first_dirty=st.first_dirty_offset,
               expired_before_ms=task.now_ms - task.config.delete_retention_ms,
               bucket_ms=task.bucket_ms or bucket_for(span), key_hashes=task.several_partitions)
    retention = retention_for(st, scan.summaries, task.config, task.now_ms)
    if retention is not None and retention.moves:
        b = Bounds(**{**b.to_json(), "retained_from": retention.log_start_offset})
    aborted = aborted_transactions(scan.summaries, st.first_dirty_offset)
    projector = projection_reader(task, opener, st, upper, aborted, scan, retention)
    # the projection counts what the clean removes of aborted data and markers (to the byte): the record
    # pass then only needs TxnCleaning's verdicts (aborted data is no key's record), not its totals
    txn = TxnCleaning(aborted, scan.last_data_offsets, upper, task.now_ms, counting=isinstance(projector, dict))
    largest: dict = {}
    yield from _record_pass(task, opener, b, txn, projector, largest)
    projected = project(projector)
    counts = {"records": scan.records, "control_records": scan.control_records,
              "first_timestamp": scan.first_timestamp, "last_timestamp": scan.last_timestamp,
              "txn_removable_records": txn.removable_records, "txn_reclaimable_bytes": txn.reclaimable_bytes,
              **retention_counts(retention)}
    facts = partition_facts(task.topic, task.partition, st, len(scan.summaries), counts, task.config, b.bucket_ms)
    yield rows.batch("facts", 1, {**facts, **projected, **writes(scan.summaries, st.first_dirty_offset),
                                  "max_decompressed_record_bytes": largest.get("bytes", 0), "decoder": decoder()})


def writes(summaries: list, first_dirty: int) -> dict:
    """The write rate the what-if model needs (``monitor.model.whatif.observed_writes``), from the
    uncleaned tail's batch headers already read: no further pass over the data."""
    from monitor.model.whatif import observed_writes

    w = observed_writes([(s.base_offset, s.next_offset, s.size, s.first_batch_max_timestamp, s.max_timestamp)
                         for s in summaries], first_dirty)
    return {"write_bytes_per_second": w.rate, "write_offsets": w.offsets, "write_rate_unknown_reason": w.reason}


def projection_reader(task: PartitionTask, opener, st, upper: int, aborted, scan: HeaderScan, retention):
    """The partition's two projections, counted by Kafka's cleaner run over its files
    (``monitor.model.nextclean``; ``spark_analysis.projection``), its first pass fed by the record pass
    (``_record_pass``: each batch's arrays, the same read; ``nextclean.Projector``). Under ``compact,delete``
    the segments retention deletes now are gone before the clean (``retention_for``): the clean runs over
    the rest, from the log start retention leaves. Returns the projector, or the facts of an unknown
    projection when it cannot start (a file that cannot be read: the reason; the record pass reports it)."""
    from monitor.model.nextclean import Projector

    files, log_start = task.files, st.log_start_offset
    if retention is not None and retention.moves:
        gone = set(retention.deleted)
        files = [f for f in files if segment_base(f[0]) not in gone]
        log_start = retention.log_start_offset
    try:
        return Projector(files, opener, first_dirty=st.first_dirty_offset, upper=upper, log_start=log_start,
                         now_ms=task.now_ms, delete_retention_ms=task.config.delete_retention_ms,
                         aborted=aborted, last_records=scan.producers.last_records(task.now_ms),
                         name=f"{task.topic}-{task.partition}")
    except (OSError, ValueError) as exc:  # a read fault (RecordFormatError is a ValueError) names file and position
        return projection.unknown(f"not counted: {exc}")


def project(projector) -> dict:
    """The facts of the projections once the record pass has fed ``projection_reader``'s projector: its
    second pass (the batch headers, the columns pass 1 kept)."""
    if isinstance(projector, dict):
        return projector
    try:
        p = projector.finish()
    except (OSError, ValueError) as exc:
        return projection.unknown(f"not counted: {exc}")
    return projection.counted(p)


def _record_pass(task: PartitionTask, opener, b: Bounds | None, txn: TxnCleaning | None = None, projector=None,
                 largest: dict | None = None):
    """The one pass over the records. ``largest["bytes"]``: the largest record of a compressed batch in the
    segments below the last one (the active segment, which the cleaner never reads), as the collector
    counts it (``SegmentSummary.max_decompressed_record_bytes``): what Kafka 4.4 compares with
    max.decompressed.message.bytes when it cleans."""
    acc = PartitionFold(b, task.max_keys) if b else None
    below_active = {uri for uri, _ in task.files[:-1]}
    feed = None if projector is None or isinstance(projector, dict) else projector.batch
    win = RecordWindow()
    for uri, _size in task.files:
        try:
            fh = opener(uri)
        except FileNotFoundError:  # a live log dir: cleaned or deleted after the listing
            yield rows.fault_batch(uri, "vanished", 0, f"{uri}: removed by the broker after it was listed")
            continue
        except OSError as exc:
            yield rows.fault_batch(uri, "unreadable", 0, f"{uri}: cannot read: {exc}")
            continue
        with fh:
            reader = SegmentReader(fh, name=uri, skip_corrupt=True)
            for batch, arr in reader.decoded(arrays=True):
                if feed is not None:
                    feed(uri, batch, arr)
                if largest is not None and batch.codec and getattr(batch, "magic", 0) == 2 and len(arr) \
                        and uri in below_active:
                    largest["bytes"] = max(largest.get("bytes", 0), largest_record_of_arrays(batch, arr))
                if txn is not None:  # aborted data is no key's record; markers are neither keys nor tombstones
                    if batch.is_control:
                        txn.control_batch(batch, bytes(arr.keys[:4]) if len(arr) else None)
                        continue
                    if txn.data_batch(batch):
                        continue
                if acc is None or batch.is_control or not len(arr) or batch.last_offset < acc.b.retained_from:
                    continue  # retention deletes whole segments: a batch is wholly below its cut or above
                win.add(batch, arr)
                if win.n >= task.window:
                    yield from acc.add(win.columns())
                    win = RecordWindow()
            # the one cut-tail rule (reader.cut_tail_is_fault): a batch cut short at the end of the last segment,
            # the active one, is being appended (a copy of a live log dir), not damage
            faults = reader.log_faults(active=uri not in below_active)
            for f in faults:
                yield rows.fault_batch(uri, f.kind, f.position, str(f))
            if feed is not None:
                projector.fault(uri) if faults else projector.read_whole(uri)
    if acc is None:
        return
    if win.n:
        yield from acc.add(win.columns())
    yield from acc.finish(task.top_n)

"""One partition's audit (``partition_audit`` + ``partition_fold`` + ``keyfold``), no Spark: the numbers
against a record-by-record account of the same broker-written segments, whatever the window and
key-table sizes (folding in windows, sending the key table in parts); the fold's merge rules against
a fold of the records in one go."""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pytest

from kafkatools import copy_partition, create_topic, partition_dir, produce, roll, segment_bases, unique_topic, watermarks
from monitor.model.estimate import CleanerParams
from monitor.kafka.record import SegmentReader
from monitor.model.topicconfig import TopicConfig
from spark_analysis.arrow_rows import RECORD_OVERHEAD
from spark_analysis.keyfold import from_arrow, fold, key_totals
from spark_analysis.audit.tables import partition_row
from spark_analysis.partition_audit import PartitionTask, audit_partition
from spark_analysis.rows import ROW_TYPES, rows_of

pytestmark = pytest.mark.kafka

DAY = 86_400_000
CFG = {"cleanup.policy": "compact", "segment.ms": 300, "min.cleanable.dirty.ratio": 1.0,
       "delete.retention.ms": DAY, "min.compaction.lag.ms": 0}


@pytest.fixture(scope="module")
def partition(kafka, tmp_path_factory):
    """Three rounds of 3,000 keys (hot keys updated more often), a round of tombstones, each rolled into
    segments of their own, and a copy. Also the wall-clock time between the second and the third round
    (``between``) and the offset of the first record written after it (``first_after``): what
    min.compaction.lag.ms holds back when it ends there."""
    t = create_topic(kafka.bootstrap, unique_topic("fold"), **CFG)
    between = first_after = None
    for r in range(3):
        if r == 2:
            between = int(time.time() * 1000)
            first_after = watermarks(kafka.bootstrap, t)[1]  # offsets count the records written so far
        items = [(f"k{i}".encode(), b"x" * (50 + i % 200)) for i in range(3000)]
        items += [(f"hot{i % 7}".encode(), b"h" * 30) for i in range(700)]
        produce(kafka.bootstrap, t, items, **{"linger.ms": 20, "batch.size": 64_000})
        roll(kafka.bootstrap, t, wait=0.4)
    produce(kafka.bootstrap, t, [(f"k{i}".encode(), None) for i in range(0, 3000, 5)])
    roll(kafka.bootstrap, t, wait=0.4)
    dst = copy_partition(partition_dir(kafka.log_dir, t), tmp_path_factory.mktemp("fold"))
    files = sorted((str(f), f.stat().st_size) for f in dst.glob("*.log"))
    return {"topic": t, "files": files, "bases": segment_bases(dst), "log_end": watermarks(kafka.bootstrap, t)[1],
            "between": between, "first_after": first_after}


def by_hand(files, upper, first_dirty, expired_before):
    """Record by record: each key's history, what a clean keeps, per Kafka's rules."""
    keys = defaultdict(list)
    for uri, _ in files:
        for batch, recs in SegmentReader(uri).decoded():
            if batch.is_control:
                continue
            sizes = [max(r.key_size, 0) + max(r.value_size, 0) + RECORD_OVERHEAD for r in recs]
            share = batch.size / sum(sizes)
            for r, s in zip(recs, sizes):
                if r.key is not None:
                    keys[r.key].append((r.offset, r.timestamp, r.value_size < 0, s * share))
    out = dict(distinct_keys=len(keys), obsolete_records=0, removable_records=0, reclaimable_bytes=0.0,
               dirty_distinct_keys=0, tombstones=0, tombstones_past_retention=0, keys_last_tombstone=0)
    for hist in keys.values():
        out["obsolete_records"] += len(hist) - 1
        elig = [h for h in hist if h[0] < upper]
        if elig:
            last = elig[-1]
            goes = last[2] and last[1] < expired_before
            out["removable_records"] += len(elig) - 1 + goes
            out["reclaimable_bytes"] += sum(h[3] for h in elig[:-1]) + (last[3] if goes else 0.0)
        out["dirty_distinct_keys"] += any(first_dirty <= h[0] < upper for h in hist)
        out["tombstones"] += sum(h[2] for h in hist)
        out["tombstones_past_retention"] += sum(h[2] and h[1] < expired_before for h in hist)
        out["keys_last_tombstone"] += hist[-1][2]
    return out, {k: len(h) for k, h in keys.items()}


def run(task):
    """Every row type the task yields; ``partition``: its audit row (facts and totals, when complete)."""
    table = pa.Table.from_batches(list(audit_partition(task, lambda u: open(u, "rb"))))
    out = {kind: rows_of(table, kind) for kind in ROW_TYPES}
    if out["key_totals"]:
        out["partition"] = partition_row(out["facts"][0], out["key_totals"][0], CleanerParams())
    return out


def kafka_bounds(bases: list, sizes: list, checkpoint, log_end: int, held_back_from=None) -> dict:
    """Kafka's bounds from the segment file names (``bases``) and the cleaner checkpoint, by hand
    (LogCleanerManager.cleanableOffsets): the first dirty offset is the checkpoint if it lies within
    [log start, log end], else the log start; the first uncleanable offset is the active segment's
    base, or the base of the first segment min.compaction.lag.ms holds back (``held_back_from``: an
    offset in it); the bound is the base of the segment holding it. Clean bytes: segments below the
    first dirty offset; cleanable: from the segment holding it up to the bound."""
    log_start = bases[0]
    first_dirty = checkpoint if checkpoint is not None and log_start <= checkpoint <= log_end else log_start
    held = bases[-1] if held_back_from is None else max(b for b in bases if b <= held_back_from)
    first_uncleanable = max(first_dirty, held)
    upper = max(b for b in bases if b <= first_uncleanable)
    dirty_seg = max(b for b in bases if b <= first_dirty)
    return {"first_dirty_offset": first_dirty, "first_uncleanable_offset": first_uncleanable, "upper": upper,
            "clean_bytes": sum(s for b, s in zip(bases, sizes) if b < first_dirty),
            "cleanable_bytes": sum(s for b, s in zip(bases, sizes) if dirty_seg <= b < upper)}


BOUNDS_CASES = {
    "no checkpoint": dict(checkpoint=None),
    "checkpoint at the third segment": dict(checkpoint=2),  # an index into the segments: its base
    "checkpoint past the log end": dict(checkpoint="past"),
    "min.compaction.lag.ms holds back the third round": dict(checkpoint=None, lag=True),
}


@pytest.mark.parametrize("days_later", [0, 2])
@pytest.mark.parametrize("window", [1 << 20, 500])
@pytest.mark.parametrize("case", list(BOUNDS_CASES))
def test_partition_row_matches_kafkas_bounds_and_a_record_by_record_account(partition, case, days_later, window):
    """The bounds against Kafka's rules applied by hand to the file names and the checkpoint; the key
    totals against a record-by-record account within those bounds."""
    topic, files, bases = partition["topic"], partition["files"], partition["bases"]
    spec = BOUNDS_CASES[case]
    cp = spec["checkpoint"]
    checkpoint = None if cp is None else partition["log_end"] + 100 if cp == "past" else bases[cp]
    strings = dict(CFG)
    now = int(time.time() * 1000) + days_later * DAY
    if spec.get("lag"):  # now - min.compaction.lag.ms = ``between``: the third round is too young to clean
        now = partition["between"] + DAY + days_later * DAY
        strings["min.compaction.lag.ms"] = DAY + days_later * DAY
    cfg = TopicConfig.from_strings(strings)
    want_bounds = kafka_bounds(bases, [size for _, size in files], checkpoint, partition["log_end"],
                               held_back_from=partition["first_after"] if spec.get("lag") else None)
    if spec.get("lag"):  # the case means something only if the lag holds back segments below the active one
        assert want_bounds["upper"] < bases[-1]
    task = PartitionTask(topic, 0, files, cfg, now, checkpoint=checkpoint, window=window, top_n=5)
    out = run(PartitionTask.from_json(task.to_json()))  # as the driver sends it: plain JSON
    assert not out["fault"] and not out["key"]
    row = out["partition"]
    for k, v in want_bounds.items():
        if k != "upper":
            assert row[k] == v, k
    want, updates = by_hand(files, want_bounds["upper"], want_bounds["first_dirty_offset"],
                            now - cfg.delete_retention_ms)
    # the fold's byte shares stay its key totals; the partition's row follows the counted projection
    totals = out["key_totals"][0]
    shares = {"removable_records": "removable_records", "reclaimable_bytes": "share_reclaimable_bytes"}
    for k, v in want.items():
        got = totals[shares[k]] if k in shares else row[k]
        assert got == pytest.approx(v, rel=1e-9), k
    assert row["tombstones"] == 600 and row["tombstones_past_retention"] == (600 if days_later else 0)
    # the cleaner never ran (min.cleanable.dirty.ratio 1.0): no tombstone's batch carries a delete horizon
    assert (row["tombstones_unstamped"], row["tombstones_pending"], row["tombstones_passed"]) == (600, 0, 0)
    assert row["projection_method"] == "counted" and row["projection_unknown_reason"] is None
    assert isinstance(row["next_clean_bytes"], int) and row["reclaimable_bytes"] == row["bytes"] - row["next_clean_bytes"]
    assert row["next_removable_ms"] == now + cfg.delete_retention_ms  # stamped by the next clean, gone one retention later
    assert row["records"] == sum(updates.values())  # every record has a key here
    # top keys: five of the seven hot keys, most updates first (ties: lower key hash)
    top = [(r["key"], r["updates"]) for r in out["top_key"]]
    assert [n for _, n in top] == sorted(updates.values(), reverse=True)[:5]
    assert {k for k, _ in top} <= {f"hot{i}".encode() for i in range(7)}
    buckets = sum(r["tombstones"] for r in out["bucket"])
    assert buckets == 600


def test_a_key_table_sent_in_parts_and_folded_in_any_order_gives_the_whole_tables_totals(partition, seed):
    """``max_keys`` small: the task sends its key table in parts; folding them gives the same totals."""
    topic, files = partition["topic"], partition["files"]
    now = int(time.time() * 1000) + 2 * DAY
    cfg = TopicConfig.from_strings(CFG)
    whole = run(PartitionTask(topic, 0, files, cfg, now))["key_totals"][0]
    out = run(PartitionTask(topic, 0, files, cfg, now, window=700, max_keys=1000))
    assert not out["key_totals"] and not out["top_key"] and out["facts"]
    parts = out["key"]
    assert len(parts) > whole["distinct_keys"]  # several parts hold the same key
    # shuffled: the merge rules (sum, max, last by offset) do not depend on the order of the parts
    order = np.random.default_rng(seed).permutation(len(parts))
    table = from_arrow(pa.Table.from_pylist([parts[i] for i in order], pa.schema(ROW_TYPES["key"])))
    merged = key_totals(fold([table]))
    for k, v in merged.items():
        assert whole[k] == pytest.approx(v, rel=1e-9), k
    assert sum(r["records"] for r in out["producer"]) == sum(r["updates"] for r in parts)


def test_the_header_scan_folds_segments_as_the_collector_does(tmp_path):
    """The audit's header scan and the collector's summary share one fold (``monitor.model.summary.fold_header``,
    ``fold_end``): the same facts for the same files, an empty segment included (its next offset is its
    base offset, Kafka's LogSegment.readNextOffset; the collector used to leave it None), a transaction
    and its marker too."""
    from monitor.model.summary import summarize
    from recordfixtures import Rec, T0, control, items, v2, write
    from spark_analysis.partition_audit import scan_headers

    folder = tmp_path / "t-0"
    segs = [write(folder / f"{0:020d}.log", [v2(items(range(0, 3))), v2([Rec(3, T0 - 5, b"k", None)])]),
            write(folder / f"{4:020d}.log", [v2(items(range(4, 6)), producer_id=7, producer_epoch=0,
                                                base_sequence=0, transactional=True),
                                             control(6, "COMMIT", 7, 0, T0 + 99)])]
    empty = folder / f"{7:020d}.log"
    empty.write_bytes(b"")
    files = [(str(s.path), s.path.stat().st_size) for s in segs] + [(str(empty), 0)]
    scanned = scan_headers(files, lambda uri: open(uri, "rb")).summaries
    summed = [summarize(uri, int(uri.rsplit("/", 1)[1][:-4]))[0] for uri, _ in files]
    keep = ("base_offset", "batches", "first_batch_max_timestamp", "max_timestamp", "next_offset")
    assert [{k: getattr(s, k) for k in keep} for s in scanned] == [{k: getattr(s, k) for k in keep} for s in summed]
    assert [s.txn_events() for s in scanned] == [s.txn_events() for s in summed]
    assert [s.next_offset for s in summed] == [4, 7, 7]
    assert summed[0].first_batch_max_timestamp == T0 + 2 * 7  # the first batch's max, not the file's

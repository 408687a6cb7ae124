"""The audit reads a partition's records once: the record pass that folds the keys also feeds the
cleaner simulation's first pass (``nextclean.Projector``), whose second pass walks the batch headers.
Counted with an opener that tallies the bytes each file hands out, on segments with overwrites,
tombstones, compressed batches and a transaction; the projection is the one ``project_partition``
counts reading the files for itself."""

from __future__ import annotations

import io
import random

import pyarrow as pa

from monitor.kafka.record.v2 import HEADER_SIZE
from monitor.model.nextclean import project_partition
from monitor.model.topicconfig import TopicConfig
from monitor.model.transactions import aborted_transactions
from recordfixtures import Rec, T0, control, v2, write
from spark_analysis.partition_audit import PartitionTask, audit_partition, bounds_for, scan_headers
from spark_analysis.rows import rows_of

DAY = 86_400_000


class _Counted(io.FileIO):
    """A file that adds the bytes it hands out to ``tally[name]``."""

    def __init__(self, name, tally):
        super().__init__(name, "rb")
        self.tally = tally

    def read(self, n=-1):
        data = super().read(n)
        self.tally[self.name] = self.tally.get(self.name, 0) + len(data)
        return data

    def readinto(self, buf):
        n = super().readinto(buf)
        self.tally[self.name] = self.tally.get(self.name, 0) + (n or 0)
        return n


def _segments(tmp_path):
    rnd = random.Random(4)
    files, off, batches_in = [], 0, {}
    for s in range(4):
        seg = []
        for _ in range(12):
            recs = [Rec(off + j, T0 + off + j, f"k{rnd.randrange(50)}".encode(),
                        None if rnd.random() < 0.15 else b"value-" * rnd.randint(1, 40)) for j in range(rnd.randint(2, 20))]
            seg.append(v2(recs, rnd.choice(["none", "none", "lz4", "gzip"])))
            off += len(recs)
        if s == 1:  # a committed transaction
            seg.append(v2([Rec(off, T0 + off, b"t", b"1")], producer_id=3, producer_epoch=0, base_sequence=0,
                          transactional=True))
            seg.append(control(off + 1, "COMMIT", 3, 0, T0 + off))
            off += 2
        path = tmp_path / "t-0" / f"{seg[0].records[0].offset:020d}.log"
        write(path, seg)
        files.append((str(path), path.stat().st_size))
        batches_in[str(path)] = len(seg)
    return files, batches_in


def test_the_audit_reads_each_segments_records_once(tmp_path):
    files, batches_in = _segments(tmp_path)
    cfg = TopicConfig.from_strings({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"})
    now = T0 + 3 * DAY
    tally: dict = {}
    task = PartitionTask("t", 0, files, cfg, now)
    table = pa.Table.from_batches(list(audit_partition(task, lambda u: _Counted(u, tally))))
    [facts] = rows_of(table, "facts")
    assert facts["projection_unknown_reason"] is None and facts["batches_rewritten"] > 0
    for uri, size in files:
        # the record pass reads the file once; the header scan and the projection's second pass read
        # each batch's header (and a marker's record); nothing reads the records a second time
        assert tally[uri] <= size + 2 * batches_in[uri] * (HEADER_SIZE + 64), (uri, tally[uri], size)

    # the figures are those of the projection reading the files for itself
    scan = scan_headers(files, lambda u: open(u, "rb"))
    st, upper = bounds_for("t", 0, scan.summaries, cfg, now, None, None)
    own = project_partition(files, lambda u: open(u, "rb"), first_dirty=st.first_dirty_offset, upper=upper,
                            log_start=st.log_start_offset, now_ms=now, delete_retention_ms=cfg.delete_retention_ms,
                            aborted=aborted_transactions(scan.summaries, st.first_dirty_offset),
                            last_records=scan.producers.last_records(now), name="t-0")
    assert (facts["next_clean_bytes"], facts["settled_bytes"], facts["batches_rewritten"], facts["batches_dropped"]) \
        == (own.next_clean_bytes, own.settled_bytes, own.batches_rewritten, own.batches_dropped)
    assert own.next_clean_bytes < own.log_bytes


def test_the_largest_decompressed_record_is_the_collector_s_from_the_same_read(tmp_path):
    """Kafka 4.4's max.decompressed.message.bytes is checked against the largest record of a compressed batch
    the cleaner reads: the audit takes it from its record pass (no further read) and gets the collector's
    figure (``SegmentSummary.max_decompressed_record_bytes`` of every segment below the active one). A larger
    record in the active segment is not the cleaner's to read yet, and one in an uncompressed batch is never
    checked by Kafka."""
    files, _ = _segments(tmp_path)
    last = files[-1][0]
    big = [Rec(10_000 + i, T0 + 10_000 + i, b"big", b"v" * 50_000) for i in range(2)]
    write(tmp_path / "t-0" / "00000000000000010000.log", [v2(big, "gzip")])  # the active segment: not counted
    write(tmp_path / "t-0" / "00000000000000005000.log", [v2([Rec(5000, T0, b"u", b"w" * 9000)])])  # uncompressed
    files = sorted([*files, *((str(p), p.stat().st_size) for p in (tmp_path / "t-0").glob("*.log")
                              if str(p) not in {f for f, _ in files})])
    assert files[-1][0].endswith("00000000000000010000.log") and last in {f for f, _ in files}
    cfg = TopicConfig.from_strings({"cleanup.policy": "compact"})
    [facts] = rows_of(pa.Table.from_batches(list(audit_partition(PartitionTask("t", 0, files, cfg, T0 + DAY),
                                                                  lambda u: open(u, "rb")))), "facts")
    from monitor.model.summary import summarize

    collector = max(summarize(f, int(f.rsplit("/", 1)[1][:20]))[0].max_decompressed_record_bytes for f, _ in files[:-1])
    assert facts["max_decompressed_record_bytes"] == collector
    assert 0 < collector < 9000  # neither the active segment's 50 kB records nor the uncompressed 9 kB one


def test_aborted_data_and_markers_are_counted_once_by_the_projection(tmp_path, monkeypatch):
    """Where the projection counts the partition, the record pass takes only TxnCleaning's verdicts
    (aborted data is no key's record): its byte totals are not counted a second way (its counter stays
    0, the facts' txn columns are null), and the projection's figures are what TxnCleaning counts."""
    import spark_analysis.partition_audit as pa_mod
    from monitor.model.txncleaner import TxnCleaning
    from recordfixtures import items

    made = []

    class Watched(TxnCleaning):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self)

    monkeypatch.setattr(pa_mod, "TxnCleaning", Watched)
    tx = dict(producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    segs = [[v2(items(range(0, 5), "a"), **tx), control(5, "ABORT", 7, 0, T0),
             v2(items(range(6, 9), "b"), **tx), control(9, "COMMIT", 7, 0, T0)],
            [v2(items(range(10, 20), "c"))], [v2(items(range(20, 22), "d"))]]
    files = []
    for seg in segs:
        path = tmp_path / "t-0" / f"{seg[0].records[0].offset:020d}.log"
        write(path, seg)
        files.append((str(path), path.stat().st_size))
    cfg = TopicConfig.from_strings({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"})
    now = T0 + 3 * DAY
    task = PartitionTask("t", 0, files, cfg, now)
    table = pa.Table.from_batches(list(audit_partition(task, lambda u: open(u, "rb"))))
    [facts] = rows_of(table, "facts")
    [txn] = made
    assert txn.counting is False and txn.counted_batches == 0
    assert facts["txn_removable_records"] is None and facts["txn_reclaimable_bytes"] is None
    # TxnCleaning counting over the same batches, as the facts had it before: the same figures
    scan = scan_headers(files, lambda u: open(u, "rb"))
    st, upper = bounds_for("t", 0, scan.summaries, cfg, now, None, None)
    full = TxnCleaning(aborted_transactions(scan.summaries, st.first_dirty_offset), scan.last_data_offsets, upper, now)
    from monitor.kafka.record import SegmentReader
    for uri, _ in files:
        for b, c in SegmentReader(uri).decoded(columns=True):
            full.control_batch(b, c.keys[0] if len(c) else None) if b.is_control else full.data_batch(b)
    assert full.counted_batches == 1 and full.removable_records == 5  # the aborted batch, all its records
    assert facts["projection_unknown_reason"] is None
    assert facts["projected_removable_records"] == full.removable_records
    assert facts["bytes"] - facts["next_clean_bytes"] == full.reclaimable_bytes


def test_an_empty_segment_does_not_make_the_projection_read_again(tmp_path):
    """A clean can leave a segment with no batch (every record gone): the record pass reads it (nothing),
    and the projection takes that read as whole, not as a file it was not handed (which would make it
    read the partition a second time)."""
    from recordfixtures import items

    folder = tmp_path / "t-0"
    folder.mkdir()
    (folder / f"{0:020d}.log").write_bytes(b"")
    files = [(str(folder / f"{0:020d}.log"), 0)]
    for lo in (10, 30, 50):
        path = folder / f"{lo:020d}.log"
        write(path, [v2(items(range(lo, lo + 10), distinct=5)), v2(items(range(lo + 10, lo + 20), distinct=5), "lz4")])
        files.append((str(path), path.stat().st_size))
    cfg = TopicConfig.from_strings({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"})
    tally: dict = {}
    table = pa.Table.from_batches(list(audit_partition(PartitionTask("t", 0, files, cfg, T0 + DAY),
                                                       lambda u: _Counted(u, tally))))
    [facts] = rows_of(table, "facts")
    assert facts["projection_unknown_reason"] is None and facts["next_clean_bytes"] < facts["bytes"]
    for uri, size in files[1:]:
        assert tally[uri] <= size + 2 * 2 * (HEADER_SIZE + 64), (uri, tally[uri], size)


def test_a_batch_cut_short_is_damage_below_the_active_segment_only(tmp_path):
    """The one cut-tail rule (``reader.cut_tail_is_fault``), as the collector, ``logdir`` and ``inspect``
    apply it: the last segment of a copied live log dir may end inside the batch being appended (no fault,
    the projection still counted); the same cut in a rolled segment is a fault row and the projection is
    unknown for it."""
    from recordfixtures import items

    def audit(cut_segment: int):
        d = tmp_path / f"cut{cut_segment}" / "t-0"
        files = []
        for i, base in enumerate((0, 10, 20)):
            path = d / f"{base:020d}.log"
            write(path, [v2(items(range(base, base + 5), "a")), v2(items(range(base + 5, base + 10), "b"))])
            if i == cut_segment:
                with open(path, "r+b") as fh:
                    fh.truncate(path.stat().st_size - 7)  # the second batch cut short
            files.append((str(path), path.stat().st_size))
        cfg = TopicConfig.from_strings({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"})
        table = pa.Table.from_batches(list(audit_partition(PartitionTask("t", 0, files, cfg, T0 + DAY),
                                                           lambda u: open(u, "rb"))))
        return rows_of(table, "fault"), rows_of(table, "facts")[0]

    faults, facts = audit(2)  # the active segment: a batch being appended
    assert faults == [] and facts["projection_unknown_reason"] is None
    faults, facts = audit(1)  # a rolled segment: damage
    assert [f["fault_kind"] for f in faults] == ["truncated"], faults
    assert faults[0]["segment"].endswith("00000000000000000010.log")

"""monitor.model.nextclean: Kafka's cleaner run over segment files written by kafka-python's builders
(tests/recordfixtures.py), each case a rule of Cleaner.cleanInto / MemoryRecords.filterTo worked by
hand. A batch Kafka keeps whole is its own bytes; one it rebuilds without a stamp is, for an
uncompressed batch, what the builder writes for the kept records (an independent writer); a stamped
one goes through monitor.kafka.record.encode (compared with a real broker's clean elsewhere)."""

from __future__ import annotations

import struct

import pytest

import recordfixtures as rf
from monitor.kafka.record import SegmentReader
from monitor.kafka.record.encode import retained_batch_size
from monitor.model import cleanarrays
from monitor.model.nextclean import project_partition
from monitor.model.transactions import AbortedRanges, AbortedTxn

DR = 86_400_000  # delete.retention.ms
NOW = rf.T0 + 10 * DR
HORIZON_BIT = 0x40


OPS = {"ops": cleanarrays.OPS}


@pytest.fixture(autouse=True, params=["numpy", "python"])
def ops(request):
    """Every case in numpy (the audit's install) and in the plain loop (the slim install, no numpy)."""
    if request.param == "numpy" and cleanarrays.np is None:
        pytest.skip("numpy not installed (or COMPACTION_MONITOR_PURE_PYTHON set)")
    OPS["ops"] = cleanarrays.NumpyOps if request.param == "numpy" else cleanarrays.PureOps
    yield request.param


def rec(off, key, value=b"v", ts=None):
    return rf.Rec(off, rf.T0 + off if ts is None else ts, None if key is None else key.encode(), value)


def stamped(w, when):
    """The batch as a clean that stamped it left it: horizon ``when`` in the base timestamp."""
    data = bytearray(w.data)
    struct.pack_into(">q", data, rf.V2_FIRST_TS_AT, when)
    w.data = rf._restamp_v2(data, w.records[0].offset, 0, attrs=HORIZON_BIT)
    return w


def segments(tmp_path, *segs):
    """Segment files named by their first batch's base offset: [(path, size)] and each file's batches."""
    files = []
    for batches in segs:
        base = batches[0].records[0].offset if batches[0].records else 0
        path = tmp_path / f"{base:020d}.log"
        rf.write(path, batches)
        files.append((str(path), path.stat().st_size))
    return files


def project(files, *, first_dirty, upper, aborted=(), last=None, **kw):
    kw.setdefault("ops", OPS["ops"])
    return project_partition(files, lambda u: open(u, "rb"), first_dirty=first_dirty, upper=upper, log_start=0,
                             now_ms=NOW, delete_retention_ms=DR, aborted=AbortedRanges(tuple(aborted)),
                             last_records=last or {}, name="t-0", **kw)


def batches_of(files):
    return [b for u, _ in files for b in SegmentReader(u).batches()]


def rebuilt(records, last_offset, codec="none"):
    """What the builder writes for the kept records in a batch keeping its last offset."""
    return len(rf.v2(records, codec, last_offset=last_offset).data)


def test_overwrites_across_the_dirty_boundary_and_keyless_records(tmp_path):
    a = rf.v2([rec(0, "a"), rec(1, "b"), rec(2, None), rec(3, "c")])
    b = rf.v2([rec(4, "a"), rec(5, "d")])
    c = rf.v2([rec(6, "c"), rec(7, "d")])  # past upper: not mapped by the next clean
    files = segments(tmp_path, [a], [b], [c])
    p = project(files, first_dirty=4, upper=6)
    assert p.unknown_reason is None
    # a loses a (overwritten) and the keyless record: rebuilt from b and c
    kept_a = rebuilt([rec(1, "b"), rec(3, "c")], 3)
    assert p.next_clean_bytes == kept_a + len(b.data) + len(c.data)
    assert p.log_bytes == len(a.data) + len(b.data) + len(c.data)
    assert (p.removable_records, p.batches_rewritten, p.batches_dropped, p.batches_stamped) == (2, 1, 0, 0)
    # settled: c and d, written again past upper, overwrite a's c and b's d
    assert p.settled_bytes == rebuilt([rec(1, "b")], 3) + rebuilt([rec(4, "a")], 5) + len(c.data)


def test_a_batch_kept_whole_keeps_its_compressed_bytes(tmp_path):
    a = rf.v2(rf.items(range(0, 20), "x"), "gzip")
    b = rf.v2(rf.items(range(20, 40), "y"), "gzip")
    files = segments(tmp_path, [a], [b], [rf.v2([rec(40, "z")])])
    p = project(files, first_dirty=20, upper=40)
    assert (p.next_clean_bytes, p.settled_bytes, p.removable_records) == (p.log_bytes, p.log_bytes, 0)


def test_tombstones_are_stamped_then_removed_past_their_horizon(tmp_path):
    a = rf.v2([rec(0, "a"), rec(1, "b", None)])  # b's tombstone, never stamped
    gone = stamped(rf.v2([rec(2, "c", None)]), NOW - 1)  # stamped, horizon passed: removed, batch dropped
    ahead = stamped(rf.v2([rec(3, "e", None), rec(4, "f")]), NOW + 1)  # horizon ahead: kept as it is
    files = segments(tmp_path, [a, gone, ahead], [rf.v2([rec(5, "g")])])
    p = project(files, first_dirty=0, upper=5)
    ba, _, bc, _ = batches_of(files)
    recs = ba.records()
    assert p.next_clean_bytes == retained_batch_size(ba, recs, delete_horizon_ms=NOW + DR) + len(ahead.data) \
        + files[1][1]
    assert p.next_clean_bytes > p.log_bytes - len(gone.data)  # the stamp's timestamp deltas cost bytes
    assert (p.batches_stamped, p.batches_dropped, p.removable_records) == (1, 1, 1)
    assert p.horizon_counts == {("tombstone", "unstamped"): 1, ("tombstone", "passed"): 1,
                                ("tombstone", "pending"): 1}
    assert p.next_removable_ms == NOW - 1
    # settled: every tombstone gone; a keeps its record with the horizon it was stamped with, so does ahead
    assert p.settled_bytes == retained_batch_size(ba, recs[:1], delete_horizon_ms=NOW + DR) \
        + retained_batch_size(bc, bc.records()[1:], delete_horizon_ms=None) + files[1][1]


def test_aborted_data_goes_and_its_marker_follows_a_round_later(tmp_path):
    data = rf.v2([rec(0, "a"), rec(1, "b")], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    abort = rf.control(2, "ABORT", 7, 0, rf.T0)
    files = segments(tmp_path, [data, abort, rf.v2([rec(3, "c")])], [rf.v2([rec(4, "d")])])
    p = project(files, first_dirty=0, upper=4, aborted=[AbortedTxn(7, 0, 2, 3, 0)])
    # the next clean drops the aborted batch; the marker stays (a batch of its transaction was met)
    assert p.next_clean_bytes == p.log_bytes - len(data.data)
    assert p.horizon_counts == {("marker", "unstamped"): 1}
    # later cleans: the marker is stamped, then removed
    assert p.settled_bytes == p.log_bytes - len(data.data) - len(abort.data)


def test_the_producers_last_batch_stays_as_an_empty_header(tmp_path):
    data = rf.v2([rec(0, "a"), rec(1, "b")], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    abort = rf.control(2, "ABORT", 7, 0, rf.T0)
    files = segments(tmp_path, [data, abort, rf.v2([rec(3, "c")])], [rf.v2([rec(4, "d")])])
    p = project(files, first_dirty=0, upper=4, aborted=[AbortedTxn(7, 0, 2, 3, 0)], last={7: (1, 0)})
    assert p.next_clean_bytes == p.log_bytes - len(data.data) + 61
    # the empty batch is still a batch of the aborted transaction: its marker is never discardable
    assert p.settled_bytes == p.next_clean_bytes


def test_a_commit_marker_goes_once_its_data_is_gone(tmp_path):
    data = rf.v2([rec(0, "a"), rec(1, "b")], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    commit = rf.control(2, "COMMIT", 7, 0, rf.T0)
    later = rf.v2([rec(3, "a"), rec(4, "b")])
    files = segments(tmp_path, [data, commit, later], [rf.v2([rec(5, "d")])])
    p = project(files, first_dirty=0, upper=5)
    # the data is overwritten: its batch goes, the marker stays this clean (its transaction's batch was met)
    assert p.next_clean_bytes == p.log_bytes - len(data.data)
    assert p.settled_bytes == p.log_bytes - len(data.data) - len(commit.data)
    # the producer's last entry is the marker (case 3): kept as an empty control batch
    p = project(files, first_dirty=0, upper=5, last={7: (None, 0)})
    assert p.settled_bytes == p.log_bytes - len(data.data) - len(commit.data) + 61


def test_the_rounds_last_batch_stays_as_an_empty_header(tmp_path):
    a = rf.v2([rec(0, "a")])
    end = rf.v2([rec(1, None), rec(2, None)])  # keyless: every record goes, but it ends the round
    files = segments(tmp_path, [a, end], [rf.v2([rec(3, "d")])])
    p = project(files, first_dirty=0, upper=3)
    assert p.next_clean_bytes == p.log_bytes - len(end.data) + 61
    assert p.settled_bytes == p.log_bytes - len(end.data)  # a later round ends past it


def test_bad_inputs_are_unknown_with_the_reason(tmp_path):
    far = stamped(rf.v2([rec(0, "a", None)]), NOW + 100 * DR)
    files = segments(tmp_path / "far", [far], [rf.v2([rec(1, "b")])])
    p = project(files, first_dirty=0, upper=1)
    assert p.next_clean_bytes is None and p.settled_bytes is None
    assert "byte 0" in p.unknown_reason and "past now + delete.retention.ms" in p.unknown_reason
    assert p.horizon_counts == {} and p.next_removable_ms is None  # a horizon no clean wrote: no state either

    old = rf.legacy(1, [rec(0, "a"), rec(1, "a", None)])
    files = segments(tmp_path / "legacy", old, [rf.v2([rec(2, "b")])])
    p = project(files, first_dirty=0, upper=2)
    assert p.next_clean_bytes is None and "magic-1 tombstone" in p.unknown_reason
    assert p.horizon_counts == {}  # a magic-1 tombstone has no KIP-534 horizon: no state
    with_v2 = segments(tmp_path / "legacy2", old, [rf.v2([rec(2, "b", None)])], [rf.v2([rec(3, "c")])])
    p = project(with_v2, first_dirty=0, upper=3)
    assert p.next_clean_bytes is None and p.horizon_counts == {("tombstone", "unstamped"): 1}  # states still known

    good = rf.v2([rec(0, "a"), rec(1, "b")])
    bad = bytearray(good.data)
    bad[-3] ^= 0xFF
    path = tmp_path / "crc" / f"{0:020d}.log"
    path.parent.mkdir()
    path.write_bytes(bytes(bad))
    p = project([(str(path), len(bad))], first_dirty=0, upper=2)
    assert p.next_clean_bytes is None and "byte 0" in p.unknown_reason and "CRC" in p.unknown_reason

    files = segments(tmp_path / "keys", [rf.v2([rec(i, f"k{i}") for i in range(10)])], [rf.v2([rec(10, "z")])])
    p = project(files, first_dirty=0, upper=10, max_map_keys=5)
    assert p.next_clean_bytes is None and "offset map" in p.unknown_reason and p.log_bytes == files[0][1] + files[1][1]

    p = project(files, first_dirty=0, upper=10, aborted=[], max_map_keys=100)
    assert p.unknown_reason is None


def test_an_abort_folded_without_its_first_offset_starts_after_its_producers_previous_marker(tmp_path):
    # before the dirty section: a committed transaction of 7, then an aborted one, its data never cleaned
    tx = dict(producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    committed, commit = rf.v2([rec(0, "a"), rec(1, "b")], **tx), rf.control(2, "COMMIT", 7, 0, rf.T0)
    aborted, abort = rf.v2([rec(3, "c"), rec(4, "d")], **tx), rf.control(5, "ABORT", 7, 0, rf.T0)
    files = segments(tmp_path, [committed, commit, aborted, abort], [rf.v2([rec(6, "e")])], [rf.v2([rec(7, "f")])])
    # monitor.model.transactions lists an abort of a segment before the first dirty one without a first offset
    p = project(files, first_dirty=6, upper=7, aborted=[AbortedTxn(7, None, 5, None, 0)])
    assert p.unknown_reason is None
    # 3..4 is the aborted transaction (after 7's COMMIT at 2): dropped; 0..1 stays; both markers stay
    assert p.next_clean_bytes == p.log_bytes - len(aborted.data)
    # later: the ABORT marker is stamped and removed; the COMMIT marker's data is still there
    assert p.settled_bytes == p.log_bytes - len(aborted.data) - len(abort.data)


def test_a_segment_holding_the_upper_bound_is_mapped_whole_and_cleaned_up_to_it(tmp_path):
    # Kafka maps every record of a dirty segment, also those past the bound (an LSO inside it), and
    # keeps the records past the bound as they are (pastLatestOffset)
    first = rf.v2([rec(0, "a"), rec(1, "b")])
    below, past = rf.v2([rec(2, "c")]), rf.v2([rec(3, "a"), rec(4, "c")])
    files = segments(tmp_path, [first], [below, past], [rf.v2([rec(5, "z")])])
    p = project(files, first_dirty=2, upper=3)
    # a@0 goes (a@3 mapped); c@2 goes (c@4 mapped) but it is the round's last batch: kept empty
    assert p.next_clean_bytes == rebuilt([rec(1, "b")], 1) + 61 + len(past.data) + files[2][1]


def test_horizon_states_of_markers_and_the_next_removal(tmp_path):
    pending = stamped(rf.control(0, "COMMIT", 8, 0, rf.T0), NOW + 5)
    unstamped = rf.control(1, "ABORT", 9, 0, rf.T0)
    files = segments(tmp_path, [pending, unstamped], [rf.v2([rec(2, "z")])])
    p = project(files, first_dirty=0, upper=2)
    assert p.horizon_counts == {("marker", "pending"): 1, ("marker", "unstamped"): 1}
    assert p.next_removable_ms == NOW + 5
    # the unstamped marker (no data of 9 before it) is stamped now: gone one delete.retention.ms later
    assert p.batches_stamped == 1 and p.settled_bytes == files[1][1]
    d = p.as_dict()
    assert d["horizon_counts"] == {"marker_pending": 1, "marker_unstamped": 1} and d["settled_bytes"] == p.settled_bytes


def test_legacy_messages_without_tombstones_are_counted(tmp_path):
    old = rf.legacy(1, [rec(0, "a"), rec(1, "b")])
    files = segments(tmp_path, old, [rf.v2([rec(2, "a")])], [rf.v2([rec(3, "z")])])
    p = project(files, first_dirty=2, upper=3)
    assert p.unknown_reason is None
    assert p.next_clean_bytes == p.log_bytes - len(old[0].data)


def test_numpy_and_the_plain_loop_agree_on_a_mixed_log(tmp_path, ops):
    """Random keys, tombstones (some stamped), keyless records, codecs, transactions committed and
    aborted, over several segments and bounds: the vector path (a hash table, which put was each
    key's last, headers-only re-reads) and the plain loop (a dict, a record at a time) agree."""
    if ops != "numpy":
        pytest.skip("one comparison is enough")
    files, aborted = _mixed_log(tmp_path)
    bases = [int(u.rsplit("/", 1)[1][:20]) for u, _ in files]
    for first_dirty, upper in [(0, bases[-1]), (bases[1], bases[-1]), (bases[2] + 1, bases[-2]), (bases[-1], bases[-1])]:
        got = [project(files, first_dirty=first_dirty, upper=upper, aborted=aborted, last={7: (None, 0)}, ops=o)
               for o in (cleanarrays.NumpyOps, cleanarrays.PureOps)]
        assert got[0] == got[1] and got[0].unknown_reason is None, (first_dirty, upper)


def _mixed_log(tmp_path):
    import random

    rnd = random.Random(7)
    segs, seg, off, aborted = [], [], 0, []
    for n in range(40):
        kind = rnd.random()
        if kind < 0.15:  # a transaction of producer 7, committed or aborted
            first = off
            recs = [rec(off + j, f"k{rnd.randrange(30)}") for j in range(rnd.randint(1, 4))]
            seg.append(rf.v2(recs, producer_id=7, producer_epoch=0, base_sequence=0, transactional=True))
            off += len(recs)
            end = "ABORT" if rnd.random() < 0.5 else "COMMIT"
            if end == "ABORT":
                aborted.append(AbortedTxn(7, first, off, off + 1, 0))
            seg.append(rf.control(off, end, 7, 0, rf.T0))
            off += 1
        else:
            recs = [rec(off + j, None if rnd.random() < 0.05 else f"k{rnd.randrange(30)}",
                        None if rnd.random() < 0.2 else b"v" * rnd.randint(1, 40)) for j in range(rnd.randint(1, 6))]
            recs = [r if r.key is not None or r.value is not None else rec(r.offset, "k0") for r in recs]
            w = rf.v2(recs, rnd.choice(["none", "gzip", "none"]) if len(recs) > 3 else "none")
            if any(r.value is None for r in recs) and rnd.random() < 0.3:
                w = stamped(w, NOW + rnd.choice([-5, 5]))
            seg.append(w)
            off += len(recs)
        if rnd.random() < 0.2:
            segs.append(seg)
            seg = []
    segs.append(seg + [rf.v2([rec(off, "tail")])])
    return segments(tmp_path, *segs), aborted


def test_a_settled_batch_is_left_alone_by_the_later_rounds(tmp_path, ops, monkeypatch):
    """A data batch judged with everything mapped and no tombstone kept (``Flow.settled``) is skipped by
    the settled rounds that map no key (no decision, no transaction state): the projections are those of
    every round judging every batch, with fewer transaction steps."""
    from monitor.model import cleanround
    from monitor.model.txncleaner import CleanedTransactions

    files, aborted = _mixed_log(tmp_path)
    bases = [int(u.rsplit("/", 1)[1][:20]) for u, _ in files]
    steps = [0]
    on_batch = CleanedTransactions.on_batch

    def counted(self, *a):
        steps[0] += 1
        return on_batch(self, *a)

    monkeypatch.setattr(CleanedTransactions, "on_batch", counted)

    def run():
        steps[0] = 0
        out = [project(files, first_dirty=fd, upper=up, aborted=aborted, last={7: (None, 0)})
               for fd, up in [(0, bases[-1]), (bases[1], bases[-1]), (bases[2] + 1, bases[-2])]]
        return out, steps[0]

    skipping, fewer = run()
    records = cleanround.Round._records

    def never_settled(self, f):
        out = records(self, f)
        f.settled = False
        return out

    monkeypatch.setattr(cleanround.Round, "_records", never_settled)
    judging, every = run()
    assert skipping == judging and all(p.unknown_reason is None for p in skipping)
    assert fewer < every


def test_a_batch_first_cleaned_by_a_later_clean_keeps_that_cleans_stamp(tmp_path):
    # the active segment's batch: the next clean does not touch it; the settled cleans stamp it (the
    # second clean, once every horizon has passed: now + delete.retention.ms), then drop its tombstone
    a = rf.v2([rec(0, "a"), rec(1, "b")])
    active = rf.v2([rec(2, "c"), rec(3, "d", None)])
    files = segments(tmp_path, [a], [active])
    p = project(files, first_dirty=0, upper=2)
    assert p.next_clean_bytes == p.log_bytes
    [_, b] = batches_of(files)
    second_clean = NOW + DR
    assert p.settled_bytes == len(a.data) + retained_batch_size(b, b.records()[:1],
                                                                delete_horizon_ms=second_clean + DR)

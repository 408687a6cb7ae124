"""The fold of transaction events into open transactions and the LSO (monitor.model.transactions), and the
LSO applied in the compaction model, on hand-built event sequences whose answer follows from
Kafka's rules (ProducerStateManager: a producer's first transactional data batch opens, its own
COMMIT/ABORT marker closes)."""

from __future__ import annotations

import random

from monitor.model.compaction import partition_state
from monitor.model.summary import SegmentSummary
from monitor.model.topicconfig import TopicConfig
from monitor.model.transactions import (ABORT, COMMIT, DATA, TxnEvent, aborted_transactions, last_stable_offset,
                                  open_transactions)

NOW = 1_000_000


def data(pid, first, last, epoch=0, ts=NOW - 5000):
    return TxnEvent(pid, epoch, first, last, DATA, ts)


def marker(pid, offset, kind=COMMIT, epoch=0):
    return TxnEvent(pid, epoch, offset, offset, kind, NOW - 1000)


def test_two_interleaved_producers_one_committed_one_open():
    ev = [data(7, 10, 12), data(8, 13, 15), data(7, 16, 18), marker(7, 19), data(8, 20, 21)]
    [t] = open_transactions(ev, NOW)
    assert (t.producer_id, t.first_offset, t.last_offset, t.age_ms) == (8, 13, 21, 5000)
    assert last_stable_offset([t], log_end_offset=22) == 13


def test_a_marker_of_another_producer_closes_nothing_of_this_one():
    ev = [data(7, 10, 12), marker(8, 13, ABORT), data(7, 14, 14)]
    [t] = open_transactions(ev, NOW)
    assert (t.producer_id, t.first_offset, t.last_offset) == (7, 10, 14)


def test_closed_transactions_leave_the_lso_at_the_log_end():
    ev = [data(7, 0, 4), marker(7, 5, ABORT), data(7, 6, 9), marker(7, 10, COMMIT)]
    assert open_transactions(ev, NOW) == ()
    assert last_stable_offset((), log_end_offset=11) == 11


def test_a_new_transaction_after_a_marker_starts_at_its_own_first_batch():
    ev = [data(7, 0, 4), marker(7, 5), data(7, 6, 9), data(8, 10, 10)]
    assert [(t.producer_id, t.first_offset) for t in open_transactions(ev, NOW)] == [(7, 6), (8, 10)]


def test_epoch_bump():
    # the coordinator aborts the fenced epoch's transaction with a bumped-epoch marker; the next
    # transaction of the new epoch opens at its own first batch
    ev = [data(7, 0, 3, epoch=0), marker(7, 4, ABORT, epoch=1), data(7, 5, 6, epoch=1)]
    [t] = open_transactions(ev, NOW)
    assert (t.producer_epoch, t.first_offset) == (1, 5)
    # data of a new epoch while a transaction is open keeps its first offset (Kafka loading the log)
    ev = [data(7, 0, 3, epoch=0), data(7, 4, 6, epoch=1)]
    [t] = open_transactions(ev, NOW)
    assert (t.producer_epoch, t.first_offset, t.last_offset) == (1, 0, 6)


def test_unknown_timestamp_gives_unknown_age():
    [t] = open_transactions([data(7, 0, 0, ts=-1)], NOW)
    assert t.age_ms is None


def _seg(base, next_offset, size, events=()):
    s = SegmentSummary(f"/x/{base:020d}.log", base, size=size, next_offset=next_offset,
                       max_timestamp=NOW - 10_000, first_batch_max_timestamp=NOW - 10_000)
    for e in events:
        s.add_txn_event(e)
    return s


def test_open_transaction_holds_the_cleaner_at_its_first_offset():
    # clean up to 100; an open transaction from 100 in the second segment; a committed one before it
    segs = [_seg(0, 100, 1000, [data(5, 40, 50), marker(5, 51)]),
            _seg(100, 200, 1000, [data(9, 100, 120)]),
            _seg(200, 300, 1000),
            _seg(300, 310, 100)]
    cfg = TopicConfig(min_cleanable_dirty_ratio=0.01)
    st = partition_state("t", 0, segs, cfg, NOW, checkpoint=100)
    assert st.last_stable_offset == 100
    assert st.first_uncleanable_offset == 100 and st.uncleanable_reason == "last_stable_offset"
    assert st.cleanable_bytes == 0 and st.cleanable_ratio == 0.0 and not st.eligible
    assert st.uncleaned_bytes == 2000 and st.blocked_by == "last_stable_offset"
    assert "producer 9" in st.blocked_detail and "offset 100" in st.blocked_detail
    assert [(t.producer_id, t.first_offset, t.age_ms) for t in st.open_transactions] == [(9, 100, 5000)]
    assert st.cleaner_limit_offset == 100  # the LSO, below the active segment (300)
    # the marker closes it: the LSO is the log end, the active segment bounds the cleaner again
    segs[2] = _seg(200, 300, 1000, [marker(9, 250)])
    st = partition_state("t", 0, segs, cfg, NOW, checkpoint=100)
    assert st.last_stable_offset == 310 and st.open_transactions == ()
    assert st.first_uncleanable_offset == 300 and st.cleanable_bytes == 2000 and st.eligible
    assert st.blocked_by is None and st.blocked_detail is None
    assert st.cleaner_limit_offset == 300  # the active segment's base


def test_segment_summary_keeps_the_net_effect_and_extends_it_on_append(tmp_path):
    """Per producer, a segment keeps its last marker and the run of data batches after it (first
    offset and timestamp kept, last offset and epoch extended), also across an incremental read of
    an appended segment; complete transactions before that leave nothing. The incremental summary
    equals a full read of the same file, and the fold over it equals the fold over every event."""
    from monitor.model.summary import summarize
    from recordfixtures import T0, control, items, v2

    def tx(lo, hi, pid, epoch=0):
        return v2(items(range(lo, hi), f"p{pid}"), producer_id=pid, producer_epoch=epoch, base_sequence=0,
                  transactional=True)

    ts = lambda hi: T0 + (hi - 1) * 7  # noqa: E731  (create time of the last record of a batch ending before hi)
    path = tmp_path / "00000000000000000000.log"
    first = [tx(0, 3, 7), v2(items(range(3, 5))), tx(5, 7, 8), tx(7, 9, 7)]
    path.write_bytes(b"".join(b.data for b in first))
    s, _ = summarize(path, 0)
    assert s.txn_events() == [TxnEvent(7, 0, 0, 8, DATA, ts(3)), TxnEvent(8, 0, 5, 6, DATA, ts(7))]
    more = [tx(9, 10, 8), control(10, "COMMIT", 7, 0, T0 + 5000), tx(11, 12, 7), tx(12, 13, 8, epoch=1),
            control(13, "ABORT", 7, 0, T0 + 6000), tx(14, 15, 7), control(15, "COMMIT", 7, 0, T0 + 7000),
            tx(16, 17, 7)]
    with path.open("ab") as f:
        f.write(b"".join(b.data for b in more))
    s2, read = summarize(path, 0, s)
    assert s2 is s and 0 < read < path.stat().st_size  # extended, not read again
    assert s.txn_events() == [TxnEvent(8, 1, 5, 12, DATA, ts(7)), TxnEvent(7, 0, 15, 15, COMMIT, T0 + 7000),
                              TxnEvent(7, 0, 16, 16, DATA, ts(17))]
    assert summarize(path, 0)[0].txn_events() == s.txn_events()
    every = [data(7, 0, 8), data(8, 5, 9), marker(7, 10), data(7, 11, 11), data(8, 12, 12, epoch=1),
             marker(7, 13, ABORT), data(7, 14, 14), marker(7, 15), data(7, 16, 16)]
    assert [(t.producer_id, t.producer_epoch, t.first_offset, t.last_offset)
            for t in open_transactions(s.txn_events(), NOW)] == [
        (t.producer_id, t.producer_epoch, t.first_offset, t.last_offset) for t in open_transactions(every, NOW)] == [
        (8, 1, 5, 12), (7, 0, 16, 16)]


def test_only_the_dirty_section_can_hold_an_open_transaction():
    # a transactional batch below the cleaner's checkpoint with no marker after it (the cleaner removed
    # the marker and kept the producer's last batch, emptied): the LSO never went back, so it is not open
    segs = [_seg(0, 100, 1000, [data(5, 40, 40)]), _seg(100, 200, 1000), _seg(200, 210, 100)]
    st = partition_state("t", 0, segs, TopicConfig(min_cleanable_dirty_ratio=0.01), NOW, checkpoint=100)
    assert st.open_transactions == () and st.last_stable_offset == 210 and st.first_uncleanable_offset == 200
    # without a checkpoint the whole log is dirty, and the same batch is an open transaction
    st = partition_state("t", 0, segs, TopicConfig(min_cleanable_dirty_ratio=0.01), NOW)
    assert [t.first_offset for t in st.open_transactions] == [40] and st.first_uncleanable_offset == 40


def test_a_given_lso_is_used_and_named_admin_and_the_hanging_count_follows_the_timeout():
    # the fold sees producer 9's transaction open from 100 (first batch 5 s old); given the leader's LSO
    # 300 (monitor.model.lsocheck chose it), the model uses that and says where it came from
    segs = [_seg(0, 100, 1000), _seg(100, 200, 1000, [data(9, 100, 120)]), _seg(200, 300, 1000), _seg(300, 310, 100)]
    cfg = TopicConfig(min_cleanable_dirty_ratio=0.01)
    folded = partition_state("t", 0, segs, cfg, NOW, checkpoint=100)
    assert (folded.last_stable_offset, folded.last_stable_offset_source) == (100, "log")
    given = partition_state("t", 0, segs, cfg, NOW, checkpoint=100, last_stable_offset=300)
    assert (given.last_stable_offset, given.last_stable_offset_source) == (300, "admin")
    assert given.first_uncleanable_offset == 300 and given.uncleanable_reason == "active_segment"
    # hanging: open longer than transaction.max.timeout.ms (the age is 5000 ms)
    assert partition_state("t", 0, segs, cfg, NOW, checkpoint=100).hanging_transactions == 0  # Kafka's 15 min
    assert partition_state("t", 0, segs, cfg, NOW, checkpoint=100,
                           transaction_max_timeout_ms=4_999).hanging_transactions == 1
    assert partition_state("t", 0, segs, cfg, NOW, checkpoint=100,
                           transaction_max_timeout_ms=5_000).hanging_transactions == 0


def test_hanging_counts_transactions_open_longer_than_transaction_max_timeout_ms():
    segs = [_seg(0, 100, 1000, [data(5, 10, 20, ts=NOW - 60_000), data(6, 30, 30, ts=NOW - 1000),
                                data(7, 40, 40, ts=-1)]), _seg(100, 110, 100)]
    cfg = TopicConfig(min_cleanable_dirty_ratio=0.01)
    st = partition_state("t", 0, segs, cfg, NOW)
    assert st.hanging_transactions == 0  # Kafka's default, 15 min: none is that old
    assert [r["hanging"] for r in st.as_dict()["open_transactions"]] == [False, False, False]
    st = partition_state("t", 0, segs, cfg, NOW, transaction_max_timeout_ms=59_999)
    assert st.hanging_transactions == 1 and st.transaction_max_timeout_ms == 59_999
    # the one open 60 s hangs; the one without a timestamp is of unknown age, never called hanging
    assert [(r["producer_id"], r["hanging"]) for r in st.as_dict()["open_transactions"]] == [
        (5, True), (6, False), (7, False)]
    assert partition_state("t", 0, segs, cfg, NOW, transaction_max_timeout_ms=60_000).hanging_transactions == 0


# ---------------------------------------------------------------- aborted transactions (Kafka's AbortedTxn)

def kafka_aborts(events):
    """ProducerStateManager event by event over the whole log: a producer's first data batch opens its
    transaction; its ABORT marker completes it as AbortedTxn(producer, first, marker offset, LSO), the
    LSO being the oldest other open transaction's first offset, else the marker's offset + 1
    (ProducerStateManager.lastStableOffset(CompletedTxn)); a marker with nothing open completes none."""
    ongoing, out = {}, []
    for e in events:
        if e.marker == DATA:
            ongoing.setdefault(e.producer_id, e.first_offset)
            continue
        first = ongoing.pop(e.producer_id, None)
        if e.marker == ABORT and first is not None:
            out.append((e.producer_id, first, e.first_offset, min(ongoing.values(), default=e.first_offset + 1)))
    return out


def _segments_of(events, cuts):
    """Events split into segments at the offsets ``cuts`` (each segment's base)."""
    bases = [0, *cuts]
    segs = []
    for i, base in enumerate(bases):
        end = bases[i + 1] if i + 1 < len(bases) else 1 << 40
        segs.append(_seg(base, end, 100, [e for e in events if base <= e.first_offset < end]))
    return segs


def test_aborts_across_segments_equal_kafkas_abortedtxn_entries():
    # producer 7's transaction opens in segment 0 and is aborted in segment 1 (first offset from segment
    # 0); producer 8's is open across both while 7 aborts, so it is the entry's LSO; 9 aborts twice in
    # segment 1, first while 8 is still open (LSO 5), then with nothing else open (LSO = marker + 1);
    # a COMMIT, or an ABORT with nothing open, completes nothing
    ev = [data(7, 0, 4), data(8, 5, 6), data(7, 7, 8),
          data(8, 10, 11), marker(7, 12, ABORT), data(9, 13, 14), marker(9, 15, ABORT), marker(8, 16),
          data(9, 17, 17), marker(9, 18, ABORT), marker(9, 19, ABORT)]
    want = [(7, 0, 12, 5), (9, 13, 15, 5), (9, 17, 18, 19)]
    assert kafka_aborts(ev) == want
    got = aborted_transactions(_segments_of(ev, [10]))
    assert got.complete
    assert [(a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset) for a in got.aborted] == want
    assert [a.segment for a in got.aborted] == [10, 10, 10]


def test_abort_fold_over_random_segment_cuts_equals_the_event_by_event_account(seed):
    rng = random.Random(seed)
    for _ in range(200):
        ev, off = [], 0
        for _ in range(rng.randint(1, 40)):
            pid = rng.randint(1, 4)
            kind = rng.choice([DATA, DATA, DATA, ABORT, COMMIT])
            n = rng.randint(1, 3) if kind == DATA else 1
            ev.append(TxnEvent(pid, 0, off, off + n - 1, kind, NOW))
            off += n
        cuts = sorted(rng.sample(range(1, off), min(rng.randint(0, 4), off - 1))) if off > 1 else []
        got = aborted_transactions(_segments_of(ev, cuts)).aborted
        assert [(a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset) for a in got] == \
            kafka_aborts(ev), (ev, cuts)


def test_aborts_before_the_first_dirty_offset_keep_only_what_the_log_shows():
    # below the checkpoint the cleaner emptied producer 5's batch: the fold starts at the dirty segment
    ev = [data(5, 0, 0), data(6, 1, 2), marker(6, 3, ABORT), data(5, 100, 101), marker(5, 102, ABORT)]
    got = aborted_transactions(_segments_of(ev, [100]), from_offset=100).aborted
    assert [(a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset) for a in got] == [
        (6, None, 3, None), (5, 100, 102, 103)]


def test_a_segment_past_the_abort_bound_says_its_list_is_incomplete(monkeypatch):
    import monitor.model.summary as summary

    monkeypatch.setattr(summary, "MAX_ABORTS_PER_SEGMENT", 2)
    ev = [e for i in range(5) for e in (data(7, 2 * i, 2 * i), marker(7, 2 * i + 1, ABORT))]
    got = aborted_transactions(_segments_of(ev, []))
    assert [a.last_offset for a in got.aborted] == [1, 3] and got.dropped == 3 and not got.complete

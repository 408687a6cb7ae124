"""One clean's decisions on transactional batches (monitor.model.txncleaner) on segments built byte for byte
as a broker stores them (tests/recordfixtures.py): each case is a rule of Kafka's Cleaner.cleanInto
and CleanedTransactionMetadata, worked by hand. The broker's own clean is compared with the audit in
tests/spark_analysis/test_audit_transactions.py; the marker's delete horizon needs two cleans and a
delete.retention.ms to pass there, so it is shown here."""

from __future__ import annotations

import struct

from monitor.kafka.record import SegmentReader
from monitor.model.transactions import AbortedRanges, AbortedTxn
from monitor.model.txncleaner import RETAINED_EMPTY_BATCH_BYTES, TxnCleaning
from recordfixtures import T0, V2_FIRST_TS_AT, _restamp_v2, control, items, v2, write

DELETE_HORIZON_BIT = 0x40  # KIP-534: the batch's first timestamp is its delete horizon
NOW = T0 + 10_000


def tx(lo, hi, pid):
    return v2(items(range(lo, hi), f"p{pid}"), producer_id=pid, producer_epoch=0, base_sequence=0, transactional=True)


def horizon(w, when: int):
    """The marker as a clean that found it removable rewrote it: delete horizon ``when``."""
    data = bytearray(w.data)
    struct.pack_into(">q", data, V2_FIRST_TS_AT, when)
    w.data = _restamp_v2(data, w.records[0].offset, 0, attrs=DELETE_HORIZON_BIT)
    return w


def clean(tmp_path, written, aborted, upper=1000):
    seg = write(tmp_path / "00000000000000000000.log", written)
    batches = [(b, c) for b, c in SegmentReader(seg.path).decoded(columns=True)]
    last = {}
    for b, _ in batches:
        if not b.is_control and b.producer_id >= 0:
            last[b.producer_id] = b.last_offset
    t = TxnCleaning(AbortedRanges(tuple(aborted)), last, upper, NOW)
    verdicts = []
    for b, c in batches:
        if b.is_control:
            before = t.markers
            t.control_batch(b, c.keys[0] if len(c) else None)
            verdicts.append("gone" if t.markers > before else "kept")
        else:
            verdicts.append("aborted" if t.data_batch(b) else "data")
    return t, verdicts, [b.size for b, _ in batches]


def test_aborted_data_goes_whole_and_markers_wait_for_their_data_and_horizon(tmp_path):
    w = [tx(0, 3, 7),                                   # aborted (7: 0..3)
         horizon(control(3, "ABORT", 7, 0, T0), NOW - 1),  # its data is still there: kept
         tx(4, 6, 7),                                   # committed data
         horizon(control(6, "COMMIT", 7, 0, T0), NOW - 1),  # its data is still there: kept
         horizon(control(7, "COMMIT", 8, 0, T0), NOW - 1),  # no data of 8 before it, horizon passed: gone
         horizon(control(8, "ABORT", 8, 0, T0), NOW + 1),   # removable, but its horizon is still ahead: kept
         control(9, "COMMIT", 9, 0, T0)]                # removable, no horizon yet (the first clean sets it): kept
    t, verdicts, sizes = clean(tmp_path, w, [AbortedTxn(7, 0, 3, 0, 0)])
    assert verdicts == ["aborted", "kept", "data", "kept", "gone", "kept", "kept"]
    assert (t.aborted_records, t.aborted_bytes) == (3, sizes[0])  # 7's last data batch is 4..5: nothing kept
    assert (t.markers, t.marker_bytes) == (1, sizes[4])
    assert (t.removable_records, t.reclaimable_bytes) == (4, sizes[0] + sizes[4])


def test_the_producers_last_data_batch_stays_as_an_empty_header(tmp_path):
    t, verdicts, sizes = clean(tmp_path, [tx(0, 3, 7), control(3, "ABORT", 7, 0, T0)], [AbortedTxn(7, 0, 3, 0, 0)])
    assert verdicts == ["aborted", "kept"]
    assert (t.aborted_records, t.aborted_bytes) == (3, sizes[0] - RETAINED_EMPTY_BATCH_BYTES)


def test_nothing_at_or_past_the_upper_bound_goes(tmp_path):
    w = [tx(0, 3, 7), control(3, "ABORT", 7, 0, T0), tx(4, 6, 7), horizon(control(6, "COMMIT", 8, 0, T0), NOW - 1),
         tx(7, 9, 7), control(9, "ABORT", 7, 0, T0)]
    aborted = [AbortedTxn(7, 0, 3, 0, 0), AbortedTxn(7, 4, 9, 10, 0)]
    t, verdicts, sizes = clean(tmp_path, w, aborted, upper=4)
    # the second aborted transaction (from 4) is aborted data, but at or past the bound: kept
    assert verdicts == ["aborted", "kept", "aborted", "kept", "aborted", "kept"]
    assert (t.removable_records, t.reclaimable_bytes) == (3, sizes[0])


def test_an_abort_whose_marker_a_clean_removed_aborts_nothing_after_it():
    """CleanedTransactions as a later clean walks a log an earlier one cleaned: a clean removes an ABORT
    marker only when it met none of its transaction's batches, and then writes no .txnindex entry for it,
    so the later clean does not know that transaction; the producer's next transaction (committed, its
    batch past where the marker was) is not aborted data, and its COMMIT marker waits for it. Seen on a
    real broker (tests/monitor/model/test_nextclean_kafka.py: the settled projection kept the committed
    batch and its marker only with this)."""
    from monitor.model.txncleaner import CleanedTransactions

    gone = AbortedTxn(producer_id=7, first_offset=10, last_offset=20, last_stable_offset=21, segment=0)
    t = CleanedTransactions([gone])
    assert t.on_batch(30, True, 7) is False  # offsets 10..20 were removed whole, marker included
    assert t.on_control(31, 7, struct.pack(">hh", 0, 1)) is False  # COMMIT: its data was met
    # with the marker still there, the transaction's data and marker go as before
    t = CleanedTransactions([gone])
    assert t.on_batch(12, True, 7) is True
    assert t.on_control(20, 7, struct.pack(">hh", 0, 0)) is False  # ABORT kept: a batch of it was met
    assert t.on_batch(30, True, 7) is False
    # a later aborted transaction of the same producer enters though the earlier one's marker is gone
    later = AbortedTxn(producer_id=7, first_offset=25, last_offset=40, last_stable_offset=41, segment=0)
    t = CleanedTransactions([gone, later])
    assert t.on_batch(30, True, 7) is True

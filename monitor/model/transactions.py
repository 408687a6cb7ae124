"""Open transactions and the last stable offset, read from the log itself.

Kafka's ProducerStateManager keeps, per producer id, the first offset of its ongoing
transaction: the first transactional data batch of that producer opens it, a COMMIT or
ABORT marker of the same producer closes it. The last stable offset (LSO) is the smallest
first offset of an open transaction, else the log end offset; the cleaner never cleans at
or past it. A transaction left open (a crashed producer, KIP-664) freezes the LSO and so
the cleaner.

Segment summaries (``monitor.model.summary``) record each segment's net effect once, compactly (per
producer, its last marker in the segment and the run of data batches after it);
``open_transactions`` folds these events across segments in offset order. Like Kafka when it loads
producer state from the log (replication origin), a marker closes the transaction whatever
its epoch, and an epoch bump on data keeps the transaction's first offset.
Aborted transactions (Kafka's ``AbortedTxn`` entries of ``.txnindex``) are folded from the segments'
recorded aborts by ``aborted_transactions`` (below).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, NamedTuple, Sequence

# the broker setting bounding a producer's transaction.timeout.ms, and its default (15 min): Kafka's
# TransactionStateManagerConfig.TRANSACTIONS_MAX_TIMEOUT_MS_CONFIG and TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT
TRANSACTION_MAX_TIMEOUT = "transaction.max.timeout.ms"
DEFAULT_TRANSACTION_MAX_TIMEOUT_MS = 900_000

MAX_ABORTS_PER_SEGMENT = 65_536  # aborts a segment summary records (5 int64 each); past it they are counted only
ABORT_FIELDS = ("producer_id", "run_first_offset", "last_offset", "others_first_offset", "first_marker_here")

DATA = -1  # TxnEvent.marker of a transactional data run; markers use Kafka's control types
ABORT = 0
COMMIT = 1


class TxnEvent(NamedTuple):
    """A run of transactional data batches of one producer (marker DATA), or a marker."""

    producer_id: int
    producer_epoch: int
    first_offset: int
    last_offset: int
    marker: int  # DATA, ABORT or COMMIT
    timestamp: int  # max timestamp of the run's first batch, or of the marker batch


@dataclass(frozen=True)
class OpenTransaction:
    producer_id: int
    producer_epoch: int
    first_offset: int
    last_offset: int  # of the last data batch seen so far
    first_timestamp: int  # max timestamp of the transaction's first batch (ms)
    age_ms: int | None  # now - first_timestamp; None when the batch has no timestamp


def open_transactions(events: Iterable[TxnEvent], now_ms: int) -> tuple[OpenTransaction, ...]:
    """Fold events in offset order into the transactions still open, by first offset."""
    ongoing: dict[int, list] = {}  # producer id -> [epoch, first, last, timestamp]
    for e in events:
        if e.marker == DATA:
            cur = ongoing.get(e.producer_id)
            if cur is None:
                ongoing[e.producer_id] = [e.producer_epoch, e.first_offset, e.last_offset, e.timestamp]
            else:
                cur[0], cur[2] = e.producer_epoch, e.last_offset
        elif e.marker in (ABORT, COMMIT):
            ongoing.pop(e.producer_id, None)
    out = [OpenTransaction(pid, ep, first, last, ts, max(now_ms - ts, 0) if ts >= 0 else None)
           for pid, (ep, first, last, ts) in ongoing.items()]
    return tuple(sorted(out, key=lambda t: t.first_offset))


def last_stable_offset(open_txns: Sequence[OpenTransaction], log_end_offset: int) -> int:
    """Kafka's LSO: the first offset of the oldest open transaction, else the log end offset."""
    return min((t.first_offset for t in open_txns), default=log_end_offset)


def hanging(t: OpenTransaction, transaction_max_timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS) -> bool:
    """A transaction open longer than the broker's transaction.max.timeout.ms: no producer may set a
    longer transaction.timeout.ms, so the coordinator should have aborted it; it is hanging (KIP-664).
    Unknown age (no timestamp) is not called hanging."""
    return t.age_ms is not None and t.age_ms > transaction_max_timeout_ms


def describe(t: OpenTransaction) -> str:
    """The blocked reason's words for one open transaction."""
    age = "unknown age" if t.age_ms is None else f"open {t.age_ms / 1000:.0f} s"
    return (f"open transaction of producer {t.producer_id} (epoch {t.producer_epoch}) "
            f"from offset {t.first_offset}, {age}")


def snapshot_events(ongoing) -> list[TxnEvent]:
    """The ongoing transactions of a producer-state snapshot (``monitor.kafka.producer_snapshot``: entries with
    producer_id, epoch, last_offset, timestamp, current_txn_first_offset >= 0) as DATA events that open
    them, to fold before the log's events from the snapshot's offset on (Kafka loads producer state the
    same way: the latest snapshot, then the log after it). The entry's timestamp is that of the
    producer's last batch, not the transaction's first: ages from it are lower bounds."""
    return [TxnEvent(e.producer_id, e.epoch, e.current_txn_first_offset,
                     max(e.last_offset, e.current_txn_first_offset), DATA, e.timestamp)
            for e in sorted(ongoing, key=lambda e: e.current_txn_first_offset)]


def open_transactions_after_snapshot(ongoing, snapshot_offset: int, events: Iterable[TxnEvent],
                                     now_ms: int) -> tuple[OpenTransaction, ...]:
    """Open transactions folded from a snapshot's ongoing ones and the events reaching its offset or past
    it (a segment's net events are per producer, so a run that began before the offset and goes on after
    it is kept: it only extends a transaction the snapshot already has open)."""
    later = [e for e in events if e.last_offset >= snapshot_offset]
    return open_transactions([*snapshot_events(ongoing), *later], now_ms)


def disagreement(from_log: Sequence[OpenTransaction], from_snapshot: Sequence[OpenTransaction]) -> str | None:
    """None when both folds find the same open transactions (producer id and first offset), else what differs."""
    a = sorted((t.producer_id, t.first_offset) for t in from_log)
    b = sorted((t.producer_id, t.first_offset) for t in from_snapshot)
    if a == b:
        return None
    return (f"open transactions (producer id, first offset) folded from the log {a} differ from those of the "
            f"snapshot and the log after it {b}")


class AbortedTxn(NamedTuple):
    """Kafka's AbortedTxn (storage .../log/AbortedTxn.java; written by ProducerStateManager when an ABORT
    marker completes a transaction): ``last_offset`` is the marker's offset, ``last_stable_offset`` the
    first offset of the oldest other open transaction at that moment, else the marker's offset + 1
    (ProducerStateManager.lastStableOffset(CompletedTxn)). ``first_offset`` is None when the
    transaction opened before the part of the log folded (``segment``: base offset of the segment
    holding the marker, whose .txnindex holds the entry)."""

    producer_id: int
    first_offset: int | None
    last_offset: int
    last_stable_offset: int | None
    segment: int


@dataclass(frozen=True)
class AbortedRanges:
    """The aborted transactions completed in the folded segments, by marker offset. ``complete`` is
    False when a segment held more aborts than its summary records (``dropped`` of them): the list
    then misses those, and nothing may be concluded from an absence."""

    aborted: tuple[AbortedTxn, ...]
    dropped: int = 0
    # ABORT markers of the folded segments that complete no transaction the log shows, as (producer id,
    # marker offset, segment): what a clean leaves when it removed the aborted data and kept the marker
    # (CleanedTransactionMetadata keeps it, and its .txnindex entry, while it still saw that data), in a
    # segment the first dirty offset does not say was cleaned (a checkpoint read before the clean's swap,
    # a clean stopped inside a segment by a full offset map). Whether Kafka completed a transaction there
    # cannot be told from the log: ``monitor.model.txnindex`` neither requires nor refuses their entries.
    bare: tuple[tuple[int, int, int], ...] = ()

    @property
    def complete(self) -> bool:
        return self.dropped == 0


def aborted_transactions(segments: Sequence, from_offset: int | None = None) -> AbortedRanges:
    """Fold segment summaries (``monitor.model.summary.SegmentSummary``, offset order) into Kafka's aborted
    transactions, as ProducerStateManager completes them while appending: an ABORT marker of a producer
    with an open transaction completes it, from the transaction's first offset to the marker.

    Each summary records, per abort, what the segment alone knows (the run of the producer's data in
    the segment, other producers' runs open at that moment, whether it was the producer's first
    marker in the segment); the transactions open when a segment starts come from the earlier
    segments' net events, as in ``open_transactions``. ``from_offset`` (the first dirty offset) starts
    the fold at the segment holding it, for the reason ``monitor.model.compaction`` gives: a batch the cleaner
    emptied but kept below it would open a transaction that is not there. Aborts in segments before it
    are still listed, with ``first_offset`` and ``last_stable_offset`` None (what the log left of them).
    """
    n = len(ABORT_FIELDS)
    carried: dict[int, int] = {}  # producer id -> first offset of its transaction open at the segment's start
    out: list[AbortedTxn] = []
    bare: list[tuple[int, int, int]] = []
    dropped = 0
    start_idx = 0
    if from_offset is not None:
        for i, s in enumerate(segments):
            if s.base_offset <= from_offset:
                start_idx = i
    # before the first folded segment the log may have held (cleaned away, deleted) the start of a
    # transaction: an abort there with no run of its own may or may not complete one (first offset None)
    unknown_past = bool(segments) and (start_idx > 0 or segments[start_idx].base_offset > 0)
    for i, s in enumerate(segments):
        dropped += s.txn_aborts_dropped
        folded = i >= start_idx
        a = s.txn_aborts
        for j in range(0, len(a), n):
            pid, run_first, last, others_here, first_marker_here = a[j:j + n]
            if not folded:
                out.append(AbortedTxn(pid, None, last, None, s.base_offset))
                continue
            first = carried[pid] if first_marker_here and pid in carried else run_first
            if first < 0:
                if i == start_idx and unknown_past and first_marker_here:
                    out.append(AbortedTxn(pid, None, last, None, s.base_offset))
                else:  # no transaction open that the log shows: Kafka completed none, or a clean took its data
                    bare.append((pid, last, s.base_offset))
                continue
            others = [f for q, f in carried.items()
                      if q != pid and s.txn_first_markers.get(q, last + 1) > last]
            if others_here >= 0:
                others.append(others_here)
            out.append(AbortedTxn(pid, first, last, min(others, default=last + 1), s.base_offset))
        if not folded:
            continue
        for e in s.txn_events():
            if e.marker == DATA:
                carried.setdefault(e.producer_id, e.first_offset)
            else:
                carried.pop(e.producer_id, None)
    return AbortedRanges(tuple(out), dropped, tuple(bare))

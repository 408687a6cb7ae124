"""What one clean by Kafka's cleaner does to a partition's transactional batches: the one definition of
the transaction rules (``CleanedTransactions``, Kafka's ``CleanedTransactionMetadata``), which the
cleaner simulation (``monitor.model.nextclean``) runs in every round and the audit's record pass
(``spark_analysis.partition_audit``, ``TxnCleaning``) applies while it reads a partition's batches in order.

Kafka 4.x, storage/.../log/Cleaner.java (cleanSegments, cleanInto's RecordFilter) and
CleanedTransactionMetadata.java, for batches below the cleaning round's upper bound (the base of the
segment holding the first uncleanable offset, which the LSO bounds: nothing at or past it is touched):

* a transactional data batch of an aborted transaction (from the aborted ranges, as the cleaner takes
  them from ``.txnindex``) is discarded whole, records and all (``onBatchRead`` -> discard), except
  that the batch holding an active producer's last data offset stays as an empty batch (its 61-byte
  header, ``BatchRetention.RETAIN_EMPTY``: it carries the producer's last sequence);
* a COMMIT marker may go when the clean traversed no data batch of its transaction; an ABORT marker
  when it traversed none of the aborted transaction's batches (``onControlBatchRead``); an empty
  control batch always may. A marker that may go is only removed by a clean that starts at or after
  its batch's delete horizon (``deleteHorizonMs``, set to the clean's start + delete.retention.ms by
  the first clean that found it removable): ``discardBatchRecords = canDiscard && horizon <= now``.
  So a marker outlives its transaction's data by one clean and delete.retention.ms.

``TxnCleaning``'s simplifications, each keeping a byte rather than claiming it (``monitor.model.nextclean``
has none of them but the first): every producer that wrote data counts as active (Kafka forgets one
after producer.id.expiration.ms), the round's last batch kept empty is not modelled, and a marker kept
empty for a producer whose last entry is a marker keeps its full size.
"""

from __future__ import annotations

import heapq

from monitor.kafka.record.encode import EMPTY_BATCH_SIZE
from monitor.kafka.record.model import control_type_code
from monitor.model.transactions import ABORT, COMMIT, AbortedRanges

RETAINED_EMPTY_BATCH_BYTES = EMPTY_BATCH_SIZE  # a batch kept with no records: encode's one definition (61 bytes)


class CleanedTransactions:
    """Kafka's ``CleanedTransactionMetadata``, as one clean (or one pass building the offset map) carries
    it over the batches in offset order: the aborted transactions (``AbortedTxn``-like, with
    ``producer_id``, ``first_offset``, ``last_offset``) enter as the walk reaches their first offset;
    a data batch of a producer with an entered aborted transaction is aborted data (discardable); a
    COMMIT marker is discardable when the walk met no data batch of its transaction, an ABORT marker
    when it met none of the aborted one's; an empty control batch always is; other control types never.
    ``monitor.model.nextclean`` builds one per round; the audit's ``TxnCleaning`` below reads its rules here."""

    def __init__(self, aborted=()):
        self._heap = [(a.first_offset, i, a.producer_id, a.last_offset) for i, a in enumerate(aborted)]
        heapq.heapify(self._heap)
        self._committed: set[int] = set()  # producers with a data batch of a transaction not (yet) aborted
        # producer id -> [a batch of its aborted transaction was met, the offset of its ABORT marker]
        self._aborted: dict[int, list] = {}

    def _consume_up_to(self, offset: int) -> None:
        aborted, heap = self._aborted, self._heap
        while heap and heap[0][0] <= offset:
            first, _, pid, last = heapq.heappop(heap)
            entered = aborted.get(pid)
            if entered is None or entered[1] < first:  # the producer's earlier one ended before this began
                aborted[pid] = [False, last]
        if aborted:
            # An entered transaction whose ABORT marker the walk passed without reading it: a clean removed
            # the marker, which it does only when it met no batch of the transaction, and then writes no
            # entry of it into the cleaned .txnindex (CleanedTransactionMetadata.onControlBatchRead appends
            # one only for a marker kept for its batches); a later clean takes its aborted transactions from
            # .txnindex (collectAbortedTransactions), so it no longer knows it: the producer's later batches
            # are not aborted data (``nextclean``'s later rounds take the first round's list).
            for pid in [p for p, (_, last) in aborted.items() if last < offset]:
                del aborted[pid]

    def on_batch(self, last_offset: int, transactional: bool, producer_id: int) -> bool:
        """``onBatchRead``: True when the data batch is part of an aborted transaction."""
        self._consume_up_to(last_offset)
        if not transactional:
            return False
        if producer_id in self._aborted:
            self._aborted[producer_id][0] = True
            return True
        self._committed.add(producer_id)
        return False

    def on_control(self, last_offset: int, producer_id: int, control_key: bytes | None) -> bool:
        """``onControlBatchRead`` (``control_key``: the batch's first record's key, None when it has
        none): True when the marker may be discarded."""
        self._consume_up_to(last_offset)
        if control_key is None:
            return True  # "An empty control batch was already cleaned, so it's safe to discard"
        kind = control_type_code(control_key)
        if kind == ABORT:
            return not self._aborted.pop(producer_id, (False,))[0]  # retained while a batch of it was met
        if kind == COMMIT:
            if producer_id in self._committed:
                self._committed.discard(producer_id)
                return False
            return True
        return False


class TxnCleaning:
    """Feed every batch of a partition in offset order (``data_batch``, ``control_batch``); the totals
    are what one clean at ``now_ms`` removes of transactional data and markers below ``upper``.

    ``counting=False``: only the verdicts (which data batch is aborted, no key's record), no totals
    (``removable_records`` and ``reclaimable_bytes`` None): for a partition whose projection counts
    what the clean removes, aborted data and markers included, byte for byte (``monitor.model.nextclean``),
    so the same bytes are not counted a second, rougher way. ``counted_batches`` says how many batches
    were counted."""

    def __init__(self, aborted: AbortedRanges, last_data_offsets: dict[int, int], upper: int, now_ms: int,
                 counting: bool = True):
        self.upper, self.now_ms, self.counting = upper, now_ms, counting
        self.counted_batches = 0
        self.last_data = last_data_offsets  # producer id -> last offset of its last data batch in the log
        # an abort folded from before the first dirty segment has no first offset here: left out (its
        # data went in an earlier clean; monitor.model.nextclean finds its first offset from the log)
        self._txn = CleanedTransactions([a for a in aborted.aborted if a.first_offset is not None])
        self.aborted_records = 0
        self.aborted_bytes = 0.0
        self.markers = 0  # markers (and empty control batches) removed
        self.marker_bytes = 0.0

    @property
    def removable_records(self) -> int | None:
        return self.aborted_records + self.markers if self.counting else None

    @property
    def reclaimable_bytes(self) -> float | None:
        return self.aborted_bytes + self.marker_bytes if self.counting else None

    def data_batch(self, batch) -> bool:
        """A data batch; True when it is aborted data (never a key's record, kept or not)."""
        pid = batch.producer_id
        if not self._txn.on_batch(batch.last_offset, batch.is_transactional, pid):
            return False
        if self.counting and batch.base_offset < self.upper:
            self.counted_batches += 1
            self.aborted_records += batch.records_count
            kept = RETAINED_EMPTY_BATCH_BYTES if self.last_data.get(pid) == batch.last_offset else 0
            self.aborted_bytes += max(batch.size - kept, 0)
        return True

    def control_batch(self, batch, control_key: bytes | None) -> bool:
        """A control batch, with its record's key (None for an empty batch); True when the clean removes it."""
        empty = batch.records_count == 0 or control_key is None
        discardable = self._txn.on_control(batch.last_offset, batch.producer_id, None if empty else control_key)
        horizon = batch.delete_horizon_ms
        if not (discardable and batch.base_offset < self.upper and horizon is not None and horizon <= self.now_ms):
            return False
        if self.counting:
            self.counted_batches += 1
            self.markers += batch.records_count
            self.marker_bytes += batch.size
        return True

"""One round of Kafka's cleaner over a partition's batches, a batch at a time: what ``Cleaner.cleanInto``'s
``RecordFilter`` and ``MemoryRecords.filterTo`` decide for each batch, each record's fate worked out
in numpy from the decoder's fixed-width arrays.

Per batch (Kafka 4.x, ``checkBatchRetention``, ``shouldRetainRecord``, ``filterTo``):

* ``canDiscardBatch`` from the round's transaction state (``txncleaner.CleanedTransactions``);
  a control batch's records go only when it may be discarded *and* its delete horizon has passed;
  a data batch's all go when it is aborted data;
* ``RETAIN_EMPTY`` (kept, as a bare 61-byte header when no record is left) for an active producer's
  last batch (``lastRecordsOfActiveProducers``: the batch holding its last data offset, or, when its
  last entry is a marker, a control batch of its epoch) and for the batch whose next offset is the
  round's upper bound; else ``DELETE`` when the records are discarded, else ``DELETE_EMPTY``;
* a data record is kept when past the map's latest offset, or keyed, the latest for its key and
  either a value or a tombstone whose batch has no horizon or a horizon still ahead;
* a kept batch that holds a kept tombstone or is a discardable marker and has no horizon yet is
  stamped: horizon = the clean's start + ``delete.retention.ms``; a batch losing no record and
  needing no stamp is written as it is.

A ``Flow`` is one batch as the rounds leave it (kept records, horizon, dropped or empty): round k+1
reads what round k wrote, so a flow passes through the rounds one after the other.
"""

from __future__ import annotations

from monitor.model import cleanarrays
from monitor.model.txncleaner import CleanedTransactions

class Later(int):
    """The horizon stamped by the settled clean number ``self`` (2, 3, ...): its value follows from that
    clean's time, known once pass 2 has seen every horizon of the log (``nextclean``)."""


class Unknown(Exception):
    """A fact the projection cannot know; the message names the file and byte position where one exists."""


class Unreadable(Unknown):
    """The files cannot be read as Kafka wrote them (a read fault, a horizon no clean could write):
    nothing of the partition is counted, its horizon states neither."""


class Flow:
    """One batch through the rounds: its original ``batch`` and arrays, and what the rounds left."""

    __slots__ = ("batch", "file_base", "cols", "control_key", "keep", "horizon", "gone", "empty", "changed", "records",
                 "section", "settled", "found")

    def __init__(self, batch, file_base: int, cols, control_key):
        self.batch = batch
        self.file_base = file_base
        self.cols = cols  # cleanarrays.Columns of a data batch, None for a control batch
        self.control_key = control_key
        self.keep = None  # mask over the records (cleanarrays' kind); None: every record kept
        self.horizon = batch.delete_horizon_ms  # int, None, or Later (a settled clean's stamp)
        self.gone = False
        self.empty = batch.records_count == 0  # a bare header (no record)
        self.changed = False  # the last round changed it
        self.records = None  # decoded once, when a kept batch is re-encoded and its arrays cannot size it
        self.section = None  # a compressed batch's records section, decompressed once when it is rewritten
        self.settled = False  # judged by a round mapping everything, no tombstone kept: a keyless map changes nothing
        self.found = {}  # offset map -> its map.get for each record, known from pass 1 (no lookup)


class Round:
    """One clean: its offset map, the offsets it cleans, its time and transaction state."""

    def __init__(self, *, ops, offset_map, latest_offset, cleaned_below, upper, time_ms, stamp, aborted, last_records):
        self.ops = ops  # cleanarrays.NumpyOps or PureOps
        self.map = offset_map  # None: no key of today's records in it
        self.latest_offset = latest_offset  # records past it are kept as they are (pastLatestOffset)
        self.cleaned_below = cleaned_below  # a batch is cleaned when its segment's base is below it (None: all)
        self.upper = upper  # the round's upper bound (RETAIN_EMPTY for the batch ending there); None: none
        self.time_ms = time_ms  # None: after every horizon
        self.stamp = stamp  # the horizon a stamp writes (int, or Later)
        self.txn = CleanedTransactions(aborted)
        self.last_records = last_records
        # what this round did (the next clean's figures)
        self.dropped = self.rewritten = self.stamped = self.removed_records = 0

    def _passed(self, horizon) -> bool:
        return horizon is not None and (self.time_ms is None or (not isinstance(horizon, Later)
                                                                 and horizon <= self.time_ms))

    def _last_of_producer(self, b) -> bool:
        last = self.last_records.get(b.producer_id)
        if last is None:
            return False
        last_data, epoch = last
        if last_data is not None:
            return b.last_offset == last_data
        return b.is_control and b.producer_epoch == epoch

    def clean(self, f: Flow) -> None:
        f.changed = False
        if f.gone or (self.cleaned_below is not None and f.file_base >= self.cleaned_below):
            return
        b = f.batch
        control = b.is_control
        if f.settled and self.map is None and not control and not b.is_transactional:
            # a later settled round (no key of today's records mapped) over a data batch an earlier round
            # judged with everything mapped and no tombstone kept: it keeps what it holds (``_records``),
            # no transaction of its own to enter (``CleanedTransactions`` catches up at the next batch it
            # is given): nothing to do, a batch and round at a time
            return
        if control:
            can_discard = self.txn.on_control(b.last_offset, b.producer_id, None if f.empty else f.control_key)
            discard = can_discard and self._passed(f.horizon)
        else:
            can_discard = discard = self.txn.on_batch(b.last_offset, b.is_transactional, b.producer_id)
        if b.producer_id >= 0 and self._last_of_producer(b):
            retain_empty = True
        else:
            retain_empty = self.upper is not None and b.last_offset + 1 == self.upper
        ops = self.ops
        before = 0 if f.empty else (b.records_count if f.keep is None else ops.count(f.keep))
        if discard and not retain_empty:  # BatchRetention.DELETE
            self._drop(f, before)
            return
        if f.empty or discard:
            keep = None if f.empty else ops.none_kept(b.records_count)
            tombstones = False
        elif control:
            keep, tombstones = f.keep, False
        else:
            keep, tombstones = self._records(f)
        left = 0 if f.empty else (b.records_count if keep is None else ops.count(keep))
        if left == 0:
            if not retain_empty:
                self._drop(f, before)
                return
            if b.magic < 2:
                raise Unknown(f"{b.file}: byte {b.position}: Kafka's cleaner would keep this magic-{b.magic} "
                              "message as an empty batch, which only magic 2 has (filterTo fails)")
            if not f.empty:
                f.keep, f.horizon, f.empty, f.changed = None, None, True, True  # writeEmptyHeader: no horizon
                self.rewritten += 1
                self.removed_records += before
            return
        stamp = b.magic >= 2 and (tombstones or (can_discard and control)) and f.horizon is None
        if stamp:
            f.horizon = self.stamp
            self.stamped += 1
        if stamp or left < before:
            f.changed = True
            self.rewritten += 1
            self.removed_records += before - left
        f.keep = keep

    def _drop(self, f: Flow, before: int) -> None:
        f.gone = f.changed = True
        self.dropped += 1
        self.removed_records += before

    def _records(self, f: Flow):
        """``shouldRetainRecord`` for every record still in a data batch: the kept mask (None: all),
        and whether a kept record is a tombstone."""
        b = f.batch
        legacy = b.magic < 2
        retain_deletes = False if legacy else (f.horizon is None or not self._passed(f.horizon))
        known = f.found.get(id(self.map)) if self.map is not None else None
        if known is not None:
            found = lambda _hashes: known  # noqa: E731
        else:
            found = self.map.latest if self.map is not None else (lambda hashes: [-1] * len(hashes))
        if f.settled and self.map is None:
            return f.keep, False
        keep, kept_tomb, judged = self.ops.decide(f.cols, f.keep, self.latest_offset, found, retain_deletes)
        f.settled = self.latest_offset == float("inf") and not kept_tomb
        if legacy and judged:
            raise Unknown(f"{b.file}: byte {b.position}: a magic-{b.magic} tombstone: Kafka removes it by the "
                          "cleaned segment's last-modified time (legacyDeleteHorizonMs), which a copy does not keep")
        return keep, kept_tomb

"""Per-partition compaction state, computed the way Kafka's LogCleanerManager does.

Inputs are segment summaries (``monitor.model.summary``), the cleaner's checkpoint
for the partition, the log start offset and the topic config; nothing here
touches the disk or the network, so the same function serves the collector,
the ``logdir`` command and the audit.

Kafka's rules (LogCleanerManager.cleanableOffsets / LogToClean / maxCompactionDelay):

* firstDirtyOffset = the checkpoint, or the log start offset when there is none
  or it lies outside [logStartOffset, logEndOffset].
* firstUncleanableDirtyOffset = max(firstDirty, min(active segment base,
  last stable offset if known, base of the first non-active segment from the
  one holding firstDirty whose largest timestamp > now - min.compaction.lag.ms
  when that lag is > 0)).
  The LSO is Kafka's when given, else folded from the transaction events of the dirty section
  (``monitor.model.transactions``): the first offset of the oldest open transaction.
* U = base offset of the segment holding firstUncleanable (the active one when
  it lies there); cleanableBytes = .log sizes of the segments from the one
  holding firstDirty up to, not including, U; cleanBytes = sizes of segments with
  base < firstDirty (a segment holding firstDirty mid-way counts in both).
  cleanableRatio = cleanableBytes / (cleanBytes + cleanableBytes).
* maxCompactionDelay: over non-active segments from the one holding firstDirty,
  E = min of first-batch timestamps > 0; cleanUntil = now - max.compaction.lag.ms;
  delay = cleanUntil - E when E < cleanUntil.
* eligible = (delay > 0 and cleanableBytes > 0) or ratio > min.cleanable.dirty.ratio.

Besides Kafka's view (``cleanable_*``), the state has what Kafka does not expose: ``uncleaned_*``,
every byte below the active segment not yet cleaned, whatever holds it back (min.compaction.lag.ms,
an open transaction), and tombstone counts. Field names are the exported metric names
(``kafka_compaction_partition_<field>``) where a field is exported.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import asdict, dataclass, field
from typing import Sequence

from monitor.kafka.checkpoint import entry_problem
from monitor.model.comparison import Comparison
from monitor.kafka.record.horizon import TIMESTAMP_AFTER_MAX_MS
from monitor.model import horizon as hz
from monitor.model.horizoncount import count_horizons
from monitor.model.summary import horizon_entries
from monitor.model.lsocheck import ADMIN as LSO_FROM_ADMIN, LOG as LSO_FROM_LOG
from monitor.model.summary import SegmentSummary, partition_faults
from monitor.model.topicconfig import LONG_MAX, NO_DECOMPRESSED_CAP, TopicConfig
from monitor.model.transactions import (DEFAULT_TRANSACTION_MAX_TIMEOUT_MS, OpenTransaction, describe, disagreement, hanging,
                                  open_transactions, open_transactions_after_snapshot)


# what holds the bytes the cleaner may not touch yet (PartitionState.not_yet_cleanable_split)
HELD_BY = ("active_segment", "min_compaction_lag", "last_stable_offset")
# Kafka's own test for picking a log by its ratio (LogCleanerManager.grabFilthiestCompactedLog: cleanableRatio >
# minCleanableRatio), applied for ``eligible``; the rule table states it to Prometheus (CompactionLagging)
CLEANABLE_RATIO_ABOVE_MIN = Comparison(">")
# Kafka 4.4's test of a record against max.decompressed.message.bytes (DefaultRecord.readFrom: sizeInBytes >
# maxDecompressedMessageBytes throws); the config review, the cause and the rule table (RecordOverDecompressedLimit)
DECOMPRESSED_OVER_LIMIT = Comparison(">")


def over_decompressed_limit(record_bytes: int, limit: int) -> bool:
    return DECOMPRESSED_OVER_LIMIT.holds(record_bytes, limit)


@dataclass(frozen=True, slots=True)
class PartitionState:
    topic: str
    partition: int
    log_start_offset: int
    log_end_offset: int
    checkpoint_offset: int | None  # the cleaner's checkpoint, as on disk
    first_dirty_offset: int
    first_uncleanable_offset: int
    uncleanable_reason: str  # active_segment | min_compaction_lag | last_stable_offset
    clean_bytes: int
    cleanable_bytes: int  # Kafka's cleanableBytes: from the first dirty offset to the first uncleanable one
    not_yet_cleanable_bytes: int  # the tail the cleaner may not touch yet (incl. the active segment): see HELD_BY
    uncleaned_bytes: int  # every byte below the active segment not yet cleaned, whatever holds it back
    uncleaned_ratio: float  # uncleaned_bytes / (clean_bytes + uncleaned_bytes)
    blocked_by: str | None  # min_compaction_lag | last_stable_offset when that holds back uncleaned bytes
    blocked_detail: str | None  # what holds them back, in words (the open transaction: producer, offset, age)
    last_stable_offset: int  # the given LSO, else the oldest open transaction's first offset, else the log end
    last_stable_offset_source: str  # admin: given (the admin API's, monitor.model.lsocheck); log: folded from the segments
    open_transactions: tuple[OpenTransaction, ...]  # from the segments' transaction events, by first offset
    hanging_transactions: int  # open longer than the broker's transaction.max.timeout.ms (KIP-664)
    log_bytes: int
    cleanable_ratio: float  # Kafka's cleanableRatio: cleanable_bytes / (clean_bytes + cleanable_bytes)
    min_cleanable_dirty_ratio: float
    cleanable_ratio_above_min: bool  # cleanable_ratio > min_cleanable_dirty_ratio (Kafka's test, for eligible)
    compaction_delay_ms: int  # > 0: max.compaction.lag.ms is overdue by this much
    needs_compaction_now: bool
    eligible: bool
    segments: int
    records: int
    tombstones: int
    tombstones_clean: int
    tombstones_dirty: int
    oldest_tombstone_timestamp: int | None
    oldest_tombstone_age_ms: int | None
    delete_retention_ms: int
    tombstones_past_retention: int  # older than delete.retention.ms, still on disk
    tombstones_past_delete_horizon: int  # their batch's delete horizon has passed, still on disk (state passed)
    faults: int
    # what monitor.verdicts.forecasts needs to say when the active segment rolls and when max.compaction.lag.ms is due
    active_segment_base_offset: int = 0
    active_segment_bytes: int = 0
    active_segment_first_timestamp: int = -1  # its first batch's max timestamp (LogSegment.rollingBasedTimestamp)
    first_dirty_timestamp: int | None = None  # Kafka's E: min first-batch timestamp of the dirty non-active segments
    # the newest largestTimestamp of the dirty non-active segments: a min.compaction.lag.ms at most now minus it
    # holds none of them back (LogCleanerManager.cleanableOffsets: segment.largestTimestamp > now - lag holds)
    dirty_largest_timestamp: int | None = None
    checkpoint_segment_base_offset: int = 0  # base of the segment holding the first dirty offset
    transaction_max_timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS  # what hanging_transactions was counted with
    # the producer-state snapshot the log's fold was checked against (None: none usable), and what went
    # wrong: a snapshot that cannot be read, or folds that disagree (counted in faults, never silent)
    transactions_checked_with: str | None = None
    transaction_faults: tuple[str, ...] = ()
    # KIP-534 (monitor.model.horizoncount): tombstones and COMMIT/ABORT markers per horizon state
    # {kind: {state: records}}, the tombstones' None while records are unread (headers first); the
    # earliest removal of one still ahead of its horizon (None: none or unknown); horizons no clean
    # could have written (file, byte position: counted in faults, their records in no state)
    delete_horizon_records: dict = field(default_factory=dict)
    next_delete_horizon_ms: int | None = None
    horizon_faults: tuple[str, ...] = ()
    pending_delete_horizon_ms: dict = field(default_factory=dict)  # kind -> its earliest pending horizon, or None
    horizon_rejected: dict = field(default_factory=dict)  # kind -> records under a rejected horizon (in no state)
    # Kafka 4.4's max.decompressed.message.bytes against the records the cleaner reads now or once what holds
    # them releases (every segment below the active one: Cleaner.doClean's cleanInto and buildOffsetMap never
    # read the active segment): the largest record of a compressed batch there (``SegmentSummary.max_decompressed_record_bytes``), and the topic's
    # setting. A record above it makes the clean throw InvalidRecordException and the partition uncleanable.
    # Both left out of ``as_dict`` at Kafka's default (no per-record cap: nothing to compare).
    max_decompressed_record_bytes: int = 0
    max_decompressed_message_bytes: int = NO_DECOMPRESSED_CAP

    @property
    def over_decompressed_limit(self) -> bool:
        """A record the cleaner reads is larger than max.decompressed.message.bytes: the next clean fails."""
        return over_decompressed_limit(self.max_decompressed_record_bytes, self.max_decompressed_message_bytes)

    @property
    def cleaner_limit_offset(self) -> int:
        """The offset the cleaner never passes, however old the records: the lower of the last stable
        offset and the active segment's base offset (LogCleanerManager.cleanableOffsets; the third bound,
        min.compaction.lag.ms, moves with time and is left to whoever compares record ages). A record at
        or past it cannot be compacted away now."""
        return min(self.last_stable_offset, self.active_segment_base_offset)

    def not_yet_cleanable_split(self) -> dict[str, int]:
        """``not_yet_cleanable_bytes`` by what holds them (``HELD_BY``): the active segment, which the cleaner
        never touches; the segments below it from the first uncleanable offset on, held by whichever of
        min.compaction.lag.ms and the last stable offset set that offset (the lower one: past it, both may
        hold). Every key is present (0 when it holds nothing), so the exported series stay put."""
        held = max(self.not_yet_cleanable_bytes - self.active_segment_bytes, 0)
        out = dict.fromkeys(HELD_BY, 0)
        out["active_segment"] = self.not_yet_cleanable_bytes - held
        out[self.uncleanable_reason] += held
        return out

    def active_segment_age_ms(self, now_ms: int) -> int | None:
        """How far the active segment is towards its time roll at ``now_ms``: now minus its first batch's
        max timestamp (LogSegment.rollingBasedTimestamp; at an append Kafka compares the appended batch's
        max timestamp, which is now for a producer's CreateTime). None when it is empty (nothing rolls it)."""
        if self.active_segment_bytes <= 0 or self.active_segment_first_timestamp < 0:
            return None
        return max(now_ms - self.active_segment_first_timestamp, 0)

    def oldest_tombstone_age_at(self, now_ms: int) -> int | None:
        """``oldest_tombstone_age_ms`` at ``now_ms``, from the instant the state keeps: one of the ``AS_OF_FOLD``
        figures, which a state reused past its fold (``collectors.logdirs.scanner``) holds as of the fold."""
        return None if self.oldest_tombstone_timestamp is None else max(now_ms - self.oldest_tombstone_timestamp, 0)

    def next_delete_horizon_at(self, now_ms: int) -> int | None:
        """``next_delete_horizon_ms`` at ``now_ms`` (``monitor.model.horizoncount.count_horizons``' rule): the
        earliest pending horizon, or for an unstamped tombstone or marker one delete.retention.ms after a clean
        starting now, whichever is first; unknown stays unknown. Exact while no pending horizon has passed (a
        state's ``valid_until_ms``); the other ``AS_OF_FOLD`` figure."""
        if self.next_delete_horizon_ms is None:
            return None
        ahead = [h for h in self.pending_delete_horizon_ms.values() if h is not None]
        if any(c and c.get(hz.UNSTAMPED) for c in self.delete_horizon_records.values()):
            ahead.append(hz.earliest_removal_ms(None, now_ms, self.delete_retention_ms))
        return min(ahead) if ahead else self.next_delete_horizon_ms

    def as_dict(self) -> dict:
        """The state as plain data (``logdir --format json``); each open transaction says whether it hangs."""
        d = asdict(self)
        if self.max_decompressed_message_bytes >= NO_DECOMPRESSED_CAP:
            del d["max_decompressed_record_bytes"], d["max_decompressed_message_bytes"]
        for t, row in zip(self.open_transactions, d["open_transactions"]):
            row["hanging"] = hanging(t, self.transaction_max_timeout_ms)
        return d


def _index_of_segment(bases: Sequence[int], offset: int) -> int:
    """Index of the segment that holds ``offset`` (the last with base <= offset), 0 if before all."""
    return max(bisect_right(bases, offset) - 1, 0)


def log_end_offset(segments: Sequence[SegmentSummary]) -> int:
    """The offset after the last batch (an empty active segment: its base offset)."""
    active = segments[-1]
    log_end = active.next_offset if active.next_offset is not None else active.base_offset
    for s in reversed(segments):  # an empty active segment: the end is the last batch before it
        if s.next_offset is not None:
            log_end = max(log_end, s.next_offset)
            break
    return log_end


def first_dirty_offset(checkpoint: int | None, log_start: int, log_end: int) -> int:
    """Kafka's firstDirtyOffset (LogCleanerManager.cleanableOffsets): the cleaner checkpoint, reset to
    the log start offset when there is none or it lies outside [log start, log end]."""
    if checkpoint is None or checkpoint < log_start or checkpoint > log_end:
        return log_start
    return checkpoint


def checkpoint_problems(partition: int, segments: Sequence[SegmentSummary], *, checkpoint: int | None = None,
                        log_start_offset: int | None = None) -> dict[str, str]:
    """Which of the partition's checkpoint entries cannot be right against its log
    (``monitor.kafka.checkpoint.entry_problem``): {"cleaner" | "log_start": reason}. A cleaner checkpoint
    below the log start offset is not one: Kafka resets it to the log start (retention moved the
    start past it, normal for compact,delete topics), and so does ``partition_state``."""
    log_end = log_end_offset(segments) if segments else None
    found = {}
    for which, offset in (("cleaner", checkpoint), ("log_start", log_start_offset)):
        why = None if offset is None else entry_problem(partition, offset, log_end)
        if why:
            found[which] = why
    return found


def partition_state(
    topic: str,
    partition: int,
    segments: Sequence[SegmentSummary],
    config: TopicConfig,
    now_ms: int,
    *,
    checkpoint: int | None = None,
    log_start_offset: int | None = None,
    last_stable_offset: int | None = None,
    transaction_max_timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
    producer_snapshot=None,
    producer_snapshot_error: str | None = None,
) -> PartitionState:
    """The partition's compaction state at ``now_ms``; ``last_stable_offset`` when Kafka gave it (the
    admin API's, when ``monitor.model.lsocheck.check_lso`` chose it), else the LSO is folded from the open
    transactions in the segments. ``producer_snapshot``: the partition's latest
    ``monitor.kafka.producer_snapshot.ProducerSnapshot``, to check that fold against; ``producer_snapshot_error``:
    why it could not be read."""
    lso_source = LSO_FROM_LOG if last_stable_offset is None else LSO_FROM_ADMIN
    if not segments:
        raise ValueError(f"{topic}-{partition}: no segments")
    bases = [s.base_offset for s in segments]
    active = segments[-1]
    log_start = bases[0] if log_start_offset is None else max(log_start_offset, bases[0])
    log_end = log_end_offset(segments)

    first_dirty = first_dirty_offset(checkpoint, log_start, log_end)
    dirty_idx = _index_of_segment(bases, first_dirty)

    # The LSO never decreases and the cleaner never passes it, so a transaction open now starts at or
    # after the first dirty offset: the fold reads the dirty section only (what lies before it, such
    # as a batch the cleaner emptied but kept for its producer, cannot open one).
    # A segment summarised from its indexes (headers_pending) lies below the producer snapshot and below any
    # transaction it says is ongoing (collectors.logdirs.read.index_first_count): none open now starts there,
    # and its batches read so far (the record pass under way) would show runs whose markers are not read yet.
    txns = open_transactions((e for s in segments[dirty_idx:] if not s.headers_pending for e in s.txn_events()
                              if e.first_offset >= first_dirty), now_ms)
    checked_with, txn_faults = _check_with_snapshot(segments, txns, producer_snapshot, first_dirty, log_end, now_ms)
    if producer_snapshot_error:
        txn_faults = (producer_snapshot_error, *txn_faults)
    if last_stable_offset is None and txns:
        last_stable_offset = txns[0].first_offset
    lso = log_end if last_stable_offset is None else last_stable_offset

    # firstUncleanableDirtyOffset
    candidates = [(active.base_offset, "active_segment")]
    if last_stable_offset is not None:
        candidates.append((last_stable_offset, "last_stable_offset"))
    if config.min_compaction_lag_ms > 0:
        horizon = now_ms - config.min_compaction_lag_ms
        for s in segments[dirty_idx:-1]:
            if s.largest_timestamp() > horizon:
                candidates.append((s.base_offset, "min_compaction_lag"))
                break
    fu, reason = min(candidates)
    first_uncleanable = max(first_dirty, fu)

    # cleanable / clean bytes, segment aligned
    u_idx = _index_of_segment(bases, first_uncleanable)
    upper = bases[u_idx]
    lo_idx = _index_of_segment(bases, min(first_dirty, upper))
    cleanable_bytes = sum(s.size for s in segments[lo_idx:u_idx])
    clean_bytes = sum(s.size for s in segments if s.base_offset < first_dirty)
    log_bytes = sum(s.size for s in segments)
    total = clean_bytes + cleanable_bytes
    ratio = cleanable_bytes / total if total else 0.0

    # uncleaned: what would be cleanable if nothing but the active segment held the cleaner back
    last_idx = len(segments) - 1
    uncleaned = sum(s.size for s in segments[lo_idx:last_idx]) if segments[lo_idx] is not active else 0
    total_all = clean_bytes + uncleaned
    uncleaned_ratio = uncleaned / total_all if total_all else 0.0
    blocked_by = reason if reason != "active_segment" and uncleaned > cleanable_bytes else None
    detail = None
    if blocked_by == "last_stable_offset":
        held = [t for t in txns if t.first_offset == lso]
        detail = describe(held[0]) if held else f"last stable offset {lso}"
    elif blocked_by == "min_compaction_lag":
        detail = f"min.compaction.lag.ms {config.min_compaction_lag_ms} from offset {fu}"

    # max.compaction.lag.ms
    delay = 0
    firsts = [s.first_batch_max_timestamp for s in segments[dirty_idx:-1] if s.first_batch_max_timestamp > 0]
    earliest = min(firsts) if firsts else None
    if config.max_compaction_lag_ms < LONG_MAX:
        if earliest is not None:
            clean_until = now_ms - max(config.max_compaction_lag_ms, 0)
            if earliest < clean_until:
                delay = clean_until - earliest
    needs_now = delay > 0
    above = CLEANABLE_RATIO_ABOVE_MIN.holds(ratio, config.min_cleanable_dirty_ratio)  # Kafka's test
    eligible = (needs_now and cleanable_bytes > 0) or above

    # tombstones
    horizons = count_horizons(segments, now_ms, config.delete_retention_ms)
    t_total = t_clean = past_ret = 0
    oldest = None
    for s in segments:
        offs, tss = s.tombstone_offsets, s.tombstone_timestamps
        n = len(offs)
        if not n:
            continue
        t_total += n
        if s.base_offset < first_dirty:
            t_clean += sum(1 for o in offs if o < first_dirty) if (s.next_offset or 0) > first_dirty else n
        m = min(tss)
        if oldest is None or m < oldest:
            oldest = m
        cutoff = now_ms - config.delete_retention_ms
        past_ret += sum(1 for t in tss if 0 <= t < cutoff)

    return PartitionState(
        topic=topic, partition=partition, log_start_offset=log_start, log_end_offset=log_end,
        checkpoint_offset=checkpoint, first_dirty_offset=first_dirty, first_uncleanable_offset=first_uncleanable,
        uncleanable_reason=reason, clean_bytes=clean_bytes, cleanable_bytes=cleanable_bytes,
        not_yet_cleanable_bytes=sum(s.size for s in segments[u_idx:]), log_bytes=log_bytes,
        uncleaned_bytes=uncleaned, uncleaned_ratio=uncleaned_ratio, blocked_by=blocked_by,
        blocked_detail=detail, last_stable_offset=lso, last_stable_offset_source=lso_source, open_transactions=txns,
        hanging_transactions=sum(1 for t in txns if hanging(t, transaction_max_timeout_ms)),
        cleanable_ratio=ratio, min_cleanable_dirty_ratio=config.min_cleanable_dirty_ratio,
        cleanable_ratio_above_min=above, compaction_delay_ms=delay, needs_compaction_now=needs_now, eligible=eligible,
        segments=len(segments), records=sum(s.records for s in segments),
        tombstones=t_total, tombstones_clean=t_clean, tombstones_dirty=t_total - t_clean,
        oldest_tombstone_timestamp=oldest,
        oldest_tombstone_age_ms=None if oldest is None else max(now_ms - oldest, 0),
        delete_retention_ms=config.delete_retention_ms,
        tombstones_past_retention=past_ret, tombstones_past_delete_horizon=horizons.passed("tombstone"),
        faults=len(partition_faults(segments)) + len(txn_faults) + len(horizons.faults),
        active_segment_base_offset=active.base_offset, active_segment_bytes=active.size,
        active_segment_first_timestamp=active.first_batch_max_timestamp, first_dirty_timestamp=earliest,
        dirty_largest_timestamp=max((s.largest_timestamp() for s in segments[dirty_idx:-1]), default=None),
        checkpoint_segment_base_offset=bases[dirty_idx],
        transaction_max_timeout_ms=transaction_max_timeout_ms, transactions_checked_with=checked_with,
        transaction_faults=txn_faults, delete_horizon_records=horizons.records,
        next_delete_horizon_ms=horizons.next_removal_ms, horizon_faults=horizons.faults,
        pending_delete_horizon_ms=horizons.earliest_pending, horizon_rejected=horizons.rejected,
        max_decompressed_record_bytes=max((s.max_decompressed_record_bytes for s in segments[:-1]), default=0),
        max_decompressed_message_bytes=config.max_decompressed_message_bytes,
    )


def _check_with_snapshot(segments, txns, snapshot, first_dirty: int, log_end: int, now_ms: int):
    """(snapshot path or None, faults): the open transactions folded from the snapshot and the log's
    events after it, against ``txns`` from the dirty section. Usable only when the snapshot's offset lies
    in the dirty section (below it, the cleaner may have removed markers the snapshot's transactions
    were closed by; past the log end, it is from a later listing than the segments)."""
    if snapshot is None or not first_dirty <= snapshot.offset <= log_end:
        return None, ()
    events = (e for s in segments if (s.next_offset or 0) > snapshot.offset for e in s.txn_events())
    differs = disagreement(txns, open_transactions_after_snapshot(snapshot.ongoing(), snapshot.offset, events, now_ms))
    return snapshot.path, (() if differs is None else (f"{snapshot.path}: {differs}",))


# The figures of a PartitionState that move with the clock at every instant, not at a threshold: a state kept past
# its fold (collectors.logdirs.scanner reuses an unchanged partition's report) holds them as of the fold, and who
# shows them computes them at its own instant from what the state keeps (the methods named here). Every other
# figure is exact until ``valid_until_ms``.
AS_OF_FOLD = {"oldest_tombstone_age_ms": PartitionState.oldest_tombstone_age_at,
              "next_delete_horizon_ms": PartitionState.next_delete_horizon_at}


def valid_until_ms(state: PartitionState, segments: Sequence[SegmentSummary], config: TopicConfig, now_ms: int) -> int:
    """The first instant after ``now_ms`` at which ``partition_state`` over the same segments and inputs may give
    another state than ``state`` (folded at ``now_ms``), but for the ``AS_OF_FOLD`` figures. Each clause is one use
    of ``now_ms`` in ``partition_state`` and what it feeds; a figure that moves at every instant and is not in
    ``AS_OF_FOLD`` makes it ``now_ms + 1`` (the state is folded again at the next refresh):

    * open transactions (their ages; hanging past transaction.max.timeout.ms) or transaction faults (the
      snapshot's fold, aged at now): every instant;
    * max.compaction.lag.ms overdue (``compaction_delay_ms`` grows): every instant; not yet: the first instant it is
      (earliest first-batch timestamp + lag + 1);
    * min.compaction.lag.ms: a dirty rolled segment held while its largest timestamp > now - lag, released at
      largest timestamp + lag;
    * tombstones past delete.retention.ms: one at timestamp t counts from t + delete.retention.ms + 1;
    * delete horizons (KIP-534): a pending one passes at its horizon h; one rejected as later than a clean starting
      now could set is no longer at h - delete.retention.ms - the skew Kafka accepts, and while it is, its fault
      names now: every instant (a fault, rare)."""
    if state.open_transactions or state.transaction_faults or state.horizon_faults or state.compaction_delay_ms > 0:
        return now_ms + 1
    at: list[int] = []
    bases = [s.base_offset for s in segments]
    dirty = segments[_index_of_segment(bases, state.first_dirty_offset):-1]
    if config.min_compaction_lag_ms > 0:
        at += [s.largest_timestamp() + config.min_compaction_lag_ms for s in dirty]
    if config.max_compaction_lag_ms < LONG_MAX and state.first_dirty_timestamp is not None:
        at.append(state.first_dirty_timestamp + max(config.max_compaction_lag_ms, 0) + 1)
    retention = config.delete_retention_ms
    for s in segments:
        at += [t + retention + 1 for t in s.tombstone_timestamps if t >= 0]
        stamped = [h for h, _, _, _ in horizon_entries(s)] + [h for h in s.tombstone_horizons if h >= 0]
        at += stamped
        at += [h - max(retention, 0) - TIMESTAMP_AFTER_MAX_MS for h in stamped]
    return min((t for t in at if t > now_ms), default=LONG_MAX)

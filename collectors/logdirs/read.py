"""One partition's read: its segments summarised (``monitor.model.summary``: a segment unchanged since the
last refresh, by size, mtime and inode, is not read again; a growing active segment is read only from
where it stopped), its latest producer snapshot, its state (``monitor.model.compaction.partition_state``)
with the LSO checked against the leader's (``monitor.model.lsocheck``) and its ``.txnindex`` against the
log; and a ``__consumer_offsets`` replica's groups with live committed offsets
(``monitor.kafka.offsetgroups``). ``PartitionReader`` keeps what it read, by path, between refreshes; a read
that finds a file moved under it raises ``SegmentsMoved`` for the caller to list the partition again
(``collectors.logdirs.churn``).

Headers first (issue 31): with ``headers_first`` a partition's segments are read by their batch headers
only (``monitor.model.summary.scan_headers``: every figure the compaction state needs), and their records
later, segment by segment, by ``detail`` (tombstones, keyless and empty values), charged to the I/O
budget (``monitor.fileio.iobudget``); without it (``collect --once``, ``logdir``) each segment is read whole
at once, as the goldens show.

Index first (issue 43, with headers first): a rolled segment wholly below the latest producer snapshot's
offset, and below any transaction that snapshot says is ongoing, is summarised from Kafka's own files
(``monitor.model.summary.from_indexes``: its ``.index`` and ``.timeindex`` ends and two headers), not by a
header per batch; its per-batch figures (delete horizons' markers, aborts against the ``.txnindex``) are
pending until the record pass reads it whole. The LSO needs none of them: a transaction open now started
at or after the snapshot's offset, or at an ongoing one's first offset the snapshot names, and the
segments from there on keep the header pass, as the active segment does. A segment whose index cannot be
trusted (``monitor.kafka.segindex.IndexUntrusted``) is read by its headers, said once (``notify``) and
counted (``index_untrusted``).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Callable

from collectors.logdirs.churn import RELISTS, SNAPSHOT_SETTLE_SECONDS, Relister, SegmentsMoved, check_listing, moved
from monitor.model.compaction import checkpoint_problems, partition_state
from monitor.kafka.kafkanames import offset_prefix
from monitor.kafka.logdir import PartitionDir
from monitor.model.lsocheck import ADMIN, LeaderLso, check_lso
from monitor.kafka.offsetgroups import SegmentCommits, live_groups, read_segment
from monitor.kafka.producer_snapshot import ProducerSnapshot, ProducerSnapshotError, read_producer_snapshot
from monitor.fileio.regularfile import os_reason
from monitor.fileio.iobudget import IoBudget
from monitor.model.activekeys import ActiveKeys
from monitor.kafka.segindex import IndexUntrusted
from monitor.model.summary import (SegmentSummary, from_indexes, partition_faults, read_detail, scan_headers,
                                   summarize)
from monitor.model.txnindex import txn_index_faults

# (topic, partition) -> the leader's LSO from the admin source, None when it has none
LeaderLsoLookup = Callable[[str, int], "LeaderLso | None"]


def no_leader_lso(topic: str, partition: int) -> None:
    return None


def index_first_count(bases: list[int], snapshot) -> int:
    """How many leading segments (base offsets ``bases``, the last one active) may be summarised from their
    indexes: those wholly below the producer snapshot's offset and below the first offset of every
    transaction it says is ongoing (``monitor.kafka.producer_snapshot``), so that the header pass still
    reads every batch an open transaction's fold needs. 0 without a readable snapshot."""
    if snapshot is None or isinstance(snapshot, str):
        return 0
    bound = min([snapshot.offset, *(e.current_txn_first_offset for e in snapshot.ongoing())])
    n = 0
    while n < len(bases) - 1 and bases[n + 1] <= bound:
        n += 1
    return n


class PartitionReader:
    """Reads partitions of one broker's log dirs, keeping by path what it read (segment summaries,
    producer snapshots, ``__consumer_offsets`` segments' commits) so that the next refresh reads only what
    changed; ``reads`` and ``bytes`` count segment reads and bytes read since start. ``leader_lso`` and
    ``broker_id``: the LSO check's other side; ``churn``: where a moved partition is listed again."""

    def __init__(self, churn: Relister, leader_lso: LeaderLsoLookup = no_leader_lso, broker_id: str | None = None,
                 headers_first: bool = False, budget: IoBudget | None = None,
                 notify: Callable[[str], None] = lambda line: None):
        self.headers_first = headers_first
        self.budget = budget if budget is not None else IoBudget(None)  # unlimited: bytes counted only
        self.header_bytes = 0  # bytes read by the header pass and by record-level reads, since start
        self.detail_bytes = 0
        self.churn = churn
        self.leader_lso = leader_lso
        self.broker_id = broker_id
        self._cache: dict[str, SegmentSummary] = {}
        # partition folders read whole once (headers first): their new segments (a roll, the cleaner's swap)
        # are read whole at once, as before, so a partition once whole never turns pending again
        self._read_whole: set[str] = set()
        self._commits: dict[str, SegmentCommits] = {}  # __consumer_offsets segments' offset commit keys, by path
        self._snapshots: dict[str, tuple] = {}  # path -> ((size, mtime, inode), ProducerSnapshot or error text)
        self.reads = 0  # segment reads and bytes read since start, for the snapshot's counters
        self.bytes = 0
        self.changed = False  # what it holds changed since the last ``kept()`` (collectors.logdirs.summary_state)
        self.restored_keys: dict[str, ActiveKeys] = {}  # from the cache, not yet taken by a tally
        self.notify = notify  # where an index not trusted is said, once for its file
        self.untrusted: dict[str, str] = {}  # segment path -> why its index is not used (read by headers)

    def restore(self, entries) -> None:
        """Summaries and commits a restart trusts (``collectors.logdirs.summary_state``: files unchanged since, or
        grown); active segments' keys (``ActiveKeys``) are left in ``restored_keys``, by path, for the
        scanner's first tally of each."""
        for e in entries:
            if isinstance(e, ActiveKeys):
                self.restored_keys[e.path] = e
            else:
                (self._commits if isinstance(e, SegmentCommits) else self._cache)[e.path] = e

    def kept(self) -> list:
        """What it holds that a restart can trust, for the state cache; clears ``changed``. (Producer
        snapshots are not kept: one small file per partition, read again in full with its CRC.)"""
        self.changed = False
        return [*self._cache.values(), *self._commits.values()]

    def forget(self, seen_paths: set) -> None:
        """Forget the segments and snapshots not read this refresh (gone, or their partition not read)."""
        for cache in (self._cache, self._snapshots, self._commits):
            for path in list(cache):
                if path not in seen_paths:
                    del cache[path]
                    self.changed = True
        for path in [p for p in self.untrusted if p not in seen_paths]:
            del self.untrusted[path]
        self._read_whole &= {os.path.dirname(p) for p in seen_paths}

    def paths_under(self, folder) -> list[str]:
        """The files of one partition folder it keeps (a partition held: kept for the next refresh)."""
        folder = str(folder)
        return [p for cache in (self._cache, self._snapshots, self._commits) for p in cache
                if os.path.dirname(p) == folder]

    def read(self, part: PartitionDir, cfg, now_ms: int, checkpoint, log_start, txn_timeout,
             checkpoint_now: Callable[[], "int | None"] | None = None):
        """(summaries, (snapshot path, snapshot) or None, state, LSO check, read faults, checkpoint
        problems) of one listing. Raises ``SegmentsMoved`` when a file of the listing is gone or is no
        longer the file listed; the faults and checkpoint problems it finds are checked against a new
        listing first (a segment swapped while we read looks truncated or short of offsets), and against
        the cleaner's checkpoint entry read again (``checkpoint_now``): read once per log dir before its
        partitions, it may predate a clean whose swap the segments show (Kafka writes it after the swap)."""
        try:
            whole = str(part.path) in self._read_whole
            early = self.headers_first and not whole  # the snapshot first: it tells which segments its indexes may give
            snapshot = self.latest_snapshot(part) if early else None
            n = index_first_count([seg.base_offset for seg in part.segments], snapshot[1]) if snapshot else 0
            summaries = [self.summary(seg, whole, i < n) for i, seg in enumerate(part.segments)]
            if not early:
                snapshot = self.latest_snapshot(part)
        except FileNotFoundError as exc:
            raise SegmentsMoved(f"{exc.filename or exc}: gone while read") from exc
        for seg, s in zip(part.segments, summaries):
            why = moved(seg, s, seg is part.segments[-1])
            if why:
                raise SegmentsMoved(why)
        bad = checkpoint_problems(part.partition, summaries, checkpoint=checkpoint, log_start_offset=log_start)
        snap = snapshot[1] if snapshot is not None else None
        args = dict(checkpoint=checkpoint, log_start_offset=log_start, transaction_max_timeout_ms=txn_timeout.value,
                    producer_snapshot=snap if isinstance(snap, ProducerSnapshot) else None,
                    producer_snapshot_error=snap if isinstance(snap, str) else None)
        state = partition_state(part.topic, part.partition, summaries, cfg, now_ms, **args)
        # a horizon no clean wrote is a fault of that batch's stamp, not of the offsets the LSO is folded from
        check = check_lso(state.last_stable_offset, state.log_end_offset, state.faults - len(state.horizon_faults),
                          self.leader_lso(part.topic, part.partition), self.broker_id)
        if check.source == ADMIN:
            state = partition_state(part.topic, part.partition, summaries, cfg, now_ms,
                                    last_stable_offset=check.value, **args)
        faults = partition_faults(summaries) + [*state.transaction_faults, *state.horizon_faults]
        indexes: dict = {}  # .txnindex path -> inode read (None: none), checked with the listing below
        # aborts are per-batch figures: checked against the .txnindex once no segment is summarised from its indexes
        txn_faults = ([] if any(s.headers_pending for s in summaries)
                      else txn_index_faults(summaries, state.first_dirty_offset, indexes,
                                           {x.base_offset for x in part.segments if x.has_txnindex}))
        if txn_faults:  # a .txnindex that is malformed or disagrees with the log: a read fault
            faults += txn_faults
            state = replace(state, faults=state.faults + len(txn_faults))
        if (faults or bad) and checkpoint_now is not None:
            now = checkpoint_now()
            if now != checkpoint:
                raise SegmentsMoved(f"{part.path}: the cleaner's checkpoint moved from {checkpoint} to {now} while "
                                    f"it was read")
        if faults or bad or isinstance(snap, str):
            read_as = None
            if isinstance(snap, str):  # perhaps one the broker is writing: see SNAPSHOT_SETTLE_SECONDS
                time.sleep(SNAPSHOT_SETTLE_SECONDS)
                read_as = (snapshot[0], self._snapshots.get(snapshot[0], (None,))[0])
            check_listing(part, summaries, read_as, indexes)
        return summaries, snapshot, state, check, faults, bad

    def offsets_groups(self, part: PartitionDir, seen_paths: set) -> tuple[PartitionDir, tuple[int, frozenset] | None]:
        """(the listing read, (log end offset, groups with live committed offsets)) of a
        ``__consumer_offsets`` replica, each segment read only for what it gained since the last refresh
        (``monitor.kafka.offsetgroups``). A segment that vanished while we read (the cleaner's swap) makes the
        partition be listed again, as for the compaction figures (``RELISTS``); the groups are None when
        it still does after that, or cannot be read."""
        for attempt in range(RELISTS + 1):
            commits = []
            try:
                if attempt:
                    part = self.churn.relist(part)
                for seg in part.segments:
                    c, read = read_segment(seg.path, self._commits.get(seg.path))
                    self._commits[c.path] = c
                    commits.append(c)
                    if read:
                        self.bytes += read
                        self.changed = True
                        self.detail_bytes += read
                        self.budget.take(read)
                break
            except FileNotFoundError:
                continue
            except OSError:
                return part, None
        else:
            return part, None
        seen_paths.update(c.path for c in commits)
        return part, (max((c.next_offset for c in commits), default=-1), live_groups(commits))

    def latest_snapshot(self, part) -> tuple[str, ProducerSnapshot | str] | None:
        """(path, the partition's latest producer-state snapshot or why it cannot be read), read again only
        when the file changed; None when there is none. FileNotFoundError when the broker deleted it
        while we listed (the partition is listed again)."""
        if not part.snapshots:
            return None
        path = os.path.join(str(part.path), f"{offset_prefix(part.snapshots[-1])}.snapshot")  # (no Path made)
        try:
            st = os.stat(path)
            key = (st.st_size, st.st_mtime_ns, st.st_ino)
            cached = self._snapshots.get(path)
            if cached is None or cached[0] != key:
                try:
                    cached = (key, read_producer_snapshot(path))
                except ProducerSnapshotError as exc:
                    cached = (key, str(exc))
                self._snapshots[path] = cached
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise  # deleted since the listing: the caller lists the partition again
            return path, f"{path}: {os_reason(exc)}"
        return path, cached[1]

    def summary(self, seg, whole: bool = False, index_ok: bool = False) -> SegmentSummary:
        """One segment's summary: headers first (``headers_first``) until its partition has been read whole
        (``whole``); then, or without headers first, read whole (new bytes only when it grew). ``index_ok``
        (headers first): a new file (not one read before: its summary is read on) summarised from its indexes
        (``from_indexes``), or by its headers when they cannot be trusted."""
        log = seg.path  # one string: the listing's, the summary's path and its key here (monitor.model.summary._named)
        previous = self._cache.get(log)
        if (previous is not None and (previous.inode, previous.size, previous.mtime_ns) == (seg.ino, seg.size,
                                                                                           seg.mtime_ns)
                and (self.headers_first and not whole or previous.detail_done)):
            # the file as this refresh's listing stat'ed it is the one summarised: what every read below would
            # return after a stat of its own (a restart's every segment, an unchanged one at each refresh)
            if previous.path is not log:  # (a restart's, decoded from the cache): the listing's string and ints
                # held from now on, not equal copies beside them (~0.2 KB a segment), its key too
                del self._cache[log]
                previous.path, previous.size, previous.mtime_ns, previous.inode = log, seg.size, seg.mtime_ns, seg.ino
                self._cache[log] = previous
            return previous
        s = None
        if self.headers_first and not whole and index_ok and (
                previous is None or previous.headers_pending or previous.inode != seg.ino):
            try:
                s, read = from_indexes(log, seg.base_offset, previous)  # None: its headers cost less
                self.untrusted.pop(log, None)
                self.budget.charge(read)
                self.header_bytes += read
            except IndexUntrusted as exc:
                if self.untrusted.get(log) != exc.code:
                    self.notify(str(exc))
                self.untrusted[log] = exc.code
        if s is None and self.headers_first and not whole:
            s, read = scan_headers(log, seg.base_offset, previous)
            self.budget.charge(read)  # never waits: the first page is not held up (monitor.fileio.iobudget)
            self.header_bytes += read
        elif s is None:
            s, read = summarize(log, seg.base_offset, previous, self.budget.take)
            self.detail_bytes += read
        if read:
            self.reads += 1
            self.bytes += read
            self.changed = True
        if s is not previous:  # a key kept from an earlier summary would be a second string
            self._cache.pop(log, None)
        self._cache[s.path] = s
        return s

    def detail(self, path: str, stop=None, take: Callable[[int], None] | None = None) -> bool:
        """Read on the records of one segment the header pass read (``monitor.model.summary.read_detail``),
        at the budget's pace, until done or ``stop()``; True when its record-level figures are whole (or
        it is no longer known here: gone, or read again by the next header pass). ``take``: how each batch
        is charged (default ``budget.take``, which waits; the record reader's thread charges and stops
        instead, so that it never sleeps holding the scanner's lock: ``collectors.logdirs.detail``)."""
        s = self._cache.get(path)
        if s is None or s.detail_done:
            return True
        s, read = read_detail(s, take or self.budget.take, stop)
        self._cache[path] = s
        if read:
            self.bytes += read
            self.detail_bytes += read
            self.changed = True
        return s.detail_done

    def mark_whole(self, part: PartitionDir, summaries) -> bool:
        """True when every segment of the partition has been read whole; from then on its segments are
        read whole as they come (``summary``)."""
        if all(s.detail_done for s in summaries):
            self._read_whole.add(str(part.path))
            return True
        return False

    def pending_bytes(self) -> int:
        """Bytes of the segments known here whose records are still to be read."""
        return sum(s.detail_pending_bytes for s in self._cache.values())

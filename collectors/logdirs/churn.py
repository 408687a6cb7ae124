"""A partition read while the cleaner or retention rewrites it (churn, not a fault). Kafka's swap of a
clean (``LocalLog.replaceSegments``) and a retention delete rename and delete segment files between a
partition's listing and its read; a producer snapshot is written in place at each roll. A read that
finds a file moved, replaced or short makes the partition be listed and read again within the
refresh (``Relister.settled``: ``RELISTS`` times at most, each counted in ``relists``); only a
partition still changing after that is unknown for this refresh, with the reason
(``collectors.logdirs.snapshot.CHANGING``).

A listing can also race a swap without finding a ``.swap``: a directory is listed entry by entry, not at
one instant, so a listing may pass ``X.log``'s place after the cleaner renamed it ``.deleted`` and
``X.log.swap``'s after it renamed that ``X.log``, and hold neither. Read as it is, the partition would
lack a segment's offsets and bytes. ``listing_gap`` tells such a listing against the partition's last
settled one; it is listed once more (counted), and one still inconsistent keeps the last refresh's
figures, marked held (``PartitionReport.held``), rather than report a partition the broker does not have.
The same gap at the next refresh is no race (a swap's renames take microseconds, not an interval): it is
read as it is, so a state the broker leaves in place for longer, whatever made it, is never held for more
than one refresh.
"""

from __future__ import annotations

import os
import time
from array import array
from dataclasses import dataclass
from typing import Callable

from monitor.kafka.logdir import PartitionDir, Segment, scan_partition
from monitor.model.summary import SegmentSummary

# listing almost always finds it settled. Three more listings that each change under the read mean the
# partition is being rewritten faster than it can be read; it is then unknown for this refresh, with
# the reason, rather than read again without end (the refresh of every other partition waits on it).
RELISTS = 3
# A swap in progress is waited for before the next listing, 10, 20 then 40 ms (70 ms at most): the
# cleaner thread that is swapping renames a few files per segment, and may be descheduled or waiting on
# the disk in between. Only as many partitions as the broker has cleaner threads are mid-swap at once,
# so a refresh waits for this at most log.cleaner.threads times.
SWAP_WAIT_SECONDS = 0.01

# Kafka writes a producer snapshot in place at each roll (ProducerStateManager.writeSnapshot: the file
# created, then written), so a read can find it empty or short. A snapshot that does not read is looked
# at again after this pause: grown meanwhile, it was being written (the partition is listed again);
# unchanged, its fault is real. Paid only when a snapshot does not read.
SNAPSHOT_SETTLE_SECONDS = 0.05


class SegmentsMoved(Exception):
    """A file of a partition's listing was deleted, renamed or replaced before it was read."""


def moved(seg: Segment, s: SegmentSummary, active: bool) -> str | None:
    """Why the summary read is not of the segment listed (the cleaner swapped it, retention deleted and
    the broker re-created it), or None. Only the active segment may change: it may only grow."""
    if active and s.size >= seg.size or (s.size, s.mtime_ns) == (seg.size, seg.mtime_ns):
        return None
    return (f"{seg.log}: listed with {seg.size} bytes (mtime {seg.mtime_ns} ns), read with {s.size} bytes "
            f"(mtime {s.mtime_ns} ns)")


def check_listing(part: PartitionDir, summaries, snapshot: tuple[str, tuple] | None = None,
                  indexes: dict | None = None) -> None:
    """Raise ``SegmentsMoved`` when the partition folder no longer holds the files read: its segments
    (base offsets; the sizes and mtimes of all but the active one, which may grow; the files
    themselves, by inode), the producer snapshot read ((path, (size, mtime, inode)) as read) and the
    ``.txnindex`` files read (path -> inode, None for none: ``monitor.model.txnindex.read_txn_index``).
    Used where a read found something wrong, which a swap under the read also shows: Kafka renames a
    segment's ``.log`` before its ``.txnindex`` (LogSegment.changeFileSuffixes), so a read between the
    two pairs the cleaned log with no index (its ``.txnindex.swap`` not yet renamed)."""
    if snapshot is not None:
        try:
            st = os.stat(snapshot[0])
            if (st.st_size, st.st_mtime_ns, st.st_ino) != snapshot[1]:
                raise SegmentsMoved(f"{snapshot[0]}: written or replaced while read")
        except FileNotFoundError as exc:
            raise SegmentsMoved(f"{snapshot[0]}: gone while read") from exc
    now = scan_partition(part.path)
    was = [(x.base_offset, x.size, x.mtime_ns) for x in part.segments]
    is_ = [(x.base_offset, x.size, x.mtime_ns) for x in now.segments[:len(was)]]
    gone = part.snapshots[-1:] and part.snapshots[-1] not in now.snapshots  # the one read (a roll adds others)
    if was[:-1] != is_[:-1] or [w[0] for w in was[-1:]] != [i[0] for i in is_[-1:]] or gone:
        raise SegmentsMoved(f"{part.path}: its files changed while read")
    for path, inode in (indexes or {}).items():
        try:
            now_inode = os.stat(path).st_ino
        except FileNotFoundError:
            now_inode = None
        if now_inode != inode or inode is None and os.path.exists(path + ".swap"):
            raise SegmentsMoved(f"{path}: replaced while read")
    for s in summaries:
        try:
            if os.stat(s.path).st_ino != s.inode:
                raise SegmentsMoved(f"{s.path}: replaced while read")
        except FileNotFoundError as exc:
            raise SegmentsMoved(f"{s.path}: gone while read") from exc


# a partition's settled listing, what a later listing is told against: its segments' (base offset, size, mtime) of
# their .log, flat in one array (kept per partition between refreshes: 160 B for four segments, not a dict of
# tuples and their ints, ~750 B; issue 43), read as a dict only where a listing differs (``_as_dict``)
Listed = array


def listed(part: PartitionDir) -> Listed:
    return array("q", [x for s in part.segments for x in (s.base_offset, s.size, s.mtime_ns)])


def _as_dict(flat: Listed) -> dict[int, tuple[int, int]]:
    """base offset -> (size, mtime) of a ``listed`` array."""
    return {flat[i]: (flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3)}


@dataclass(frozen=True)
class Gap:
    """Why a listing cannot be the partition as the broker holds it (``listing_gap``). ``definite``: no
    state Kafka leaves a folder in at rest shows it; else (a first segment gone) retention may have
    deleted it as well, and a listing that shows it again is all that tells the two apart."""

    why: str
    definite: bool


def listing_gap(part: PartitionDir, last: Listed | None) -> Gap | None:
    """The gap in a listing that raced a rename, or None. Kafka renames a segment's ``.log`` before its
    indexes (``LogSegment.changeFileSuffixes``), so an index without its log is one mid-rename. Against the
    last settled listing (``last``): a segment gone from between two others, the one below it unchanged,
    was not merged into it (a clean keeps a group's first base offset and rewrites that segment), nor
    deleted by retention (which takes the oldest first): its swap is under way. A first segment gone with
    later ones left is retention's delete, or the swap of the first clean group: not definite."""
    if part.unlogged:
        x = part.unlogged[0]
        return Gap(f"{part.path}: {x:020d}.index or .timeindex listed without its .log: a segment mid-rename", True)
    if not last:
        return None
    now = listed(part)
    if now == last:  # the partition as last settled: nothing gone (every unchanged partition, every refresh)
        return None
    now, last = _as_dict(now), _as_dict(last)
    gap = None
    for x in sorted(last.keys() - now.keys()):
        if not any(b > x for b in now):
            continue  # the tail gone (a truncation), no later segment kept: not a swap's gap
        below = max((b for b in now if b < x), default=None)
        if below is None:
            gap = gap or Gap(f"{part.path}: segment {x:020d} of the last listing not listed, and no .swap", False)
        elif now[below] == last.get(below):
            return Gap(f"{part.path}: segment {x:020d} of the last listing not listed, the one below it "
                       f"({below:020d}) unchanged, and no .swap", True)
    return gap


class Relister:
    """Lists a partition again when a file moved under its read; ``relists`` counts every re-listing since
    start (``LogDirSnapshot.relists_total``). ``clock`` tells a fresh ``.swap`` from a stale one."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.relists = 0
        self.last: dict[str, Listed] = {}  # partition folder -> its last settled listing (listing_gap)
        # partition folder -> the listing its last figures were held for: the same gap at the next refresh
        # lasted a whole interval, no race (renames take microseconds): the broker's, read as it is
        self.held: dict[str, Listed] = {}

    def relist(self, part: PartitionDir) -> PartitionDir:
        """The partition listed again, counted. FileNotFoundError: the partition folder itself went."""
        self.relists += 1
        return scan_partition(part.path)

    def settled(self, part: PartitionDir, cfg, read):
        """(the partition's listing, ``read(listing)``, None, None) once a listing held still while it was
        read; (the last listing, None, why, None) when it did not through ``RELISTS`` re-listings; (the
        listing, None, None, why) when it still has a gap (``listing_gap``) after it was listed once more for
        it: the caller holds the last figures. A segment file the cleaner or retention moved between the
        listing and the read (``read`` raises ``SegmentsMoved``), a swap in progress (a fresh ``.swap``:
        Kafka renames the replaced segments ``.deleted`` before it renames the ``.swap`` live, so the
        listing lacks them) or a gap makes the partition be listed again; each time counts in
        ``relists_total``. FileNotFoundError: the partition folder itself went."""
        why, pause, gap_relisted = None, 0.0, False
        last = self.last.get(str(part.path))
        for attempt in range(RELISTS + 1):
            if attempt:
                if pause:
                    time.sleep(pause)
                part = self.relist(part)
            now_ms = int(self.clock() * 1000)
            swap = next((x for x in part.leftovers if x.kind == "swap"
                         and not x.stale(now_ms, cfg.file_delete_delay_ms)), None)
            if swap is not None:
                why, pause = f"{part.path / swap.name}: a segment swap in progress", SWAP_WAIT_SECONDS * 2 ** attempt
                continue
            if part.unreadable or not part.segments:
                return part, None, None, None
            gap = listing_gap(part, last)
            if gap is not None and not gap_relisted:  # listed once more: the rename it raced is done by then
                gap_relisted, why = True, gap.why
                pause = SWAP_WAIT_SECONDS if gap.definite else 0.0
                continue
            if gap is not None and gap.definite and self.held.get(str(part.path)) != listed(part):
                self.held[str(part.path)] = listed(part)
                return part, None, None, gap.why
            try:
                got = read(part)
            except SegmentsMoved as exc:
                why, pause = str(exc), 0.0
                continue
            self.last[str(part.path)] = listed(part)
            self.held.pop(str(part.path), None)
            return part, got, None, None
        return part, None, (f"{part.path}: its segments kept changing under the cleaner or retention through "
                            f"{RELISTS} re-listings: {why}"), None

    def forget(self, folders: set[str]) -> None:
        """The last listings of the partition folders not listed this refresh (gone, or not read) forgotten."""
        for kept in (self.last, self.held):
            for path in kept.keys() - folders:
                del kept[path]

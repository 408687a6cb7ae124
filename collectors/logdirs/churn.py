"""A partition read while the cleaner or retention rewrites it (churn, not a fault). Kafka's swap of a
clean (``LocalLog.replaceSegments``) and a retention delete rename and delete segment files between a
partition's listing and its read; a producer snapshot is written in place at each roll. A read that
finds a file moved, replaced or short makes the partition be listed and read again within the
refresh (``Relister.settled``: ``RELISTS`` times at most, each counted in ``relists``); only a
partition still changing after that is unknown for this refresh, with the reason
(``collectors.logdirs.snapshot.CHANGING``).
"""

from __future__ import annotations

import os
import time
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


class Relister:
    """Lists a partition again when a file moved under its read; ``relists`` counts every re-listing since
    start (``LogDirSnapshot.relists_total``). ``clock`` tells a fresh ``.swap`` from a stale one."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.relists = 0

    def relist(self, part: PartitionDir) -> PartitionDir:
        """The partition listed again, counted. FileNotFoundError: the partition folder itself went."""
        self.relists += 1
        return scan_partition(part.path)

    def settled(self, part: PartitionDir, cfg, read):
        """(the partition's listing, ``read(listing)``, None) once a listing held still while it was read;
        (the last listing, None, why) when it did not through ``RELISTS`` re-listings. A segment file the
        cleaner or retention moved between the listing and the read (``read`` raises ``SegmentsMoved``),
        or a swap in progress (a fresh ``.swap``: Kafka renames the replaced segments ``.deleted``
        before it renames the ``.swap`` live, so the listing lacks them), makes the partition be listed
        again and read again; each time counts in ``relists_total``. FileNotFoundError: the partition
        folder itself went."""
        why, swap = None, None
        for attempt in range(RELISTS + 1):
            if attempt:
                if swap is not None:
                    time.sleep(SWAP_WAIT_SECONDS * 2 ** (attempt - 1))
                part = self.relist(part)
            now_ms = int(self.clock() * 1000)
            swap = next((x for x in part.leftovers if x.kind == "swap"
                         and not x.stale(now_ms, cfg.file_delete_delay_ms)), None)
            if swap is not None:
                why = f"{part.path / swap.name}: a segment swap in progress"
                continue
            if part.unreadable or not part.segments:
                return part, None, None
            try:
                return part, read(part), None
            except SegmentsMoved as exc:
                why = str(exc)
        return part, None, (f"{part.path}: its segments kept changing under the cleaner or retention through "
                            f"{RELISTS} re-listings: {why}")

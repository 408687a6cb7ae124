"""Room on a log dir's filesystem for the cleaner's next write: how many bytes one clean writes before it
can swap, and whether the free space covers it.

Kafka's cleaner (``LogCleaner.Cleaner.doClean``) does not rewrite a log in place. It splits the segments
it cleans (``log.logSegments(0, endOffset)``: every segment below the first uncleanable offset, so never
the active one) with ``groupSegmentsBySize``: greedily, in offset order, a group grows while its summed
``.log`` sizes stay <= ``segment.bytes`` (and its summed index sizes <= ``segment.index.bytes``, and its
offsets fit a 32-bit relative offset); a group always takes at least its first segment, so a segment
larger than ``segment.bytes`` is a group of its own. Each group is copied into one ``.cleaned`` segment,
flushed, renamed ``.swap`` and swapped in (``cleanSegments`` / ``LocalLog.replaceSegments``); only then
are the group's old files renamed ``.deleted``. So while one group is copied, the filesystem must hold
the group twice: the room one clean needs is its largest group's size (nothing removed is the worst
case). Only ``.log`` sizes and ``segment.bytes`` are modelled: the index and offset limits can only
split a group, so the figure is an upper bound of Kafka's largest group. The new segment's indexes are
preallocated to ``segment.index.bytes`` as sparse files and trimmed when the segment is closed; they are
not counted.

Without the room, the copy fails with an IOException, and ``CleanerThread.cleanFilthiestLog`` hands it
to ``LogDirFailureChannel.maybeAddOfflineLogDir``: the broker takes the whole log dir offline, every
partition on it included. (The old files of the groups already swapped stay as ``.deleted`` for
``file.delete.delay.ms``, 60 s by default, so a fast clean of many groups briefly holds more than one
group: the largest group is the least it needs, not the most.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


def largest_clean_group(sizes: Iterable[int], segment_bytes: int) -> int:
    """The bytes of the largest group ``groupSegmentsBySize`` makes of segments of these ``.log``
    ``sizes`` (offset order, the active segment left out) under ``segment.bytes``; 0 for no segment."""
    largest = group = 0
    started = False
    for size in sizes:
        if started and group + size <= segment_bytes:
            group += size
        else:
            largest = max(largest, group)
            group, started = size, True
    return max(largest, group)


@dataclass(frozen=True)
class CleanNeed:
    """The partition of a log dir whose next clean needs the most room, and how much."""

    bytes: int
    topic: str
    partition: int


@dataclass(frozen=True)
class LogDirSpace:
    """A log dir's free space (``statvfs``: blocks available to the broker's unprivileged user, as
    ``df`` reports them) against the room its compacted partitions' cleans need. ``error`` names the log
    dir and why its filesystem could not be read; ``free_bytes`` is then None (unknown, not 0)."""

    log_dir: str
    free_bytes: int | None
    need: CleanNeed | None  # None: no compacted partition with a segment below the active one
    error: str | None = None

    @property
    def room_for_clean(self) -> bool | None:
        """False when the largest clean could not be written; None when either side is unknown."""
        if self.free_bytes is None or self.need is None:
            return None
        return self.free_bytes >= self.need.bytes


def most_needed(needs: Iterable[CleanNeed]) -> CleanNeed | None:
    return max(needs, key=lambda n: (n.bytes, n.topic, n.partition), default=None)

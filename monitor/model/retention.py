"""The delete half of ``cleanup.policy=compact,delete``: which whole segments retention removes, and
where the log start offset moves, as Kafka's broker decides.

Why: on a compact,delete topic the projected size after compaction is wrong unless retention is
modelled too, and a consumer that falls behind loses data at the log start, not only at the cleaner.

Kafka 4.x, ``storage/.../log/UnifiedLog.java``:
* ``deleteOldSegments()``: with ``delete`` in the policy, ``deleteLogStartOffsetBreachedSegments``,
  then ``deleteRetentionSizeBreachedSegments``, then ``deleteRetentionMsBreachedSegments``, each over
  the segments the previous one left;
* ``deletableSegments(predicate)``: from the oldest segment on, while the predicate holds, the segment
  lies below the high watermark (``highWatermark >= upperBoundOffset``: the next segment's base, or
  the log end offset for the last) and it is not a last segment that is empty; the first segment that
  fails stops the scan (retention only ever removes a prefix);
* size: nothing when ``retention.bytes < 0`` or ``size < retention.bytes``; else with
  ``diff = size - retention.bytes`` a segment goes while ``diff - segment.size >= 0`` (``diff`` shrinks
  by each segment taken);
* time: a segment goes when ``now - segment.largestTimestamp > retention.ms`` (``retention.ms < 0``: no
  limit); ``largestTimestamp`` is the largest record timestamp, else the file's mtime;
* log start: ``deleteSegments`` moves the log start to the base of the segment after the last one
  deleted; **the active segment is not exempt**: when every segment goes, the log rolls first (a new
  empty active segment at the log end offset) and the log start becomes the log end offset.

Who runs it for compact,delete: the log cleaner's threads, after each clean attempt
(``LogCleaner.CleanerThread.cleanFilthiestLog`` -> ``LogCleanerManager.deletableLogs``, which lists
logs that are compact *and* delete), so it happens at most ``log.cleaner.backoff.ms`` (15 s) apart;
``LogManager.cleanupLogs`` (every ``log.retention.check.interval.ms``) skips compacted logs.

Not modelled: tiered storage (local retention), a high watermark below the log end offset (a single
replica's, or a caught-up ISR's, equal it; pass ``high_watermark`` otherwise), and the order against
a clean that merges the same segments in the meantime (the projection is of the segments as they are).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RetentionSegment:
    """What retention reads of a segment (``SegmentSummary`` has it: base_offset, size, largest_timestamp())."""

    base_offset: int
    size: int
    largest_timestamp: int  # ms


@dataclass(frozen=True)
class RetentionProjection:
    """What one retention check would delete, and the log start offset after it."""

    log_start_offset: int  # after the check
    deleted: tuple[int, ...] = ()  # base offsets of the segments deleted, oldest first
    deleted_bytes: int = 0
    by_reason: dict = field(default_factory=dict)  # "log_start" | "retention.bytes" | "retention.ms" -> base offsets
    rolls_active: bool = False  # every segment went: the broker rolls a new, empty active segment first

    @property
    def moves(self) -> bool:
        return bool(self.deleted)


def project_retention(segments, *, retention_ms: int, retention_bytes: int, now_ms: int, log_start_offset: int,
                      log_end_offset: int, high_watermark: int | None = None,
                      delete_policy: bool = True) -> RetentionProjection:
    """The segments one ``UnifiedLog.deleteOldSegments()`` removes, oldest first (see the module doc).
    ``segments``: ``RetentionSegment``-like (base_offset, size, largest_timestamp), any order."""
    segs = sorted(segments, key=lambda s: s.base_offset)
    hw = log_end_offset if high_watermark is None else high_watermark
    start = log_start_offset
    deleted: list = []
    by_reason: dict = {}
    rolled = False

    def deletable(pred) -> list:
        out = []
        for i, seg in enumerate(segs):
            nxt = segs[i + 1] if i + 1 < len(segs) else None
            last_and_empty = nxt is None and seg.size == 0
            upper = nxt.base_offset if nxt is not None else log_end_offset
            if hw >= upper and pred(seg, nxt) and not last_and_empty:
                out.append(seg)
            else:
                break
        return out

    def delete(reason: str, gone: list) -> None:
        nonlocal segs, start, rolled
        if len(gone) == len(segs) and gone:  # UnifiedLog.deleteSegments: every segment goes, so roll first
            rolled = True
            if gone[-1].base_offset == log_end_offset:  # an empty active segment is recreated, not deleted
                gone = gone[:-1]
            segs = [RetentionSegment(log_end_offset, 0, -1)]  # the new, empty active segment
        else:
            segs = segs[len(gone):]
        if not gone:
            return
        start = max(start, segs[0].base_offset)  # the base of the segment after the last one deleted
        deleted.extend(gone)
        by_reason[reason] = tuple(s.base_offset for s in gone)

    delete("log_start", deletable(lambda s, nxt: nxt is not None and nxt.base_offset <= start))
    if delete_policy:
        size = sum(s.size for s in segs)
        if retention_bytes >= 0 and size >= retention_bytes:
            diff = [size - retention_bytes]

            def over_size(s, nxt) -> bool:
                if diff[0] - s.size >= 0:
                    diff[0] -= s.size
                    return True
                return False

            delete("retention.bytes", deletable(over_size))
        if retention_ms >= 0:
            delete("retention.ms", deletable(lambda s, nxt: now_ms - s.largest_timestamp > retention_ms))
    return RetentionProjection(start, tuple(s.base_offset for s in deleted), sum(s.size for s in deleted),
                               by_reason, rolled)


def from_summaries(summaries) -> list[RetentionSegment]:
    """``SegmentSummary`` objects (``monitor.model.summary``) as retention sees them."""
    return [RetentionSegment(s.base_offset, s.size, s.largest_timestamp()) for s in summaries]

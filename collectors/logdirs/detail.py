"""Headers first, the record-level half (issue 31): which partitions' records the log-dir scanner reads
first, and one refresh's slice of those reads (``collectors.logdirs.scanner`` runs it at the start of a refresh,
on the partitions the last refresh left pending). The reads themselves are
``collectors.logdirs.read.PartitionReader.detail`` (``monitor.model.summary.read_detail``), at the I/O
budget's pace (``monitor.fileio.iobudget``).
"""

from __future__ import annotations

# how long one refresh reads records before it publishes its page (the next refresh follows at once while
# records are pending: see LogDirScanner.busy), at least; a refresh whose header half (listing and judging
# every partition) takes long reads for DETAIL_SLICE_SHARE_RATIO times as long, so that on a broker's
# 20,000 partitions the record reads keep up to three quarters of the time, not a half or less; never
# longer than DETAIL_SLICE_MAX_SECONDS (the default log-dir refresh interval), so the page a scrape sees
# during the record pass is at most that plus one header refresh old
DETAIL_SLICE_SECONDS = 10.0
DETAIL_SLICE_SHARE_RATIO = 3.0
DETAIL_SLICE_MAX_SECONDS = 60.0


def slice_seconds(header_refresh_seconds: float) -> float:
    """One refresh's record-reading time, given how long the last refresh's header half took."""
    return min(DETAIL_SLICE_MAX_SECONDS,
               max(DETAIL_SLICE_SECONDS, DETAIL_SLICE_SHARE_RATIO * header_refresh_seconds))
# the order record-level reads go in, the first that applies: eligible or overdue (the cleaner's next
# work), unhealthy (a read fault, bytes held back by the LSO or min.compaction.lag.ms, a hanging
# transaction), a batch past its delete horizon (tombstones the cleaner may drop), then the rest
PRIORITIES = ("eligible", "unhealthy", "past_delete_horizon", "other")


def detail_priority(state, summaries, now_ms: int) -> int:
    """The index in ``PRIORITIES`` of a partition whose records are still to be read, from its header pass."""
    if state.eligible or state.needs_compaction_now:
        return 0
    if state.faults or state.blocked_by or state.hanging_transactions:
        return 1
    if any(0 <= s.earliest_delete_horizon <= now_ms for s in summaries):
        return 2
    return 3


def read_details(reader, queue, seconds: float = DETAIL_SLICE_SECONDS) -> None:
    """Records of the pending partitions (``queue``: (priority, key, segment paths), sorted), in that order,
    for at most ``seconds`` of the budget's clock, at the budget's pace. A segment replaced since its
    headers were read is left for the next header pass. Nothing is read while the budget is in debt (the
    header pass charges without waiting: on a broker's size that is minutes of budget): the refresh goes on
    at once, so the page stays fresh while the debt pays itself off with time, instead of a refresh
    sleeping through it with its page stale."""
    if reader.budget.debt_seconds() > 0:
        return
    clock = reader.budget.clock
    deadline = clock() + seconds
    stop = lambda: clock() >= deadline  # noqa: E731
    for _, _, paths in queue:
        for path in paths:
            reader.detail(path, stop)
            if stop():
                return

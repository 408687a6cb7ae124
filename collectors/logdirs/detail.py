"""Headers first, the record-level half (issue 31): which partitions' records the log-dir scanner reads
first, and one refresh's slice of those reads (``collectors.logdirs.scanner`` runs it at the start of a refresh,
on the partitions the last refresh left pending). The reads themselves are
``collectors.logdirs.read.PartitionReader.detail`` (``monitor.model.summary.read_detail``), at the I/O
budget's pace (``monitor.fileio.iobudget``). The serving collector reads them on a thread of its own
instead (``RecordReader``), continuously at the budget, giving way to each refresh's header work.
"""

from __future__ import annotations

import threading
from collections import deque
from contextlib import contextmanager, nullcontext
from typing import Callable

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


# a turn of the record reader reads about this many seconds of the budget before it lets go of the lock and
# waits for the next: at the default 20 MiB/s, 2 MiB a turn and ten turns a second, so a refresh that wants
# the lock waits one batch at most and the thread is not woken for every 16 KiB batch
STEP_SECONDS = 0.1
# how long the reader waits for the lock at a time before it looks whether it is to stop: a refresh that holds
# the lock for its whole pass (tens of seconds at 20,000 partitions) must not hold up the collector's stop
LOCK_WAIT_SECONDS = 0.5


class RecordReader:
    """The record pass on a thread of its own (issue 43, item 4), so that it keeps its budget busy: in
    slices inside the refresh (``read_details``) it held 0.71 of 20 MiB/s at 20,000 partitions, the
    header half running between slices.

    Why one lock, held by a refresh for its whole pass and by this reader for one turn: ``read_detail``
    folds a segment's records into its summary in place, and a refresh reads those summaries (a
    partition's state, the pending bytes, the summary cache it saves) and replaces them (a grown or new
    segment). A lock per partition would leave the reader's counters, the cache's ``changed`` and its
    ``kept()`` to guard apart; handing finished results over would need a copy of every summary read. One
    lock is the simplest that is correct: a refresh sees each summary as the last turn left it (before or
    after a batch, never during one), and the reader never writes over what a refresh just read again.

    Yielding: a refresh announces itself (``header_turn``) before it takes the lock; the reader's turn
    ends at the next batch, and no turn starts until the refresh is done. The budget's tokens meanwhile are
    kept (``IoBudget.yielded``: up to a bounded burst), so the time given to the header work is not lost
    to the budget. The reader never sleeps holding the lock: a turn charges each batch without waiting
    (``IoBudget.charge``) and ends when the bucket is in debt; it then waits the debt out, plus
    ``STEP_SECONDS``, with the lock free. The clock is the budget's; ``sleep`` is injected (a test drives
    ``turn()`` on a fake clock; the thread's default wakes at once on ``stop``)."""

    def __init__(self, reader, lock: threading.Lock, sleep: Callable[[float], None] | None = None,
                 name: str = "records", drained: Callable[[], None] = lambda: None):
        self.reader, self.budget, self.lock, self.name = reader, reader.budget, lock, name
        self._cond = threading.Condition()
        self._wanted = 0  # refreshes waiting for or holding the lock
        self._stopping = False
        self._paths: deque[str] = deque()  # the segments still to read, in the order handed over
        self.drained = False  # the queue handed over was read to its end since (the page is not told yet)
        self._on_drained = drained  # told so (the runner's wake: a refresh then puts it on the page at once)
        self.sleep = sleep or self._wait_stop
        self._thread: threading.Thread | None = None

    # the refresh's side ------------------------------------------------------------------------------
    @contextmanager
    def header_turn(self):
        """A refresh's pass: the reader's turn ends at its next batch and none starts until this ends; the
        budget's tokens are kept meanwhile when records are waiting."""
        with self._cond:
            self._wanted += 1
        try:
            with self.lock, (self.budget.yielded() if self._paths else nullcontext()):
                yield
        finally:
            with self._cond:
                self._wanted -= 1
                self._cond.notify_all()

    def hand_over(self, queue) -> None:
        """The pending partitions' segments (``queue``: (priority, key, paths), sorted), from a refresh, in
        place of the last: called within ``header_turn``."""
        self._paths = deque(p for _, _, paths in queue for p in paths)
        self.drained = False
        with self._cond:
            self._cond.notify_all()

    def pending(self) -> bool:
        return bool(self._paths)

    # the reader's side -------------------------------------------------------------------------------
    def turn(self) -> float | None:
        """One turn: with the lock, the segments' records read in order until a refresh wants the lock, the
        budget is in debt or the queue ends. The seconds to wait before the next turn; None: nothing left
        (or stopping)."""
        while not self.lock.acquire(timeout=LOCK_WAIT_SECONDS):  # a refresh holds it: stop() not held up by it
            if self._stopping:
                return None
        try:
            return self._turn()
        finally:
            self.lock.release()

    def _turn(self) -> float | None:
        """``turn`` with the lock held."""
        if not self._paths:
            self.budget.settle()
            return None
        debt = self.budget.debt_seconds()
        if debt > 0:
            return debt + STEP_SECONDS
        stop = lambda: self._wanted > 0 or self._stopping or self.budget.debt_seconds() > 0  # noqa: E731
        while self._paths and not stop():
            # not whole and not stopped: replaced or shrunk since its headers were read, left for the
            # next header pass (as read_details leaves it)
            if self.reader.detail(self._paths[0], stop, take=self.budget.charge) or not stop():
                self._paths.popleft()
        if not self._paths:
            self.drained = True
            self.budget.settle()  # a credit kept through a yield is for the work that waited, not later work
            self._on_drained()
            return None
        debt = self.budget.debt_seconds()
        return debt + STEP_SECONDS if debt > 0 else 0.0

    def run(self) -> None:
        while True:
            with self._cond:  # no turn while a refresh wants the lock; none without work
                self._cond.wait_for(lambda: self._stopping or (self._wanted == 0 and self._paths))
                if self._stopping:
                    return
            wait = self.turn()
            if wait:
                self.sleep(wait)

    def _wait_stop(self, seconds: float) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._stopping, timeout=seconds)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name=self.name, daemon=True)
            self._thread.start()

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        """Ends the thread at its next batch and joins it."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

"""A disk-read budget in bytes per second (a token bucket) for the collector's record-level reads.

Why a budget: the collector runs beside the broker it watches and reads the same disk. Kafka bounds its
own cleaner's reads and writes with ``log.cleaner.io.max.bytes.per.second`` (default unlimited: the
cleaner is the broker's own work); a monitor should take a small, stated share instead. The default,
``DEFAULT_BYTES_PER_SECOND`` = 20 MiB/s, is about a sixth of a cloud volume's baseline (AWS gp3: 125 MB/s;
a local SSD gives ten times that) and leaves the broker's produce, fetch and cleaner traffic the rest;
at that rate a cold start reads 72 GB of records an hour, while every partition's ratio and cause come
from the header pass within seconds (``monitor.model.summary.scan_headers``). 0 means unlimited, as
Kafka's own default.

``take(n)`` charges bytes just read and waits until the bucket is no longer in debt, so over any span
of T seconds the bytes taken stay within ``rate * T + burst`` (burst = ``rate * BURST_SECONDS``, plus
the one batch read before its charge). ``charge(n)`` records bytes without waiting: the header pass,
which must not hold up the first page, runs the bucket into debt that the record reads after it pay
off. The clock and the sleep are injected (a unit test holds the budget on a fake clock).

Yielding (issue 43): the collector's record pass reads on a thread of its own
(``collectors.logdirs.detail.RecordReader``) and gives way to a refresh's header half, which at 20,000
partitions is tens of seconds of CPU with little to read. Tokens that accrue meanwhile are not lost at the
usual one-second burst (the record pass then held 0.71 of its budget): within ``yielded()`` the bucket
fills up to ``YIELD_BURST_SECONDS`` of the rate, less what the header pass charges, and the record pass
spends that after the refresh. Bounded, so that one long refresh never becomes minutes of reading at the
disk's full speed: 60 s is the default log-dir refresh interval, the span the budget is measured over.
``settle()`` drops the credit above the usual burst when the record pass has nothing to read (a
credit is for work that waited, not for later). The bucket is shared by the refresh's thread and the
record pass's: its state changes under a lock.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable

MIB = 1 << 20
DEFAULT_BYTES_PER_SECOND = 20 * MIB
BURST_SECONDS = 1.0
YIELD_BURST_SECONDS = 60.0


class IoBudget:
    def __init__(self, bytes_per_second: float | None = DEFAULT_BYTES_PER_SECOND, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        if bytes_per_second is not None and bytes_per_second < 0:
            raise ValueError(f"io budget {bytes_per_second!r}: bytes per second must be >= 0 (0: unlimited)")
        self.rate = bytes_per_second or None  # None: unlimited (counted only)
        self.burst = 0.0 if self.rate is None else self.rate * BURST_SECONDS
        self.clock, self.sleep = clock, sleep
        self._tokens = self.burst
        self._last = clock()
        self.bytes_total = 0  # bytes charged since start (taken and charged)
        self.waited_seconds = 0.0
        self._yielding = 0  # yielded() spans open: the bucket's cap is YIELD_BURST_SECONDS of the rate
        self._lock = threading.Lock()

    def _refill(self) -> None:
        """Tokens for the time since the last call, up to the cap; tokens above it (credit kept from a
        yield) are kept, not topped up."""
        now = self.clock()
        if self.rate is not None:
            cap = self.rate * YIELD_BURST_SECONDS if self._yielding else self.burst
            if self._tokens < cap:
                self._tokens = min(cap, self._tokens + (now - self._last) * self.rate)
        self._last = now

    def charge(self, n: int) -> None:
        """Count ``n`` bytes read without waiting (the bucket may go into debt)."""
        with self._lock:
            self._refill()
            self.bytes_total += n
            if self.rate is not None:
                self._tokens -= n

    @contextmanager
    def yielded(self):
        """The span the record pass gives way to a refresh's header work: its tokens kept up to
        ``YIELD_BURST_SECONDS`` of the rate (see the module's docstring)."""
        with self._lock:
            self._refill()
            self._yielding += 1
        try:
            yield self
        finally:
            with self._lock:
                self._refill()
                self._yielding -= 1

    def settle(self) -> None:
        """Nothing left to read: the credit above the usual burst is dropped (debt is kept)."""
        with self._lock:
            self._refill()
            if self.rate is not None and not self._yielding:
                self._tokens = min(self._tokens, self.burst)

    def debt_seconds(self) -> float:
        """How long until the bucket is out of debt (0 when it is not, or unlimited): the record reads wait
        this out by not starting (``collectors.logdirs.detail.read_details``), not by sleeping in a refresh."""
        with self._lock:
            self._refill()
            # less than a byte owed is the refill's float rounding (rate x elapsed), not a read to pay for: a
            # debt of 1e-15 s never paid off on a clock that moved by it (80.5 + 1e-15 == 80.5), and the
            # record reads, which do not start in debt, stalled for good on a fake clock
            if self.rate is None or self._tokens > -1:
                return 0.0
            return -self._tokens / self.rate

    def take(self, n: int) -> None:
        """Count ``n`` bytes read, then wait until the bucket is out of debt."""
        self.charge(n)
        wait = self.debt_seconds()
        if wait > 0:
            self.waited_seconds += wait
            self.sleep(wait)

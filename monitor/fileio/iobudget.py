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
"""

from __future__ import annotations

import time
from typing import Callable

MIB = 1 << 20
DEFAULT_BYTES_PER_SECOND = 20 * MIB
BURST_SECONDS = 1.0


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

    def _refill(self) -> None:
        now = self.clock()
        if self.rate is not None:
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now

    def charge(self, n: int) -> None:
        """Count ``n`` bytes read without waiting (the bucket may go into debt)."""
        self._refill()
        self.bytes_total += n
        if self.rate is not None:
            self._tokens -= n

    def debt_seconds(self) -> float:
        """How long until the bucket is out of debt (0 when it is not, or unlimited): the record reads wait
        this out by not starting (``collectors.logdirs.detail.read_details``), not by sleeping in a refresh."""
        self._refill()
        if self.rate is None or self._tokens >= 0:
            return 0.0
        return -self._tokens / self.rate

    def take(self, n: int) -> None:
        """Count ``n`` bytes read, then wait until the bucket is out of debt."""
        self.charge(n)
        if self.rate is not None and self._tokens < 0:
            wait = -self._tokens / self.rate
            self.waited_seconds += wait
            self.sleep(wait)
            self._refill()

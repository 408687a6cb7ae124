"""How long the log cleaner will need for a log, from Kafka's own cleaning loop.

One clean of a log builds the offset map over the dirty section (as many distinct keys as the
dedupe buffer holds: a bigger dirty section needs several passes), then recopies everything below
the end of what the map covered, clean section included. ``log-cleaner.log`` reports the cleaning
phase's bytes over the whole clean's time as "MB of log processed ... MB/sec": the throughput here
has that meaning, so a pass costs (clean bytes + dirty bytes covered so far) / throughput.

Map capacity (SkimpyOffsetMap): slots = floor(min(dedupe buffer / threads, 2^31-1) / (hash + 8));
keys per pass = floor(slots * log.cleaner.io.buffer.load.factor). Kafka 4.3 hashes with MD5 (16 B),
so 24 bytes per entry and 5,033,164 keys per pass with the defaults.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_THROUGHPUT = 40 * (1 << 20)  # bytes/s for one cleaner thread; calibrate from log-cleaner.log


@dataclass(frozen=True)
class CleanerParams:
    threads: int = 1
    dedupe_buffer_size: int = 134_217_728
    load_factor: float = 0.9
    hash_bytes: int = 16  # MD5 in Kafka 2.x to 4.3
    io_max_bytes_per_second: float = float("inf")
    throughput: float = DEFAULT_THROUGHPUT  # bytes/s of one thread, as log-cleaner.log reports it
    throughput_source: str = "default"

    @property
    def keys_per_pass(self) -> int:
        memory = min(self.dedupe_buffer_size // max(self.threads, 1), 2**31 - 1)
        slots = memory // (self.hash_bytes + 8)
        return int(slots * self.load_factor)


@dataclass(frozen=True)
class CleanEstimate:
    passes: int
    bytes_read: float
    seconds: float
    rate: float


def estimate_clean(clean_bytes: int, dirty_bytes: int, dirty_keys: int, p: CleanerParams) -> CleanEstimate:
    """Passes, bytes the cleaning phases read, and seconds to clean a log's dirty section."""
    if dirty_bytes <= 0:
        return CleanEstimate(0, 0.0, 0.0, 0.0)
    passes = max(1, math.ceil(dirty_keys / p.keys_per_pass)) if dirty_keys > 0 else 1
    share = dirty_bytes / passes
    bytes_read = sum(clean_bytes + i * share for i in range(1, passes + 1))
    rate = min(p.throughput, p.io_max_bytes_per_second) if p.io_max_bytes_per_second > 0 else p.throughput
    return CleanEstimate(passes, bytes_read, bytes_read / rate, rate)

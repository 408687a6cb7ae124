"""How long each replica of a compacted partition has been out of the ISR (or offline), across the admin
source's refreshes: what ``monitor.model.replicasafety`` compares with ``delete.retention.ms``.

The metadata says only *whether* a replica is in the ISR now, not since when. The collector keeps the
time of the first refresh that found it out, and forgets it the first refresh that finds it back in.
What it cannot know it says: a replica already out at the collector's first refresh (or the first
refresh that saw its partition at all) was out before the collector looked, so its duration is a lower
bound (``OutOfSync.lower_bound``: "at least since the collector started"), never a guess at when it
fell out. The times are kept in memory: a restarted collector starts again from its first refresh,
with every replica it then finds out marked as a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OutOfSync:
    since: float  # Unix time of the first refresh that found it out
    lower_bound: bool  # already out when the collector first saw the partition
    offline: bool  # its broker is not in the metadata's broker list (stopped, fenced)


class OutOfSyncTracker:
    """``update(now, partitions)`` after each refresh: ``partitions`` maps (topic, partition) to (replicas,
    isr, live brokers); returns (topic, partition, broker) -> ``OutOfSync`` for the replicas out now."""

    def __init__(self):
        self._out: dict = {}
        self._seen: set = set()  # (topic, partition) seen by an earlier refresh

    def update(self, now: float, partitions: dict) -> dict:
        out = {}
        for (topic, p), (replicas, isr, live) in partitions.items():
            first_look = (topic, p) not in self._seen
            for b in replicas:
                if b in isr:
                    continue
                key = (topic, p, b)
                prev = self._out.get(key)
                offline = b not in live
                out[key] = OutOfSync(prev.since if prev else now, prev.lower_bound if prev else first_look, offline)
        self._seen = set(partitions)
        self._out = out
        return dict(out)

"""Where a partition's tombstones and transaction markers stand against their delete horizons (KIP-534).

Counted from the segment summaries (``monitor.model.summary``): a marker (the control record of a COMMIT
or ABORT batch) is known from the batch headers, a tombstone only once its records are read; until every
segment's records are (headers first, issue 31) the tombstones are unknown (``None``), never 0. The
states and the checks on a horizon's value are ``monitor.model.horizon``'s; this module only counts.

A horizon ``horizon.problem`` rejects (before the batch's records, or later than a clean starting now
could set with the topic's ``delete.retention.ms``) is no time Kafka computed: it is a fault naming the
file and the byte position of the batch, and that batch's tombstones and markers are counted in no
state (a pending one would promise a removal time nobody can vouch for).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from monitor.model import horizon as hz
from monitor.model.summary import SegmentSummary, horizon_entries

KINDS = ("tombstone", "marker")


@dataclass(frozen=True)
class HorizonCounts:
    # kind -> state -> records; the tombstones' entry is None while some segment's records are unread, the
    # markers' while some segment is summarised from its indexes (``SegmentSummary.headers_pending``)
    records: dict[str, dict[str, int] | None]
    next_removal_ms: int | None  # the earliest removal of one still ahead of its horizon (None: none, or unknown)
    faults: tuple[str, ...]  # horizons no clean could have written: file, byte position, why
    rejected: dict[str, int]  # kind -> records under a rejected horizon (counted in no state)
    earliest_pending: dict[str, int | None]  # kind -> the earliest horizon still ahead (None: none, or unknown)

    @property
    def tombstones_known(self) -> bool:
        return self.records["tombstone"] is not None

    def passed(self, kind: str) -> int:
        got = self.records[kind]
        return 0 if got is None else got[hz.PASSED]


def _rejected_horizons(s: SegmentSummary, now_ms: int, delete_retention_ms: int, faults: list[str]) -> set[int]:
    bad = set()
    for horizon, position, max_ts, _ in horizon_entries(s):
        why = hz.problem(has_horizon=True, magic=2, horizon_ms=horizon, max_timestamp=max_ts, now_ms=now_ms,
                         delete_retention_ms=delete_retention_ms)
        if why and horizon not in bad:
            bad.add(horizon)
            faults.append(f"{s.path}: batch at byte {position}: {why}")
    return bad


def count_horizons(segments: Sequence[SegmentSummary], now_ms: int, delete_retention_ms: int) -> HorizonCounts:
    """Tombstones and markers per ``horizon.STATES`` at ``now_ms``, the earliest time one still ahead of its
    horizon may go (``horizon.earliest_removal_ms``: a pending one's horizon; an unstamped one, one
    ``delete.retention.ms`` after a clean starting now), and the rejected horizons as faults."""
    counts = {k: dict.fromkeys(hz.STATES, 0) for k in KINDS}
    rejected = dict.fromkeys(KINDS, 0)
    faults: list[str] = []
    ahead: list[int] = []
    pending = dict.fromkeys(KINDS, None)

    def note(kind: str, h: int) -> None:
        ahead.append(h)
        if pending[kind] is None or h < pending[kind]:
            pending[kind] = h
    known = all(s.detail_done for s in segments)
    for s in segments:
        bad = _rejected_horizons(s, now_ms, delete_retention_ms, faults)
        m = counts["marker"]
        m[hz.UNSTAMPED] += s.markers_unstamped
        for horizon, _, _, markers in horizon_entries(s):
            if horizon in bad:
                rejected["marker"] += markers
            elif markers:
                st = hz.state(horizon, now_ms)
                m[st] += markers
                if st == hz.PENDING:
                    note("marker", horizon)
        t = counts["tombstone"]
        horizons = s.tombstone_horizons
        unstamped = 0 if -1 in bad else horizons.count(-1)  # most tombstones: no horizon yet, counted in one call
        t[hz.UNSTAMPED] += unstamped
        for h in horizons if unstamped < len(horizons) else ():
            if h == -1 and unstamped:
                continue
            if h in bad:
                rejected["tombstone"] += 1
                continue
            st = hz.state(None if h < 0 else h, now_ms)
            t[st] += 1
            if st == hz.PENDING:
                note("tombstone", h)
    if any(c[hz.UNSTAMPED] for c in counts.values()):
        ahead.append(hz.earliest_removal_ms(None, now_ms, delete_retention_ms))
    if not known:
        counts["tombstone"] = pending["tombstone"] = None
    if any(s.headers_pending for s in segments):  # summarised from its indexes: no batch header read yet
        counts["marker"] = pending["marker"] = None
    return HorizonCounts(counts, min(ahead) if ahead and known else None, tuple(faults), rejected, pending)

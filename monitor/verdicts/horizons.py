"""The delete horizons of a partition's tombstones and markers, said for a person, with the verdict when
tombstones past their horizon are still on disk.

``evidence`` goes into every cause's evidence (``monitor.verdicts.causes.explain``), so ``explain``,
``logdir`` and the collector's causes carry the same figures; ``describe`` is the one sentence both
commands print. The counts are ``monitor.model.horizoncount``'s, the states ``monitor.model.horizon``'s.

A marker is stamped only by a clean that finds its transaction's records all gone (``LogCleaner``'s
``checkBatchRetention``: "we will never delete a marker until all the records from that transaction are
removed"), a tombstone by the first clean that keeps it.

Why tombstones past their horizon stay: only a clean removes them, and Kafka picks a log to clean by
its dirty ratio or an overdue ``max.compaction.lag.ms`` alone (``LogCleanerManager.grabFilthiestCompactedLog``);
a passed horizon does not make a log eligible. So they wait for whatever the partition's cause says
the next clean waits for; on a quiet partition (nothing dirty, or too little) that is the next writes.
"""

from __future__ import annotations

from monitor.model import horizon as hz
from monitor.model.compaction import PartitionState
from monitor.contract.units import duration_ms, timestamp_utc
from monitor.model.topicconfig import LONG_MAX
from monitor.verdicts.fixes import alter_topic, ratio_below

# the partition's causes under which no clean is coming (nothing or too little is dirty, or only the
# active segment is): the tombstones past their horizon wait for writes that make the log eligible
QUIET = ("clean", "below_threshold", "active_segment_only", "min_compaction_lag")


def evidence(s: PartitionState) -> dict:
    """The horizon figures as evidence: records per kind and state (tombstones None while unread), the
    earliest pending horizon per kind, the next removal time, records under horizons no clean wrote."""
    return {"records": s.delete_horizon_records, "earliest_pending_ms": s.pending_delete_horizon_ms,
            "next_removal_ms": s.next_delete_horizon_ms, "rejected": s.horizon_rejected,
            "delete_retention_ms": s.delete_retention_ms}


def _kind(name: str, states: dict | None, pending_ms: int | None, rejected: int, retention: str) -> str:
    if states is None:
        why = ("batch headers do not tell them" if name == "tombstone" else
               "segments summarised from their indexes: their batch headers not yet read")
        return f"{name}s: unknown until the partition's records are read ({why})"
    n_un, n_pend, n_past = (states.get(k, 0) for k in hz.STATES)
    parts = []
    if n_un:
        by = ("the next clean that keeps them stamps them" if name == "tombstone" else
              "a clean stamps them once their transactions' records are gone")
        parts.append(f"{n_un} never stamped ({by}; removable {retention} after it)")
    if n_pend:
        parts.append(f"{n_pend} stamped, the first removable from {timestamp_utc(pending_ms)}")
    if n_past:
        parts.append(f"{n_past} past {'its' if n_past == 1 else 'their'} horizon (the next clean removes "
                     f"{'it' if n_past == 1 else 'them'})")
    if rejected:
        parts.append(f"{rejected} under a horizon no clean could have written (a read fault)")
    return f"{name}s: " + (", ".join(parts) if parts else "none")


def describe(ev: dict) -> str:
    """One line: each kind's records by state, e.g. "tombstones: 4 never stamped (...), 2 stamped, the first
    removable from 2026-11-28T04:00:00.000Z, 1 past its horizon (...); markers: none"."""
    retention = duration_ms(ev["delete_retention_ms"])
    records, pending, rejected = ev["records"] or {}, ev["earliest_pending_ms"] or {}, ev["rejected"] or {}
    return "; ".join(_kind(k, records.get(k), pending.get(k), rejected.get(k, 0), retention)
                     for k in ("tombstone", "marker"))


def past_horizon(s: PartitionState, cause: str, cause_summary: str, cause_fix: tuple[str, ...],
                 bootstrap: str, max_compaction_lag_ms: int) -> dict | None:
    """When tombstones past their delete horizon are still on disk: why (the partition's cause: what the
    next clean waits for), the evidence and the fix; None otherwise. A max.compaction.lag.ms is proposed only
    below the topic's (``max_compaction_lag_ms``): a higher one would make the forced clean come later."""
    n = s.tombstones_past_delete_horizon
    if not n:
        return None
    head = f"{n} tombstone(s) past their delete horizon are still on disk: only a clean removes them"
    if cause in QUIET:
        why = (f"{head}, and none is due ({cause}: {cause_summary}); a passed horizon does not make a log "
               "eligible, so they stay until enough is written to the partition to trigger a clean")
        lag = max(s.delete_retention_ms, 1)
        sooner = (("make a clean come sooner: " + alter_topic(bootstrap, s.topic, "max.compaction.lag.ms", lag)
                   + f" (now {duration_ms(max_compaction_lag_ms) if max_compaction_lag_ms < LONG_MAX else 'unset'}: "
                   "a clean within that of any write; dirty bytes below the active segment are still needed)")
                  if lag < max_compaction_lag_ms else
                  f"max.compaction.lag.ms ({duration_ms(max_compaction_lag_ms)}) already forces a clean that soon "
                  "after a write")
        m = s.min_cleanable_dirty_ratio
        fix = ("write to the partition; or " + sooner,
               *(["or lower the ratio a clean waits for: " + alter_topic(
                   bootstrap, s.topic, "min.cleanable.dirty.ratio", f"{ratio_below(m):g}") + f" (now {m:g})"]
                 if m > 0 else []))
    else:
        why = f"{head}, and the next clean waits ({cause}: {cause_summary})"
        fix = cause_fix
    return {"tombstones_past_delete_horizon": n, "why": why, "fix": list(fix)}

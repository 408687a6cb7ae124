"""Consumer groups that may miss intermediate updates on a compacted topic.

Compaction keeps each key's latest value; a consumer that reads a record after the cleaner has passed
it sees only the value that survived, not the updates in between. That is all a cache needs, but a CDC
or audit consumer needs every update. A group may miss some when:

* ``lag_past_min_compaction_lag``: its time lag (now minus the timestamp of the record at its committed
  offset) exceeds the topic's ``min.compaction.lag.ms``: the records it has not read yet are old enough
  for the cleaner (once their segment rolls and the partition is picked);
* ``below_first_dirty_offset``: its committed offset lies below the first dirty offset of the partition
  leader's log (the cleaner's checkpoint): what it will read next is already compacted.

The two inputs come from different sources (the admin API's group offsets and topic config; a broker's
log dirs for the first dirty offset). The exporter joins them when both snapshots are in the same
collector, rather than PromQL, because the first dirty offset is per replica (each broker cleans its own
copy) and the one that matters is the leader's, which only the admin snapshot names; the rule table's
Python evaluator matches series one-to-one only. A condition whose inputs are missing is unknown (its
series is absent), never false.

Groups that need only each key's latest value are declared in ``monitor.yaml``
(``clusters[].latest_value_only_groups``, fnmatch patterns): their series carry
``latest_value_only="true"`` and ConsumerMayMissUpdates does not fire for them; every other group is
assumed to need every update, so the alert is on by default.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Iterable

from monitor.rules import COMMITTED_BELOW_FIRST_DIRTY, LAG_PAST_MIN_COMPACTION_LAG, holds

LAG = "lag_past_min_compaction_lag"
BELOW = "below_first_dirty_offset"
REASONS = (LAG, BELOW)


def latest_value_only(group: str, patterns: Iterable[str]) -> bool:
    """Whether the group is declared to need only each key's latest value (case-sensitive fnmatch)."""
    return any(fnmatchcase(group, p) for p in patterns)


def may_miss_updates(*, lag_seconds: float | None, min_compaction_lag_seconds: float | None, committed: int,
                     first_dirty_offset: int | None) -> dict[str, bool | None]:
    """Each reason (``REASONS``) -> whether it holds, None when its inputs are unknown."""
    return {
        LAG: None if lag_seconds is None or min_compaction_lag_seconds is None else
        holds(LAG_PAST_MIN_COMPACTION_LAG, lag_seconds, min_compaction_lag_seconds),
        BELOW: None if first_dirty_offset is None else
        holds(COMMITTED_BELOW_FIRST_DIRTY, committed, first_dirty_offset),
    }

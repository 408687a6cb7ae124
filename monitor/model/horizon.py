"""KIP-534's delete horizon: the one definition of where a tombstone or a transaction marker stands.

Since Kafka 3.1 a clean never removes a tombstone or a marker the first time it sees it: it keeps it
and stamps its batch (record batch v2, attribute bit 6) with a delete horizon, the clean's start plus
``delete.retention.ms``, written into the batch's base timestamp (``MemoryRecords.filterTo``,
``needToSetDeleteHorizon``). A later clean that starts at or after the horizon removes it
(``Cleaner.shouldRetainRecord``: ``currentTime < deleteHorizonMs`` keeps a tombstone; a removable
marker goes when ``deleteHorizonMs <= currentTime``). The records' own timestamps say nothing about it.

So each tombstone and marker is in one of three states (``STATES``):

* ``unstamped``: its batch has no horizon; the next clean that keeps it stamps it, so it goes one
  ``delete.retention.ms`` after that clean at the earliest;
* ``pending``: stamped, the horizon still ahead;
* ``passed``: the horizon has passed; the next clean removes it.

The collector, ``logdir``/``explain``, the dashboard and the audit's projections all take the state
and the checks on a horizon's value (``problem``, defined in ``monitor.kafka.record.horizon`` so the
reader can apply it) from here.
"""

from __future__ import annotations

# the checks on a horizon's value: defined in the record layer, whose reader applies them to every batch
from monitor.kafka.record.horizon import TIMESTAMP_AFTER_MAX_MS, problem

__all__ = ["PASSED", "PENDING", "STATES", "TIMESTAMP_AFTER_MAX_MS", "UNSTAMPED", "earliest_removal_ms", "problem",
           "state"]

UNSTAMPED, PENDING, PASSED = "unstamped", "pending", "passed"
STATES = (UNSTAMPED, PENDING, PASSED)


def state(horizon_ms: int | None, now_ms: int) -> str:
    """The state of a tombstone or marker whose batch carries ``horizon_ms`` (None: no horizon)."""
    if horizon_ms is None:
        return UNSTAMPED
    return PASSED if horizon_ms <= now_ms else PENDING


def earliest_removal_ms(horizon_ms: int | None, now_ms: int, delete_retention_ms: int) -> int:
    """The earliest time a clean may remove it: its horizon; never stamped, one ``delete.retention.ms``
    after a clean that would start now (the earliest the next clean can stamp it)."""
    return now_ms + max(delete_retention_ms, 0) if horizon_ms is None else horizon_ms

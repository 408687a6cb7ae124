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
and the checks on a horizon's value from here.
"""

from __future__ import annotations

UNSTAMPED, PENDING, PASSED = "unstamped", "pending", "passed"
STATES = (UNSTAMPED, PENDING, PASSED)

# Kafka 4's log.message.timestamp.after.max.ms default (KIP-937): how far a record's CreateTime may lie
# ahead of the broker's clock. A horizon is the clean's time + delete.retention.ms, so the batch's
# records are at most this far past it.
TIMESTAMP_AFTER_MAX_MS = 3_600_000


def state(horizon_ms: int | None, now_ms: int) -> str:
    """The state of a tombstone or marker whose batch carries ``horizon_ms`` (None: no horizon)."""
    if horizon_ms is None:
        return UNSTAMPED
    return PASSED if horizon_ms <= now_ms else PENDING


def earliest_removal_ms(horizon_ms: int | None, now_ms: int, delete_retention_ms: int) -> int:
    """The earliest time a clean may remove it: its horizon; never stamped, one ``delete.retention.ms``
    after a clean that would start now (the earliest the next clean can stamp it)."""
    return now_ms + max(delete_retention_ms, 0) if horizon_ms is None else horizon_ms


def problem(*, has_horizon: bool, magic: int, horizon_ms: int | None, max_timestamp: int,
            now_ms: int | None = None, delete_retention_ms: int | None = None) -> str | None:
    """Why a batch's horizon cannot be one a clean wrote (the caller names file and byte position),
    or None. A legacy message (magic < 2) has no horizon field; a horizon earlier than the batch's
    records by more than the clock skew Kafka accepts, or later than a clean starting now could set,
    is not a time Kafka computed."""
    if not has_horizon:
        return None
    if magic < 2:
        return f"delete-horizon flag (attribute bit 6) set on a magic-{magic} message, which has no horizon"
    if horizon_ms is None:
        return None
    if max_timestamp >= 0 and horizon_ms < max_timestamp - TIMESTAMP_AFTER_MAX_MS:
        return (f"delete horizon {horizon_ms} lies before the batch's records (max timestamp {max_timestamp}): "
                "a clean sets its start + delete.retention.ms")
    if now_ms is not None and delete_retention_ms is not None \
            and horizon_ms > now_ms + max(delete_retention_ms, 0) + TIMESTAMP_AFTER_MAX_MS:
        return (f"delete horizon {horizon_ms} lies past now + delete.retention.ms ({now_ms} + {delete_retention_ms}): "
                "no clean could have set it (or delete.retention.ms was lowered since)")
    return None

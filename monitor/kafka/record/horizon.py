"""Whether a batch's delete horizon (KIP-534) is a value a clean could have written: the one check.

It sits in the record layer because the reader applies it to every batch it reads (a read fault naming
file and byte position), and the record layer imports nothing above it; ``monitor.model.horizon``
(the states unstamped/pending/passed, the earliest removal) re-exports it, so there is one definition.

A clean stamps a batch it keeps with a tombstone or a marker with its start + ``delete.retention.ms``
(``MemoryRecords.filterTo``, ``needToSetDeleteHorizon``), in the base timestamp of a record batch v2
with attribute bit 6 set. So a horizon flag on a legacy message (magic 0/1: no such field) is not
Kafka's, nor is a horizon earlier than the batch's own records (they were appended before the clean
that stamped them, save for the clock skew a CreateTime may have), nor one later than a clean starting
now could set (that part needs now and ``delete.retention.ms``: callers that know them pass them).
"""

from __future__ import annotations

# Kafka 4's log.message.timestamp.after.max.ms default (KIP-937): how far a record's CreateTime may lie
# ahead of the broker's clock. A horizon is the clean's time + delete.retention.ms, so the batch's
# records are at most this far past it.
TIMESTAMP_AFTER_MAX_MS = 3_600_000
HORIZON_FLAG = 0x40  # attribute bit 6 (DefaultRecordBatch.DELETE_HORIZON_FLAG_MASK); unused in magic 0/1


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

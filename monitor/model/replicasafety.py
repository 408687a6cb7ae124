"""Replica safety: a follower out of the ISR (or offline) long enough to bring deleted keys back.

A follower that is out of the ISR fetches nothing from its leader, while the leader's LogCleaner goes on
cleaning the leader's own copy. Since KIP-534 (Kafka 3.1) a clean keeps a tombstone the first time and
stamps its batch with a delete horizon (the clean's start plus the topic's ``delete.retention.ms``,
``monitor.model.horizon``); a clean at or after the horizon removes it (``Cleaner.shouldRetainRecord``),
and a COMMIT/ABORT marker likewise once its transaction's records are gone. A tombstone written after the
follower fell out can therefore vanish from the leader ``delete.retention.ms`` after the leader's next
clean, at the earliest ``delete.retention.ms`` after the follower fell out. When the follower comes back
it fetches from its own log end offset (``ReplicaFetcherThread``): the removed tombstone is never sent,
and the follower keeps the key's older value for good: the deleted key is back on that replica, and on
every consumer that reads from it once it leads. For markers the same holds past the brokers'
``producer.id.expiration.ms`` (Kafka's default 86400000): the follower's producer state expires, and a
transaction whose ABORT marker it never received can read as committed or hold its last stable offset.

So the limit is the topic's ``delete.retention.ms`` counted from when the replica fell out: before it
nothing can have been lost (``out``, the fraction of the limit used so far), after it some may have been
(``past_limit``). ``producer.id.expiration.ms`` is a second limit, said when it is known and passed.

The duration is what the collector saw (``collectors.admin.replicas``): the first admin refresh that
found the replica out. A replica already out at the collector's first refresh has been out *at least*
that long (``lower_bound``): a figure that cannot be known is said so, never guessed.

``resurrected`` compares the two copies once the follower is back: the keys the follower still holds
alive that the leader has no record of at all (its tombstone and every older value cleaned away).
With ``cleanup.policy=compact`` alone that is the only way a key leaves a log; with ``compact,delete``
retention also removes whole segments below the log start offset, which the comparison leaves out
(keys whose follower record lies below the leader's log start offset are not counted).
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.model.comparison import Comparison

PRODUCER_ID_EXPIRATION = "producer.id.expiration.ms"
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000  # Kafka's default (ProducerStateManagerConfig)

IN_SYNC, OUT, PAST_LIMIT = "in_sync", "out", "past_limit"
STATES = (IN_SYNC, OUT, PAST_LIMIT)
# Out at least as long as the limit (a ratio of it at 1 or more): the model's test for PAST_LIMIT, which the rule
# table states to Prometheus for ReplicaMayResurrectDeletes' critical (monitor.contract.rules)
PAST_THE_LIMIT = Comparison(">=", 1)


@dataclass(frozen=True)
class ReplicaSafety:
    """One replica against its limits. ``seconds``: how long it has been out (0 in sync); ``ratio``:
    ``seconds`` over ``delete.retention.ms``; ``lower_bound``: out at least this long (it was already out
    when the collector first looked); ``past_producer_expiration``: None when the limit is unknown."""

    state: str
    seconds: float
    ratio: float
    limit_seconds: float
    lower_bound: bool = False
    producer_expiration_seconds: float | None = None
    past_producer_expiration: bool | None = None
    offline: bool = False

    @property
    def warned(self) -> bool:
        return self.state != IN_SYNC


def assess(seconds: float | None, delete_retention_ms: int, producer_id_expiration_ms: int | None = None, *,
           lower_bound: bool = False, offline: bool = False) -> ReplicaSafety:
    """Where a replica out for ``seconds`` (None: in sync) stands against ``delete.retention.ms`` and,
    when known, ``producer.id.expiration.ms``. A ``delete.retention.ms`` of 0 makes any time out past it."""
    limit = delete_retention_ms / 1000.0
    pid = producer_id_expiration_ms / 1000.0 if producer_id_expiration_ms is not None else None
    if seconds is None:
        return ReplicaSafety(IN_SYNC, 0.0, 0.0, limit, producer_expiration_seconds=pid,
                             past_producer_expiration=False if pid is not None else None)
    ratio = seconds / limit if limit > 0 else float("inf")
    return ReplicaSafety(PAST_LIMIT if PAST_THE_LIMIT.holds(ratio) else OUT, seconds, ratio, limit, lower_bound, pid,
                         PAST_THE_LIMIT.holds(seconds, pid) if pid is not None else None, offline)


@dataclass(frozen=True)
class Resurrected:
    """Keys a follower holds alive that its leader has deleted and cleaned away, with the evidence."""

    keys: tuple  # the keys (bytes), sorted
    follower_offsets: dict  # key -> offset of the follower's live record
    leader_log_end: int  # the leader's log end offset read (its copy covers the follower's offsets)

    def explain(self, topic: str, partition: int, leader: str, follower: str) -> str:
        """Cause, evidence and fix, as the user is told."""
        if not self.keys:
            return (f"{topic}-{partition}: broker {follower}'s replica holds no key that broker {leader}'s "
                    f"copy has deleted: nothing came back.")
        shown = ", ".join(repr(k) for k in self.keys[:10]) + (" ..." if len(self.keys) > 10 else "")
        return (f"{topic}-{partition}: broker {follower}'s replica still holds {len(self.keys)} key(s) that "
                f"broker {leader}'s copy has deleted ({shown}).\n"
                f"Cause: the follower was out of sync while the leader's cleaner removed those keys' tombstones "
                f"past their delete horizon (delete.retention.ms); it fetched on from its own log end and never "
                f"saw them.\n"
                f"Evidence: each key's latest record on broker {follower} is a value (offsets "
                f"{', '.join(str(self.follower_offsets[k]) for k in self.keys[:10])}); broker {leader}'s copy "
                f"(log end {self.leader_log_end}) has no record of it.\n"
                f"Fix: rebuild the follower's copy from the leader: move the replica off broker {follower} and "
                f"back with kafka-reassign-partitions.sh (or stop the broker, delete its {topic}-{partition} "
                f"folder, start it: it fetches the partition again from the leader), and keep it from leading "
                f"until then.")


def resurrected(leader: dict, follower: dict, leader_log_start: int = 0, leader_log_end: int = -1) -> Resurrected:
    """The keys alive on the follower and absent from the leader. ``leader``/``follower``: key -> (offset of
    its latest record, whether it is a tombstone), read from each copy's segments (``monitor.kafka.
    replicakeys``). A follower record below the leader's log start offset (retention, not compaction,
    removed it on the leader) is left out."""
    keys = sorted(k for k, (off, tomb) in follower.items()
                  if not tomb and k not in leader and off >= leader_log_start and k is not None)
    return Resurrected(tuple(keys), {k: follower[k][0] for k in keys}, leader_log_end)

"""Replicas in the audit: a partition whose ``<topic>-<partition>`` folder sits under several log dirs
(the log dirs of several brokers, each holding a replica) is audited once, from one replica, and the
replicas' own figures go into the ``replicas`` table.

Why: the audit's figures (records, bytes, what a clean would reclaim) are a partition's. Read from
every replica they count each record once per replica, and the replicas' different cleaning states
add up to "reclaimable" bytes that no clean will reclaim (each broker's cleaner cleans its own
replica). Disk across the cluster is still a useful total: the summary gives it apart.

Which replica is audited (``choose``), the first rule that separates them deciding:
1. the partition's leader, when it is known (the admin API's leader, matched to a log dir by the
   ``node.id`` of its ``meta.properties``): the replica consumers read and others copy;
2. the highest log end offset: the replica that has every record the others have;
3. the highest cleaner checkpoint (none: lowest): the state the others reach when their cleaners run;
4. the log dir's name, in sort order: the same choice every time.

What is flagged (``disagreement``), each replica against the audited one:
* ``behind``: a lower log end offset (``offsets_behind`` says by how much). Replication lag explains
  it: a follower still fetching, or a copy taken earlier;
* ``ahead``: a higher log end offset than the leader's: a replica that diverged (Kafka truncates it
  when it follows again), or a leader that changed since the admin API was asked;
* ``log_start_differs``: another log start offset (retention or DeleteRecords applied at another time);
* ``cleaner_checkpoint_differs``: another cleaner checkpoint: each broker's cleaner runs on its own,
  so the bytes differ by what one cleaned and the other did not yet;
* ``size_differs``: the same log end offset, log start and cleaner checkpoint, yet other bytes on disk:
  neither replication lag nor the cleaner's progress explains that (a damaged or truncated segment,
  a tombstone or marker removed on one side only).

No Spark here: the driver plans with it, and ``end_of`` runs in Spark tasks (a replica's last
segment's batch headers give its log end offset).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from monitor.model.compaction import first_dirty_offset

BEHIND, AHEAD = "behind", "ahead"
LOG_START_DIFFERS, CHECKPOINT_DIFFERS, SIZE_DIFFERS = "log_start_differs", "cleaner_checkpoint_differs", "size_differs"
FLAGS = (BEHIND, AHEAD, LOG_START_DIFFERS, CHECKPOINT_DIFFERS, SIZE_DIFFERS)

# how the audited replica was chosen: the first rule of ``choose`` that separated it from the rest
BY_LEADER, BY_END, BY_CHECKPOINT, BY_NAME = "leader", "log_end_offset", "cleaner_checkpoint", "log_dir_order"
CHOICE = ("the leader's replica when the admin API names it, else the highest log end offset, then the highest "
          "cleaner checkpoint, then the first log dir in name order")
COUNTED = "one replica per partition (the audited one)"

REPLICAS_DDL = ("topic string, partition int, log_dir string, broker string, audited boolean, chosen_by string, "
                "replicas int, log_end_offset long, log_start_offset long, bytes long, segments int, "
                "cleaner_checkpoint long, first_dirty_offset long, offsets_behind long, bytes_difference long, "
                "disagreement string")


@dataclass
class LogDirInfo:
    """What a log dir's own files say: its cleaner checkpoint and log start offsets, its broker id."""

    cleaner: dict = field(default_factory=dict)  # (topic, partition) -> offset (cleaner-offset-checkpoint)
    starts: dict = field(default_factory=dict)  # (topic, partition) -> offset (log-start-offset-checkpoint)
    broker: str | None = None  # node.id from meta.properties


def log_dir_of(segment_uri: str) -> str:
    """``<log dir>/<topic>-<partition>/<base>.log`` -> ``<log dir>``."""
    return posixpath.dirname(posixpath.dirname(segment_uri))


def group(files: list, topic_partition) -> dict:
    """(topic, partition) -> {log dir: [(uri, size)]}, each replica's segments listed once (an input
    named twice, or inside another, lists the same file twice)."""
    out: dict = {}
    for uri, size in dict(files).items():
        tp = topic_partition(uri)
        if tp[0] is None:
            continue
        out.setdefault(tp, {}).setdefault(log_dir_of(uri), []).append((uri, int(size)))
    return out


def end_of(item):
    """A Spark task's work: ``(key, files)`` -> ``(key, log end offset)``: the offset after the last
    batch of the last segment that has one (an empty active segment: its base offset), from batch
    headers only (Kafka's LogSegment.readNextOffset reads the last batch the same way)."""
    from monitor.kafka.record import SegmentReader
    from spark_analysis.arrow_rows import segment_base
    from spark_analysis.fs import open_input

    key, files = item
    return key, log_end_offset(files, open_input, SegmentReader, segment_base)


def log_end_offset(files: list, opener, reader, segment_base) -> int | None:
    """See ``end_of``; ``files`` in offset order. None when no segment could be read."""
    ordered = sorted(files, key=lambda f: (segment_base(f[0]) or 0, f[0]))
    end = None
    for uri, _size in reversed(ordered):
        base = segment_base(uri) or 0
        try:
            fh = opener(uri)
        except OSError:
            continue
        last = None
        with fh:
            for b in reader(fh, name=uri, skip_corrupt=True).batches(bodies=False):
                last = b.last_offset
        end = max(end if end is not None else base, base)
        if last is not None:
            return max(end, last + 1)
    return end


@dataclass
class Replica:
    topic: str
    partition: int
    log_dir: str
    files: list  # [(uri, size)]
    log_end_offset: int | None
    log_start_offset: int | None
    cleaner_checkpoint: int | None
    broker: str | None = None

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.files)

    @property
    def first_dirty_offset(self) -> int | None:
        if self.log_start_offset is None or self.log_end_offset is None:
            return None
        return first_dirty_offset(self.cleaner_checkpoint, self.log_start_offset, self.log_end_offset)


def replica(topic: str, partition: int, log_dir: str, files: list, end: int | None, info: LogDirInfo | None,
            segment_base) -> Replica:
    """A replica's figures: its log start offset as Kafka takes it (the checkpoint's, but never below
    the first segment's base), its cleaner checkpoint from its own log dir."""
    info = info or LogDirInfo()
    first = min((segment_base(u) or 0 for u, _ in files), default=None)
    start = info.starts.get((topic, partition))
    start = first if start is None or first is None else max(start, first)
    return Replica(topic, partition, log_dir, files, end, start, info.cleaner.get((topic, partition)), info.broker)


def _rank(r: Replica, leader: str | None) -> tuple:
    return (leader is not None and r.broker == leader,
            r.log_end_offset if r.log_end_offset is not None else -1,
            r.cleaner_checkpoint if r.cleaner_checkpoint is not None else -1)


def choose(replicas: list[Replica], leader: str | None = None) -> tuple[Replica, str]:
    """The replica to audit and the rule that chose it (the module docstring's order)."""
    ordered = sorted(replicas, key=lambda r: r.log_dir)
    ordered.sort(key=lambda r: _rank(r, leader), reverse=True)  # stable: name order among equals
    best = ordered[0]
    if len(ordered) == 1:
        return best, BY_END
    a, b = _rank(best, leader), _rank(ordered[1], leader)
    rule = next((name for name, x, y in zip((BY_LEADER, BY_END, BY_CHECKPOINT), a, b) if x != y), BY_NAME)
    return best, rule


def disagreement(r: Replica, audited: Replica) -> list[str]:
    """The flags of ``r`` against the audited replica (the module docstring says what each means)."""
    if r is audited:
        return []
    out = []
    if r.log_end_offset is not None and audited.log_end_offset is not None:
        if r.log_end_offset < audited.log_end_offset:
            out.append(BEHIND)
        elif r.log_end_offset > audited.log_end_offset:
            out.append(AHEAD)
    if r.log_start_offset != audited.log_start_offset:
        out.append(LOG_START_DIFFERS)
    if r.cleaner_checkpoint != audited.cleaner_checkpoint:
        out.append(CHECKPOINT_DIFFERS)
    if not out and r.bytes != audited.bytes:
        out.append(SIZE_DIFFERS)
    return out


def rows(replicas: list[Replica], audited: Replica, chosen_by: str) -> list[dict]:
    """The ``replicas`` table's rows of one partition (``REPLICAS_DDL``), in log dir order."""
    out = []
    for r in sorted(replicas, key=lambda r: r.log_dir):
        behind = (audited.log_end_offset - r.log_end_offset
                  if None not in (audited.log_end_offset, r.log_end_offset) else None)
        out.append({"topic": r.topic, "partition": r.partition, "log_dir": r.log_dir, "broker": r.broker,
                    "audited": r is audited, "chosen_by": chosen_by, "replicas": len(replicas),
                    "log_end_offset": r.log_end_offset, "log_start_offset": r.log_start_offset, "bytes": r.bytes,
                    "segments": len(r.files), "cleaner_checkpoint": r.cleaner_checkpoint,
                    "first_dirty_offset": r.first_dirty_offset, "offsets_behind": behind,
                    "bytes_difference": r.bytes - audited.bytes,
                    "disagreement": ",".join(disagreement(r, audited))})
    return out


def summary(replica_rows: list[dict], all_bytes: int) -> dict:
    """The summary's ``replicas`` block: what the totals count, and the disk of every replica."""
    return {"totals_count": COUNTED, "choice": CHOICE,
            "partitions_with_replicas": len({(r["topic"], r["partition"]) for r in replica_rows}),
            "replicas_of_those": len(replica_rows),
            "disagreeing": sum(1 for r in replica_rows if r["disagreement"]),
            "bytes_all_replicas": all_bytes}

"""Per-partition compaction state read from broker log dirs, incrementally.

One ``LogDirScanner`` per broker keeps the summaries of segments it has read,
keyed by path; a segment whose size, mtime and inode have not changed is not
read again, and a growing active segment is read only from where it stopped.
A partition that cannot be read (a truncated or unreadable file) is reported as a fault of that
partition; the others go on. Cleaner churn is not a fault: a segment, snapshot or index the cleaner
swaps or retention deletes between a partition's listing and its read makes the partition be listed
and read again within the refresh (``RELISTS`` times at most, counted); only a partition still changing
after that is unknown for this refresh, with the reason (``LogDirSnapshot.unknown_reasons``).
A log dir whose cleaner or log-start checkpoint is malformed, or that cannot be
listed, is down as a whole: its partitions are left out rather than computed as
if there were no checkpoint (every ratio would read 1.0); the other log dirs go on.

Which partitions are compacted: the topic's ``cleanup.policy`` by the one
precedence of ``monitor.topicconfig.effective_config`` (admin API, config file,
command line, Kafka's defaults); without a configured policy a partition counts
as compacted when the cleaner has a checkpoint for it, or it is one of Kafka's
internal compacted topics. The brokers' ``transaction.max.timeout.ms`` (which open transactions are
hanging) comes by the same precedence (``effective_broker_setting``), once per refresh.

The LSO folded from each partition's log is checked against the leader's from the admin source
(``monitor.lsocheck``: which one the model uses, and a disagreement kept while the same side holds
the same offset).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from monitor.activekeys import DEFAULT_MAX_BYTES, DEFAULT_MAX_KEYS, ActiveKeys, tally
from monitor.causes import BrokerFacts, Cause, WriteRate, explain, rate_from_dirty_section
from monitor.checkpoint import describe_entry_problem, entry_problem
from monitor.cleanerlog import CleanerLogState
from monitor.compaction import PartitionState, checkpoint_problems, partition_state
from monitor.diskspace import CleanNeed, LogDirSpace, largest_clean_group, most_needed
from monitor.kafkanames import offset_prefix, printable
from monitor.logdir import PartitionDir, Segment, meta_node_id, scan_log_dir, scan_partition
from monitor.lsocheck import ADMIN, LeaderLso, LsoCheck, LsoDisagreement, check_lso, persist
from monitor.offsetgroups import OFFSETS_TOPIC, SegmentCommits, live_groups, most_advanced, read_segment
from monitor.regularfile import os_reason
from monitor.producer_snapshot import ProducerSnapshot, ProducerSnapshotError, read_producer_snapshot
from monitor.retention import RetentionProjection, from_summaries, project_retention
from monitor.summary import SegmentSummary, summarize
from monitor.topicconfig import (NOT_CLEANED_BY_LOG_CLEANER, BrokerSetting, EffectiveConfig, effective_broker_setting,
                                 effective_config)

TRANSACTION_MAX_TIMEOUT = "transaction.max.timeout.ms"
from monitor.txnindex import txn_index_faults

log = logging.getLogger("compaction_monitor.logdirs")


@dataclass(frozen=True)
class PartitionReport:
    log_dir: str
    state: PartitionState
    eligible_since: float | None  # unix seconds when it was first seen eligible (this run)
    config_source: str  # EffectiveConfig.source: command-line | admin | config | default | unknown
    config: EffectiveConfig  # the topic's config and where each value came from
    write_rate: WriteRate  # measured between this refresh and the previous one (bytes_per_second None at first)
    faults: tuple = ()  # the read faults' texts
    lso_check: LsoCheck | None = None  # the log's LSO against the leader's (admin API)
    lso_disagreement: LsoDisagreement | None = None  # a disagreement, since when the same one holds
    leftovers: tuple = ()  # monitor.logdir.Leftover files untouched for longer than file.delete.delay.ms
    clean_needed_bytes: int | None = None  # the room its next clean needs (monitor.diskspace); None: not compacted
    transaction_max_timeout: BrokerSetting | None = None  # what the state's hanging count was made with
    active_keys: ActiveKeys | None = None  # duplicates stuck in the active segment (None: its keys not read)
    # issue 16: producer pitfalls on disk (sums of the segments' counts) and, for compact,delete, what
    # the broker's next retention check deletes (monitor.retention)
    keyless_records: int = 0
    empty_value_records: int = 0
    retention: RetentionProjection | None = None

    def cause(self, now: float, *, broker: BrokerFacts | None = None, cleaner: CleanerLogState | None = None,
              bootstrap: str | None = None, one_shot: bool = False) -> Cause:
        """The partition's one cause (``monitor.causes.explain``) from what this report knows; without a
        measured write rate, the one-shot estimate from the dirty section. ``one_shot``: a single refresh
        (``logdir``, ``explain``), which cannot know how long the partition has been eligible."""
        now_ms = int(now * 1000)
        since = None if self.eligible_since is None or one_shot else max(now - self.eligible_since, 0.0)
        rate = self.write_rate if self.write_rate.bytes_per_second is not None else \
            rate_from_dirty_section(self.state, now_ms)
        return explain(self.state, self.config, now_ms=now_ms, cleaner=cleaner, broker=broker,
                       eligible_seconds=since, write_rate=rate, faults=self.faults, bootstrap=bootstrap,
                       leftovers=tuple(x.as_dict(now_ms) for x in self.leftovers),
                       transaction_max_timeout=self.transaction_max_timeout)


@dataclass(frozen=True)
class LogDirSnapshot:
    taken_at: float
    partitions: tuple[PartitionReport, ...] = ()
    log_dir_errors: dict = field(default_factory=dict)  # log_dir -> reason
    partition_errors: dict = field(default_factory=dict)  # "topic-p" -> reason
    not_live: tuple = ()  # (log_dir, folder, kind)
    log_dirs: tuple = ()  # every log dir of the broker, up or down
    down: dict = field(default_factory=dict)  # log_dir -> (error kind: checkpoint | io, reason); partitions left out
    segments_read: int = 0
    bytes_read: int = 0
    transaction_max_timeout: BrokerSetting | None = None  # the value the partitions' hanging counts used
    # Checkpoint entries that cannot be right (monitor.checkpoint.entry_problem), each naming file and
    # line. Unlike a malformed file, which takes its log dir down (the file as a whole cannot be
    # trusted), one impossible entry in a well-formed file says nothing about the others: only that
    # partition's figures are unknown (left out, its problem in partition_errors); an entry for a
    # negative partition, which names no partition folder, is a log-dir error with the dir still up.
    entry_problems: tuple = ()
    space: tuple = ()  # monitor.diskspace.LogDirSpace of every log dir: free space against a clean's need
    # __consumer_offsets partition -> (its log end offset here, the groups with live committed offsets:
    # monitor.offsetgroups); empty when no log dir read holds one
    offsets_groups: dict = field(default_factory=dict)
    # "topic-p" -> why its figures are unknown this refresh, one of UNKNOWN_REASONS (the message is in
    # partition_errors); segments_changing is also counted as a source error of that kind
    unknown_reasons: dict = field(default_factory=dict)
    relists_total: int = 0  # partitions listed again because a file moved under the read, since the scanner started

    @property
    def error_kinds(self) -> list[str]:
        """One error kind per down log dir, per impossible checkpoint entry and per partition whose
        segments kept changing, counted by the store although the refresh succeeded."""
        return ([kind for kind, _ in self.down.values()] + ["checkpoint_entry"] * len(self.entry_problems)
                + [CHANGING] * sum(r == CHANGING for r in self.unknown_reasons.values()))


def duplicate_reason(log_dir: str, topic: str, partition: int, folders: list[str]) -> str:
    """The fault of a partition that several folders of one log dir load as (``monitor.kafkanames``)."""
    return (f"{log_dir}: duplicate log directories for {topic}-{partition}: {', '.join(map(printable, folders))} "
            "all load as it (Kafka's LogManager refuses to start with both); none read: delete the one that is not "
            "this replica")


def offsets_topic_groups(snapshots) -> frozenset | None:
    """The groups with live committed offsets in a cluster's log dirs (``LogDirSnapshot.offsets_groups``
    of its brokers): per ``__consumer_offsets`` partition, the replica with the highest log end offset;
    None when no log dir read holds one (the count cannot be known)."""
    best = most_advanced((p, found) for snap in snapshots for p, found in snap.offsets_groups.items())
    if not best:
        return None
    return frozenset().union(*(g for _, g in best.values()))


# How many times one refresh lists a partition again when a file moved between its listing and its read.
# Kafka's swap of a clean (LocalLog.replaceSegments) or a retention delete is a few renames, done in
# milliseconds, and a partition is cleaned again only after its dirty ratio builds up anew: a second
# listing almost always finds it settled. Three more listings that each change under the read mean the
# partition is being rewritten faster than it can be read; it is then unknown for this refresh, with
# the reason, rather than read again without end (the refresh of every other partition waits on it).
RELISTS = 3
# A swap in progress is waited for before the next listing, 10, 20 then 40 ms (70 ms at most): the
# cleaner thread that is swapping renames a few files per segment, and may be descheduled or waiting on
# the disk in between. Only as many partitions as the broker has cleaner threads are mid-swap at once,
# so a refresh waits for this at most log.cleaner.threads times.
SWAP_WAIT_SECONDS = 0.01

# Why a partition of a log dir that is up has no figures this refresh (LogDirSnapshot.unknown_reasons,
# exported as partition_state_unknown{reason}): its segments kept moving through RELISTS re-listings; a
# segment file that is no regular file or cannot be stat'ed; a checkpoint entry that cannot be right
# against its log; a segment that cannot be read (permissions, I/O error); two folders of one broker
# that load as the partition (duplicate_reason).
CHANGING = "segments_changing"
DUPLICATE = "duplicate_dirs"

# Kafka writes a producer snapshot in place at each roll (ProducerStateManager.writeSnapshot: the file
# created, then written), so a read can find it empty or short. A snapshot that does not read is looked
# at again after this pause: grown meanwhile, it was being written (the partition is listed again);
# unchanged, its fault is real. Paid only when a snapshot does not read.
SNAPSHOT_SETTLE_SECONDS = 0.05
UNKNOWN_REASONS = (CHANGING, "unreadable_file", "checkpoint_entry", "read_error", DUPLICATE)


class SegmentsMoved(Exception):
    """A file of a partition's listing was deleted, renamed or replaced before it was read."""


def _moved(seg: Segment, s: SegmentSummary, active: bool) -> str | None:
    """Why the summary read is not of the segment listed (the cleaner swapped it, retention deleted and
    the broker re-created it), or None. Only the active segment may change: it may only grow."""
    if active and s.size >= seg.size or (s.size, s.mtime_ns) == (seg.size, seg.mtime_ns):
        return None
    return (f"{seg.log}: listed with {seg.size} bytes (mtime {seg.mtime_ns} ns), read with {s.size} bytes "
            f"(mtime {s.mtime_ns} ns)")


def _check_listing(part: PartitionDir, summaries, snapshot: tuple[str, tuple] | None = None) -> None:
    """Raise ``SegmentsMoved`` when the partition folder no longer holds the files read: its segments
    (base offsets; the sizes and mtimes of all but the active one, which may grow; the files
    themselves, by inode) and the producer snapshot read ((path, (size, mtime, inode)) as read). Used
    where a read found something wrong, which a swap under the read also shows."""
    if snapshot is not None:
        try:
            st = os.stat(snapshot[0])
            if (st.st_size, st.st_mtime_ns, st.st_ino) != snapshot[1]:
                raise SegmentsMoved(f"{snapshot[0]}: written or replaced while read")
        except FileNotFoundError as exc:
            raise SegmentsMoved(f"{snapshot[0]}: gone while read") from exc
    now = scan_partition(part.path)
    was = [(x.base_offset, x.size, x.mtime_ns) for x in part.segments]
    is_ = [(x.base_offset, x.size, x.mtime_ns) for x in now.segments[:len(was)]]
    gone = part.snapshots[-1:] and part.snapshots[-1] not in now.snapshots  # the one read (a roll adds others)
    if was[:-1] != is_[:-1] or [w[0] for w in was[-1:]] != [i[0] for i in is_[-1:]] or gone:
        raise SegmentsMoved(f"{part.path}: its files changed while read")
    for s in summaries:
        try:
            if os.stat(s.path).st_ino != s.inode:
                raise SegmentsMoved(f"{s.path}: replaced while read")
        except FileNotFoundError as exc:
            raise SegmentsMoved(f"{s.path}: gone while read") from exc


# checkpoints the per-partition state is computed from: a malformed one takes its log dir down
STATE_CHECKPOINTS = ("cleaner-offset-checkpoint", "log-start-offset-checkpoint")
CHECKPOINT_OF = {"cleaner": "cleaner-offset-checkpoint", "log_start": "log-start-offset-checkpoint"}

# (topic, has a cleaner checkpoint) -> the topic's config; the caller's sources fed to effective_config
TopicConfigLookup = Callable[[str, bool], EffectiveConfig]


def default_lookup(topic: str, compacted: bool) -> EffectiveConfig:
    return effective_config(topic, compacted=compacted)


# () -> the brokers' transaction.max.timeout.ms and its source, by effective_broker_setting
BrokerSettingLookup = Callable[[], BrokerSetting]


def default_broker_setting() -> BrokerSetting:
    return effective_broker_setting(TRANSACTION_MAX_TIMEOUT)


# (topic, partition) -> the leader's LSO from the admin source, None when it has none
LeaderLsoLookup = Callable[[str, int], "LeaderLso | None"]


def no_leader_lso(topic: str, partition: int) -> None:
    return None


def one_each(log_dirs) -> list[str]:
    """The log dirs as given, each folder once: the same folder named twice (``--log-dir X`` and X in the
    config's ``log_dirs``; a path and a link to it) is one log dir, not two holding every partition twice
    (which would be Kafka's "Duplicate log directories" fault on each of them)."""
    seen, out = set(), []
    for d in map(str, log_dirs):
        real = os.path.realpath(d)
        if real not in seen:
            seen.add(real)
            out.append(d)
    return out


class LogDirScanner:
    def __init__(self, log_dirs, config_lookup: TopicConfigLookup = default_lookup,
                 clock: Callable[[], float] = time.time, include_all: bool = False,
                 transaction_max_timeout: BrokerSettingLookup = default_broker_setting,
                 leader_lso: LeaderLsoLookup = no_leader_lso, broker_id: str | None = None,
                 statvfs: Callable[[str], os.statvfs_result] = os.statvfs,
                 active_key_max_bytes: int = DEFAULT_MAX_BYTES, active_key_max_keys: int = DEFAULT_MAX_KEYS,
                 notify: Callable[[str], None] = log.warning, say_faults: bool = False):
        self.notify = notify  # where a name Kafka would not create or load is said, once (see _log_named)
        # the collector's: a partition's fault (an unreadable file, a read fault) said through notify too, once
        # while it lasts, since its page carries only the reason's kind; logdir and explain print them all
        self.say_faults = say_faults
        self.statvfs = statvfs  # the free-space check's one system call (a test injects a failing one)
        self.active_key_max_bytes, self.active_key_max_keys = active_key_max_bytes, active_key_max_keys
        self._active_keys: dict[tuple[str, int], ActiveKeys] = {}
        self.log_dirs = one_each(log_dirs)
        self.leader_lso = leader_lso
        self.broker_id = broker_id
        self._lso_disagreements: dict[tuple[str, int], LsoDisagreement] = {}
        self.config_lookup = config_lookup
        self.transaction_max_timeout = transaction_max_timeout
        self.clock = clock
        self.include_all = include_all
        self._cache: dict[str, SegmentSummary] = {}
        self._commits: dict[str, SegmentCommits] = {}  # __consumer_offsets segments' offset commit keys, by path
        self._snapshots: dict[str, tuple] = {}  # path -> ((size, mtime, inode), ProducerSnapshot or error text)
        self._eligible_since: dict[tuple[str, int], float] = {}
        # partitions once seen in a cleaner checkpoint stay known as compacted, so that a
        # missing checkpoint later does not make them vanish from the export (a malformed one takes the log dir down)
        self._known_compacted: set[tuple[str, int]] = set()
        # per partition at the last refresh: (time, active segment base, active segment bytes), for the write rate
        self._last_head: dict[tuple[str, int], tuple[float, int, int]] = {}
        self._named: set[str] = set()  # ignored names already logged (monitor.kafkanames), while they are there
        self._reads = 0  # segment reads and bytes read since start, for the snapshot's counters
        self._bytes = 0
        self._relists = 0  # partitions listed again because a file moved while we read, since start

    def refresh(self) -> LogDirSnapshot:
        now = self.clock()
        now_ms = int(now * 1000)
        reports, dir_errors, part_errors, not_live, down = [], {}, {}, [], {}
        entry_problems: list[str] = []
        unknown: dict[str, str] = {}  # "topic-p" -> one of UNKNOWN_REASONS
        seen_paths: set[str] = set()
        read_before = self._reads
        bytes_before = self._bytes
        txn_timeout = self.transaction_max_timeout()
        needs: dict[str, list[CleanNeed]] = {d: [] for d in self.log_dirs}
        offsets_replicas: list[tuple[int, tuple[int, frozenset]]] = []
        named: dict[str, str] = {}  # what Kafka would not create or load, and why: logged once while it is there
        held: dict[tuple[str, int], list] = {}  # partition -> (log dir, folder, its broker) of each folder read
        for d in self.log_dirs:
            try:
                ld = scan_log_dir(d)
            except OSError as exc:
                dir_errors[d] = f"cannot read log dir: {exc}"
                down[d] = ("io", dir_errors[d])
                continue
            for name, err in ld.checkpoint_errors.items():
                dir_errors[f"{d}/{name}"] = err
                if name in STATE_CHECKPOINTS:
                    down.setdefault(d, ("checkpoint", err))
            if d in down:
                continue
            not_live += [(d, folder, kind) for folder, kind in ld.not_live]
            cleaner_cp = ld.checkpoints.get("cleaner-offset-checkpoint", {})
            self._known_compacted.update(cleaner_cp)
            start_cp = ld.checkpoints.get("log-start-offset-checkpoint", {})
            for name in STATE_CHECKPOINTS:  # an entry for a negative partition names no partition folder
                for (topic, partition), offset in ld.checkpoints.get(name, {}).items():
                    why = entry_problem(partition, offset) if partition < 0 else None
                    if why:
                        line = ld.checkpoint_lines.get(name, {}).get((topic, partition))
                        msg = describe_entry_problem(f"{d}/{name}", line, topic, partition, offset, why)
                        dir_errors[f"{d}/{name}:{line}"] = msg
                        entry_problems.append(msg)
            named.update((f"{d}/{folder}", why) for folder, why in ld.ignored)
            for (topic, partition), folders in ld.duplicates.items():
                why = duplicate_reason(d, topic, partition, folders)
                named[f"{d}/{topic}-{partition} (duplicate)"] = why
                found = self.config_lookup(topic, (topic, partition) in self._known_compacted)
                if found.config.compacted or self.include_all:  # a fault of that partition, never two rows
                    part_errors[f"{topic}-{partition}"], unknown[f"{topic}-{partition}"] = why, DUPLICATE
            for part in ld.partitions:
                key = (part.topic, part.partition)
                named.update((f"{part.path}/{name}", why) for name, why in part.stray)
                held.setdefault(key, []).append((d, str(part.path),
                                                 (ld.meta.get("cluster.id"), meta_node_id(ld.meta))))
                if part.topic == OFFSETS_TOPIC and part.segments and not part.unreadable:
                    part, found_groups = self._offsets_groups(part, seen_paths)  # (listed again if it moved)
                    if found_groups is not None:
                        offsets_replicas.append((part.partition, found_groups))
                if part.topic in NOT_CLEANED_BY_LOG_CLEANER or not (part.segments or part.unreadable or part.leftovers):
                    continue  # (a partition whose only segment cannot be read is a fault, not empty; one whose
                    # segments are all mid-swap has only leftovers)
                found = self.config_lookup(part.topic, key in self._known_compacted)
                cfg = found.config
                if not cfg.compacted and not self.include_all:
                    continue
                tp = f"{part.topic}-{part.partition}"
                try:
                    part, got, moved = self._settled(part, cfg, lambda p: self._read_partition(
                        p, cfg, now_ms, cleaner_cp.get(key), start_cp.get(key), txn_timeout))
                except FileNotFoundError:  # the partition itself went (deleted, moved) while we read
                    not_live.append((d, part.path.name, "vanished"))
                    continue
                except OSError as exc:  # a segment that cannot be read (permissions, I/O error)
                    part_errors[tp], unknown[tp] = f"{part.path}: {exc}", "read_error"
                    continue
                if not (part.segments or part.unreadable or moved):
                    continue
                need = None
                if cfg.compacted and found.known("segment.bytes"):  # what its next clean writes before it can swap
                    need = largest_clean_group((s.size for s in part.segments[:-1]), cfg.segment_bytes)
                    needs[d].append(CleanNeed(need, part.topic, part.partition))
                if part.unreadable:
                    part_errors[tp], unknown[tp] = part.unreadable[0], "unreadable_file"
                    continue
                if moved:  # still changing after RELISTS re-listings: unknown, with the reason (and counted)
                    part_errors[tp], unknown[tp] = moved, CHANGING
                    continue
                summaries, snapshot, state, check, faults, bad = got
                seen_paths.update(s.path for s in summaries)
                if bad:  # unknown, not wrong: this partition only (see LogDirSnapshot.entry_problems)
                    msgs = []
                    for which, why in bad.items():
                        name = CHECKPOINT_OF[which]
                        offset = (cleaner_cp if which == "cleaner" else start_cp)[key]
                        msgs.append(describe_entry_problem(f"{d}/{name}", ld.checkpoint_lines.get(name, {}).get(key),
                                                           part.topic, part.partition, offset, why))
                    part_errors[tp], unknown[tp] = "; ".join(msgs), "checkpoint_entry"
                    entry_problems += msgs
                    continue
                if snapshot is not None:
                    seen_paths.add(snapshot[0])
                disagreement = persist(self._lso_disagreements.get(key), check, now)
                if disagreement is None:
                    self._lso_disagreements.pop(key, None)
                else:
                    self._lso_disagreements[key] = disagreement
                if faults:
                    part_errors[tp] = faults[0]
                since = None
                if state.eligible:
                    since = self._eligible_since.setdefault(key, now)
                else:
                    self._eligible_since.pop(key, None)
                rate = self._write_rate(key, now, part.segments)
                stale = tuple(x for x in part.leftovers if x.stale(now_ms, cfg.file_delete_delay_ms))
                retention = None
                if cfg.deletes and found.known("retention.ms", "retention.bytes"):
                    retention = project_retention(from_summaries(summaries), retention_ms=cfg.retention_ms,
                                                  retention_bytes=cfg.retention_bytes, now_ms=now_ms,
                                                  log_start_offset=state.log_start_offset,
                                                  log_end_offset=state.log_end_offset)
                reports.append(PartitionReport(d, state, since, found.source, found, rate, tuple(faults), check,
                                               disagreement, stale, need, txn_timeout,
                                               self._active_duplicates(key, part.segments[-1]),
                                               sum(x.keyless_records for x in summaries),
                                               sum(x.empty_value_records for x in summaries), retention))
        reports = self._one_folder_per_partition(reports, part_errors, named, held, unknown)
        for cache in (self._cache, self._snapshots, self._commits):  # forget segments and snapshots that are gone
            for path in list(cache):
                if path not in seen_paths:
                    del cache[path]
        space = tuple(self._space(d, needs[d]) for d in self.log_dirs)
        for sp in space:
            if sp.error:
                dir_errors[f"{sp.log_dir} (free space)"] = sp.error
        for k in [k for k, v in self._active_keys.items() if v.path not in seen_paths]:
            del self._active_keys[k]  # rolled, deleted or moved: its key state goes
        if self.say_faults:  # churn (CHANGING) is counted, not said; a duplicate is said above already
            named.update({f"{tp} (fault)": f"{tp}: {why}" for tp, why in part_errors.items()
                          if unknown.get(tp) not in (CHANGING, DUPLICATE)})
        self._log_named(named)
        return LogDirSnapshot(now, tuple(reports), dir_errors, part_errors, tuple(not_live), tuple(self.log_dirs),
                              down, self._reads - read_before, self._bytes - bytes_before, txn_timeout,
                              tuple(entry_problems), space, most_advanced(offsets_replicas), unknown,
                              self._relists)

    def _one_folder_per_partition(self, reports: list, part_errors: dict, named: dict, held: dict,
                                  unknown: dict) -> list:
        """A partition held in two log dirs of one broker (this scanner's, when it has a ``broker_id``: the
        collector's; else two whose meta.properties name the same cluster and node) is Kafka's "Duplicate
        log directories" as well (``LogManager.loadLog``: the broker refuses to start): that partition's
        fault, its rows dropped, never one per folder. Copies of several brokers' dirs stay one row each."""
        for (topic, partition), where in held.items():
            if len(where) < 2:
                continue
            brokers = {b for _, _, b in where}  # (cluster.id, node.id) of each log dir
            if self.broker_id is None and (len(brokers) != 1 or None in next(iter(brokers))):
                continue
            why = (f"duplicate log directories for {topic}-{partition}: {', '.join(printable(f) for _, f, _ in where)}"
                   " (Kafka's LogManager refuses to start with both); none read: delete the one that is not this "
                   "replica")
            named[f"{topic}-{partition} (duplicate)"] = why
            if any(r.state.topic == topic and r.state.partition == partition for r in reports) \
                    or f"{topic}-{partition}" in part_errors:
                part_errors[f"{topic}-{partition}"], unknown[f"{topic}-{partition}"] = why, DUPLICATE
                reports = [r for r in reports if (r.state.topic, r.state.partition) != (topic, partition)]
        return reports

    def _log_named(self, named: dict[str, str]) -> None:
        """One line per name Kafka would not create or load (``monitor.kafkanames``), and with ``say_faults``
        per partition fault, when it first shows, not on every refresh; one gone and back is logged again."""
        for what in sorted(named.keys() - self._named):
            why = named[what]
            said = what.endswith((" (duplicate)", " (fault)"))
            self.notify(printable(why if said else f"{what}: ignored: {why}"))
        self._named = set(named)

    def _settled(self, part: PartitionDir, cfg, read):
        """(the partition's listing, ``read(listing)``, None) once a listing held still while it was read;
        (the last listing, None, why) when it did not through ``RELISTS`` re-listings. A segment file the
        cleaner or retention moved between the listing and the read (``read`` raises ``SegmentsMoved``),
        or a swap in progress (a fresh ``.swap``: Kafka renames the replaced segments ``.deleted``
        before it renames the ``.swap`` live, so the listing lacks them), makes the partition be listed
        again and read again; each time counts in ``relists_total``. FileNotFoundError: the partition
        folder itself went."""
        why, swap = None, None
        for attempt in range(RELISTS + 1):
            if attempt:
                if swap is not None:
                    time.sleep(SWAP_WAIT_SECONDS * 2 ** (attempt - 1))
                self._relists += 1
                part = scan_partition(part.path)
            now_ms = int(self.clock() * 1000)
            swap = next((x for x in part.leftovers if x.kind == "swap"
                         and not x.stale(now_ms, cfg.file_delete_delay_ms)), None)
            if swap is not None:
                why = f"{part.path / swap.name}: a segment swap in progress"
                continue
            if part.unreadable or not part.segments:
                return part, None, None
            try:
                return part, read(part), None
            except SegmentsMoved as exc:
                why = str(exc)
        return part, None, (f"{part.path}: its segments kept changing under the cleaner or retention through "
                            f"{RELISTS} re-listings: {why}")

    def _read_partition(self, part: PartitionDir, cfg, now_ms: int, checkpoint, log_start, txn_timeout):
        """(summaries, (snapshot path, snapshot) or None, state, LSO check, read faults, checkpoint
        problems) of one listing. Raises ``SegmentsMoved`` when a file of the listing is gone or is no
        longer the file listed; the faults and checkpoint problems it finds are checked against a new
        listing first (a segment swapped while we read looks truncated or short of offsets)."""
        try:
            summaries = [self._summary(seg) for seg in part.segments]
            snapshot = self._latest_snapshot(part)
        except FileNotFoundError as exc:
            raise SegmentsMoved(f"{exc.filename or exc}: gone while read") from exc
        for seg, s in zip(part.segments, summaries):
            moved = _moved(seg, s, seg is part.segments[-1])
            if moved:
                raise SegmentsMoved(moved)
        bad = checkpoint_problems(part.partition, summaries, checkpoint=checkpoint, log_start_offset=log_start)
        snap = snapshot[1] if snapshot is not None else None
        args = dict(checkpoint=checkpoint, log_start_offset=log_start, transaction_max_timeout_ms=txn_timeout.value,
                    producer_snapshot=snap if isinstance(snap, ProducerSnapshot) else None,
                    producer_snapshot_error=snap if isinstance(snap, str) else None)
        state = partition_state(part.topic, part.partition, summaries, cfg, now_ms, **args)
        check = check_lso(state.last_stable_offset, state.log_end_offset, state.faults,
                          self.leader_lso(part.topic, part.partition), self.broker_id)
        if check.source == ADMIN:
            state = partition_state(part.topic, part.partition, summaries, cfg, now_ms,
                                    last_stable_offset=check.value, **args)
        faults = [f for s in summaries for f in s.faults] + list(state.transaction_faults)
        txn_faults = txn_index_faults(summaries, state.first_dirty_offset)
        if txn_faults:  # a .txnindex that is malformed or disagrees with the log: a read fault
            faults += txn_faults
            state = replace(state, faults=state.faults + len(txn_faults))
        if faults or bad or isinstance(snap, str):
            read_as = None
            if isinstance(snap, str):  # perhaps one the broker is writing: see SNAPSHOT_SETTLE_SECONDS
                time.sleep(SNAPSHOT_SETTLE_SECONDS)
                read_as = (snapshot[0], self._snapshots.get(snapshot[0], (None,))[0])
            _check_listing(part, summaries, read_as)
        return summaries, snapshot, state, check, faults, bad

    def _offsets_groups(self, part: PartitionDir, seen_paths: set) -> tuple[PartitionDir, tuple[int, frozenset] | None]:
        """(the listing read, (log end offset, groups with live committed offsets)) of a
        ``__consumer_offsets`` replica, each segment read only for what it gained since the last refresh
        (``monitor.offsetgroups``). A segment that vanished while we read (the cleaner's swap) makes the
        partition be listed again, as for the compaction figures (``RELISTS``); the groups are None when
        it still does after that, or cannot be read."""
        for attempt in range(RELISTS + 1):
            commits = []
            try:
                if attempt:
                    self._relists += 1
                    part = scan_partition(part.path)
                for seg in part.segments:
                    c, read = read_segment(seg.log, self._commits.get(str(seg.log)))
                    self._commits[c.path] = c
                    commits.append(c)
                    if read:
                        self._bytes += read
                break
            except FileNotFoundError:
                continue
            except OSError:
                return part, None
        else:
            return part, None
        seen_paths.update(c.path for c in commits)
        return part, (max((c.next_offset for c in commits), default=-1), live_groups(commits))

    def _space(self, d: str, needs: list[CleanNeed]) -> LogDirSpace:
        """The log dir's free space against its largest clean; an unreadable filesystem is that log dir's
        check down, with the reason, and the other log dirs go on. A log dir down for its checkpoints
        still has its free space, without a need (its partitions were not read)."""
        need = most_needed(n for n in needs if n.bytes > 0)
        try:
            st = self.statvfs(d)
        except OSError as exc:
            return LogDirSpace(d, None, need, f"{d}: cannot read its filesystem's free space: {os_reason(exc)}")
        return LogDirSpace(d, st.f_bavail * st.f_frsize, need)

    def _write_rate(self, key, now: float, segments) -> WriteRate:
        """Bytes appended since the last refresh: what lies from the then active segment on, less its
        size then (a cleaned and merged segment can shrink it: the rate is then unknown for this interval)."""
        head = (now, segments[-1].base_offset, segments[-1].size)
        last, self._last_head[key] = self._last_head.get(key), head
        if last is None or now <= last[0]:
            return WriteRate(None, "measured between refreshes: no previous refresh yet")
        t0, base, size = last
        written = sum(s.size for s in segments if s.base_offset >= base) - size
        if written < 0:
            return WriteRate(None, "measured between refreshes: the segments changed under the cleaner")
        return WriteRate(written / (now - t0), f"measured: {written} bytes appended in the last {now - t0:.0f} s")

    def _active_duplicates(self, key, seg) -> ActiveKeys | None:
        """The active segment's duplicates (``monitor.activekeys``), read on from the last refresh; None
        when the file went away while we read (the next refresh reads the new active segment)."""
        try:
            k = tally(seg.log, seg.base_offset, self._active_keys.get(key), max_bytes=self.active_key_max_bytes,
                      max_keys=self.active_key_max_keys)
        except OSError:
            self._active_keys.pop(key, None)
            return None
        self._active_keys[key] = k
        return k

    def _latest_snapshot(self, part) -> tuple[str, ProducerSnapshot | str] | None:
        """(path, the partition's latest producer-state snapshot or why it cannot be read), read again only
        when the file changed; None when there is none. FileNotFoundError when the broker deleted it
        while we listed (the partition is listed again)."""
        if not part.snapshots:
            return None
        path = str(part.path / f"{offset_prefix(part.snapshots[-1])}.snapshot")
        try:
            st = os.stat(path)
            key = (st.st_size, st.st_mtime_ns, st.st_ino)
            cached = self._snapshots.get(path)
            if cached is None or cached[0] != key:
                try:
                    cached = (key, read_producer_snapshot(path))
                except ProducerSnapshotError as exc:
                    cached = (key, str(exc))
                self._snapshots[path] = cached
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise  # deleted since the listing: the caller lists the partition again
            return path, f"{path}: {os_reason(exc)}"
        return path, cached[1]

    def _summary(self, seg) -> SegmentSummary:
        s, read = summarize(seg.log, seg.base_offset, self._cache.get(str(seg.log)))
        if read:
            self._reads += 1
            self._bytes += read
        self._cache[str(seg.log)] = s
        return s

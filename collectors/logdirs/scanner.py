"""Per-partition compaction state read from broker log dirs, incrementally.

One ``LogDirScanner`` per broker keeps the summaries of segments it has read
(``collectors.logdirs.read``), keyed by path; a segment whose size, mtime and inode have not changed is not
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
precedence of ``monitor.model.topicconfig.effective_config`` (admin API, config file,
command line, Kafka's defaults); without a configured policy a partition counts
as compacted when the cleaner has a checkpoint for it, or it is one of Kafka's
internal compacted topics. The brokers' ``transaction.max.timeout.ms`` (which open transactions are
hanging) comes by the same precedence (``effective_broker_setting``), once per refresh.

The LSO folded from each partition's log is checked against the leader's from the admin source
(``monitor.model.lsocheck``: which one the model uses, and a disagreement kept while the same side holds
the same offset).

The configured paths may be any folder above log dirs: each refresh finds the log dirs under them
(``collectors.logdirs.paths``, ``monitor.kafka.discovery``); a path that yields none is down with the reason.

This module walks the log dirs and joins each partition's figures into its report; one partition's
read is ``collectors.logdirs.read``, its re-listing under churn ``collectors.logdirs.churn``, and what a
refresh hands on (keyed by ``(topic, partition)``) ``collectors.logdirs.snapshot``.

Headers first (issue 31, ``headers_first``: the serving collector): a refresh reads new segment bytes by
their batch headers only, which is all the compaction state and cause need, so the first page has every
partition's ratio, eligibility and cause within seconds. The records (tombstones, keyless and empty
values, the active segment's keys, ``__consumer_offsets`` commits) are read after, at the I/O budget's pace,
partitions that matter first (``collectors.logdirs.detail``): serving, on a thread of its own
(``start_records``: continuously, giving way to each refresh, whose whole pass holds the scanner's lock);
else at the start of the next refreshes, for at most ``DETAIL_SLICE_SECONDS`` each. Until a partition's are
read its report says ``detail_pending`` and its record-level figures are not exported (serving: the records
read show from the next refresh, at the interval, or at once when all a refresh left are read).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from collectors.logdirs.churn import Relister
from collectors.logdirs.paths import ANY, resolve
from collectors.logdirs.read import LeaderLsoLookup, PartitionReader, no_leader_lso
from collectors.logdirs.detail import RecordReader, detail_priority, read_details, slice_seconds
from collectors.logdirs.snapshot import (CHANGING, DUPLICATE, LogDirSnapshot, PartitionKey, PartitionReport, ReadIo,
                                        Undecided)
from monitor.fileio.iobudget import IoBudget
from monitor.model.activekeys import (DEFAULT_BUDGET_BYTES, DEFAULT_MAX_BYTES, DEFAULT_MAX_KEYS, KEY_BYTES,
                                      KEYS_BOUND, ActiveKeys, over_budget_reason, tally)
from monitor.verdicts.facts import WriteRate
from monitor.kafka.checkpoint import describe_entry_problem, entry_problem, read_checkpoint
from monitor.model.diskspace import CleanNeed, LogDirSpace, largest_clean_group, most_needed
from monitor.kafka.kafkanames import printable
from monitor.kafka.logdir import meta_node_id, scan_log_dir
from monitor.model.lsocheck import LsoDisagreement, persist
from monitor.kafka.offsetgroups import OFFSETS_TOPIC, most_advanced
from monitor.fileio.regularfile import os_reason
from monitor.model.compaction import valid_until_ms
from monitor.model.retention import from_summaries, project_retention
from monitor.model.topicconfig import (DEFAULT, NOT_CLEANED_BY_LOG_CLEANER, UNKNOWN, BrokerSetting, EffectiveConfig,
                                       effective_broker_setting, effective_config)
from monitor.model.transactions import TRANSACTION_MAX_TIMEOUT

log = logging.getLogger("compaction_monitor.logdirs")


def duplicate_reason(log_dir: str, topic: str, partition: int, folders: list[str]) -> str:
    """The fault of a partition that several folders of one log dir load as (``monitor.kafka.kafkanames``)."""
    return (f"{log_dir}: duplicate log directories for {topic}-{partition}: {', '.join(map(printable, folders))} "
            "all load as it (Kafka's LogManager refuses to start with both); none read: delete the one that is not "
            "this replica")


def undecided_partition(log_dir: str, part, found: EffectiveConfig) -> Undecided:
    """A partition not known to be compacted or not (``Undecided``), with what its listing shows."""
    why = ("the admin API did not give it" if found.sources.get("cleanup.policy") == UNKNOWN
           else "no admin API, config file entry or --topic-config for it")
    reason = (f"not judged: never cleaned (no entry in {log_dir}/cleaner-offset-checkpoint) and its cleanup.policy "
              f"is not known ({why}), so whether it is compacted cannot be told; give --topic-config "
              f"{part.topic}:cleanup.policy=compact (or its entry in --config) to judge it, or --all to read it")
    segs = part.segments
    return Undecided(log_dir, part.topic, part.partition, reason, part.size, len(segs),
                     segs[0].base_offset if segs else None, segs[-1].base_offset if segs else None)


class CheckpointRecheck:
    """One partition's cleaner checkpoint entry: ``value`` as the log dir's read gave it, then as read
    again by a faulty read (called: ``collectors.logdirs.read.PartitionReader.read``), so that the
    partition's next read, after ``SegmentsMoved``, uses the entry that matches the clean it saw. A file
    that cannot be read again keeps the value (its problems are the log dir's, said by its own read)."""

    def __init__(self, path: Path, key, value):
        self.path, self.key, self.value = path, key, value

    def __call__(self):
        try:
            self.value = read_checkpoint(self.path).get(self.key)
        except (OSError, ValueError):
            pass
        return self.value


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



@dataclass
class ScanProgress:
    """How far one refresh is, for a progress line (``cli.progress``): handed to the scanner's ``progress``
    callback as each log dir is listed and after each of its partitions, the same object each time. The
    total grows as log dirs are listed (each is listed when its turn comes, not all first: a listing read
    minutes before its partitions would be stale), so it is final only once ``log_dirs_listed == log_dirs``."""

    log_dirs: int = 0  # the log dirs found under the paths
    log_dirs_listed: int = 0
    partitions_listed: int = 0  # partition folders in the log dirs listed so far
    partitions_done: int = 0
    bytes_read: int = 0  # segment bytes read by this refresh so far


class Folded:
    """What a partition's last fold was made from, kept with its report so that an unchanged partition's next
    refresh reuses the report rather than reading and folding it again (issue 43: a refresh costs what changed).
    ``part``: its listing then (``monitor.kafka.logdir.relisted`` hands the same object on while nothing in it
    moved; another is compared by ``listing_key``); ``entries``: its cleaner and log-start checkpoint entries; the
    report's ``config``: the topic's config object (one per
    topic while its values are the same: ``LogDirScanner._config``); ``leader``: the leader's LSO as the admin API
    gave it (``leader_key``); ``valid_until_ms``: the first instant a figure of the report moves with the clock
    (``monitor.model.compaction.valid_until_ms``, and its leftovers' file.delete.delay.ms); ``seen``: the files the
    reader keeps for it; ``need``: its next clean's room (``CleanNeed``)."""

    __slots__ = ("part", "entries", "report", "leader", "valid_until_ms", "seen", "need")

    def __init__(self, part, entries, report, leader, valid_until, seen, need):
        self.part, self.entries, self.report, self.leader = part, entries, report, leader
        self.valid_until_ms, self.seen, self.need = valid_until, seen, need


def listing_key(part) -> tuple:
    """What of a partition's listing its report is folded from: each segment's base, size, mtime, inode and index
    files, its producer snapshots' offsets, its leftovers and unlogged indexes. Equal keys (and checkpoint entries),
    equal reads: a segment is read only where its size, mtime or inode moved (``collectors.logdirs.read``), a
    snapshot's name is the offset it holds the producers' state at, and Kafka writes it once."""
    return (tuple((x.base_offset, x.size, x.mtime_ns, x.ino, x.has_index, x.has_timeindex, x.has_txnindex)
                  for x in part.segments), tuple(part.snapshots), tuple(part.leftovers), tuple(part.unlogged))


_NO_ENTRIES: dict = {}  # a checkpoint the listing has not (read, never written)


def entries_of(ld, key) -> tuple:
    """A partition's cleaner and log-start checkpoint entries in its log dir's listing (None: none)."""
    cps = ld.checkpoints
    return (cps.get("cleaner-offset-checkpoint", _NO_ENTRIES).get(key),
            cps.get("log-start-offset-checkpoint", _NO_ENTRIES).get(key))


def leader_key(found) -> tuple | None:
    """The leader's LSO input of a partition's LSO check (``monitor.model.lsocheck.check_lso``), without when the
    admin API gave it: an admin refresh that found the same offsets changes no report."""
    return None if found is None else (found.leader, found.last_stable_offset, found.high_watermark)


@dataclass
class _Pass:
    """One refresh's tables as its steps fill them (``LogDirScanner.refresh``): what it read and reports,
    what it could not and why, and what it hands on to the next (the records queue)."""

    now: float
    now_ms: int
    txn_timeout: BrokerSetting
    read_offsets: bool  # the offsets topic's commits read this pass (no partition's records pending)
    reads_before: int  # the reader's counters when the pass began: the snapshot's segments and bytes read
    bytes_before: int
    at: ScanProgress
    reports: list = field(default_factory=list)
    dir_errors: dict = field(default_factory=dict)
    part_errors: dict = field(default_factory=dict)
    not_live: list = field(default_factory=list)
    down: dict = field(default_factory=dict)
    entry_problems: list = field(default_factory=list)
    unknown: dict = field(default_factory=dict)  # (topic, partition) -> one of UNKNOWN_REASONS
    seen_paths: set = field(default_factory=set)  # the files read: what the reader keeps for the next pass
    # what Kafka would not create or load, and why: logged once while it is there
    named: dict = field(default_factory=dict)
    undecided: dict = field(default_factory=dict)  # (topic, partition) -> Undecided
    offsets_replicas: list = field(default_factory=list)  # (partition, (log end offset, groups))
    folders: dict = field(default_factory=dict)  # partition -> (log dir, folder, its broker) of each folder read
    needs: dict = field(default_factory=dict)  # log dir -> CleanNeed of its compacted partitions
    queue: list = field(default_factory=list)  # (priority, key, segment paths) whose records are pending
    listed: set = field(default_factory=set)  # the partition folders whose listing was settled or held
    cleaner_entries: dict = field(default_factory=dict)  # partition -> its cleaner checkpoint entry as last read
    # (topic, known compacted) -> its EffectiveConfig: looked up once a topic in a pass, so its partitions share one
    # config and its sources rather than a copy each (issue 43: ~700 B a partition)
    configs: dict = field(default_factory=dict)
    rates: dict = field(default_factory=dict)  # partition -> its write rate, measured by _reuse before a fold
    owners: dict = field(default_factory=dict)  # log dir -> (cluster.id, node.id) its meta.properties names
    folded: dict = field(default_factory=dict)  # partition -> Folded: what the next refresh may reuse
    reused: int = 0  # reports reused unchanged this pass (_reuse)
    folds: int = 0  # reports folded this pass (_fold)


class LogDirScanner:
    """One broker's log dirs, refreshed into a ``LogDirSnapshot`` (``refresh``). What each partition's
    report needs from outside comes through the constructor: its topic config (``config_lookup``), the
    brokers' transaction.max.timeout.ms, the leader's LSO, the clock and the free-space call; between
    refreshes it keeps, per partition, when it became eligible, the last active segment's head (the
    write rate), an LSO disagreement and the active segment's keys read so far."""

    def __init__(self, log_dirs, config_lookup: TopicConfigLookup = default_lookup,
                 clock: Callable[[], float] = time.time, include_all: bool = False,
                 transaction_max_timeout: BrokerSettingLookup = default_broker_setting,
                 leader_lso: LeaderLsoLookup = no_leader_lso, broker_id: str | None = None,
                 statvfs: Callable[[str], os.statvfs_result] = os.statvfs,
                 active_key_max_bytes: int = DEFAULT_MAX_BYTES, active_key_max_keys: int = DEFAULT_MAX_KEYS,
                 active_key_budget_bytes: int = DEFAULT_BUDGET_BYTES,
                 notify: Callable[[str], None] = log.warning, say_faults: bool = False, node=ANY,
                 list_undecided: bool = False, state=None, headers_first: bool = False,
                 io_budget: IoBudget | None = None, progress: Callable[[ScanProgress], None] | None = None,
                 serves: Callable[[frozenset], bool] | None = None):
        # the collector's: whether this scanner is still the one for the node.ids found under the paths
        # (collectors.logdirs.paths.split_nodes); one that is not is replaced after this refresh
        # (collectors.logdirs.brokers) and reads nothing (see _handed_over). None: always (the one-shot commands)
        self.serves = serves
        self.progress = progress  # called as the refresh goes (ScanProgress): the one-shot commands' progress line
        self.state = state  # collectors.logdirs.summary_state.SummaryState: loaded at the first refresh, saved after one
        # that changed what the reader holds; None: no cache (the one-shot commands)
        self.headers_first = headers_first
        # (priority, key, segment paths) of the partitions whose records are pending, from the last refresh;
        # None before the first (nothing known yet)
        self._detail_queue: list | None = None
        self._header_seconds = 0.0  # how long the last refresh's header half took (logdir_detail.slice_seconds)
        self._records: RecordReader | None = None  # the serving collector's record pass, on its own thread
        self.notify = notify  # where a name Kafka would not create or load is said, once (see _log_named)
        # the collector's: a partition's fault (an unreadable file, a read fault) said through notify too, once
        # while it lasts, since its page carries only the reason's kind; logdir and explain print them all
        self.say_faults = say_faults
        self.statvfs = statvfs  # the free-space check's one system call (a test injects a failing one)
        self.active_key_max_bytes, self.active_key_max_keys = active_key_max_bytes, active_key_max_keys
        self._active_keys: dict[PartitionKey, ActiveKeys] = {}
        # the budget of all active segments' key sets together (ActiveKeys.held_bytes), and what each holds as counted
        self.active_key_budget_bytes = active_key_budget_bytes
        self._key_held: dict[PartitionKey, int] = {}
        self.active_keys_held = 0
        self.log_dirs = one_each(log_dirs)  # as configured: any path, resolved at each refresh (logdir_paths)
        self.node = node  # with several brokers under the paths, the one whose log dirs this scanner reads
        self.list_undecided = list_undecided  # logdir: also the partitions not known to be compacted or not
        self.broker_id = broker_id
        self._lso_disagreements: dict[PartitionKey, LsoDisagreement] = {}
        self.config_lookup = config_lookup
        self.transaction_max_timeout = transaction_max_timeout
        self.clock = clock
        self.include_all = include_all
        # re-listings under churn (counted since start) and one partition's read (its caches, by path)
        self._churn = Relister(clock)
        self._reader = PartitionReader(self._churn, leader_lso, broker_id, headers_first=headers_first,
                                       budget=io_budget, notify=lambda line: self.notify(printable(line)))
        self._eligible_since: dict[PartitionKey, float] = {}
        # partitions once seen in a cleaner checkpoint stay known as compacted, so that a
        # missing checkpoint later does not make them vanish from the export (a malformed one takes the log dir down)
        self._known_compacted: set[PartitionKey] = set()
        # per partition at the last refresh: (time, active segment base, active segment bytes), for the write rate
        self._last_head: dict[PartitionKey, tuple[float, int, int]] = {}
        self._named: set[str] = set()  # ignored names already logged (monitor.kafka.kafkanames), while they are there
        self._restored = False
        self._reports: dict[PartitionKey, PartitionReport] = {}  # the last refresh's, for a partition held (_hold)
        self._folded: dict[PartitionKey, Folded] = {}  # the last refresh's reports with what they were folded from
        self._configs: dict = {}  # (topic, known compacted) -> the last refresh's EffectiveConfig (_config)
        self.folds = self.reuses = 0  # reports folded and reused since start (a test counts them)
        self._listings: dict = {}  # log dir -> its last listing, taken again where a folder did not change

    def refresh(self) -> LogDirSnapshot:
        """One pass (``_refresh``); serving, with the record pass on its own thread given way to for all of it
        (``RecordReader.header_turn``: the summaries it folds in place are read and replaced by the pass)."""
        with self._records.header_turn() if self._records is not None else nullcontext():
            return self._refresh()

    def _refresh(self) -> LogDirSnapshot:
        """One pass over the broker's log dirs, in the steps named below: the log dirs under the paths found
        (none read by a scanner the brokers found are no longer for: ``_handed_over``); what the last refresh
        left to read; each log dir listed in its turn and its partitions read where they changed, each into
        its report; then what the pass leaves to the log dirs and the scanner, and the snapshot."""
        now = self.clock()
        res = resolve(self.log_dirs, self.node)
        if self.serves is not None and not self.serves(res.nodes):
            return self._handed_over(now, res)
        self._restore_cache()
        before = (self._reader.reads, self._reader.bytes)  # the snapshot's segments and bytes read count from here
        read_offsets = self._read_pending_records()
        header_start = time.monotonic()
        txn_timeout = self.transaction_max_timeout()
        r = self._start_pass(now, res, txn_timeout, read_offsets, before)
        for d in res.log_dirs:
            r.at.log_dirs_listed += 1
            ld = self._list_log_dir(r, d)
            if ld is not None:
                for part in self._counted(ld.partitions, r.at, r.bytes_before):
                    self._partition(r, d, ld, part)
        r.reports = self._one_folder_per_partition(r.reports, r.part_errors, r.named, r.folders, r.unknown)
        if self.headers_first:
            self._detail_queue = sorted(r.queue)
            self._header_seconds = time.monotonic() - header_start
            if self._records is not None:
                self._records.hand_over(self._detail_queue)
        return self._hand_on(r, res)

    def start_records(self, drained: Callable[[], None] = lambda: None,
                      sleep: Callable[[float], None] | None = None) -> None:
        """Serving, headers first: the record pass on a thread of its own from now on
        (``collectors.logdirs.detail.RecordReader``), reading what each refresh leaves pending, continuously at
        the I/O budget, in place of a slice at the start of each refresh. The one-shot commands never start it
        (they read whole, synchronously). ``drained`` is called when it has read all a refresh left (the runner's
        wake: the next refresh puts it on the page). ``stop_records`` ends and joins it."""
        if self.headers_first and self._records is None:
            node = "" if self.broker_id is None else f"-{self.broker_id}"
            self._records = RecordReader(self._reader, threading.Lock(), sleep, name=f"records{node}",
                                         drained=drained)
            if self._detail_queue:
                with self._records.header_turn():
                    self._records.hand_over(self._detail_queue)
            self._records.start()

    def stop_records(self, timeout: float = 10.0) -> None:
        if self._records is not None:
            self._records.stop(timeout)

    def _handed_over(self, now: float, res) -> LogDirSnapshot:
        """The snapshot of a scanner the brokers now found under its paths are no longer for (the no-broker
        source once a broker's log dir shows up; one broker's once a second one shows beside it): the hook
        run after this refresh (``collectors.logdirs.brokers``) puts each broker's own scanner in its place,
        which reads their log dirs at once. Read here too, every segment would be read twice by the refresh
        that finds them, and this page would carry the log dirs under a label that is about to go. So it
        reads nothing (its caches, and its summary cache file, which the next scanner of its label loads,
        untouched): the node.ids found, for the hook, and the paths that yield no log dir, still down."""
        down = dict(res.unresolved)
        return LogDirSnapshot(now, log_dir_errors={d: why for d, (_, why) in down.items()}, log_dirs=tuple(down),
                              down=down, relists_total=self._churn.relists, nodes=res.nodes,
                              unresolved=res.unresolved)

    def _restore_cache(self) -> None:
        """At the first refresh, the summary cache loaded (``collectors.logdirs.summary_state``): what a
        restart can trust is not read again."""
        if self.state is not None and not self._restored:
            self._restored = True
            self._reader.restore(self.state.load())

    def _read_pending_records(self) -> bool:
        """Headers first, before anything is listed: the records the last refresh left pending read for one
        slice (``collectors.logdirs.detail``), so that they come whatever this pass finds. True when the
        offsets topic's commits are read this pass: they are records too, read once none are pending."""
        if self._records is not None:  # read on its own thread: none pending is none left in its queue
            return self._detail_queue is not None and not self._records.pending()
        if self.headers_first and self._detail_queue:
            read_details(self._reader, self._detail_queue, slice_seconds(self._header_seconds))
        return not self.headers_first or self._detail_queue == []

    def _start_pass(self, now: float, res, txn_timeout: BrokerSetting, read_offsets: bool,
                    before: tuple[int, int]) -> "_Pass":
        """The pass's tables, with what finding the log dirs said: each path or log dir down is a log-dir
        error (and, for the collector, said once while it lasts); the names Kafka would not load, logged."""
        r = _Pass(now, int(now * 1000), txn_timeout, read_offsets, *before, ScanProgress(len(res.log_dirs)))
        r.needs = {d: [] for d in res.log_dirs}
        r.down.update(res.down)
        r.dir_errors.update((d, why) for d, (_, why) in res.down.items())
        r.named.update(res.said)
        if self.say_faults:  # the collector: a path or log dir down said once while it lasts (logdir prints them)
            r.named.update((f"{d} (down)", why if why.startswith(d) else f"{d}: {why}")
                           for d, (_, why) in res.down.items())
        return r

    def _list_log_dir(self, r: "_Pass", d: str):
        """The log dir listed (``monitor.kafka.logdir.scan_log_dir``) when its turn comes, with what its
        listing says of itself: a log dir that cannot be listed, or whose cleaner or log-start checkpoint is
        malformed, is down as a whole (None: its partitions are not read, rather than read against no
        checkpoint); else its folders not live, its checkpoints' impossible entries for no partition, the
        names Kafka would not load and the partitions held by two folders (a fault of that partition)."""
        try:
            ld = self._listings[d] = scan_log_dir(d, self._listings.get(d))
        except OSError as exc:
            r.dir_errors[d] = f"cannot read log dir: {exc}"
            r.down[d] = ("io", r.dir_errors[d])
            return None
        for name, err in ld.checkpoint_errors.items():
            r.dir_errors[f"{d}/{name}"] = err
            if name in STATE_CHECKPOINTS:
                r.down.setdefault(d, ("checkpoint", err))
        if d in r.down:
            return None
        r.not_live += [(d, folder, kind) for folder, kind in ld.not_live]
        self._known_compacted.update(ld.checkpoints.get("cleaner-offset-checkpoint", {}))
        for name in STATE_CHECKPOINTS:  # an entry for a negative partition names no partition folder
            for (topic, partition), offset in ld.checkpoints.get(name, {}).items():
                why = entry_problem(partition, offset) if partition < 0 else None
                if why:
                    line = ld.checkpoint_lines.get(name, {}).get((topic, partition))
                    msg = describe_entry_problem(f"{d}/{name}", line, topic, partition, offset, why)
                    r.dir_errors[f"{d}/{name}:{line}"] = msg
                    r.entry_problems.append(msg)
        r.named.update((f"{d}/{folder}", why) for folder, why in ld.ignored)
        for (topic, partition), folders in ld.duplicates.items():
            why = duplicate_reason(d, topic, partition, folders)
            r.named[f"{d}/{topic}-{partition} (duplicate)"] = why
            found = self.config_lookup(topic, (topic, partition) in self._known_compacted)
            if found.config.compacted or self.include_all:  # a fault of that partition, never two rows
                r.part_errors[(topic, partition)], r.unknown[(topic, partition)] = why, DUPLICATE
        return ld

    def _partition(self, r: "_Pass", d: str, ld, part) -> None:
        """One partition of the listing: noted as held by this folder (``_one_folder_per_partition``), its
        offset commits read when it is a ``__consumer_offsets`` replica, then, when it is compacted (or
        ``--all``), read where it changed and folded into its report; one not known to be compacted or not
        is listed as undecided for ``logdir``. Whatever keeps it from a report is its fault, not the pass's."""
        key = (part.topic, part.partition)
        if part.stray:
            r.named.update((f"{part.path}/{name}", why) for name, why in part.stray)
        owner = r.owners.get(d)
        if owner is None:  # (cluster.id, node.id) of the log dir's meta.properties: read once a log dir a pass
            owner = r.owners[d] = (ld.meta.get("cluster.id"), meta_node_id(ld.meta))
        r.folders.setdefault(key, []).append((d, str(part.path), owner))
        if part.topic == OFFSETS_TOPIC and part.segments and not part.unreadable and r.read_offsets:
            part, found_groups = self._reader.offsets_groups(part, r.seen_paths)  # (listed again if it moved)
            if found_groups is not None:
                r.offsets_replicas.append((part.partition, found_groups))
        if part.topic in NOT_CLEANED_BY_LOG_CLEANER or not (part.segments or part.unreadable or part.leftovers):
            return  # (a partition whose only segment cannot be read is a fault, not empty; one whose
            # segments are all mid-swap has only leftovers)
        asked = (part.topic, key in self._known_compacted)
        found = r.configs.get(asked)
        if found is None:
            found = r.configs[asked] = self._config(asked)
        if not found.config.compacted and not self.include_all:
            if self.list_undecided and found.sources.get("cleanup.policy") in (DEFAULT, UNKNOWN):
                r.undecided[key] = undecided_partition(d, part, found)
            return
        if self._reuse(r, d, ld, part, found):
            return
        read = self._read_settled(r, d, ld, part, found.config)
        if read is None:
            return
        part, got, moved, gap = read
        r.listed.add(str(part.path))
        if gap is not None:
            self._hold(r, key, part, gap)
            return
        if not (part.segments or part.unreadable or moved):
            return
        need = None
        if found.config.compacted and found.known("segment.bytes"):  # what its next clean writes before it can swap
            need = largest_clean_group((s.size for s in part.segments[:-1]), found.config.segment_bytes)
            r.needs[d].append(CleanNeed(need, part.topic, part.partition))
        if part.unreadable:
            r.part_errors[key], r.unknown[key] = part.unreadable[0], "unreadable_file"
        elif moved:  # still changing after RELISTS re-listings: unknown, with the reason (and counted)
            r.part_errors[key], r.unknown[key] = moved, CHANGING
        else:
            self._fold(r, d, ld, part, found, got, need)

    def _config(self, asked: tuple[str, bool]) -> EffectiveConfig:
        """The topic's config for this pass (looked up once a topic a pass); the last pass's object while its values
        and sources are the same, so that a report folded with it can be told unchanged by identity (``_reuse``)."""
        found = self.config_lookup(*asked)
        last = self._configs.get(asked)
        if last is not None and last == found:
            found = last
        self._configs[asked] = found
        return found

    def _reuse(self, r: "_Pass", d: str, ld, part, found: EffectiveConfig) -> bool:
        """The partition's last report handed on again, unread and unfolded, when nothing it was folded from moved
        (``Folded``): the same listing and checkpoint entries, the same config object, transaction.max.timeout.ms and
        leader LSO, no figure of it due to move with the clock yet, and the same write rate (measured here, as every
        refresh does; a partition written to since is never reused). A report whose records are pending, held, or
        without its active segment's keys is never kept for reuse (``_fold``). Costs the listing's stats, a key
        and a few comparisons; no summary, state or report is made."""
        key = (part.topic, part.partition)
        f = self._folded.get(key)
        if f is None or part.unreadable:
            return False
        rep = f.report
        if (rep.config is not found or rep.log_dir != d or r.now_ms >= f.valid_until_ms
                or (rep.transaction_max_timeout is not r.txn_timeout and rep.transaction_max_timeout != r.txn_timeout)
                or f.leader != leader_key(self._reader.leader_lso(*key)) or f.entries != entries_of(ld, key)
                or (f.part is not part and listing_key(f.part) != listing_key(part))):
            return False
        if not self._still_unwritten(key, r.now, part, f):
            rate = r.rates[key] = self._write_rate(key, r.now, part.segments)
            if rate != rep.write_rate:
                return False
            del r.rates[key]
        f.part = part  # an equal listing: the one kept from now on
        r.listed.add(str(part.path))
        r.seen_paths.update(f.seen)
        if f.need is not None:
            r.needs[d].append(f.need)
        if rep.faults:
            r.part_errors[key] = rep.faults[0]
        r.reports.append(rep)
        r.folded[key] = f
        r.reused += 1
        return True

    def _read_settled(self, r: "_Pass", d: str, ld, part, cfg):
        """(listing, read, why still moving, why its listing has a gap) of the partition read where it
        changed, listed again while the cleaner or retention moves its files
        (``collectors.logdirs.churn.Relister.settled``); None when the partition went while read (not live:
        "vanished") or a segment cannot be read (its fault)."""
        key = (part.topic, part.partition)
        cleaner_cp = ld.checkpoints.get("cleaner-offset-checkpoint", {})
        start_cp = ld.checkpoints.get("log-start-offset-checkpoint", {})
        recheck = CheckpointRecheck(Path(d) / CHECKPOINT_OF["cleaner"], key, cleaner_cp.get(key))
        try:
            return self._churn.settled(part, cfg, lambda p: self._reader.read(
                p, cfg, r.now_ms, recheck.value, start_cp.get(key), r.txn_timeout, recheck))
        except FileNotFoundError:  # the partition itself went (deleted, moved) while we read
            r.not_live.append((d, part.path.name, "vanished"))
        except OSError as exc:  # a segment that cannot be read (permissions, I/O error)
            r.part_errors[key], r.unknown[key] = f"{part.path}: {exc}", "read_error"
        finally:
            r.cleaner_entries[key] = recheck.value
        return None

    def _hold(self, r: "_Pass", key: PartitionKey, part, gap: str) -> None:
        """A partition whose listing raced a rename and still had a gap when listed again
        (``collectors.logdirs.churn.listing_gap``): the last refresh's report, marked held with the reason,
        and what the reader keeps of it kept (its files are checked as ever when next read); none before
        (the first refresh): unknown, its segments changing, rather than figures without a segment."""
        prev = self._reports.get(key)
        r.seen_paths.update(self._reader.paths_under(part.path))
        if prev is None:
            r.part_errors[key], r.unknown[key] = gap, CHANGING
        else:
            r.reports.append(replace(prev, held=prev.held or gap))

    def _fold(self, r: "_Pass", d: str, ld, part, found: EffectiveConfig, got, need) -> None:
        """A partition read into its report: unless a checkpoint entry cannot be right against its log (then
        unknown, not wrong: that partition only, see ``LogDirSnapshot.entry_problems``), its state with what
        the scanner keeps between refreshes (the LSO disagreement, since when it is eligible, the write rate,
        the active segment's keys), its leftovers and its retention; headers first, queued for its records."""
        key, now, cfg = (part.topic, part.partition), r.now, found.config
        summaries, snapshot, state, check, faults, bad = got
        r.seen_paths.update(s.path for s in summaries)
        if bad:
            msgs = []
            for which, why in bad.items():
                name = CHECKPOINT_OF[which]
                offset = r.cleaner_entries.get(key) if which == "cleaner" else ld.checkpoints.get(name, {})[key]
                msgs.append(describe_entry_problem(f"{d}/{name}", ld.checkpoint_lines.get(name, {}).get(key),
                                                   part.topic, part.partition, offset, why))
            r.part_errors[key], r.unknown[key] = "; ".join(msgs), "checkpoint_entry"
            r.entry_problems += msgs
            return
        if snapshot is not None:
            r.seen_paths.add(snapshot[0])
        disagreement = persist(self._lso_disagreements.get(key), check, now)
        if disagreement is None:
            self._lso_disagreements.pop(key, None)
        else:
            self._lso_disagreements[key] = disagreement
        if faults:
            r.part_errors[key] = faults[0]
        since = None
        if state.eligible:
            since = self._eligible_since.setdefault(key, now)
        else:
            self._eligible_since.pop(key, None)
        pending = None
        if self.headers_first:
            pending = not self._reader.mark_whole(part, summaries)
            if pending:
                left = [x.path for x in summaries if not x.detail_done]
                r.queue.append((detail_priority(state, summaries, r.now_ms), key, left))
        rate = r.rates.pop(key, None) or self._write_rate(key, now, part.segments)
        stale = tuple(x for x in part.leftovers if x.stale(r.now_ms, cfg.file_delete_delay_ms))
        retention = None
        if cfg.deletes and found.known("retention.ms", "retention.bytes"):
            retention = project_retention(from_summaries(summaries), retention_ms=cfg.retention_ms,
                                          retention_bytes=cfg.retention_bytes, now_ms=r.now_ms,
                                          log_start_offset=state.log_start_offset,
                                          log_end_offset=state.log_end_offset)
        report = PartitionReport(d, state, since, found.source, found, rate, tuple(faults), check, disagreement,
                                 stale, need, r.txn_timeout,
                                 None if pending else self._active_duplicates(key, part.segments[-1]),
                                 sum(x.keyless_records for x in summaries),
                                 sum(x.empty_value_records for x in summaries), retention, pending)
        r.reports.append(report)
        r.folds += 1
        if not pending and report.active_keys is not None and retention is None:
            # (a retention projection moves with the clock at every segment's expiry: folded every refresh)
            until = min([valid_until_ms(state, summaries, cfg, r.now_ms)]
                        + [x.changed_ns // 1_000_000 + cfg.file_delete_delay_ms + 1 for x in part.leftovers
                           if x not in stale])
            if until > r.now_ms + 1:
                seen = tuple(x.path for x in summaries) + ((snapshot[0],) if snapshot is not None else ())
                r.folded[key] = Folded(part, entries_of(ld, key), report, leader_key(self._reader.leader_lso(*key)),
                                       until, seen, None if need is None else CleanNeed(need, part.topic,
                                                                                          part.partition))

    def _hand_on(self, r: "_Pass", res) -> LogDirSnapshot:
        """What the pass leaves behind, then the snapshot: the reader and the active keys forget the files not
        seen (gone, or their partition not read), each log dir's free space against its largest clean, the
        names and (for the collector) faults said once, and the summary cache saved when it changed and is due."""
        self._reader.forget(r.seen_paths)  # segments and snapshots that are gone
        self._churn.forget(r.listed)
        self._reports = {(x.state.topic, x.state.partition): x for x in r.reports}  # what a held partition keeps
        self._listings = {d: x for d, x in self._listings.items() if d in res.log_dirs}  # log dirs gone: forgotten
        self._folded = r.folded  # only this pass's: a partition not folded or reused now is read again when next seen
        self.folds += r.folds
        self.reuses += r.reused
        space = tuple(self._space(d, r.needs[d]) for d in res.log_dirs)
        for sp in space:
            if sp.error:
                r.dir_errors[f"{sp.log_dir} (free space)"] = sp.error
        for k in [k for k, v in self._active_keys.items() if v.path not in r.seen_paths]:
            del self._active_keys[k]  # rolled, deleted or moved: its key state goes
            self.active_keys_held -= self._key_held.pop(k, 0)
        if self.say_faults:  # churn (CHANGING) is counted, not said; a duplicate is said above already
            r.named.update({f"{t}-{p} (fault)": f"{t}-{p}: {why}" for (t, p), why in r.part_errors.items()
                            if r.unknown.get((t, p)) not in (CHANGING, DUPLICATE)})
        self._log_named(r.named)
        cache = None
        if self.state is not None:
            if self._reader.changed and self.state.due():
                # the active segments' keys too; those restored and not yet tallied (records pending) kept as read
                keys = [*self._active_keys.values(),
                        *(k for p, k in self._reader.restored_keys.items() if p in r.seen_paths)]
                if not self.state.save([*self._reader.kept(), *keys]):
                    self._reader.changed = True  # tried again after the next refresh
            cache = (*self.state.status, self.state.restored)
        return LogDirSnapshot(r.now, tuple(r.reports), r.dir_errors, r.part_errors, tuple(r.not_live),
                              tuple(res.every), r.down, self._reader.reads - r.reads_before,
                              self._reader.bytes - r.bytes_before, r.txn_timeout, tuple(r.entry_problems), space,
                              most_advanced(r.offsets_replicas), r.unknown, self._churn.relists, state_cache=cache,
                              found=res.found, nodes=res.nodes, unresolved=res.unresolved, undecided=r.undecided,
                              io=self._io() if self.headers_first else None,
                              folded=r.folds, reused=r.reused)

    def _counted(self, parts, at: ScanProgress, bytes_before: int):
        """``parts``, with ``progress`` told after each one is done (whichever way its turn ended)."""
        if self.progress is None:
            yield from parts
            return
        at.partitions_listed += len(parts)
        self.progress(at)
        for part in parts:
            yield part
            at.partitions_done += 1
            at.bytes_read = self._reader.bytes - bytes_before
            self.progress(at)

    def busy(self) -> bool:
        """Records still to be read (or not yet known): the runner starts the next refresh at once. With the
        record pass on its own thread, only once it has read all a refresh left (one refresh then puts it on
        the page at once): a refresh after each would hold the reader back with header work, the budget idle."""
        if self._records is not None:
            return self._detail_queue is None or self._records.drained
        return self.headers_first and self._detail_queue != []

    def _io(self) -> ReadIo:
        r = self._reader
        return ReadIo(r.header_bytes, r.detail_bytes, r.pending_bytes(), r.budget.rate, self.active_keys_held,
                      sum(k.over_budget for k in self._active_keys.values()), len(r.untrusted))

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
                    or (topic, partition) in part_errors:
                part_errors[(topic, partition)], unknown[(topic, partition)] = why, DUPLICATE
                reports = [r for r in reports if (r.state.topic, r.state.partition) != (topic, partition)]
        return reports

    def _log_named(self, named: dict[str, str]) -> None:
        """One line per name Kafka would not create or load (``monitor.kafka.kafkanames``), and with ``say_faults``
        per partition fault, when it first shows, not on every refresh; one gone and back is logged again."""
        for what in sorted(named.keys() - self._named):
            why = named[what]
            said = what.endswith((" (duplicate)", " (fault)", " (found)", " (unlisted)", " (cut)", " (other broker)",
                                  " (down)", " (eras)"))
            self.notify(printable(why if said else f"{what}: ignored: {why}"))
        self._named = set(named)

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

    def _still_unwritten(self, key, now: float, part, f: "Folded") -> bool:
        """Whether the write rate ``_write_rate`` would measure now is the report's 0 without measuring it: the
        report's rate is 0 and its listing is the very object measured at the last refresh (``relisted`` hands it
        on only when no segment moved), so nothing was appended since. The last head is taken as of now, as
        ``_write_rate`` would. Why: an unchanged partition's refresh then makes no rate or head (issue 43)."""
        if f.part is not part or f.report.write_rate.bytes_per_second != 0.0:
            return False
        last = self._last_head.get(key)
        if last is None or now <= last[0]:
            return False
        self._last_head[key] = (now, last[1], last[2])
        return True

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
        if written == 0:  # said without the interval: the same rate whatever the refreshes' spacing (_reuse)
            return WriteRate(0.0, "measured: no bytes appended since the last refresh")
        return WriteRate(written / (now - t0), f"measured: {written} bytes appended in the last {now - t0:.0f} s")

    def _active_duplicates(self, key, seg) -> ActiveKeys | None:
        """The active segment's duplicates (``monitor.model.activekeys``), read on from the last refresh (at
        the first, from what the state cache kept); None when the file went away while we read (the next
        refresh reads the new active segment). Its bytes are counted in ``active_key_bytes``."""
        previous = self._active_keys.get(key) or self._reader.restored_keys.pop(seg.path, None)
        before = None if previous is None else (previous.end_position, previous.over_bound, previous.tail_crc)
        self.active_keys_held -= self._key_held.pop(key, 0)  # counted again below as it is now
        # the keys this tally may hold: its own bound, or what is left of the budget if less, so the tally stops
        # there rather than holding a whole segment's keys before the budget is checked
        room = max(self.active_key_budget_bytes - self.active_keys_held, 0) // KEY_BYTES
        max_keys = min(self.active_key_max_keys, room)
        was_over = previous is not None and previous.over_bound is not None
        try:
            k = tally(seg.path, seg.base_offset, previous, max_bytes=self.active_key_max_bytes,
                      max_keys=max_keys, count=self._count_active)
        except OSError:
            self._active_keys.pop(key, None)
            return None
        held = k.held_bytes
        stopped_by_room = (not (was_over and k is previous) and max_keys < self.active_key_max_keys
                           and k.over_bound is not None and k.over_bound.endswith(KEYS_BOUND))
        if stopped_by_room or (held and self.active_keys_held + held > self.active_key_budget_bytes):
            # past the broker's budget: this one's counts are unknown (and stay so for this file, as any bound hit)
            k.over_bound = over_budget_reason(self.active_keys_held + max(held, (max_keys + 1) * KEY_BYTES),
                                              self.active_key_budget_bytes)
            k._latest.clear()
            held = 0
        self._key_held[key] = held
        self.active_keys_held += held
        if k is not previous or (k.end_position, k.over_bound, k.tail_crc) != before:
            self._reader.changed = True  # the cache holds the keys too (collectors.logdirs.summary_state)
        self._active_keys[key] = k
        return k

    active_key_bytes = 0  # bytes the active segments' key tallies read since start

    def _count_active(self, n: int) -> None:
        self.active_key_bytes += n

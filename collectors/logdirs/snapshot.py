"""What one log-dir refresh hands on, kept in the ``Store`` and read by the exporter and the CLI: a
``PartitionReport`` per partition read (its state, config, faults, checks), and the ``LogDirSnapshot``
with what could not be read and why. Every per-partition table is keyed by ``(topic, partition)``,
as Kafka's ``TopicPartition`` is: never by the ``topic-p`` text, which a reader would have to parse
again (``monitor.kafka.kafkanames`` holds how a folder's name is read, once).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from monitor.model.activekeys import ActiveKeys
from monitor.verdicts.causes import Cause, explain
from monitor.verdicts.facts import BrokerFacts, WriteRate
from monitor.verdicts.forecasts import rate_from_dirty_section
from monitor.kafka.cleanerlog import CleanerLogState
from monitor.model.compaction import PartitionState
from monitor.model.lsocheck import LsoCheck, LsoDisagreement
from monitor.kafka.offsetgroups import most_advanced
from monitor.model.retention import RetentionProjection
from monitor.model.topicconfig import BrokerSetting, EffectiveConfig

PartitionKey = tuple[str, int]  # (topic, partition): the key of every per-partition table

# Why a partition of a log dir that is up has no figures this refresh (LogDirSnapshot.unknown_reasons,
# exported as partition_state_unknown{reason}): its segments kept moving through RELISTS re-listings; a
# segment file that is no regular file or cannot be stat'ed; a checkpoint entry that cannot be right
# against its log; a segment that cannot be read (permissions, I/O error); two folders of one broker
# that load as the partition (duplicate_reason).
CHANGING = "segments_changing"
DUPLICATE = "duplicate_dirs"
UNKNOWN_REASONS = (CHANGING, "unreadable_file", "checkpoint_entry", "read_error", DUPLICATE)


@dataclass(frozen=True, slots=True)
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
    leftovers: tuple = ()  # monitor.kafka.logdir.Leftover files untouched for longer than file.delete.delay.ms
    clean_needed_bytes: int | None = None  # the room its next clean needs (monitor.model.diskspace); None: not compacted
    transaction_max_timeout: BrokerSetting | None = None  # what the state's hanging count was made with
    active_keys: ActiveKeys | None = None  # duplicates stuck in the active segment (None: its keys not read)
    # issue 16: producer pitfalls on disk (sums of the segments' counts) and, for compact,delete, what
    # the broker's next retention check deletes (monitor.model.retention)
    keyless_records: int = 0
    empty_value_records: int = 0
    retention: RetentionProjection | None = None
    # headers first (collectors.logdirs.scanner): True while its records are still to be read (its record-level
    # figures, tombstones and keyless and empty values, are partial and not exported), False once read;
    # None for a read that takes each segment whole at once (collect --once, logdir)
    detail_pending: bool | None = None
    # why these are the last refresh's figures, kept: this refresh's listing raced the cleaner's renames
    # and still lacked a segment when listed again (collectors.logdirs.churn.listing_gap); None: read now
    held: str | None = None

    def rate(self, now: float) -> WriteRate:
        """The partition's write rate: measured between refreshes, else the one-shot estimate from its dirty
        section. The one rate every line about the partition uses (its forecast, its place in the cleaner's
        queue, the configuration review): a rate known in one is known in all (issue 41)."""
        return self.write_rate if self.write_rate.bytes_per_second is not None else \
            rate_from_dirty_section(self.state, int(now * 1000))

    def cause(self, now: float, *, broker: BrokerFacts | None = None, cleaner: CleanerLogState | None = None,
              bootstrap: str | None = None, one_shot: bool = False) -> Cause:
        """The partition's one cause (``monitor.verdicts.causes.explain``) from what this report knows; without a
        measured write rate, the one-shot estimate from the dirty section. ``one_shot``: a single refresh
        (``logdir``, ``explain``), which cannot know how long the partition has been eligible."""
        now_ms = int(now * 1000)
        since = None if self.eligible_since is None or one_shot else max(now - self.eligible_since, 0.0)
        return explain(self.state, self.config, now_ms=now_ms, cleaner=cleaner, broker=broker,
                       eligible_seconds=since, write_rate=self.rate(now), faults=self.faults, bootstrap=bootstrap,
                       leftovers=tuple(x.as_dict(now_ms) for x in self.leftovers),
                       transaction_max_timeout=self.transaction_max_timeout)


@dataclass(frozen=True)
class Undecided:
    """A partition ``logdir`` lists without judging it (``LogDirScanner(list_undecided=True)``): never cleaned
    (no cleaner checkpoint entry) and its cleanup.policy not known, so whether it is compacted at all
    cannot be told; its records are not read (``--all`` reads them), only what its listing shows."""

    log_dir: str
    topic: str
    partition: int
    reason: str
    log_bytes: int
    segments: int
    first_segment: int | None  # base offsets, from the file names
    active_segment: int | None


@dataclass(frozen=True)
class ReadIo:
    """What the scanner read since start, by pass (headers, records), the record bytes still to read and
    its I/O budget (bytes per second, None: unlimited): ``monitor.fileio.iobudget``."""
    header_bytes: int
    detail_bytes: int
    pending_bytes: int
    budget_bytes_per_second: float | None
    # the active segments' key sets (monitor.model.activekeys): memory held, and partitions stopped by its budget
    active_keys_bytes: int = 0
    active_keys_over_budget: int = 0
    # rolled segments read by headers because their indexes cannot be trusted (monitor.kafka.segindex), now
    index_untrusted_segments: int = 0


@dataclass(frozen=True)
class LogDirSnapshot:
    taken_at: float
    partitions: tuple[PartitionReport, ...] = ()
    log_dir_errors: dict = field(default_factory=dict)  # log_dir -> reason
    partition_errors: dict = field(default_factory=dict)  # (topic, partition) -> reason
    not_live: tuple = ()  # (log_dir, folder, kind)
    log_dirs: tuple = ()  # every log dir of the broker, up or down
    down: dict = field(default_factory=dict)  # log_dir -> (error kind: checkpoint | io, reason); partitions left out
    segments_read: int = 0
    bytes_read: int = 0
    transaction_max_timeout: BrokerSetting | None = None  # the value the partitions' hanging counts used
    # Checkpoint entries that cannot be right (monitor.kafka.checkpoint.entry_problem), each naming file and
    # line. Unlike a malformed file, which takes its log dir down (the file as a whole cannot be
    # trusted), one impossible entry in a well-formed file says nothing about the others: only that
    # partition's figures are unknown (left out, its problem in partition_errors); an entry for a
    # negative partition, which names no partition folder, is a log-dir error with the dir still up.
    entry_problems: tuple = ()
    space: tuple = ()  # monitor.model.diskspace.LogDirSpace of every log dir: free space against a clean's need
    # __consumer_offsets partition -> (its log end offset here, the groups with live committed offsets:
    # monitor.kafka.offsetgroups); empty when no log dir read holds one
    offsets_groups: dict = field(default_factory=dict)
    # (topic, partition) -> why its figures are unknown this refresh, one of UNKNOWN_REASONS (the message is in
    # partition_errors); segments_changing is also counted as a source error of that kind
    unknown_reasons: dict = field(default_factory=dict)
    relists_total: int = 0  # partitions listed again because a file moved under the read, since the scanner started
    # the summary cache (collectors.logdirs.summary_state): (usable, reason, entries trusted at start); None without one
    state_cache: tuple | None = None
    # the log dirs found under the configured paths (monitor.kafka.discovery.FoundLogDir, by path), the paths
    # that yield none ((kind, reason): also in down), and the partitions listed but not judged (Undecided)
    found: dict = field(default_factory=dict)
    nodes: frozenset = frozenset()  # every node.id found under the paths, this scanner's or not (logdir_brokers)
    unresolved: dict = field(default_factory=dict)
    undecided: dict = field(default_factory=dict)
    io: ReadIo | None = None  # headers first only (collect --once reads everything before it prints)
    # reports this refresh folded from the partitions' reads, and reused unchanged from the last refresh (their
    # partitions' listing, inputs and clock-bound figures the same: collectors.logdirs.scanner.Folded)
    folded: int = 0
    reused: int = 0

    @property
    def error_details(self) -> list[tuple[str, str]]:
        """(kind, message) of each error counted by the store although the refresh succeeded: one per down
        log dir (its path and reason), per impossible checkpoint entry (its file and line) and per
        partition whose segments kept changing (the partition and what moved); the first is the source's
        ``source_last_error_info``."""
        return ([(kind, reason if reason.startswith(d) else f"{d}: {reason}") for d, (kind, reason) in self.down.items()]
                + [("checkpoint_entry", str(p)) for p in self.entry_problems]
                + [(CHANGING, f"{t}-{p}: {self.partition_errors.get((t, p), CHANGING)}")
                   for (t, p), r in self.unknown_reasons.items() if r == CHANGING])

    @property
    def faults_met(self) -> bool:
        """A log dir, checkpoint entry or partition with a fault this refresh (each in ``log_dir_errors`` or
        ``partition_errors``, named there): what a one-shot read exits 1 for, ``logdir``, ``explain`` and
        ``collect --once`` alike (``cli.oneshot.FAULT_EXIT`` says it). A partition whose segments kept
        changing under the cleaner (``CHANGING``) is not one: its figures are unknown this refresh, with
        the reason, and the next read finds it settled; Kafka's own churn is no fault of the data."""
        return bool(self.log_dir_errors) or any(self.unknown_reasons.get(k) != CHANGING for k in self.partition_errors)

    @property
    def error_kinds(self) -> list[str]:
        return [kind for kind, _ in self.error_details]


def offsets_topic_groups(snapshots) -> frozenset | None:
    """The groups with live committed offsets in a cluster's log dirs (``LogDirSnapshot.offsets_groups``
    of its brokers): per ``__consumer_offsets`` partition, the replica with the highest log end offset;
    None when no log dir read holds one (the count cannot be known)."""
    best = most_advanced((p, found) for snap in snapshots for p, found in snap.offsets_groups.items())
    if not best:
        return None
    return frozenset().union(*(g for _, g in best.values()))

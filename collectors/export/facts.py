"""Each refresh's facts, joined once: per partition, per consumer group, per broker.

Why: the sources each give one view (a broker's log dirs, its JMX gauges, its log-cleaner.log, the
admin API's configs, leaders and settings, the groups' lags). A partition's cause needs several of them
at once: its log-dir report, its broker's cleaner settings, dead threads and I/O, what the cleaner log
says of it; a group's "may miss updates" needs the *leader's* replica state. Those joins were made where
the figures went out (the exporter, while building metric families, and again in ``logdir`` /
``explain``), and they drifted apart (the broker facts without the I/O limit in one, the unknown cause
of an unreadable partition stated three times). Here each join is made once, into typed facts keyed by
``(topic, partition)``, from the collector's store (``from_statuses``) or a one-shot scan
(``from_scan``; ``from_scan_brokers`` for a scan whose paths hold several brokers' log dirs); the
exporter's area modules and the CLI's text output only map them.

``FactsCache`` builds the store's facts once per change of the store (a source's refresh): every area
collector of one render reads the same facts, and the clock is read once for them (figures that depend
on it are as of that build, which ``collectors.export.exposition`` already states for the served page).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace

from collectors.logdirs.snapshot import PartitionReport, offsets_topic_groups
from monitor.verdicts.causes import Cause, unknown_cause
from monitor.verdicts.facts import BrokerFacts
from monitor.verdicts.finders import choice_key
from monitor.verdicts.fixes import IO_MAX
from monitor.verdicts.queue import BACKOFF, broker_queue, unknown_queue
from monitor.kafka.cleanerlog import CleanerLogState
from monitor.model.cleanerqueue import QueueForecast
from monitor.model.compaction import PartitionState
from monitor.kafka.offsetgroups import unlisted
# the source kinds (collectors.serving.runner.SourceStatus.kind) each fact is joined from
from monitor.contract.sourcekinds import ADMIN, CLEANER_LOG, GAUGES, GROUPS, LOG_DIRS


@dataclass(frozen=True)
class PartitionFacts:
    """One partition replica as one broker's log dirs show it. ``report`` is None when the partition
    could not be read (``fault`` says why, ``unknown_reason`` is the code its state-unknown series
    carries): its cause is then ``unknown`` (``monitor.verdicts.causes.unknown_cause``), its figures unknown."""

    cluster: str
    broker: str  # "" when the source names no broker (a one-shot scan)
    topic: str
    partition: int
    # the cause, or only its name where the collector kept it from an earlier build (``CauseCache``): ``cause``
    # explains it then, at ``now``, when asked for (the page asks only for the name: ``cause_name``)
    made: Cause | str
    report: PartitionReport | None = None
    fault: str | None = None
    unknown_reason: str | None = None
    broker_facts: BrokerFacts | None = None
    cleaner: CleanerLogState | None = None
    leader: PartitionState | None = None  # the leader's replica state, when its log dirs are read here
    now: float = 0.0  # the facts' instant (what a cause kept by name is explained at)

    @property
    def cause_name(self) -> str:
        """The partition's cause (one of ``monitor.verdicts.causes.CAUSES``), without explaining it again."""
        return self.made if isinstance(self.made, str) else self.made.cause

    @property
    def cause(self) -> Cause:
        """The partition's cause with its evidence, fix and forecast, as of ``now``."""
        if isinstance(self.made, str):
            object.__setattr__(self, "made", self.report.cause(self.now, broker=self.broker_facts,
                                                               cleaner=self.cleaner))
        return self.made

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.partition

    @property
    def state(self) -> PartitionState | None:
        return None if self.report is None else self.report.state

    @property
    def log_dir(self) -> str | None:
        return None if self.report is None else self.report.log_dir


@dataclass(frozen=True)
class LogDirFacts:
    """One broker's log dirs (a ``log_dirs`` source or a one-shot scan) with every partition's facts:
    ``partitions`` the read ones in the snapshot's order, ``unreadable`` those with a fault and no state."""

    cluster: str
    broker: str
    snapshot: object  # collectors.logdirs.scanner.LogDirSnapshot
    broker_facts: BrokerFacts | None
    cleaner: CleanerLogState | None
    partitions: tuple[PartitionFacts, ...] = ()
    unreadable: tuple[PartitionFacts, ...] = ()
    # the broker's cleaner queue, forecast over every partition read here (monitor.verdicts.queue)
    queue: QueueForecast | None = None

    def every(self) -> tuple[PartitionFacts, ...]:
        """Read and unreadable partitions, sorted by ``(topic, partition)``."""
        return tuple(sorted(self.partitions + self.unreadable, key=lambda f: f.key))

    def topics(self) -> set[str]:
        return {f.topic for f in self.partitions + self.unreadable}


@dataclass(frozen=True)
class GroupPartitionFacts:
    """One group's lag on one partition, and the leader's replica state it is judged against."""

    lag: object  # collectors.admin.source's group lag
    leader: PartitionState | None


@dataclass(frozen=True)
class GroupFacts:
    """One ``consumer_groups`` source's groups: their lags joined with the leaders' states, and the
    groups ListGroups left out against those with committed offsets on disk (``monitor.kafka.offsetgroups``)."""

    cluster: str
    snapshot: object  # collectors.admin.source.GroupSnapshot
    lags: tuple[GroupPartitionFacts, ...]
    hidden: frozenset | None  # None: cannot be known (no __consumer_offsets read, or no list)


@dataclass(frozen=True)
class Facts:
    """Everything one render maps: the statuses it was built from, the clock reading, the joins."""

    now: float
    statuses: tuple
    log_dirs: tuple[LogDirFacts, ...] = ()
    groups: tuple[GroupFacts, ...] = ()
    offsets_groups: dict = field(default_factory=dict)  # cluster -> groups on disk (None: unknown)
    brokers: dict = field(default_factory=dict)  # (cluster, broker id or None) -> BrokerFacts | None

    def of_kind(self, *kinds: str) -> list:
        """The statuses of these kinds that have a snapshot (a source down contributes nothing)."""
        return [st for st in self.statuses if st.kind in kinds and st.snapshot is not None]


def broker_facts(broker: str | None, *, gauges=None, gauges_source: str = "", admin=None) -> BrokerFacts | None:
    """The one definition of a broker's facts: DeadThreadCount and the cleaner's I/O rate from its JMX or
    Jolokia snapshot (``gauges``, read from ``gauges_source``), its log.cleaner.enable, log.cleaner.threads
    and log.cleaner.io.max.bytes.per.second from an admin snapshot. None when neither the gauges nor the
    cleaner's enable/threads settings were read (nothing to judge the cleaner by)."""
    dead = io = enabled = threads = None
    if gauges is not None:
        dead, io = gauges.dead_threads(), gauges.io_rate
    # the broker's cleaner settings, each with where it is set (BrokerSetting.per_broker: a fix names the broker)
    settings = admin.cleaner_settings.get(str(broker or ""), {}) if admin is not None else {}
    e, t = settings.get("log.cleaner.enable"), settings.get("log.cleaner.threads")
    enabled = e.value if e is not None else None
    threads = t.value if t is not None else None
    if gauges is None and enabled is None and threads is None:
        return None
    return BrokerFacts(dead, gauges_source if gauges is not None else "", enabled, threads, io, settings.get(IO_MAX),
                       settings.get(BACKOFF), broker, frozenset(k for k, v in settings.items() if v.per_broker))


def unreadable_partitions(snapshot) -> list[tuple[str, int, str]]:
    """``(topic, partition, reason)`` of each partition whose state could not be computed (a segment
    unreadable or vanished, a checkpoint entry that cannot be right), in the snapshot's order. A partition
    read with a fault (a .txnindex that disagrees) has its report, its faults counted: not here."""
    if not snapshot.partition_errors:  # the common case: no partition read is looked up
        return []
    read = {(r.state.topic, r.state.partition) for r in snapshot.partitions}
    out = []
    for (topic, partition), reason in snapshot.partition_errors.items():  # keyed (topic, partition)
        if (topic, partition) not in read:
            out.append((topic, partition, reason))
    return out


class CauseCache:
    """The collector's causes from one build of its facts to the next, by partition: a partition whose report is the
    same object as at the last build (``collectors.logdirs.scanner`` hands an unchanged partition's report on again)
    and whose broker's facts (as far as the choice of a cause reads them: ``monitor.verdicts.finders.choice_key``,
    not the cleaner's I/O rate, measured again at every refresh of the gauges), cleaner log and bootstrap are equal
    keeps its cause's name; only the others are explained again (``builds`` counts them). Why this is right with the
    clock moving: which cause holds is chosen from the report and those facts alone (the clock enters the finders
    only through the report's state, and as text: how long it has been eligible, an age), and a report is handed on
    only while none of its figures has crossed a time threshold (``monitor.model.compaction.valid_until_ms``). Only
    the name is kept (what the page exports; ~100 bytes a partition, where a cause with its evidence, fixes and
    forecast is ~3.5 KB): a kept partition's whole cause is explained at the build's instant if asked for
    (``PartitionFacts.cause``), so no figure that moves with the clock is ever shown stale."""

    def __init__(self):
        self._causes: dict = {}  # (cluster, broker, topic, partition) -> (report, its cause's name)
        # (cluster, broker) -> (choice_key of its facts, cleaner log state, bootstrap) of the last build
        self._inputs: dict = {}
        self.builds = 0  # causes explained since start

    def causes(self, cluster: str, broker: str, snapshot, now: float, broker_facts, cleaner, bootstrap) -> list:
        """The cause of each partition of ``snapshot``, in its order: explained where the report or the inputs
        changed, else its name (``PartitionFacts.made``)."""
        inputs = (choice_key(broker_facts), cleaner, bootstrap)  # the broker's facts as far as the choice reads them
        last = self._inputs.get((cluster, broker))
        same = last is not None and all(a is b or a == b for a, b in zip(last, inputs))
        self._inputs[(cluster, broker)] = inputs
        out = []
        for r in snapshot.partitions:
            key = (cluster, broker, r.state.topic, r.state.partition)
            hit = self._causes.get(key) if same else None
            if hit is None or hit[0] is not r:
                made = r.cause(now, broker=broker_facts, cleaner=cleaner, bootstrap=bootstrap)
                self._causes[key] = (r, made.cause)
                self.builds += 1
                out.append(made)
            else:
                out.append(hit[1])
        return out

    def keep_only(self, kept: set) -> None:
        """Forget the partitions not in this build (gone, unreadable, or their source down)."""
        for key in [k for k in self._causes if k not in kept]:
            del self._causes[key]


def log_dir_facts(snapshot, now: float, *, cluster: str = "", broker: str = "", broker_facts: BrokerFacts | None = None,
                  cleaner: CleanerLogState | None = None, leaders: dict | None = None, bootstrap: str | None = None,
                  one_shot: bool = False, causes: CauseCache | None = None) -> LogDirFacts:
    """Every partition of one broker's log-dir snapshot with its cause (``PartitionReport.cause``, from
    the broker's facts and its cleaner log), and each unreadable one with its unknown cause. ``causes``: the
    collector's, kept between builds (``CauseCache``); without it each cause is explained now."""
    leaders = leaders or {}
    if causes is not None and not one_shot:
        made = causes.causes(cluster, broker, snapshot, now, broker_facts, cleaner, bootstrap)
    else:
        made = [r.cause(now, broker=broker_facts, cleaner=cleaner, bootstrap=bootstrap, one_shot=one_shot)
                for r in snapshot.partitions]
    read = tuple(
        PartitionFacts(cluster, broker, r.state.topic, r.state.partition, c, report=r, broker_facts=broker_facts,
                       cleaner=cleaner, leader=leaders.get((r.state.topic, r.state.partition)), now=now)
        for r, c in zip(snapshot.partitions, made))
    bad = tuple(PartitionFacts(cluster, broker, t, p, unknown_cause(t, p, reason), fault=reason,
                               unknown_reason=snapshot.unknown_reasons.get((t, p), "read_error"),
                               broker_facts=broker_facts, cleaner=cleaner, leader=leaders.get((t, p)))
                for t, p, reason in unreadable_partitions(snapshot))
    queue = broker_queue([(r.state, r.config, r.rate(now).bytes_per_second) for r in snapshot.partitions],
                         broker_facts, cleaner, int(now * 1000))
    if bad:  # a partition that could not be read has a place in the queue no one can tell
        why = f"{bad[0].topic}-{bad[0].partition} could not be read ({bad[0].fault}): its place in the queue is unknown"
        queue = unknown_queue(queue, why)
    return LogDirFacts(cluster, broker, snapshot, broker_facts, cleaner, read, bad, queue)


def from_scan(snapshot, *, admin=None, node: str | None = None, cleaner: CleanerLogState | None = None,
              bootstrap: str | None = None) -> LogDirFacts:
    """The facts of a one-shot scan (``logdir``, ``explain``): no gauges (one read cannot measure the
    cleaner's I/O), the broker's cleaner settings from ``admin`` (its ``node`` id from meta.properties),
    causes as of the scan, how long a partition has been eligible unknown."""
    facts = broker_facts(node, admin=admin) if admin is not None and node else None
    return log_dir_facts(snapshot, snapshot.taken_at, broker_facts=facts, cleaner=cleaner, bootstrap=bootstrap,
                         one_shot=True)


def scan_brokers(snapshot) -> list[tuple[str | None, object]]:
    """A one-shot scan's snapshot cut by broker: ``(node.id, its part)`` for each node.id the log dirs'
    meta.properties name, in node.id order; one ``(node.id or None, snapshot)`` when they name one broker or
    none. A part holds the partitions read in that broker's log dirs; a partition that could not be read
    goes with the broker whose log dir its reason names, else with every broker (its place in any of
    their queues is unknown: ``log_dir_facts`` says so; ``explain`` lists it once)."""
    nodes = {path: f.node_id for path, f in snapshot.found.items() if f.node_id}
    ids = sorted(set(nodes.values()), key=lambda n: (len(n), n))
    if len(ids) < 2:
        return [(ids[0] if ids else None, snapshot)]

    def owner(reason: str) -> str | None:
        hits = {node for path, node in nodes.items() if reason.startswith(path.rstrip("/") + "/")
                or f" {path.rstrip('/')}/" in reason}
        return next(iter(hits)) if len(hits) == 1 else None

    out = []
    for node in ids:
        errors = {k: why for k, why in snapshot.partition_errors.items() if owner(why) in (node, None)}
        out.append((node, replace(
            snapshot, partitions=tuple(r for r in snapshot.partitions if nodes.get(r.log_dir) == node),
            partition_errors=errors,
            unknown_reasons={k: v for k, v in snapshot.unknown_reasons.items() if k in errors})))
    return out


def from_scan_brokers(snapshot, *, admin=None, cleaner: CleanerLogState | dict | None = None,
                      bootstrap: str | None = None) -> tuple[LogDirFacts, ...]:
    """``from_scan`` once per broker whose log dirs the scan found (``scan_brokers``): each partition judged
    with its own broker's cleaner settings (``admin``, by the node.id of its log dir's meta.properties) and
    placed in its own broker's cleaner queue. Why: a path may hold several brokers' log dirs (a node's
    volumes, a DaemonSet's hostPath, copies of a cluster's), each broker runs its own cleaner with its own
    settings; ``explain`` took the first node's settings for every partition and forecast one queue over
    both brokers' partitions (issue 42). Each part's facts carry its node.id as ``broker``. ``cleaner``: one
    log-cleaner.log's state for every part, or node.id -> each broker's own (none for a node not in it)."""
    def mine(node):
        return cleaner.get(node) if isinstance(cleaner, dict) else cleaner

    parts = scan_brokers(snapshot)
    if len(parts) == 1:
        node = parts[0][0]
        return (from_scan(snapshot, admin=admin, node=node, cleaner=mine(node), bootstrap=bootstrap),)
    return tuple(replace(f, broker=node, partitions=tuple(replace(p, broker=node) for p in f.partitions),
                         unreadable=tuple(replace(p, broker=node) for p in f.unreadable))
                 for node, part in parts
                 for f in (from_scan(part, admin=admin, node=node, cleaner=mine(node), bootstrap=bootstrap),))


def _cleaner_log(statuses, cluster: str, broker: str | None) -> CleanerLogState | None:
    """What this broker's log-cleaner.log says, from its cleaner_log source (None: not read here)."""
    for st in statuses:
        if st.kind == CLEANER_LOG and st.snapshot is not None and (st.cluster, st.broker) == (cluster, broker):
            state = st.snapshot.state
            return state if isinstance(state, CleanerLogState) else None
    return None


def _store_broker_facts(statuses, cluster: str, broker: str | None) -> BrokerFacts | None:
    """``broker_facts`` of a broker from the store: its first gauge source, its cluster's admin source."""
    gauges = next((st for st in statuses if st.kind in GAUGES and st.snapshot is not None
                   and st.cluster == cluster and st.broker == broker), None)
    admin = None
    for st in statuses:
        if st.kind == ADMIN and st.snapshot is not None and st.cluster == cluster:
            admin = st.snapshot
    return broker_facts(broker, gauges=gauges.snapshot if gauges else None,
                        gauges_source=gauges.name if gauges else "", admin=admin)


def leaders_states(statuses, cluster: str) -> dict[tuple[str, int], PartitionState]:
    """(topic, partition) -> the ``PartitionState`` of the leader's replica (its first dirty offset and
    cleaner limit), for the partitions whose leader (from the cluster's admin snapshot) has its log dirs
    read by this collector (``monitor.model.consumers`` says why a group's lag is judged against the leader)."""
    leaders = {}
    for st in statuses:
        if st.kind == ADMIN and st.cluster == cluster and st.snapshot is not None:
            leaders = {(t, p): str(po.leader) for t, info in st.snapshot.topics.items()
                       for p, po in info.partitions.items()}
    out = {}
    for st in statuses:
        if st.kind != LOG_DIRS or st.cluster != cluster or st.snapshot is None:
            continue
        for rep in st.snapshot.partitions:
            key = (rep.state.topic, rep.state.partition)
            if leaders.get(key) == st.broker:
                out[key] = rep.state
    return out


def offsets_groups(statuses) -> dict[str, frozenset | None]:
    """Per cluster with log dirs read, the groups with live committed offsets in its
    ``__consumer_offsets`` (``collectors.logdirs.scanner.offsets_topic_groups``; None: none of it read)."""
    return {c: offsets_topic_groups(st.snapshot for st in statuses if st.kind == LOG_DIRS
                                    and st.cluster == c and st.snapshot is not None)
            for c in sorted({st.cluster for st in statuses if st.kind == LOG_DIRS})}


def from_statuses(statuses, now: float, causes: CauseCache | None = None) -> Facts:
    """The collector's facts from the store's statuses, as of ``now``; ``causes`` kept from the last build."""
    statuses = tuple(statuses)
    clusters = sorted({st.cluster for st in statuses})
    leaders = {c: leaders_states(statuses, c) for c in clusters}
    brokers = {(st.cluster, st.broker): _store_broker_facts(statuses, st.cluster, st.broker)
               for st in statuses if st.kind in GAUGES + (LOG_DIRS, CLEANER_LOG)}
    log_dirs = []
    for st in statuses:
        if st.kind != LOG_DIRS or st.snapshot is None:
            continue
        log_dirs.append(log_dir_facts(st.snapshot, now, cluster=st.cluster, broker=st.broker or "",
                                      broker_facts=brokers[(st.cluster, st.broker)],
                                      cleaner=_cleaner_log(statuses, st.cluster, st.broker),
                                      leaders=leaders[st.cluster], causes=causes))
    if causes is not None:
        causes.keep_only({(ld.cluster, ld.broker, f.topic, f.partition) for ld in log_dirs for f in ld.partitions})
    on_disk = offsets_groups(statuses)
    groups = []
    for st in statuses:
        if st.kind != GROUPS or st.snapshot is None:
            continue
        lags = tuple(GroupPartitionFacts(lag, leaders[st.cluster].get((lag.topic, lag.partition)))
                     for lag in st.snapshot.lags)
        groups.append(GroupFacts(st.cluster, st.snapshot, lags, unlisted(on_disk.get(st.cluster), st.snapshot.listed)))
    return Facts(now, statuses, tuple(log_dirs), tuple(groups), on_disk, brokers)


def _fingerprint(statuses) -> tuple:
    """What of the statuses the facts are made from: equal fingerprints, equal facts (the snapshot by
    identity: the cache holds the facts, hence the snapshot, so its id cannot be reused meanwhile)."""
    return tuple((s.name, s.kind, s.cluster, s.broker, id(s.snapshot), s.up, s.last_success, s.last_duration,
                  s.last_error, tuple(sorted(s.errors.items())), s.last_error_kind, s.last_error_message)
                 for s in statuses)


class FactsCache:
    """The store's facts, built again only when the store changed: the area collectors of one render
    share one instance (``collectors.export.exporter.register_all``), so the joins run once per refresh.
    The served page lets them go once rendered (``release``, ``collectors.export.exposition``): it renders
    only after the store changed, so facts kept between renders are never used again, and at 20,000
    partitions they are some 70 MB (a cause, its evidence and forecast per partition; issue 43)."""

    def __init__(self, store, clock=time.time):
        self.store, self.clock = store, clock
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._facts: Facts | None = None
        # kept across releases: an unchanged partition's cause is not explained again (issue 43)
        self.causes = CauseCache()

    def get(self) -> Facts:
        statuses = self.store.statuses()
        key = _fingerprint(statuses)
        with self._lock:
            if self._facts is None or key != self._key:
                # the old facts let go first: a render's peak holds one refresh's facts, not two (issue 43)
                self._facts = self._key = None
                self._facts, self._key = from_statuses(statuses, self.clock(), self.causes), key
            return self._facts

    def release(self) -> None:
        """Let the facts go: the next ``get`` builds them again."""
        with self._lock:
            self._facts = self._key = None

    @property
    def held(self) -> bool:
        return self._facts is not None

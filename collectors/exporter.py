"""Prometheus custom collectors: metric families built at scrape time from the store.

One collector per area (broker cleaner gauges, partitions, consumer groups,
topic configs, the collector's own health). Each reads the latest snapshots
and keeps no state of its own; a source that is down contributes nothing but
its ``source_up 0``. What goes out is the ``View``'s: at granularity topic (the default) a healthy
partition keeps ``metrics.PARTITION_DEFAULT``'s series only and a healthy consumer group's partition
``metrics.GROUP_DEFAULT``'s (``monitor.health`` says which are healthy), and the topic allow/deny
patterns drop whole topics, in ``_StoreCollector.collect``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from collectors import metrics as M
from collectors.logdir_snapshot import offsets_topic_groups
from collectors.runner import Store
from monitor.causes import IO_MAX, ROLLED_BY, BrokerFacts, max_segment_ms
from monitor.cleanerlog import CleanerLogState
from monitor.configdeps import series_depends
from monitor.metricnames import NAMESPACE
from monitor.compaction import PartitionState
from monitor.config import Thresholds
from monitor.consumers import may_miss_updates
from monitor.health import series_fire, unhealthy, worst_cause
from monitor.offsetgroups import unlisted
from monitor.logdir import LEFTOVER_KINDS
from monitor.streams import streams_role
from monitor.rules import LAG_PAST_RETENTION, holds
from monitor.topicconfig import LONG_MAX
from monitor.topicfilter import TopicFilter


CONFIG_DEPENDS = series_depends(NAMESPACE)  # the topic configs each partition series reads: monitor.configdeps


def _family(name: str, extra_labels: tuple[str, ...] = ()):
    kind, help_, labels = M.METRICS[name]
    cls = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
    base = name[: -len("_total")] if name.endswith("_total") else name
    return cls(base, help_, labels=list(labels))


@dataclass
class View:
    """What goes out: the granularity (``monitor.config``'s ``granularity``), the thresholds the health
    verdict compares with (``monitor.health``: the rule table's), and the topic filter."""

    granularity: str = "topic"
    thresholds: Thresholds = field(default_factory=Thresholds)
    topics: TopicFilter = field(default_factory=TopicFilter)

    @classmethod
    def of(cls, config) -> "View":
        return cls(config.granularity, config.thresholds, TopicFilter(config.topics_allow, config.topics_deny))

    @property
    def keep_all(self) -> bool:
        return self.granularity == "partition"

    def select(self, cause: str, rows: list) -> tuple[list, bool]:
        """The series of one partition that go out, and whether it is unhealthy (``monitor.health``):
        all of them for an unhealthy partition or at granularity partition, else only
        ``metrics.PARTITION_DEFAULT``'s. ``rows``: ``(metric, labels beyond the partition's, value)``,
        its cause series apart."""
        bad = unhealthy(cause, rows, self.thresholds)
        return self._cut(rows, bad, _DEFAULT), bad

    def select_group(self, rows: list) -> tuple[list, bool]:
        """As ``select`` for one consumer group's partition, which has no cause: unhealthy when a rule's
        comparison holds on its series (``monitor.health.series_fire``), else ``metrics.GROUP_DEFAULT``'s."""
        bad = series_fire(rows, self.thresholds)
        return self._cut(rows, bad, _GROUP_DEFAULT), bad

    def _cut(self, rows: list, bad: bool, default: frozenset) -> list:
        return rows if bad or self.keep_all else [r for r in rows if r[0] in default]


class _StoreCollector(Collector):
    names: tuple[str, ...] = ()

    def __init__(self, store: Store, clock=time.time, view: View | None = None):
        self.store = store
        self.clock = clock
        self.view = view or View()

    def describe(self):  # cheap: no refresh at registration
        return [_family(n) for n in self.names]

    def collect(self):
        """The families of ``_collect``, each series of a topic the filter leaves out dropped: the one
        place the topic allow and deny patterns apply."""
        keep = self.view.topics
        for fam in self._collect():
            if not keep.everything:
                fam.samples = [s for s in fam.samples if "topic" not in s.labels or keep(s.labels["topic"])]
            yield fam

    def _collect(self):
        return iter(())


class BrokerCleanerCollector(_StoreCollector):
    names = (M.BROKER_DIRTY_RATIO, M.BROKER_SINCE_LAST_RUN, M.BROKER_CLEAN_TIME, M.BROKER_BUFFER, M.BROKER_RECOPY,
             M.BROKER_DELAY, M.BROKER_DEAD, M.BROKER_UNCLEANABLE_PARTS, M.BROKER_UNCLEANABLE_BYTES,
             M.BROKER_CLEANER_IO)

    def _collect(self):
        fams = {n: _family(n) for n in self.names}
        for st in self.store.statuses():
            if st.kind not in ("jmx", "jolokia") or st.snapshot is None:
                continue
            g = st.snapshot
            lb = [st.cluster, st.broker or ""]
            for name, value in ((M.BROKER_DIRTY_RATIO, g.dirty_ratio()),
                                (M.BROKER_SINCE_LAST_RUN, g.time_since_last_run_seconds()),
                                (M.BROKER_CLEAN_TIME, g.max_clean_time_seconds()),
                                (M.BROKER_BUFFER, g.buffer_utilization_ratio()),
                                (M.BROKER_RECOPY, g.recopy_ratio()),
                                (M.BROKER_DELAY, g.compaction_delay_seconds()),
                                (M.BROKER_DEAD, g.dead_threads()),
                                (M.BROKER_CLEANER_IO, g.cleaner_io_bytes())):
                if value is not None:
                    fams[name].add_metric(lb, value)
            for d, v in g.per_log_dir.get("uncleanable_partitions_count", {}).items():
                fams[M.BROKER_UNCLEANABLE_PARTS].add_metric(lb + [d], v)
            for d, v in g.per_log_dir.get("uncleanable_bytes", {}).items():
                fams[M.BROKER_UNCLEANABLE_BYTES].add_metric(lb + [d], v)
        yield from fams.values()


class BrokerSettingsCollector(_StoreCollector):
    """The brokers' log cleaner settings from the admin source's latest snapshot, one series per
    broker and setting known (see ``metrics``: an unknown setting has no sample)."""

    names = (M.BROKER_CLEANER_ENABLED, M.BROKER_CLEANER_THREADS, M.BROKER_CLEANER_DEDUPE, M.BROKER_CLEANER_LOAD,
             M.BROKER_CLEANER_IO_MAX, M.BROKER_CLEANER_BACKOFF, M.BROKER_CLEANER_KNOWN)
    SETTINGS = {"log.cleaner.enable": (M.BROKER_CLEANER_ENABLED, float),
                "log.cleaner.threads": (M.BROKER_CLEANER_THREADS, float),
                "log.cleaner.dedupe.buffer.size": (M.BROKER_CLEANER_DEDUPE, float),
                "log.cleaner.io.buffer.load.factor": (M.BROKER_CLEANER_LOAD, float),
                "log.cleaner.io.max.bytes.per.second": (M.BROKER_CLEANER_IO_MAX, float),
                "log.cleaner.backoff.ms": (M.BROKER_CLEANER_BACKOFF, lambda ms: ms / 1000.0)}
    MAX_LABEL = 200

    def _collect(self):
        fams = {n: _family(n) for n in self.names}
        for st in self.store.statuses():
            if st.kind != "admin" or st.snapshot is None:
                continue
            for broker, settings in sorted(st.snapshot.cleaner_settings.items()):
                lb = [st.cluster, broker]
                refused = next((s.reason for s in settings.values() if s.source == "unknown"), None)
                fams[M.BROKER_CLEANER_KNOWN].add_metric(lb + [(refused or "")[: self.MAX_LABEL]],
                                                        0.0 if refused else 1.0)
                for key, (name, conv) in self.SETTINGS.items():
                    s = settings.get(key)
                    if s is not None and s.known:
                        fams[name].add_metric(lb + [s.source], conv(s.value))
        yield from fams.values()


class PartitionCollector(_StoreCollector):
    """Per partition of the log dirs read here, and per topic the aggregates over them. Each
    partition's series are built first, then kept whole or cut to ``metrics.PARTITION_DEFAULT`` by
    ``View.select`` (granularity and health)."""

    names = (M.P_CLEANABLE_RATIO, M.P_UNCLEANED_RATIO, M.P_BLOCKED, M.P_MIN_RATIO, M.P_CLEANABLE_BYTES,
             M.P_UNCLEANED_BYTES, M.P_CLEAN_BYTES, M.P_LOG_BYTES, M.P_HEAD_BYTES,
             M.P_FIRST_DIRTY, M.P_FIRST_UNCLEANABLE, M.P_LSO, M.P_LSO_DISAGREEMENT, M.P_OPEN_TXNS, M.P_HANGING_TXNS,
             M.P_OLDEST_TXN_AGE, M.P_END,
             M.P_ELIGIBLE, M.P_ELIGIBLE_SECONDS, M.P_DELAY, M.P_TOMBSTONES, M.P_OLDEST_TOMBSTONE, M.P_RETENTION,
             M.P_PAST_RETENTION, M.P_PAST_HORIZON, M.P_FAULTS, M.LOG_DIR_UP, M.P_CAUSE, M.P_LEFTOVER_FILES,
             M.LOG_DIR_FREE, M.LOG_DIR_CLEAN_NEEDED, M.LOG_DIR_FREE_UP, M.T_STREAMS_INFO,
             M.P_ACTIVE_BYTES, M.P_ACTIVE_AGE, M.P_SEGMENT_BYTES, M.P_MAX_SEGMENT_AGE, M.P_ROLL, M.P_ROLL_UNKNOWN,
             M.P_ACTIVE_DUP_RECORDS, M.P_ACTIVE_DUP_BYTES, M.P_ACTIVE_DUP_UNKNOWN, M.T_CONFIG_SOURCE,
             M.P_EMPTY_VALUES, M.P_KEYLESS, M.P_RETENTION_START, M.P_RETENTION_BYTES,
             M.T_MAX_CLEANABLE_RATIO, M.T_CLEANABLE_BYTES, M.T_UNCLEANED_BYTES, M.T_LOG_BYTES, M.T_TOMBSTONES,
             M.T_CAUSE, M.T_UNHEALTHY, M.P_STATE_UNKNOWN, M.LOG_DIR_RELISTS)

    def _collect(self):
        fams = {n: _family(n) for n in self.names}
        now = self.clock()
        statuses = self.store.statuses()
        streams_seen = set()  # one info series per (cluster, topic), whichever broker's log dirs hold it (both infos)
        for st in statuses:
            if st.kind != "log_dirs" or st.snapshot is None:
                continue
            for rep in st.snapshot.partitions:  # where each topic's config came from, once per (cluster, topic)
                if ("config", st.cluster, rep.state.topic) not in streams_seen:
                    streams_seen.add(("config", st.cluster, rep.state.topic))
                    why = rep.config.refusal.code if rep.config.refusal is not None else ""
                    fams[M.T_CONFIG_SOURCE].add_metric([st.cluster, rep.state.topic, rep.config.source, why], 1.0)
            for topic in sorted({r.state.topic for r in st.snapshot.partitions}):
                role = streams_role(topic)
                if role and (st.cluster, topic) not in streams_seen:
                    streams_seen.add((st.cluster, topic))
                    fams[M.T_STREAMS_INFO].add_metric([st.cluster, topic, role], 1.0)
            broker, cleaner = _broker_facts(statuses, st), _cleaner_log(statuses, st)
            topics: dict[str, _TopicSum] = {}
            for tp in st.snapshot.partition_errors:  # unreadable: no state, so the cause is unknown
                if not any(r.state.topic == tp[0] and r.state.partition == tp[1] for r in st.snapshot.partitions):
                    topic = tp[0]
                    fams[M.P_CAUSE].add_metric([st.cluster, st.broker or "", topic, str(tp[1]), "unknown"], 1.0)
                    fams[M.P_STATE_UNKNOWN].add_metric([st.cluster, st.broker or "", topic, str(tp[1]),
                                                        st.snapshot.unknown_reasons.get(tp, "read_error")], 1.0)
                    topics.setdefault(topic, _TopicSum()).add_unknown()
            fams[M.LOG_DIR_RELISTS].add_metric([st.cluster, st.broker or ""], st.snapshot.relists_total)
            for d in st.snapshot.log_dirs:
                fams[M.LOG_DIR_UP].add_metric([st.cluster, st.broker or "", d], 0.0 if d in st.snapshot.down else 1.0)
            for sp in st.snapshot.space:
                lb = [st.cluster, st.broker or "", sp.log_dir]
                fams[M.LOG_DIR_FREE_UP].add_metric(lb, 0.0 if sp.error else 1.0)
                if sp.free_bytes is not None:
                    fams[M.LOG_DIR_FREE].add_metric(lb, sp.free_bytes)
                if sp.need is not None:
                    fams[M.LOG_DIR_CLEAN_NEEDED].add_metric(lb, sp.need.bytes)
            for rep in st.snapshot.partitions:
                s = rep.state
                # only the current cause's series (one per partition, not one per cause): count by (cause) works
                cause = rep.cause(now, broker=broker, cleaner=cleaner)
                rows, bad = self.view.select(cause.cause, _partition_rows(rep, cause, now))
                lb = [st.cluster, st.broker or "", s.topic, str(s.partition)]
                fams[M.P_CAUSE].add_metric(lb + [cause.cause], 1.0)
                for name, extra, v in rows:  # labels beyond the partition's in the metric's own order
                    fams[name].add_metric(lb + [extra[k] for k in _EXTRA[name]], v)
                topics.setdefault(s.topic, _TopicSum()).add(s, cause.cause, bad, rep.config.known)
            for topic, t in sorted(topics.items()):
                lb = [st.cluster, st.broker or "", topic]
                t.emit(fams, lb)
        yield from fams.values()


_DEFAULT = frozenset(M.PARTITION_DEFAULT) - {M.P_CAUSE}  # the cause series is added apart, always
_GROUP_DEFAULT = frozenset(M.GROUP_DEFAULT)
_EXTRA = {name: labels[4:] for name, (_, _, labels) in M.METRICS.items()}


class _TopicSum:
    """The topic aggregates over one broker's partitions of a topic (``metrics.T_*``)."""

    def __init__(self):
        self.ratio, self.cleanable, self.uncleaned, self.log, self.tombstones = None, 0, 0, 0, 0
        self.causes: set[str] = set()
        self.unhealthy = 0
        self.partitions = 0  # read ones (an unreadable partition adds only its unknown cause)

    def add(self, s, cause: str, bad: bool, known=lambda *keys: True) -> None:
        """``known`` is the partition's ``TopicConfig`` check: what is cleanable moves with the
        compaction lags, so a partition whose lags are unknown adds nothing to the cleanable figures
        (never Kafka's defaults passed off as its config, as for its own series: ``CONFIG_DEPENDS``)."""
        if known(*CONFIG_DEPENDS[M.P_CLEANABLE_RATIO]):
            self.ratio = s.cleanable_ratio if self.ratio is None else max(self.ratio, s.cleanable_ratio)
            self.cleanable += s.cleanable_bytes
        self.partitions += 1
        self.uncleaned += s.uncleaned_bytes
        self.log += s.log_bytes
        self.tombstones += s.tombstones_clean + s.tombstones_dirty
        self.causes.add(cause)
        self.unhealthy += bad

    def add_unknown(self) -> None:
        """A partition that could not be read: its cause is unknown, its figures are not summed."""
        self.causes.add("unknown")
        self.unhealthy += 1

    def emit(self, fams, lb) -> None:
        if self.ratio is not None:
            fams[M.T_MAX_CLEANABLE_RATIO].add_metric(lb, self.ratio)
            fams[M.T_CLEANABLE_BYTES].add_metric(lb, self.cleanable)
        if self.partitions:
            fams[M.T_UNCLEANED_BYTES].add_metric(lb, self.uncleaned)
            fams[M.T_LOG_BYTES].add_metric(lb, self.log)
            fams[M.T_TOMBSTONES].add_metric(lb, self.tombstones)
        fams[M.T_CAUSE].add_metric(lb + [worst_cause(self.causes)], 1.0)
        fams[M.T_UNHEALTHY].add_metric(lb, self.unhealthy)


def _partition_rows(rep, cause, now: float) -> list[tuple[str, dict, float]]:
    """Every series of one partition but its cause: ``(metric, labels beyond the partition's, value)``."""
    s, known = rep.state, rep.config.known
    rows: list[tuple[str, dict, float]] = []

    def add(n, v, **extra):  # a series made from a config value unknown is left out (CONFIG_DEPENDS)
        if known(*CONFIG_DEPENDS.get(n, ())):
            rows.append((n, extra, v))

    add(M.P_CLEANABLE_RATIO, s.cleanable_ratio)
    add(M.P_UNCLEANED_RATIO, s.uncleaned_ratio)
    if s.blocked_by:
        add(M.P_BLOCKED, 1.0, reason=s.blocked_by)
    add(M.P_MIN_RATIO, s.min_cleanable_dirty_ratio)
    add(M.P_CLEANABLE_BYTES, s.cleanable_bytes)
    add(M.P_UNCLEANED_BYTES, s.uncleaned_bytes)
    add(M.P_CLEAN_BYTES, s.clean_bytes)
    add(M.P_LOG_BYTES, s.log_bytes)
    for held_by, n in s.not_yet_cleanable_split().items():
        add(M.P_HEAD_BYTES, n, held_by=held_by)
    add(M.P_FIRST_DIRTY, s.first_dirty_offset)
    add(M.P_FIRST_UNCLEANABLE, s.first_uncleanable_offset)
    add(M.P_LSO, s.last_stable_offset)
    if rep.lso_check is not None and rep.lso_check.agree is not None:
        d = rep.lso_disagreement
        add(M.P_LSO_DISAGREEMENT, 0.0 if d is None else max(now - d.since, 0.0), lso_source=s.last_stable_offset_source)
    add(M.P_OPEN_TXNS, len(s.open_transactions))
    add(M.P_HANGING_TXNS, s.hanging_transactions)
    ages = [t.age_ms for t in s.open_transactions if t.age_ms is not None]
    if ages:
        add(M.P_OLDEST_TXN_AGE, max(ages) / 1000.0)
    add(M.P_END, s.log_end_offset)
    add(M.P_ELIGIBLE, 1.0 if s.eligible else 0.0)
    add(M.P_ELIGIBLE_SECONDS, max(now - rep.eligible_since, 0.0) if rep.eligible_since else 0.0)
    add(M.P_DELAY, s.compaction_delay_ms / 1000.0)
    add(M.P_TOMBSTONES, s.tombstones_clean, section="clean")
    add(M.P_TOMBSTONES, s.tombstones_dirty, section="dirty")
    if s.oldest_tombstone_age_ms is not None:
        add(M.P_OLDEST_TOMBSTONE, s.oldest_tombstone_age_ms / 1000.0)
    add(M.P_RETENTION, s.delete_retention_ms / 1000.0)
    add(M.P_PAST_RETENTION, s.tombstones_past_retention)
    add(M.P_PAST_HORIZON, s.tombstones_past_delete_horizon)
    add(M.P_FAULTS, s.faults)
    for kind in LEFTOVER_KINDS.values():  # every kind, 0 included: absent means not read
        add(M.P_LEFTOVER_FILES, sum(1 for x in rep.leftovers if x.kind == kind), log_dir=rep.log_dir, kind=kind)
    _active_segment(add, rep, cause, now)
    # issue 16: producer pitfalls counted on disk, and what retention deletes next on compact,delete topics
    add(M.P_EMPTY_VALUES, rep.empty_value_records)
    add(M.P_KEYLESS, rep.keyless_records)
    if rep.retention is not None:
        add(M.P_RETENTION_START, rep.retention.log_start_offset)
        add(M.P_RETENTION_BYTES, rep.retention.deleted_bytes)
    return rows


def _active_segment(add, rep, cause, now: float) -> None:
    """The active segment against its roll settings; the roll forecast is the cause's
    (``monitor.causes.active_segment_roll``): absent when unknown, with the reason's own series."""
    s, c, known = rep.state, rep.config.config, rep.config.known
    add(M.P_ACTIVE_BYTES, s.active_segment_bytes)
    age = s.active_segment_age_ms(int(now * 1000))
    if age is not None:
        add(M.P_ACTIVE_AGE, age / 1000.0)
    add(M.P_SEGMENT_BYTES, c.segment_bytes)  # left out by add when segment.bytes is unknown
    limit = max_segment_ms(c)
    add(M.P_MAX_SEGMENT_AGE, float("inf") if limit >= LONG_MAX else limit / 1000.0)
    roll = cause.forecast["active_segment_roll"]
    if not known(*CONFIG_DEPENDS[M.P_ROLL]):
        add(M.P_ROLL_UNKNOWN, 1.0, reason="topic_config_unknown")
    elif roll["at_ms"] is not None and roll["code"] in ROLLED_BY:
        add(M.P_ROLL, roll["in_seconds"], by=roll["code"])
    else:
        add(M.P_ROLL_UNKNOWN, 1.0, reason=roll["code"] or "write_rate_unknown")
    k = rep.active_keys
    if k is not None and k.known:
        add(M.P_ACTIVE_DUP_RECORDS, k.duplicate_records)
        add(M.P_ACTIVE_DUP_BYTES, k.duplicate_bytes)
    else:
        why = "not_read" if k is None else "over_bound" if k.over_bound else "read_fault"
        add(M.P_ACTIVE_DUP_UNKNOWN, 1.0, reason=why)


def _broker_facts(statuses, logdirs) -> BrokerFacts | None:
    """DeadThreadCount and the cleaner's I/O rate of the broker whose log dirs these are, from its JMX or
    Jolokia source, and its log.cleaner.enable, log.cleaner.threads and log.cleaner.io.max.bytes.per.second
    from the admin source (None: not read)."""
    dead, source, enabled, threads, io, io_max = None, "", None, None, None, None
    for st in statuses:
        if st.snapshot is None or st.cluster != logdirs.cluster:
            continue
        if st.kind in ("jmx", "jolokia") and st.broker == logdirs.broker and source == "":
            dead, source, io = st.snapshot.dead_threads(), st.name, st.snapshot.io_rate
        elif st.kind == "admin":
            e = st.snapshot.cleaner_setting(logdirs.broker or "", "log.cleaner.enable")
            t = st.snapshot.cleaner_setting(logdirs.broker or "", "log.cleaner.threads")
            io_max = st.snapshot.cleaner_setting(logdirs.broker or "", IO_MAX)
            enabled = e.value if e is not None else None
            threads = t.value if t is not None else None
    if source == "" and enabled is None and threads is None:
        return None
    return BrokerFacts(dead, source, enabled, threads, io, io_max)


def _cleaner_log(statuses, logdirs) -> CleanerLogState | None:
    """What this broker's log-cleaner.log says, from its cleaner_log source (None: not read here)."""
    for st in statuses:
        if st.kind == "cleaner_log" and st.snapshot is not None and (st.cluster, st.broker) == (
                logdirs.cluster, logdirs.broker):
            state = st.snapshot.state
            return state if isinstance(state, CleanerLogState) else None
    return None


class CleanerLogCollector(_StoreCollector):
    """What the followed log-cleaner.log says: uncleanable partitions and why, dead threads, cleans."""

    names = (M.P_UNCLEANABLE, M.CL_THREAD_DEATHS, M.CL_LAST_ERROR, M.CL_CLEANS, M.CL_PROCESSED,
             M.CL_LAST_THROUGHPUT, M.CL_LAST_BUFFER, M.CL_LAST_REDUCTION, M.CL_LEARNED)
    MAX_LABEL = 200  # the message label is cut: one series per broker, of bounded size

    def _collect(self):
        fams = {n: _family(n) for n in self.names}
        for st in self.store.statuses():
            if st.kind != "cleaner_log" or st.snapshot is None:
                continue
            s = st.snapshot.state
            lb = [st.cluster, st.broker or ""]
            for (topic, partition), u in sorted(s.uncleanable.items()):
                fams[M.P_UNCLEANABLE].add_metric(lb + [topic, str(partition), u.exception], 1.0)
            fams[M.CL_THREAD_DEATHS].add_metric(lb, s.thread_deaths_total)
            d = s.last_thread_death
            if d is not None:
                fams[M.CL_LAST_ERROR].add_metric(lb + [d.thread, d.exception, d.error[: self.MAX_LABEL]], 1.0)
            fams[M.CL_CLEANS].add_metric(lb, s.cleans_total)
            fams[M.CL_PROCESSED].add_metric(lb, s.processed_bytes_total)
            c = s.last_clean
            if c is not None:
                if c.mb_per_sec == c.mb_per_sec and c.mb_per_sec != float("inf"):  # Kafka prints NaN/Infinity at 0 s
                    fams[M.CL_LAST_THROUGHPUT].add_metric(lb, c.throughput_bytes_per_second)
                if c.buffer_utilization is not None:
                    fams[M.CL_LAST_BUFFER].add_metric(lb, c.buffer_utilization)
                if c.size_reduction is not None and c.size_reduction == c.size_reduction:
                    fams[M.CL_LAST_REDUCTION].add_metric(lb, c.size_reduction)
            learned = s.learned_throughput()
            if learned is not None:
                fams[M.CL_LEARNED].add_metric(lb, learned)
        yield from fams.values()


class ConsumerGroupCollector(_StoreCollector):
    """Per group and partition of a compacted topic, and per group and topic the aggregates over them.
    Each partition's series are built first, then kept whole or cut to ``metrics.GROUP_DEFAULT`` by
    ``View.select_group`` (granularity and health). Per cluster: the groups ListGroups gave against those
    with live committed offsets in the log dirs' ``__consumer_offsets``."""

    names = (M.G_LAG, M.G_LAG_SECONDS, M.G_LAG_SECONDS_UNKNOWN, M.G_RETENTION_FRACTION, M.G_AT_RISK, M.G_MAY_MISS,
             M.GT_MAX_LAG_SECONDS, M.GT_MAX_RETENTION_FRACTION, M.GT_LAG, M.GT_UNHEALTHY, M.GT_LAG_UNKNOWN,
             M.ADMIN_LISTED_GROUPS, M.OFFSETS_TOPIC_GROUPS, M.ADMIN_UNLISTED_GROUPS, M.G_LAG_UNKNOWN)

    def _collect(self):
        fams = {n: _family(n) for n in self.names}
        statuses = self.store.statuses()
        on_disk = {}
        for cluster in sorted({st.cluster for st in statuses if st.kind == "log_dirs"}):
            on_disk[cluster] = offsets_topic_groups(st.snapshot for st in statuses if st.kind == "log_dirs"
                                                    and st.cluster == cluster and st.snapshot is not None)
            if on_disk[cluster] is not None:
                fams[M.OFFSETS_TOPIC_GROUPS].add_metric([cluster], len(on_disk[cluster]))
        for st in statuses:
            if st.kind != "consumer_groups" or st.snapshot is None:
                continue
            if st.snapshot.listed is not None:
                fams[M.ADMIN_LISTED_GROUPS].add_metric([st.cluster], len(st.snapshot.listed))
            for group, (call, reason) in sorted(getattr(st.snapshot, "unknown", {}).items()):
                fams[M.G_LAG_UNKNOWN].add_metric([st.cluster, group, call, reason], 1.0)  # never missing unsaid
            hidden = unlisted(on_disk.get(st.cluster), st.snapshot.listed)
            if hidden is not None:
                fams[M.ADMIN_UNLISTED_GROUPS].add_metric([st.cluster], len(hidden))
            leaders = _leaders_logs(statuses, st.cluster)
            topics: dict[tuple[str, str], _GroupTopicSum] = {}
            for lag in st.snapshot.lags:
                rows, bad = self.view.select_group(_group_rows(lag, leaders.get((lag.topic, lag.partition))))
                lb = [st.cluster, lag.group, lag.topic, str(lag.partition)]
                for name, extra, v in rows:  # labels beyond the group's partition in the metric's own order
                    fams[name].add_metric(lb + [extra[k] for k in _EXTRA[name]], v)
                topics.setdefault((lag.group, lag.topic), _GroupTopicSum()).add(lag, bad)
            for (group, topic), t in sorted(topics.items()):
                t.emit(fams, [st.cluster, group, topic])
        yield from fams.values()


def _group_rows(lag, leader: PartitionState | None) -> list[tuple[str, dict, float]]:
    """Every series of one group's partition: ``(metric, labels beyond cluster/group/topic/partition,
    value)``. ``leader``: the ``PartitionState`` of the partition leader's replica when this collector
    reads its log dirs, else None."""
    rows: list[tuple[str, dict, float]] = [(M.G_LAG, {}, lag.lag_records)]
    if lag.lag_seconds is not None:
        rows.append((M.G_LAG_SECONDS, {"method": lag.lag_method or "exact"}, lag.lag_seconds))
    else:  # never silently absent: the reason instead
        rows.append((M.G_LAG_SECONDS_UNKNOWN, {"reason": lag.lag_unknown_reason or "unknown"}, 1.0))
    frac = lag.retention_fraction
    if frac is not None:
        rows.append((M.G_RETENTION_FRACTION, {}, frac))
        past = holds(LAG_PAST_RETENTION, frac, LAG_PAST_RETENTION.threshold.number)
        rows.append((M.G_AT_RISK, {}, 1.0 if past else 0.0))
    found = may_miss_updates(lag_seconds=lag.lag_seconds, min_compaction_lag_seconds=lag.min_compaction_lag_seconds,
                             committed=lag.committed,
                             first_dirty_offset=None if leader is None else leader.first_dirty_offset,
                             cleaner_limit_offset=None if leader is None else leader.cleaner_limit_offset)
    for reason, held in found.items():
        if held is not None:
            rows.append((M.G_MAY_MISS, {"reason": reason, "latest_value_only": "true" if lag.latest_value_only
                                        else "false"}, 1.0 if held else 0.0))
    return rows


class _GroupTopicSum:
    """The aggregates over one group's partitions of a topic (``metrics.GT_*``), every granularity."""

    def __init__(self):
        self.lag, self.max_seconds, self.max_ratio, self.unhealthy, self.unknown = 0, None, None, 0, 0

    def add(self, lag, bad: bool) -> None:
        self.lag += lag.lag_records
        self.unhealthy += bad
        if lag.lag_seconds is None:
            self.unknown += 1
            return
        self.max_seconds = lag.lag_seconds if self.max_seconds is None else max(self.max_seconds, lag.lag_seconds)
        frac = lag.retention_fraction
        if frac is not None:
            self.max_ratio = frac if self.max_ratio is None else max(self.max_ratio, frac)

    def emit(self, fams, lb) -> None:
        fams[M.GT_LAG].add_metric(lb, self.lag)
        if self.max_seconds is not None:
            fams[M.GT_MAX_LAG_SECONDS].add_metric(lb, self.max_seconds)
        if self.max_ratio is not None:
            fams[M.GT_MAX_RETENTION_FRACTION].add_metric(lb, self.max_ratio)
        fams[M.GT_UNHEALTHY].add_metric(lb, self.unhealthy)
        fams[M.GT_LAG_UNKNOWN].add_metric(lb, self.unknown)


def _leaders_logs(statuses, cluster: str) -> dict[tuple[str, int], PartitionState]:
    """(topic, partition) -> the ``PartitionState`` of the leader's replica (its first dirty offset and
    cleaner limit), for the partitions whose leader (from the cluster's admin snapshot) has
    its log dirs read by this collector (monitor.consumers says why the join is made here)."""
    leaders = {}
    for st in statuses:
        if st.kind == "admin" and st.cluster == cluster and st.snapshot is not None:
            leaders = {(t, p): str(po.leader) for t, info in st.snapshot.topics.items()
                       for p, po in info.partitions.items()}
    out = {}
    for st in statuses:
        if st.kind != "log_dirs" or st.cluster != cluster or st.snapshot is None:
            continue
        for rep in st.snapshot.partitions:
            key = (rep.state.topic, rep.state.partition)
            if leaders.get(key) == st.broker:
                out[key] = rep.state
    return out


class TopicCollector(_StoreCollector):
    names = (M.T_MIN_RATIO, M.T_RETENTION, M.T_MIN_LAG, M.T_MAX_LAG, M.T_SEGMENT_BYTES, M.T_SEGMENT_SECONDS,
             M.T_PARTITIONS, M.P_LEADER_LSO, M.ADMIN_LISTED, M.P_REPLICA_INFO, M.T_ADMIN_UNKNOWN)

    def _collect(self):
        fams = {n: _family(n) for n in self.names}
        for st in self.store.statuses():
            if st.kind != "admin" or st.snapshot is None:
                continue
            fams[M.ADMIN_LISTED].add_metric([st.cluster], len(st.snapshot.listed))
            for t, (call, reason) in sorted(getattr(st.snapshot, "unknown", {}).items()):
                fams[M.T_ADMIN_UNKNOWN].add_metric([st.cluster, t, call, reason], 1.0)
            for t, info in st.snapshot.topics.items():
                lb = [st.cluster, t]
                c = info.config
                fams[M.T_MIN_RATIO].add_metric(lb, c.min_cleanable_dirty_ratio)
                fams[M.T_RETENTION].add_metric(lb, c.delete_retention_ms / 1000.0)
                fams[M.T_MIN_LAG].add_metric(lb, c.min_compaction_lag_ms / 1000.0)
                # Kafka's default (Long.MAX_VALUE) means "no maximum": +Inf
                fams[M.T_MAX_LAG].add_metric(lb, float("inf") if c.max_compaction_lag_ms >= LONG_MAX
                                             else c.max_compaction_lag_ms / 1000.0)
                fams[M.T_SEGMENT_BYTES].add_metric(lb, c.segment_bytes)
                fams[M.T_SEGMENT_SECONDS].add_metric(lb, c.segment_ms / 1000.0)
                fams[M.T_PARTITIONS].add_metric(lb, len(info.partitions))
                for p, po in sorted(info.partitions.items()):
                    # granularity topic: only where the leader's LSO tells more than its log end (a
                    # transaction open on the leader); this collector may not read that replica's log dir
                    if po.stable >= 0 and (self.view.keep_all or po.stable < po.latest):
                        fams[M.P_LEADER_LSO].add_metric([st.cluster, str(po.leader), t, str(p)], po.stable)
                    for b in po.replicas:
                        fams[M.P_REPLICA_INFO].add_metric(
                            [st.cluster, str(b), t, str(p), "leader" if b == po.leader else "follower"], 1)
        yield from fams.values()


class ConfigReviewCollector(_StoreCollector):
    """The configuration review's findings (``monitor.configreview``) per cluster with an admin source."""

    names = (M.T_CONFIG_FINDING,)

    def _collect(self):
        from collectors.review import topic_facts
        from monitor.configreview import review

        fam = _family(M.T_CONFIG_FINDING)
        statuses = self.store.statuses()
        now = self.clock()
        for cluster in sorted({st.cluster for st in statuses if st.kind == "admin" and st.snapshot is not None}):
            for f in review(topic_facts(statuses, cluster, now)).findings:
                fam.add_metric([cluster, f.topic, f.check, f.setting, f.current, f.suggested], 1.0)
        yield fam


class SelfCollector(_StoreCollector):
    names = (M.SRC_UP, M.SRC_LAST_SUCCESS, M.SRC_DURATION, M.SRC_ERRORS, M.SRC_SHAPE, M.SRC_LAST_ERROR)
    MAX_LABEL = 200  # the message label is cut: one series per source, of bounded size

    def _collect(self):
        fams = {n: _family(n) for n in self.names}
        for st in self.store.statuses():
            lb = [st.cluster, st.name, st.kind]
            fams[M.SRC_UP].add_metric(lb, 1.0 if st.up else 0.0)
            if st.last_success is not None:
                fams[M.SRC_LAST_SUCCESS].add_metric(lb, st.last_success)
            if st.last_duration is not None:
                fams[M.SRC_DURATION].add_metric(lb, st.last_duration)
            for kind, n in sorted(st.errors.items()):
                fams[M.SRC_ERRORS].add_metric(lb + [kind], n)
            if st.last_error_kind is not None:  # the store redacted the text
                fams[M.SRC_LAST_ERROR].add_metric(
                    lb + [st.last_error_kind, (st.last_error_message or "")[: self.MAX_LABEL]], 1.0)
            shape = getattr(st.snapshot, "shape", None) if st.kind in ("jmx", "jolokia") else None
            if shape:
                fams[M.SRC_SHAPE].add_metric(lb + [shape, ",".join(st.snapshot.also_on_page)], 1.0)
        yield from fams.values()


ALL = (BrokerCleanerCollector, BrokerSettingsCollector, PartitionCollector, CleanerLogCollector, ConsumerGroupCollector,
       TopicCollector, ConfigReviewCollector, SelfCollector)


def register_all(registry, store: Store, clock=time.time, view: View | None = None) -> None:
    for cls in ALL:
        registry.register(cls(store, clock, view))

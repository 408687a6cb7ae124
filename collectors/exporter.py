"""Prometheus custom collectors: metric families built at scrape time from the store.

One collector per area (broker cleaner gauges, partitions, consumer groups,
topic configs, the collector's own health). Each reads the latest snapshots
and keeps no state of its own; a source that is down contributes nothing but
its ``source_up 0``.
"""

from __future__ import annotations

import time

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from collectors import metrics as M
from collectors.runner import Store
from monitor.causes import ROLLED_BY, BrokerFacts, max_segment_ms
from monitor.cleanerlog import CleanerLogState
from monitor.consumers import may_miss_updates
from monitor.logdir import LEFTOVER_KINDS
from monitor.streams import streams_role
from monitor.rules import LAG_PAST_RETENTION, holds
from monitor.topicconfig import LONG_MAX


# the topic configs each partition series is made from (monitor.compaction.partition_state, LogConfig's
# roll): a series whose config value is unknown (the admin API refused it, monitor.topicconfig) is left
# out rather than made from Kafka's defaults
_RATIO, _MIN_LAG, _MAX_LAG = "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "max.compaction.lag.ms"
_SEGMENT = ("segment.bytes", "segment.ms", _MAX_LAG)  # LogConfig.maxSegmentMs: max.compaction.lag.ms too
CONFIG_DEPENDS = {
    M.P_MIN_RATIO: (_RATIO,),
    # the first uncleanable offset, hence what is cleanable or held, moves with both lags (and the segments)
    M.P_CLEANABLE_RATIO: (_MIN_LAG, _MAX_LAG), M.P_CLEANABLE_BYTES: (_MIN_LAG, _MAX_LAG),
    M.P_BLOCKED: (_MIN_LAG, _MAX_LAG), M.P_HEAD_BYTES: (_MIN_LAG, _MAX_LAG),
    M.P_FIRST_UNCLEANABLE: (_MIN_LAG, _MAX_LAG),
    M.P_ELIGIBLE: (_RATIO, _MIN_LAG, _MAX_LAG), M.P_ELIGIBLE_SECONDS: (_RATIO, _MIN_LAG, _MAX_LAG),
    M.P_DELAY: (_MAX_LAG,),
    M.P_RETENTION: ("delete.retention.ms",), M.P_PAST_RETENTION: ("delete.retention.ms",),
    M.P_SEGMENT_BYTES: ("segment.bytes",), M.P_MAX_SEGMENT_AGE: ("segment.ms", _MAX_LAG), M.P_ROLL: _SEGMENT,
}


def _family(name: str, extra_labels: tuple[str, ...] = ()):
    kind, help_, labels = M.METRICS[name]
    cls = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
    base = name[: -len("_total")] if name.endswith("_total") else name
    return cls(base, help_, labels=list(labels))


class _StoreCollector(Collector):
    names: tuple[str, ...] = ()

    def __init__(self, store: Store, clock=time.time):
        self.store = store
        self.clock = clock

    def describe(self):  # cheap: no refresh at registration
        return [_family(n) for n in self.names]


class BrokerCleanerCollector(_StoreCollector):
    names = (M.BROKER_DIRTY_RATIO, M.BROKER_SINCE_LAST_RUN, M.BROKER_CLEAN_TIME, M.BROKER_BUFFER, M.BROKER_RECOPY,
             M.BROKER_DELAY, M.BROKER_DEAD, M.BROKER_UNCLEANABLE_PARTS, M.BROKER_UNCLEANABLE_BYTES,
             M.BROKER_CLEANER_IO)

    def collect(self):
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

    def collect(self):
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
    names = (M.P_CLEANABLE_RATIO, M.P_UNCLEANED_RATIO, M.P_BLOCKED, M.P_MIN_RATIO, M.P_CLEANABLE_BYTES,
             M.P_UNCLEANED_BYTES, M.P_CLEAN_BYTES, M.P_LOG_BYTES, M.P_HEAD_BYTES,
             M.P_FIRST_DIRTY, M.P_FIRST_UNCLEANABLE, M.P_LSO, M.P_LSO_DISAGREEMENT, M.P_OPEN_TXNS, M.P_HANGING_TXNS,
             M.P_OLDEST_TXN_AGE, M.P_END,
             M.P_ELIGIBLE, M.P_ELIGIBLE_SECONDS, M.P_DELAY, M.P_TOMBSTONES, M.P_OLDEST_TOMBSTONE, M.P_RETENTION,
             M.P_PAST_RETENTION, M.P_PAST_HORIZON, M.P_FAULTS, M.LOG_DIR_UP, M.P_CAUSE, M.P_LEFTOVER_FILES,
             M.LOG_DIR_FREE, M.LOG_DIR_CLEAN_NEEDED, M.LOG_DIR_FREE_UP, M.T_STREAMS_INFO,
             M.P_ACTIVE_BYTES, M.P_ACTIVE_AGE, M.P_SEGMENT_BYTES, M.P_MAX_SEGMENT_AGE, M.P_ROLL, M.P_ROLL_UNKNOWN,
             M.P_ACTIVE_DUP_RECORDS, M.P_ACTIVE_DUP_BYTES, M.P_ACTIVE_DUP_UNKNOWN, M.T_CONFIG_SOURCE)

    def collect(self):
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
            for tp in st.snapshot.partition_errors:  # unreadable: no state, so the cause is unknown
                topic, _, p = tp.rpartition("-")
                if p.isdigit() and not any(r.state.topic == topic and r.state.partition == int(p)
                                           for r in st.snapshot.partitions):
                    fams[M.P_CAUSE].add_metric([st.cluster, st.broker or "", topic, p, "unknown"], 1.0)
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
                lb = [st.cluster, st.broker or "", s.topic, str(s.partition)]
                known = rep.config.known

                def add(n, v, lb=lb, known=known):  # a series made from a config value unknown is left out
                    if known(*CONFIG_DEPENDS.get(n, ())):
                        fams[n].add_metric(lb, v)
                add(M.P_CLEANABLE_RATIO, s.cleanable_ratio)
                add(M.P_UNCLEANED_RATIO, s.uncleaned_ratio)
                if s.blocked_by and known(*CONFIG_DEPENDS[M.P_BLOCKED]):
                    fams[M.P_BLOCKED].add_metric(lb + [s.blocked_by], 1.0)
                add(M.P_MIN_RATIO, s.min_cleanable_dirty_ratio)
                add(M.P_CLEANABLE_BYTES, s.cleanable_bytes)
                add(M.P_UNCLEANED_BYTES, s.uncleaned_bytes)
                add(M.P_CLEAN_BYTES, s.clean_bytes)
                add(M.P_LOG_BYTES, s.log_bytes)
                held = s.not_yet_cleanable_split() if known(*CONFIG_DEPENDS[M.P_HEAD_BYTES]) else {}
                for held_by, n in held.items():
                    fams[M.P_HEAD_BYTES].add_metric(lb + [held_by], n)
                add(M.P_FIRST_DIRTY, s.first_dirty_offset)
                add(M.P_FIRST_UNCLEANABLE, s.first_uncleanable_offset)
                add(M.P_LSO, s.last_stable_offset)
                if rep.lso_check is not None and rep.lso_check.agree is not None:
                    d = rep.lso_disagreement
                    fams[M.P_LSO_DISAGREEMENT].add_metric(lb + [s.last_stable_offset_source],
                                                          0.0 if d is None else max(now - d.since, 0.0))
                add(M.P_OPEN_TXNS, len(s.open_transactions))
                add(M.P_HANGING_TXNS, s.hanging_transactions)
                ages = [t.age_ms for t in s.open_transactions if t.age_ms is not None]
                if ages:
                    add(M.P_OLDEST_TXN_AGE, max(ages) / 1000.0)
                add(M.P_END, s.log_end_offset)
                add(M.P_ELIGIBLE, 1.0 if s.eligible else 0.0)
                add(M.P_ELIGIBLE_SECONDS, max(now - rep.eligible_since, 0.0) if rep.eligible_since else 0.0)
                add(M.P_DELAY, s.compaction_delay_ms / 1000.0)
                fams[M.P_TOMBSTONES].add_metric(lb + ["clean"], s.tombstones_clean)
                fams[M.P_TOMBSTONES].add_metric(lb + ["dirty"], s.tombstones_dirty)
                if s.oldest_tombstone_age_ms is not None:
                    add(M.P_OLDEST_TOMBSTONE, s.oldest_tombstone_age_ms / 1000.0)
                add(M.P_RETENTION, s.delete_retention_ms / 1000.0)
                add(M.P_PAST_RETENTION, s.tombstones_past_retention)
                add(M.P_PAST_HORIZON, s.tombstones_past_delete_horizon)
                add(M.P_FAULTS, s.faults)
                for kind in LEFTOVER_KINDS.values():  # every kind, 0 included: absent means not read
                    fams[M.P_LEFTOVER_FILES].add_metric(lb + [rep.log_dir, kind],
                                                        sum(1 for x in rep.leftovers if x.kind == kind))
                # only the current cause's series (one per partition, not one per cause): count by (cause) works
                cause = rep.cause(now, broker=broker, cleaner=cleaner)
                fams[M.P_CAUSE].add_metric(lb + [cause.cause], 1.0)
                _active_segment(fams, lb, rep, cause, now)
        yield from fams.values()


def _active_segment(fams, lb, rep, cause, now: float) -> None:
    """The active segment against its roll settings; the roll forecast is the cause's
    (``monitor.causes.active_segment_roll``): absent when unknown, with the reason's own series."""
    s, c, known = rep.state, rep.config.config, rep.config.known
    fams[M.P_ACTIVE_BYTES].add_metric(lb, s.active_segment_bytes)
    age = s.active_segment_age_ms(int(now * 1000))
    if age is not None:
        fams[M.P_ACTIVE_AGE].add_metric(lb, age / 1000.0)
    if known(*CONFIG_DEPENDS[M.P_SEGMENT_BYTES]):
        fams[M.P_SEGMENT_BYTES].add_metric(lb, c.segment_bytes)
    limit = max_segment_ms(c)
    if known(*CONFIG_DEPENDS[M.P_MAX_SEGMENT_AGE]):
        fams[M.P_MAX_SEGMENT_AGE].add_metric(lb, float("inf") if limit >= LONG_MAX else limit / 1000.0)
    roll = cause.forecast["active_segment_roll"]
    if not known(*CONFIG_DEPENDS[M.P_ROLL]):
        fams[M.P_ROLL_UNKNOWN].add_metric(lb + ["topic_config_unknown"], 1.0)
    elif roll["at_ms"] is not None and roll["code"] in ROLLED_BY:
        fams[M.P_ROLL].add_metric(lb + [roll["code"]], roll["in_seconds"])
    else:
        fams[M.P_ROLL_UNKNOWN].add_metric(lb + [roll["code"] or "write_rate_unknown"], 1.0)
    k = rep.active_keys
    if k is not None and k.known:
        fams[M.P_ACTIVE_DUP_RECORDS].add_metric(lb, k.duplicate_records)
        fams[M.P_ACTIVE_DUP_BYTES].add_metric(lb, k.duplicate_bytes)
    else:
        why = "not_read" if k is None else "over_bound" if k.over_bound else "read_fault"
        fams[M.P_ACTIVE_DUP_UNKNOWN].add_metric(lb + [why], 1.0)


def _broker_facts(statuses, logdirs) -> BrokerFacts | None:
    """DeadThreadCount of the broker whose log dirs these are, from its JMX or Jolokia source, and its
    log.cleaner.enable and log.cleaner.threads from the admin source (None: not read)."""
    dead, source, enabled, threads = None, "", None, None
    for st in statuses:
        if st.snapshot is None or st.cluster != logdirs.cluster:
            continue
        if st.kind in ("jmx", "jolokia") and st.broker == logdirs.broker and source == "":
            dead, source = st.snapshot.dead_threads(), st.name
        elif st.kind == "admin":
            e = st.snapshot.cleaner_setting(logdirs.broker or "", "log.cleaner.enable")
            t = st.snapshot.cleaner_setting(logdirs.broker or "", "log.cleaner.threads")
            enabled = e.value if e is not None else None
            threads = t.value if t is not None else None
    if source == "" and enabled is None and threads is None:
        return None
    return BrokerFacts(dead, source, enabled, threads)


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

    def collect(self):
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
    names = (M.G_LAG, M.G_LAG_SECONDS, M.G_LAG_SECONDS_UNKNOWN, M.G_RETENTION_FRACTION, M.G_AT_RISK, M.G_MAY_MISS)

    def collect(self):
        fams = {n: _family(n) for n in self.names}
        statuses = self.store.statuses()
        for st in statuses:
            if st.kind != "consumer_groups" or st.snapshot is None:
                continue
            first_dirty = _leaders_first_dirty(statuses, st.cluster)
            for lag in st.snapshot.lags:
                lb = [st.cluster, lag.group, lag.topic, str(lag.partition)]
                fams[M.G_LAG].add_metric(lb, lag.lag_records)
                if lag.lag_seconds is not None:
                    fams[M.G_LAG_SECONDS].add_metric(lb + [lag.lag_method or "exact"], lag.lag_seconds)
                else:  # never silently absent: the reason instead
                    fams[M.G_LAG_SECONDS_UNKNOWN].add_metric(lb + [lag.lag_unknown_reason or "unknown"], 1.0)
                frac = lag.retention_fraction
                if frac is not None:
                    fams[M.G_RETENTION_FRACTION].add_metric(lb, frac)
                    past = holds(LAG_PAST_RETENTION, frac, LAG_PAST_RETENTION.threshold.number)
                    fams[M.G_AT_RISK].add_metric(lb, 1.0 if past else 0.0)
                found = may_miss_updates(lag_seconds=lag.lag_seconds,
                                         min_compaction_lag_seconds=lag.min_compaction_lag_seconds,
                                         committed=lag.committed,
                                         first_dirty_offset=first_dirty.get((lag.topic, lag.partition)))
                for reason, held in found.items():
                    if held is not None:
                        fams[M.G_MAY_MISS].add_metric(lb + [reason, "true" if lag.latest_value_only else "false"],
                                                      1.0 if held else 0.0)
        yield from fams.values()


def _leaders_first_dirty(statuses, cluster: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> the first dirty offset of the leader's replica, for the partitions whose
    leader (from the cluster's admin snapshot) has its log dirs read by this collector (monitor.consumers
    says why the join is made here)."""
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
                out[key] = rep.state.first_dirty_offset
    return out


class TopicCollector(_StoreCollector):
    names = (M.T_MIN_RATIO, M.T_RETENTION, M.T_MIN_LAG, M.T_MAX_LAG, M.T_SEGMENT_BYTES, M.T_SEGMENT_SECONDS,
             M.T_PARTITIONS, M.P_LEADER_LSO, M.ADMIN_LISTED, M.P_REPLICA_INFO)

    def collect(self):
        fams = {n: _family(n) for n in self.names}
        for st in self.store.statuses():
            if st.kind != "admin" or st.snapshot is None:
                continue
            fams[M.ADMIN_LISTED].add_metric([st.cluster], len(st.snapshot.listed))
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
                    if po.stable >= 0:
                        fams[M.P_LEADER_LSO].add_metric([st.cluster, str(po.leader), t, str(p)], po.stable)
                    for b in po.replicas:
                        fams[M.P_REPLICA_INFO].add_metric(
                            [st.cluster, str(b), t, str(p), "leader" if b == po.leader else "follower"], 1)
        yield from fams.values()


class ConfigReviewCollector(_StoreCollector):
    """The configuration review's findings (``monitor.configreview``) per cluster with an admin source."""

    names = (M.T_CONFIG_FINDING,)

    def collect(self):
        from collectors.review import topic_facts
        from monitor.configreview import review

        fam = _family(M.T_CONFIG_FINDING)
        statuses = self.store.statuses()
        now = self.clock()
        for cluster in sorted({st.cluster for st in statuses if st.kind == "admin" and st.snapshot is not None}):
            for f in review(topic_facts(statuses, cluster, now)).findings:
                fam.add_metric([cluster, f.topic, f.check, f.setting, f.current, f.suggested], 1.0)
        yield fam


class PitfallCollector(_StoreCollector):
    """Issue 16 per partition: producer pitfalls the log-dir reader counts on disk, and what retention
    deletes next on compact,delete topics."""

    names = (M.P_EMPTY_VALUES, M.P_KEYLESS, M.P_RETENTION_START, M.P_RETENTION_BYTES)

    def collect(self):
        fams = {n: _family(n) for n in self.names}
        for st in self.store.statuses():
            if st.kind != "log_dirs" or st.snapshot is None:
                continue
            for rep in st.snapshot.partitions:
                lb = [st.cluster, st.broker or "", rep.state.topic, str(rep.state.partition)]
                fams[M.P_EMPTY_VALUES].add_metric(lb, rep.empty_value_records)
                fams[M.P_KEYLESS].add_metric(lb, rep.keyless_records)
                if rep.retention is not None:
                    fams[M.P_RETENTION_START].add_metric(lb, rep.retention.log_start_offset)
                    fams[M.P_RETENTION_BYTES].add_metric(lb, rep.retention.deleted_bytes)
        yield from fams.values()


class SelfCollector(_StoreCollector):
    names = (M.SRC_UP, M.SRC_LAST_SUCCESS, M.SRC_DURATION, M.SRC_ERRORS, M.SRC_SHAPE)

    def collect(self):
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
            shape = getattr(st.snapshot, "shape", None) if st.kind in ("jmx", "jolokia") else None
            if shape:
                fams[M.SRC_SHAPE].add_metric(lb + [shape, ",".join(st.snapshot.also_on_page)], 1.0)
        yield from fams.values()


ALL = (BrokerCleanerCollector, BrokerSettingsCollector, PartitionCollector, CleanerLogCollector, ConsumerGroupCollector,
       TopicCollector, ConfigReviewCollector, PitfallCollector, SelfCollector)


def register_all(registry, store: Store, clock=time.time) -> None:
    for cls in ALL:
        registry.register(cls(store, clock))

"""The exporter's consumer-groups area: per group and partition of a compacted topic, and per group and
topic the aggregates over them. Each partition's series are built from its facts (``collectors.export.facts``:
the lag and the leader's replica state), then kept whole or cut to ``metrics.GROUP_DEFAULT`` by
``View.select_group`` (granularity and health). Per cluster: the groups ListGroups gave against those
with live committed offsets in the log dirs' ``__consumer_offsets``."""

from __future__ import annotations

from collectors.export import metrics as M
from collectors.export.view import EXTRA, StoreCollector, families
from collectors.export.facts import Facts
from monitor.model.compaction import PartitionState
from monitor.model.consumers import may_miss_updates
from monitor.contract.rules import LAG_PAST_RETENTION, holds


class ConsumerGroupCollector(StoreCollector):
    names = (M.G_LAG, M.G_LAG_SECONDS, M.G_LAG_SECONDS_UNKNOWN, M.G_RETENTION_FRACTION, M.G_AT_RISK, M.G_MAY_MISS,
             M.GT_MAX_LAG_SECONDS, M.GT_MAX_RETENTION_FRACTION, M.GT_LAG, M.GT_UNHEALTHY, M.GT_LAG_UNKNOWN,
             M.ADMIN_LISTED_GROUPS, M.OFFSETS_TOPIC_GROUPS, M.ADMIN_UNLISTED_GROUPS, M.G_LAG_UNKNOWN)

    def _collect(self, facts: Facts):
        fams = families(self.names)
        for cluster, on_disk in facts.offsets_groups.items():
            if on_disk is not None:
                fams[M.OFFSETS_TOPIC_GROUPS].add_metric([cluster], len(on_disk))
        for g in facts.groups:
            if g.snapshot.listed is not None:
                fams[M.ADMIN_LISTED_GROUPS].add_metric([g.cluster], len(g.snapshot.listed))
            for group, (call, reason) in sorted(getattr(g.snapshot, "unknown", {}).items()):
                fams[M.G_LAG_UNKNOWN].add_metric([g.cluster, group, call, reason], 1.0)  # never missing unsaid
            if g.hidden is not None:
                fams[M.ADMIN_UNLISTED_GROUPS].add_metric([g.cluster], len(g.hidden))
            topics: dict[tuple[str, str], _GroupTopicSum] = {}
            for f in g.lags:
                if self.view.broker_role and f.leader is None:
                    continue  # the broker role judges a group against the leader's replica read here, only
                lag = f.lag
                rows, bad = self.view.select_group(_group_rows(lag, f.leader))
                lb = [g.cluster, lag.group, lag.topic, str(lag.partition)]
                for name, extra, v in rows:  # labels beyond the group's partition in the metric's own order
                    fams[name].add_metric(lb + [extra[k] for k in EXTRA[name]], v)
                topics.setdefault((lag.group, lag.topic), _GroupTopicSum()).add(lag, bad)
            for (group, topic), t in sorted(topics.items()):
                t.emit(fams, [g.cluster, group, topic])
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

"""collectors.export.exporter at granularity topic: the alert rules see the same alerts as at granularity
partition, on every promtool case (firing and near miss), because a partition (or a consumer group's
partition) whose series could raise an alert is unhealthy and keeps them all."""

import pytest

from alerts.promtool_tests import cases, eval_minute, samples_at
from collectors.export import metrics as M
from collectors.export.groups import ConsumerGroupCollector
from collectors.export.partitions import PartitionCollector
from collectors.export.view import View
from monitor.settings.config import Thresholds
from monitor.verdicts.health import NEEDS_HISTORY, NEEDS_PEERS
from monitor.contract.panels import PANELS
from monitor.contract.rule_eval import Sample, evaluate_rule
from monitor.contract.rules import RULES

KEYS = ("cluster", "broker", "topic", "partition")
GROUP_KEYS = M.G  # a consumer group's partition: cluster, group, topic, partition


# the per-partition series the granularity cuts: the log dirs' (partition_uncleanable comes from the
# cleaner's log and partition_replica_info from the admin API, for every partition)
CUT = frozenset(PartitionCollector.names)
# the per-(group, topic, partition) series the granularity cuts (the others are the group-topic aggregates)
GROUP_CUT = frozenset(n for n in ConsumerGroupCollector.names if M.METRICS[n][2][:4] == GROUP_KEYS)


def _split(samples, keys, names):
    parts, rest = {}, []
    for s in samples:
        if all(k in s.labels for k in keys) and s.name in names:
            key = tuple(s.labels[k] for k in keys)
            parts.setdefault(key, []).append((s.name, {k: v for k, v in s.labels.items() if k not in keys}, s.value))
        else:
            rest.append(s)
    return parts, rest


def through(view: View, samples, cause: str):
    """The samples as the exporter would let them out: per partition, ``View.select`` on its series; per
    consumer group's partition, ``View.select_group``."""
    groups, samples = _split(samples, GROUP_KEYS, GROUP_CUT)
    parts, out = _split(samples, KEYS, CUT)
    for key, rows in parts.items():
        kept, _ = view.select(cause, [r for r in rows if r[0] != M.P_CAUSE])
        out.extend(Sample(n, {**dict(zip(KEYS, key)), **extra}, v) for n, extra, v in kept)
        out.extend(Sample(n, {**dict(zip(KEYS, key)), **extra}, v) for n, extra, v in rows if n == M.P_CAUSE)
    for key, rows in groups.items():
        kept, _ = view.select_group(rows)
        out.extend(Sample(n, {**dict(zip(GROUP_KEYS, key)), **extra}, v) for n, extra, v in kept)
    return out


def alerts(case, t, samples_of):
    at = eval_minute(case, t)
    now, before = samples_of(samples_at(case, at)), samples_of(samples_at(case, at - 60))
    return [(a.alert, a.severity, sorted(a.labels.items()), a.value)
            for r in RULES if (r.alert, r.severity) == (case.alert, case.severity)
            for a in evaluate_rule(r, now, t, {"1h": before}) or []]


@pytest.mark.parametrize("cause", ["clean", "active_segment_only", "waiting"])
def test_every_case_gives_the_same_alerts_at_both_granularities(cause):
    t = Thresholds()
    topic, partition = View("topic", t), View("partition", t)
    for case in cases(t):
        full = alerts(case, t, lambda s: through(partition, s, cause))
        cut = alerts(case, t, lambda s: through(topic, s, cause))
        assert cut == full, (case.alert, case.fires)
        assert bool(full) == case.fires, case.alert


def test_the_consumer_group_cases_are_cut_where_healthy():
    """The group cases above really go through the cut: a near miss (ConsumerMayMissTombstones' ratio at
    the warning fraction; a may-miss of a latest-value-only group) loses its non-default series at
    granularity topic, a firing case keeps them."""
    t = Thresholds()
    seen = set()
    for case in cases(t):
        if not case.alert.startswith("ConsumerMayMiss"):
            continue
        groups, _ = _split(samples_at(case, eval_minute(case, t)), GROUP_KEYS, GROUP_CUT)
        assert groups, case.alert
        for rows in groups.values():
            kept, bad = View("topic", t).select_group(rows)
            assert bad == case.fires or (case.alert, case.severity) == ("ConsumerMayMissTombstones", "critical")
            assert kept == (rows if bad else [r for r in rows if r[0] in M.GROUP_DEFAULT])
            assert View("partition", t).select_group(rows)[0] == rows
            seen.add((case.alert, case.fires, bad))
    # the critical near miss is a warning: unhealthy (it fires the warning)
    assert {("ConsumerMayMissTombstones", False, False), ("ConsumerMayMissUpdates", False, False),
            ("ConsumerMayMissTombstones", True, True), ("ConsumerMayMissUpdates", True, True)} <= seen


def _group_rows(ratio: float, seconds: float | None = None, latest_value_only="false", may_miss=0.0):
    extra = [(M.G_LAG_SECONDS, {"method": "exact"}, seconds)] if seconds is not None else \
        [(M.G_LAG_SECONDS_UNKNOWN, {"reason": "too_few_samples"}, 1.0)]
    rows = [(M.G_LAG, {}, 12.0), *extra]
    if seconds is not None:
        rows += [(M.G_RETENTION_FRACTION, {}, ratio), (M.G_AT_RISK, {}, float(ratio >= 1))]
    return rows + [(M.G_MAY_MISS, {"reason": r, "latest_value_only": latest_value_only}, may_miss)
                   for r in ("lag_past_min_compaction_lag", "below_first_dirty_offset")]


def test_a_healthy_group_partition_keeps_exactly_the_default_series():
    """A group caught up (ratio 0, nothing it may miss): its time lag and ratio, GROUP_DEFAULT_SERIES
    series; a group whose time lag is unknown keeps the unknown with its reason; at granularity partition
    every series goes out."""
    t = Thresholds()
    rows = _group_rows(0.0, 0.0)
    kept, bad = View("topic", t).select_group(rows)
    assert not bad and sorted(r[0] for r in kept) == sorted([M.G_LAG_SECONDS, M.G_RETENTION_FRACTION])
    assert len(kept) == M.GROUP_DEFAULT_SERIES
    assert View("partition", t).select_group(rows) == (rows, False)
    unknown = _group_rows(0.0, None)
    kept, bad = View("topic", t).select_group(unknown)
    assert not bad and kept == [(M.G_LAG_SECONDS_UNKNOWN, {"reason": "too_few_samples"}, 1.0)]
    # a latest-value-only group that may miss updates is not alerted, so healthy; another group is not
    assert not View("topic", t).select_group(_group_rows(0.1, 60.0, "true", 1.0))[1]
    assert View("topic", t).select_group(_group_rows(0.1, 60.0, "false", 1.0))[1]
    # the warning fraction is the rule table's: just above it, every series
    above = t.consumer_lag_warning_fraction + 0.01
    assert View("topic", t).select_group(_group_rows(above, 60.0))[0] == _group_rows(above, 60.0)
    assert len(View("topic", t).select_group(_group_rows(t.consumer_lag_warning_fraction, 60.0))[0]) == 2


def test_the_dashboards_group_panels_read_series_every_group_partition_has():
    """A Grafana panel (and the Streamlit page drawing it) of consumer groups reads only
    GROUP_DEFAULT's series or the group-topic aggregates (or is marked fault-only)."""
    per_group = {n for n in M.METRICS if M.METRICS[n][2][:4] == GROUP_KEYS}
    read = set()
    for p in PANELS:
        for q in p.queries:
            for n in per_group:
                if n + "{" in q.expr and not q.fault_only:
                    read.add(n)
    assert read and read <= set(M.GROUP_DEFAULT)
    # and no rule compares a group series over time or across peers (those would need the history)
    assert not (NEEDS_HISTORY | NEEDS_PEERS) & per_group


def test_a_healthy_partition_keeps_exactly_the_default_series():
    """A clean partition with every series: only PARTITION_DEFAULT's remain, 4 with its cause (and
    partition_detail_pending, which a serving collector adds: collect --once has none)."""
    rows = [(name, {"section": "clean"} if name == M.P_TOMBSTONES else {}, 0.0)
            for name, (_, _, labels) in M.METRICS.items()
            if name.startswith("kafka_compaction_partition_") and labels[:4] == KEYS and name != M.P_CAUSE]
    rows.append((M.P_TOMBSTONES, {"section": "dirty"}, 0.0))
    kept, bad = View("topic").select("clean", rows)
    assert not bad
    assert sorted(r[0] for r in kept) == sorted([M.P_CLEANABLE_RATIO, M.P_TOMBSTONES, M.P_TOMBSTONES,
                                                 M.P_DETAIL_PENDING])
    assert len(kept) == M.PARTITION_DEFAULT_SERIES
    assert View("partition").select("clean", rows)[0] == rows


def test_series_a_rule_needs_history_of_go_out_for_every_partition():
    """A delta rule (TombstonesPilingUp) compares with an hour ago, when the partition may still have
    been healthy: its series is a default one."""
    assert NEEDS_HISTORY and NEEDS_HISTORY <= set(M.PARTITION_DEFAULT)
    joined = {c.join.metric for r in RULES for c in r.clauses if c.join and not c.join.unless}
    # a join on a per-partition series outside the defaults makes the partitions it holds for unhealthy
    assert joined - set(M.PARTITION_DEFAULT) <= {M.P_ELIGIBLE}


def test_series_a_rule_compares_across_replicas_go_out_for_every_partition():
    """ReplicasDisagree compares one replica with the others (on other brokers): a healthy replica's
    series is the other side of the comparison, so each is a default series or one the granularity
    does not cut (partition_uncleanable comes from the cleaner's log, for every marked partition)."""
    assert NEEDS_PEERS
    assert not (NEEDS_PEERS - set(M.PARTITION_DEFAULT)) & set(PartitionCollector.names)

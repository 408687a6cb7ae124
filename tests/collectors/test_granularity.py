"""collectors.exporter at granularity topic: the alert rules see the same alerts as at granularity
partition, on every promtool case (firing and near miss), because a partition whose series could raise
an alert is unhealthy and keeps them all."""

import pytest

from alerts.promtool_tests import cases, eval_minute, samples_at
from collectors import metrics as M
from collectors.exporter import PartitionCollector, View
from monitor.config import Thresholds
from monitor.health import NEEDS_HISTORY, NEEDS_PEERS
from monitor.rule_eval import Sample, evaluate_rule
from monitor.rules import RULES

KEYS = ("cluster", "broker", "topic", "partition")


# the per-partition series the granularity cuts: the log dirs' (partition_uncleanable comes from the
# cleaner's log and partition_replica_info from the admin API, for every partition)
CUT = frozenset(PartitionCollector.names)


def through(view: View, samples, cause: str):
    """The samples as the exporter would let them out: per partition, ``View.select`` on its series."""
    out, parts = [], {}
    for s in samples:
        if all(k in s.labels for k in KEYS) and s.name in CUT:
            key = tuple(s.labels[k] for k in KEYS)
            parts.setdefault(key, []).append((s.name, {k: v for k, v in s.labels.items() if k not in KEYS}, s.value))
        else:
            out.append(s)
    for key, rows in parts.items():
        kept, _ = view.select(cause, [r for r in rows if r[0] != M.P_CAUSE])
        out.extend(Sample(n, {**dict(zip(KEYS, key)), **extra}, v) for n, extra, v in kept)
        out.extend(Sample(n, {**dict(zip(KEYS, key)), **extra}, v) for n, extra, v in rows if n == M.P_CAUSE)
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


def test_a_healthy_partition_keeps_exactly_the_default_series():
    """A clean partition with every series: only PARTITION_DEFAULT's remain, 4 with its cause."""
    rows = [(name, {"section": "clean"} if name == M.P_TOMBSTONES else {}, 0.0)
            for name, (_, _, labels) in M.METRICS.items()
            if name.startswith("kafka_compaction_partition_") and labels[:4] == KEYS and name != M.P_CAUSE]
    rows.append((M.P_TOMBSTONES, {"section": "dirty"}, 0.0))
    kept, bad = View("topic").select("clean", rows)
    assert not bad
    assert sorted(r[0] for r in kept) == sorted([M.P_CLEANABLE_RATIO, M.P_TOMBSTONES, M.P_TOMBSTONES])
    assert len(kept) + 1 == M.PARTITION_DEFAULT_SERIES
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

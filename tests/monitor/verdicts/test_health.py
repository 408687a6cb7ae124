"""monitor.verdicts.health: the one definition of an unhealthy partition, from the causes and the rule table, and
of an unhealthy consumer group's partition, from the rule table alone."""

from alerts.promtool_tests import PART, cases, eval_minute, samples_at
from monitor.verdicts.causes import CAUSES, PRECEDENCE
from monitor.settings.config import Thresholds
from monitor.verdicts.health import NEEDS_HISTORY, SETTLED, series_fire, unhealthy, worst_cause
from monitor.contract.rules import RULES

PARTITION_KEYS = ("cluster", "broker", "topic", "partition")


def test_settled_causes_are_the_configured_behaviour_at_the_end_of_precedence():
    assert SETTLED == ("min_compaction_lag", "below_threshold", "active_segment_only", "clean")
    assert CAUSES[-len(SETTLED):] == SETTLED
    for name, _, why in PRECEDENCE:  # each settled cause's own reason says it is configured or nothing
        if name in SETTLED:
            assert any(w in why for w in ("configured", "nothing", "releases by itself"))


def test_any_other_cause_is_unhealthy_without_any_series():
    for cause in CAUSES:
        assert unhealthy(cause, [], Thresholds()) is (cause not in SETTLED)


def test_worst_cause_follows_precedence():
    assert worst_cause(["clean", "waiting", "below_threshold"]) == "waiting"
    assert worst_cause(["clean", "uncleanable", "overdue"]) == "uncleanable"
    assert worst_cause([]) is None


CAUSE = "kafka_compaction_partition_compaction_cause"


def _cause_and_rows(rows, otherwise: str = "clean"):
    """The partition's cause (from its cause series, else ``otherwise``) and its other series: the
    exporter keeps the cause series apart from the rows it gives ``unhealthy``."""
    cause = next((extra["cause"] for name, extra, v in rows if name == CAUSE and v == 1), otherwise)
    return cause, [r for r in rows if r[0] != CAUSE]


def _partition_rows(samples):
    rows = {}
    for s in samples:
        if all(k in s.labels for k in PARTITION_KEYS):
            key = tuple(s.labels[k] for k in PARTITION_KEYS)
            extra = {k: v for k, v in s.labels.items() if k not in PARTITION_KEYS}
            rows.setdefault(key, []).append((s.name, extra, s.value))
    return rows


def test_a_partition_whose_series_fire_a_rule_is_unhealthy_even_with_a_settled_cause():
    """Every firing case of the promtool tests whose alert comes from a partition's own series (its
    clause or its join): that partition is unhealthy, whatever its cause says."""
    t = Thresholds()
    checked = set()
    for case in cases(t):
        if not case.fires:
            continue
        now = samples_at(case, eval_minute(case, t))
        for key, rows in _partition_rows(now).items():
            if all(name in NEEDS_HISTORY for name, _, _ in rows):
                continue  # a delta: needs history, exported for every partition
            # CleanerDisabled fires from the broker's series joined with the cause series, which every
            # partition exports, whatever its health; ReplicasDisagree compares with other brokers'
            # replicas (NEEDS_PEERS, exported for every partition); CleanerThrottled fires from the cause
            if key == tuple(PART[k] for k in PARTITION_KEYS) and case.alert not in ("CleanerDisabled",
                                                                                    "ReplicasDisagree"):
                assert unhealthy(*_cause_and_rows(rows), t), case.alert
                checked.add(case.alert)
    assert {"CompactionLagging", "CompactionOverdue", "CompactionBlockedByTransaction", "HangingTransaction",
            "TombstonesPastDeleteHorizon", "LogCleanerStalled", "CleanerThrottled"} <= checked


def test_near_misses_leave_a_clean_partition_healthy():
    t = Thresholds()
    for case in cases(t):
        # ReplicasDisagree's near misses mark every replica uncleanable: UncleanablePartitions' to fire;
        # ReplicaMayResurrectDeletes' critical near miss is its warning (as ConsumerMayMissTombstones')
        if case.fires or case.alert in ("ConsumerMayMissTombstones", "ConsumerMayMissUpdates", "ReplicasDisagree",
                                        "ReplicaMayResurrectDeletes"):
            continue
        now = samples_at(case, eval_minute(case, t))
        for key, rows in _partition_rows(now).items():
            if key == tuple(PART[k] for k in PARTITION_KEYS):  # the near miss's own partition
                _, rest = _cause_and_rows(rows)  # its series alone, with a settled cause
                assert not unhealthy("clean", rest, t), (case.alert, rows)


def test_history_rules_are_named():
    assert NEEDS_HISTORY == {c.metric for r in RULES for c in r.clauses if c.delta}


GROUP_KEYS = ("cluster", "group", "topic", "partition")


def test_a_group_partition_is_unhealthy_exactly_where_a_consumer_rule_holds():
    """Each ConsumerMayMiss* promtool case, group's partition by group's partition: unhealthy where the
    Python evaluator raises an alert of any consumer rule on it (the critical near miss is a warning)."""
    from monitor.contract.rule_eval import evaluate

    t = Thresholds()
    seen = set()
    for case in cases(t):
        if not case.alert.startswith("ConsumerMayMiss"):
            continue
        now = samples_at(case, eval_minute(case, t))
        alerted = {tuple(a.labels[k] for k in GROUP_KEYS) for a in evaluate(now, t)
                   if a.alert.startswith("ConsumerMayMiss")}
        rows: dict = {}
        for s in now:
            if all(k in s.labels for k in GROUP_KEYS):
                key = tuple(s.labels[k] for k in GROUP_KEYS)
                rows.setdefault(key, []).append((s.name, {k: v for k, v in s.labels.items() if k not in GROUP_KEYS},
                                                 s.value))
        assert rows, case.alert
        for key, r in rows.items():
            assert series_fire(r, t) == (key in alerted), (case.alert, case.fires, key)
            seen.add(key in alerted)
    assert seen == {True, False}

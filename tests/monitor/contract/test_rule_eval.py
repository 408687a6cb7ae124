"""The rule table's Python evaluator on hand-made samples: what it means where Prometheus has history
(``for`` windows, ``delta``), and the PromQL forms it mirrors (per-series thresholds, joins, ``or``,
label matchers). Agreement with promtool on every alert is in tests/alerts/test_rules.py."""

from dataclasses import replace

from monitor.contract.metricnames import PREFIX
from monitor.settings.config import Thresholds
from monitor.contract.rule_eval import Sample, evaluate, unknown_rules
from monitor.contract.rules import threshold_of

T = Thresholds()
P = {"cluster": "c", "broker": "1", "topic": "t", "partition": "0"}
B = {"cluster": "c", "broker": "1"}


def s(name, value, **labels):
    return Sample(PREFIX + name, labels, value)


def fired(samples, t=T, **kw):
    return {(a.alert, a.severity): a for a in evaluate(samples, t, **kw)}


def test_a_condition_that_holds_now_is_active_whatever_the_window():
    got = fired([s("broker_cleaner_dead_threads", 1, **B)])
    a = got[("LogCleanerThreadDead", "critical")]
    assert a.state == "active" and a.labels == B and a.value == 1
    assert a.annotations["summary"] == "A log cleaner thread died on broker 1 (cluster c)"
    assert a.annotations["runbook"] == "alerts/RUNBOOK.md#logcleanerthreaddead"


def test_delta_needs_an_earlier_sample_and_is_unknown_without():
    now = [s("partition_tombstones", 250_000, section="dirty", **P), s("partition_tombstones", 10, section="clean", **P)]
    assert "TombstonesPilingUp" in unknown_rules() and not fired(now)
    hour_ago = [s("partition_tombstones", 100_000, section="dirty", **P), s("partition_tombstones", 10, section="clean", **P)]
    a = fired(now, earlier={"1h": hour_ago})[("TombstonesPilingUp", "warning")]
    assert a.value == 150_000 and a.labels == P  # summed over sections, then now minus then
    assert a.annotations["description"].endswith("grew by 150k in the last hour.")
    grew_less = [s("partition_tombstones", 200_000, section="dirty", **P), s("partition_tombstones", 10, section="clean", **P)]
    assert ("TombstonesPilingUp", "warning") not in fired(now, earlier={"1h": grew_less})  # 50 000 < 100 000
    other = {**P, "partition": "1"}
    assert ("TombstonesPilingUp", "warning") not in fired(now, earlier={"1h": [
        s("partition_tombstones", 0, section="dirty", **other)]})  # no earlier sample of this series
    assert unknown_rules({"1h": hour_ago}) == {}
    assert unknown_rules()["TombstonesPilingUp"] == "needs samples from 1h earlier (the change over 1h)"


def test_compaction_lagging_compares_the_cleanable_ratio_strictly():
    base = [s("partition_min_cleanable_dirty_ratio", 0.5, **P)]
    assert ("CompactionLagging", "warning") in fired(base + [s("partition_cleanable_ratio", 0.51, **P)])
    assert not fired(base + [s("partition_cleanable_ratio", 0.5, **P)])  # Kafka: strictly greater
    held_back = [s("partition_cleanable_ratio", 0.0, **P), s("partition_uncleaned_ratio", 1.0, **P)]
    assert not fired(base + held_back)  # uncleaned bytes held back by min.compaction.lag.ms do not count
    assert not fired([s("partition_cleanable_ratio", 0.9, **P)])  # no threshold for this series: unknown


def test_log_cleaner_stalled_joins_eligible_partitions_of_the_same_broker():
    idle = s("broker_cleaner_time_since_last_run_seconds", T.cleaner_stalled_seconds + 1, **B)
    assert not fired([idle, s("partition_eligible", 1, **{**P, "broker": "2"})])
    assert not fired([idle, s("partition_eligible", 0, **P)])
    assert fired([idle, s("partition_eligible", 1, **P)])[("LogCleanerStalled", "critical")].labels == B


def test_or_takes_the_first_clause_that_holds():
    ld = {**B, "log_dir": "/d"}
    both = fired([s("broker_uncleanable_partitions", 2, **ld), s("broker_uncleanable_bytes", 900, **ld)])
    assert both[("UncleanablePartitions", "critical")].value == 2
    only_bytes = fired([s("broker_uncleanable_partitions", 0, **ld), s("broker_uncleanable_bytes", 900, **ld)])
    assert only_bytes[("UncleanablePartitions", "critical")].value == 900


def test_label_matchers_and_the_job_from_the_thresholds():
    assert not fired([Sample("up", {"job": "other", "instance": "h:1"}, 0)])
    a = fired([Sample("up", {"job": T.monitor_job, "instance": "h:1"}, 0)])[("CompactionMonitorDown", "warning")]
    assert a.annotations["description"] == ("Source  (cluster , instance h:1) has not answered, or its files were "
                                            "not understood, for 5m.")


def test_a_log_dir_down_while_its_source_answers():
    src = {"cluster": "c", "source": "log_dirs:c:1", "kind": "log_dirs"}
    ld = {"cluster": "c", "broker": "1", "log_dir": "/data/kafka"}
    assert not fired([s("source_up", 1, **src), s("log_dir_up", 1, **ld)])
    a = fired([s("source_up", 1, **src), s("log_dir_up", 0, **ld)])[("CompactionMonitorDown", "warning")]
    assert a.annotations["description"].startswith("Source /data/kafka (cluster c, instance )")


def test_consumer_lag_warning_then_critical():
    g = {"cluster": "c", "group": "g", "topic": "t", "partition": "0"}
    assert set(fired([s("consumer_group_lag_retention_ratio", 0.5, **g)])) == set()  # not above 0.5
    assert set(fired([s("consumer_group_lag_retention_ratio", 0.8, **g)])) == {("ConsumerMayMissTombstones", "warning")}
    assert set(fired([s("consumer_group_lag_retention_ratio", 1.0, **g)])) == {("ConsumerMayMissTombstones", "critical")}


def test_thresholds_come_from_the_config_given():
    t = replace(T, buffer_utilization_ratio=0.7, clean_time_seconds=60)
    sample = [s("broker_cleaner_max_buffer_utilization_ratio", 0.75, **B)]
    assert not fired(sample) and ("CleanerBufferSaturated", "warning") in fired(sample, t)
    assert threshold_of("broker_cleaner_max_buffer_utilization_ratio", t) == 0.7
    assert threshold_of("kafka_compaction_broker_cleaner_max_clean_time_seconds", t) == 60
    assert threshold_of("broker_cleaner_recopy_ratio", t) is None


def test_uncleanable_partitions_names_the_partition_and_alerts_per_log_dir_only_where_none_is_named():
    """``unless on (cluster, broker)``: a broker whose cleaner log names the partition gets that alert,
    not its log dir's as well; a broker without named partitions keeps the log-dir alert."""
    ld = {**B, "log_dir": "/data"}
    samples = [s("partition_uncleanable", 1, **P, exception="CorruptRecordException"),
               s("broker_uncleanable_partitions", 1, **ld),
               s("broker_uncleanable_partitions", 2, **{**ld, "broker": "2"})]
    got = [a for a in evaluate(samples, T) if a.alert == "UncleanablePartitions"]
    assert sorted((a.labels["broker"], a.labels.get("topic"), a.value) for a in got) == [("1", "t", 1), ("2", None, 2)]
    named = next(a for a in got if a.labels["broker"] == "1")
    assert "CorruptRecordException" in named.annotations["description"]
    assert "topic t partition 0" in named.annotations["description"]

"""promtool unit tests for every alert and severity: a series that fires it and a near miss that does not.

The input series are written here, by hand, from the thresholds (a threshold change moves the test
values with it); each case says whether it fires. The expected alerts are not written by hand: they
are what the Python evaluator (``monitor.contract.rule_eval``) finds on the same samples at the evaluation
time, with its labels, ``$value`` and rendered annotations. promtool then checks that Prometheus,
running the rendered PromQL, finds exactly those: the rule file and the evaluator agree on every case,
near misses included (``tests/alerts/test_rules.py`` also checks that the evaluator fires exactly on
the firing cases).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from alerts.render import dump_yaml
from monitor.settings.config import Thresholds
from monitor.contract.rule_eval import Alert, Sample, evaluate_rule
from monitor.contract.rules import RULES, rule

INTERVAL_MINUTES = 1
SAMPLES = 600  # one a minute


def minutes(d: str) -> float:
    n, unit = int(d[:-1]), d[-1]
    return n * {"s": 1 / 60, "m": 1, "h": 60, "d": 1440}[unit]


@dataclass
class Case:
    alert: str
    severity: str
    series: dict  # series selector -> promtool values
    fires: bool


PART = {"cluster": "c", "broker": "1", "topic": "orders", "partition": "3"}
BROKER = {"cluster": "c", "broker": "1"}
GROUP = {"cluster": "c", "group": "billing", "topic": "orders", "partition": "3"}


def sel(name: str, labels: dict) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def parse_selector(text: str) -> tuple[str, dict]:
    name, _, rest = text.partition("{")
    return name, dict(re.findall(r'(\w+)="([^"]*)"', rest))


def expand(values: str) -> list[float | None]:
    """promtool's series notation: ``a``, ``axn`` and ``a+bxn`` / ``a-bxn`` (n+1 values), ``_``."""
    out: list[float | None] = []
    for item in values.split():
        if item == "_":
            out.append(None)
            continue
        m = re.fullmatch(r"([-+]?[\d.e]+)(?:([-+][\d.e]+))?x(\d+)", item)
        if m is None:
            out.append(float(item))
            continue
        start, step, n = float(m.group(1)), float(m.group(2) or 0), int(m.group(3))
        out.extend(start + i * step for i in range(n + 1))
    return out


def samples_at(case: Case, minute: int) -> list[Sample]:
    out = []
    for selector, values in case.series.items():
        v = expand(values)
        i = minute // INTERVAL_MINUTES
        if 0 <= i < len(v) and v[i] is not None:
            name, labels = parse_selector(selector)
            out.append(Sample(name, labels, v[i]))
    return out


def eval_minute(case: Case, t: Thresholds) -> int:
    """Past the rule's ``for`` window, and an hour of history for ``delta[1h]``."""
    return int(minutes(rule(case.alert, case.severity).window(t))) + 70


def evaluated(case: Case, t: Thresholds) -> list[Alert]:
    """What the Python evaluator finds for the case's alert name (every severity) at the evaluation time."""
    at = eval_minute(case, t)
    now, hour_ago = samples_at(case, at), samples_at(case, at - 60)
    out = []
    for r in RULES:
        if r.alert == case.alert:
            out.extend(evaluate_rule(r, now, t, earlier={"1h": hour_ago}) or [])
    return out


def cases(t: Thresholds) -> list[Case]:
    n = SAMPLES
    c = []

    def both(alert, severity, fire_series, miss_series):
        c.append(Case(alert, severity, fire_series, True))
        c.append(Case(alert, severity, miss_series, False))

    both("LogCleanerThreadDead", "critical",
         {sel("kafka_compaction_broker_cleaner_dead_threads", BROKER): f"0 0 1x{n}"},
         {sel("kafka_compaction_broker_cleaner_dead_threads", BROKER): f"0x{n}"})
    stalled = t.cleaner_stalled_seconds + 100
    other_broker = {**PART, "broker": "2"}
    both("LogCleanerStalled", "critical",
         {sel("kafka_compaction_broker_cleaner_time_since_last_run_seconds", BROKER): f"{stalled:g}x{n}",
          sel("kafka_compaction_partition_eligible", PART): f"1x{n}"},
         {sel("kafka_compaction_broker_cleaner_time_since_last_run_seconds", BROKER): f"{stalled:g}x{n}",
          sel("kafka_compaction_partition_eligible", PART): f"0x{n}",
          sel("kafka_compaction_partition_eligible", other_broker): f"1x{n}"})  # work, but elsewhere
    # Kafka's test is strictly greater: a cleanable ratio equal to min.cleanable.dirty.ratio is not eligible,
    # and bytes held back by min.compaction.lag.ms (uncleaned, not cleanable) do not count
    both("CompactionLagging", "warning",
         {sel("kafka_compaction_partition_cleanable_ratio", PART): f"0.8x{n}",
          sel("kafka_compaction_partition_min_cleanable_dirty_ratio", PART): f"0.5x{n}"},
         {sel("kafka_compaction_partition_cleanable_ratio", PART): f"0.5x{n}",
          sel("kafka_compaction_partition_uncleaned_ratio", PART): f"1x{n}",
          sel("kafka_compaction_partition_min_cleanable_dirty_ratio", PART): f"0.5x{n}"})
    both("CompactionOverdue", "warning",
         {sel("kafka_compaction_partition_compaction_delay_seconds", PART): f"120x{n}"},
         {sel("kafka_compaction_partition_compaction_delay_seconds", PART): f"0x{n}",
          sel("kafka_compaction_broker_max_compaction_delay_seconds", BROKER): f"0x{n}"})
    # the cleaner queue's forecast: a start past the deadline fires; one in time (negative) does not
    both("CompactionWillBeOverdue", "warning",
         {sel("kafka_compaction_partition_next_clean_forecast_late_seconds", PART): f"90x{n}"},
         {sel("kafka_compaction_partition_next_clean_forecast_late_seconds", PART): f"-30x{n}",
          sel("kafka_compaction_partition_next_clean_forecast_late_seconds", {**PART, "partition": "4"}): f"0x{n}"})
    ld = {**BROKER, "log_dir": "/data/kafka"}
    both("UncleanablePartitions", "critical",
         {sel("kafka_compaction_broker_uncleanable_partitions", ld): f"2x{n}",
          sel("kafka_compaction_broker_uncleanable_bytes", ld): f"0x{n}"},
         {sel("kafka_compaction_broker_uncleanable_partitions", ld): f"0x{n}",
          sel("kafka_compaction_broker_uncleanable_bytes", ld): f"0x{n}"})
    # where log-cleaner.log names the partition: that alert alone, not the log dir's of the same broker
    # too; a partition named on another broker leaves this broker's log-dir alert in place
    marked = {**PART, "exception": "CorruptRecordException"}
    both("UncleanablePartitions", "critical",
         {sel("kafka_compaction_partition_uncleanable", marked): f"1x{n}",
          sel("kafka_compaction_broker_uncleanable_partitions", ld): f"1x{n}",
          sel("kafka_compaction_broker_uncleanable_bytes", ld): f"4096x{n}",
          sel("kafka_compaction_partition_uncleanable", {**marked, "broker": "2"}): f"1x{n}",
          sel("kafka_compaction_broker_uncleanable_partitions", {**ld, "broker": "3"}): f"1x{n}"},
         {sel("kafka_compaction_partition_uncleanable", marked): f"0x{n}",
          sel("kafka_compaction_broker_uncleanable_partitions", ld): f"0x{n}"})
    # Kafka 4.4: DefaultRecord.readFrom fails a record strictly larger than max.decompressed.message.bytes; a
    # record of exactly the setting's size is read (the near miss)
    both("RecordOverDecompressedLimit", "critical",
         {sel("kafka_compaction_partition_max_decompressed_record_bytes", PART): f"2049x{n}",
          sel("kafka_compaction_partition_max_decompressed_message_bytes", PART): f"2048x{n}"},
         {sel("kafka_compaction_partition_max_decompressed_record_bytes", PART): f"2048x{n}",
          sel("kafka_compaction_partition_max_decompressed_message_bytes", PART): f"2048x{n}"})
    both("CleanerBufferSaturated", "warning",
         {sel("kafka_compaction_broker_cleaner_max_buffer_utilization_ratio", BROKER):
          f"{t.buffer_utilization_ratio + 0.05:g}x{n}"},
         {sel("kafka_compaction_broker_cleaner_max_buffer_utilization_ratio", BROKER):
          f"{t.buffer_utilization_ratio - 0.05:g}x{n}"})
    both("CleanerSlow", "warning",
         {sel("kafka_compaction_broker_cleaner_max_clean_time_seconds", BROKER): f"{t.clean_time_seconds + 200:g}x{n}"},
         {sel("kafka_compaction_broker_cleaner_max_clean_time_seconds", BROKER): f"{t.clean_time_seconds - 200:g}x{n}"})
    txn_age = "kafka_compaction_partition_oldest_open_transaction_age_seconds"
    both("CompactionBlockedByTransaction", "warning",  # one transaction left open: its age grows
         {sel(txn_age, PART): f"{t.open_transaction_seconds + 60:g}+60x{n}"},
         {sel(txn_age, PART): f"{t.open_transaction_seconds:g}x{n}",  # exactly the threshold: not above
          sel(txn_age, {**PART, "partition": "4"}): f"{t.open_transaction_seconds / 10:g}x{n}"})
    both("HangingTransaction", "critical",
         {sel("kafka_compaction_partition_hanging_transactions", PART): f"0 0 1x{n}"},
         {sel("kafka_compaction_partition_hanging_transactions", PART): f"0x{n}",
          sel("kafka_compaction_partition_open_transactions", PART): f"1x{n}"})
    per_min = math.ceil(t.tombstone_growth_per_hour * 2 / 60)
    both("TombstonesPilingUp", "warning",
         {sel("kafka_compaction_partition_tombstones", {**PART, "section": "dirty"}): f"0+{per_min}x{n}"},
         {sel("kafka_compaction_partition_tombstones", {**PART, "section": "dirty"}):
          f"0+{math.floor(t.tombstone_growth_per_hour / 2 / 60)}x{n}"})
    both("TombstonesPastDeleteHorizon", "warning",
         {sel("kafka_compaction_partition_tombstones_past_delete_horizon", PART): f"5x{n}"},
         {sel("kafka_compaction_partition_tombstones_past_delete_horizon", PART): f"0x{n}",
          sel("kafka_compaction_partition_tombstones_past_retention", PART): f"5x{n}"})
    warn = (t.consumer_lag_warning_fraction + 1) / 2
    lag = "kafka_compaction_consumer_group_lag_retention_ratio"
    both("ConsumerMayMissTombstones", "warning",
         {sel(lag, GROUP): f"{warn:g}x{n}"},
         {sel(lag, GROUP): f"{t.consumer_lag_warning_fraction:g}x{n}"})
    both("ConsumerMayMissTombstones", "critical",
         {sel(lag, GROUP): f"1x{n}"},
         {sel(lag, GROUP): f"{warn:g}x{n}"})  # the critical near miss is still a warning
    # ReplicaMayResurrectDeletes: a replica out of the ISR against delete.retention.ms (monitor.model.replicasafety)
    out_labels = {**PART, "lower_bound": "false", "offline": "true"}
    out, out_pid = ("kafka_compaction_replica_out_of_sync_delete_retention_ratio",
                    "kafka_compaction_replica_out_of_sync_producer_id_expiration_ratio")
    half = (t.replica_out_warning_fraction + 1) / 2
    both("ReplicaMayResurrectDeletes", "warning",
         {sel(out, out_labels): f"{half:g}x{n}"},
         {sel(out, out_labels): f"{t.replica_out_warning_fraction:g}x{n}"})
    both("ReplicaMayResurrectDeletes", "critical",
         {sel(out, out_labels): f"1x{n}", sel(out_pid, out_labels): f"0.01x{n}"},
         {sel(out, out_labels): f"{half:g}x{n}", sel(out_pid, out_labels): f"0.5x{n}"})
    # past its broker's producer.id.expiration.ms alone (the transaction markers it missed): critical too
    both("ReplicaMayResurrectDeletes", "critical",
         {sel(out, out_labels): f"0.1x{n}", sel(out_pid, out_labels): f"1x{n}"},
         {sel(out, out_labels): f"0.1x{n}", sel(out_pid, out_labels): f"0.99x{n}"})
    miss = "kafka_compaction_consumer_group_may_miss_updates"
    needs = {**GROUP, "reason": "below_first_dirty_offset", "latest_value_only": "false"}
    both("ConsumerMayMissUpdates", "info",
         {sel(miss, needs): f"1x{n}", sel(miss, {**needs, "reason": "lag_past_min_compaction_lag"}): f"0x{n}"},
         {sel(miss, needs): f"0x{n}",
          # a group declared latest-value-only (monitor.yaml latest_value_only_groups): never alerted
          sel(miss, {**GROUP, "group": "cache", "reason": "below_first_dirty_offset",
                     "latest_value_only": "true"}): f"1x{n}"})
    unlisted, listed = "kafka_compaction_admin_unlisted_groups", "kafka_compaction_admin_listed_groups"
    both("ConsumerGroupsHidden", "warning",
         {sel(unlisted, {"cluster": "c"}): f"2x{n}", sel(listed, {"cluster": "c"}): f"5x{n}"},
         {sel(unlisted, {"cluster": "c"}): f"0x{n}", sel(listed, {"cluster": "c"}): f"0x{n}",
          # hidden for a moment only (a group that committed between the two reads): shorter than the window
          sel(unlisted, {"cluster": "d"}): f"0x{n} 1 0x5"})
    src = {"cluster": "c", "source": "jmx:c:1", "kind": "jmx"}
    both("CompactionMonitorDown", "warning",
         {sel("kafka_compaction_source_up", src): f"0x{n}"},
         {sel("kafka_compaction_source_up", src): f"1x{n}",
          sel("up", {"job": "other", "instance": "h:1"}): f"0x{n}"})
    log_dir = {**BROKER, "log_dir": "/data/kafka"}
    both("CompactionMonitorDown", "warning",  # a log dir down (a malformed checkpoint) while its source answers
         {sel("kafka_compaction_source_up", src): f"1x{n}", sel("kafka_compaction_log_dir_up", log_dir): f"0x{n}"},
         {sel("kafka_compaction_source_up", src): f"1x{n}", sel("kafka_compaction_log_dir_up", log_dir): f"1x{n}"})
    need = 1 << 30  # a clean of one segment.bytes (1 GiB) group; free space one byte short, then exactly enough
    both("LogDirNoRoomForClean", "critical",
         {sel("kafka_compaction_log_dir_free_bytes", log_dir): f"{need - 1}x{n}",
          sel("kafka_compaction_log_dir_clean_needed_bytes", log_dir): f"{need}x{n}"},
         {sel("kafka_compaction_log_dir_free_bytes", log_dir): f"{need}x{n}",
          sel("kafka_compaction_log_dir_clean_needed_bytes", log_dir): f"{need}x{n}",
          sel("kafka_compaction_log_dir_free_bytes", {**log_dir, "log_dir": "/data/other"}): f"0x{n}"})
    enabled = "kafka_compaction_broker_cleaner_enabled"
    both("CleanerDisabled", "critical",
         {sel(enabled, {**BROKER, "source": "admin"}): f"0x{n}",
          sel("kafka_compaction_partition_compaction_cause", {**PART, "cause": "clean"}): f"1x{n}"},
         {sel(enabled, {**BROKER, "source": "admin"}): f"0x{n}",  # disabled, but no compacted partition there
          sel("kafka_compaction_partition_compaction_cause", {**other_broker, "cause": "clean"}): f"1x{n}",
          sel(enabled, {**BROKER, "broker": "2", "source": "admin"}): f"1x{n}"})
    cause = "kafka_compaction_partition_compaction_cause"
    both("CleanerThrottled", "warning",
         {sel(cause, {**PART, "cause": "throttled_cleaner"}): f"1x{n}"},
         {sel(cause, {**PART, "cause": "waiting"}): f"1x{n}"})  # eligible, but the throttle does not hold it
    info = "kafka_compaction_partition_replica_info"
    replicas = {sel(info, {**PART, "broker": b, "role": r}): f"1x{n}"
                for b, r in (("1", "leader"), ("2", "follower"), ("3", "follower"))}
    uncleanable = "kafka_compaction_partition_uncleanable"
    both("ReplicasDisagree", "warning",  # broker 1's replica marked, 2 and 3 not
         {**replicas, sel(uncleanable, marked): f"1x{n}"},
         {**replicas, **{sel(uncleanable, {**marked, "broker": b}): f"1x{n}" for b in ("1", "2", "3")},
          # all three marked (the same bad record replicated): UncleanablePartitions, not a disagreement;
          # a partition marked where no admin source lists its replicas: nothing to compare with
          sel(uncleanable, {**marked, "partition": "4"}): f"1x{n}"})
    ratio, spread = "kafka_compaction_partition_cleanable_ratio", t.replica_spread_ratio
    both("ReplicasDisagree", "warning",  # broker 2's replica far dirtier than its least dirty peer
         {sel(ratio, PART): f"0.1x{n}", sel(ratio, other_broker): f"{0.1 + spread + 0.05:g}x{n}",
          sel(ratio, {**PART, "broker": "3"}): f"0.2x{n}"},
         {sel(ratio, PART): f"0.1x{n}", sel(ratio, other_broker): f"{0.1 + spread - 0.05:g}x{n}",
          sel(ratio, {**PART, "partition": "4"}): f"0.95x{n}",  # dirty, but no peer is cleaner
          # far dirtier because uncleanable: the first form's (and UncleanablePartitions') to say
          sel(ratio, {**PART, "partition": "5"}): f"0.1x{n}",
          sel(ratio, {**PART, "partition": "5", "broker": "2"}): f"0.9x{n}",
          sel(uncleanable, {**marked, "partition": "5", "broker": "2"}): f"1x{n}"})
    return c


def render_tests(t: Thresholds | None = None, rule_file: str = "compaction.rules.yml") -> str:
    t = t or Thresholds()
    tests = []
    for case in cases(t):
        exp = [{"exp_labels": {"severity": a.severity, **a.labels}, "exp_annotations": a.annotations}
               for a in evaluated(case, t)]
        tests.append({
            "name": f"{case.alert} ({case.severity}) {'fires' if case.fires else 'near miss does not fire'}",
            "interval": f"{INTERVAL_MINUTES}m",
            "input_series": [{"series": s, "values": v} for s, v in case.series.items()],
            "alert_rule_test": [{"eval_time": f"{eval_minute(case, t)}m", "alertname": case.alert,
                                 "exp_alerts": exp}],
        })
    doc = {"rule_files": [rule_file], "evaluation_interval": f"{INTERVAL_MINUTES}m", "tests": tests}
    header = ("# Generated by `compaction-monitor rules render --tests` with the rules beside it. The expected\n"
              "# alerts are the Python evaluator's on the same samples: promtool checks that both agree.\n"
              "# Run: promtool test rules alerts/compaction.rules.test.yml\n")
    return header + dump_yaml(doc)

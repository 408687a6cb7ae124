"""promtool unit tests for every alert: a series that fires it and a near miss that does not.

Rendered from the same thresholds as the rules (a threshold change moves the test
values with it). Expected annotations are computed with Go's formatting as
Prometheus' template functions apply it (humanize, humanizeDuration,
humanizePercentage), so promtool checks our templates too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from alerts.render import alerts, dump_yaml
from monitor.config import Thresholds


def go_g4(v: float) -> str:
    return "%.4g" % v


def humanize(v: float) -> str:
    if v == 0 or math.isnan(v) or math.isinf(v):
        return go_g4(v)
    if abs(v) >= 1:
        prefix = ""
        for p in ("k", "M", "G", "T", "P", "E", "Z", "Y"):
            if abs(v) < 1000:
                break
            prefix = p
            v /= 1000
        return go_g4(v) + prefix
    raise NotImplementedError("values below 1 are not used in the tests")


def humanize_duration(v: float) -> str:
    if abs(v) >= 1:
        s = int(v)
        sec, mins, hours, days = s % 60, (s // 60) % 60, (s // 3600) % 24, s // 86400
        if days:
            return f"{days}d {hours}h {mins}m {sec}s"
        if hours:
            return f"{hours}h {mins}m {sec}s"
        if mins:
            return f"{mins}m {sec}s"
        return go_g4(v) + "s"
    raise NotImplementedError


def humanize_percentage(v: float) -> str:
    return go_g4(v * 100) + "%"


def go_value(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(v)


def render_template(text: str, labels: dict, value: float) -> str:
    def sub(m):
        expr = m.group(1).strip()
        if expr.startswith("$labels."):
            return labels.get(expr[len("$labels."):], "")
        if expr == "$value":
            return go_value(value)
        fn = expr.split("|")[1].strip()
        return {"humanize": humanize, "humanizeDuration": humanize_duration,
                "humanizePercentage": humanize_percentage}[fn](value)

    return re.sub(r"\{\{(.*?)\}\}", sub, text)


def minutes(d: str) -> int:
    n, unit = int(d[:-1]), d[-1]
    return n * {"s": 1 / 60, "m": 1, "h": 60, "d": 1440}[unit]


@dataclass
class Case:
    alert: str
    severity: str
    series: dict  # series selector -> promtool values
    value: float | None  # the alert's $value when it fires; None for a near miss
    labels: dict = field(default_factory=dict)  # the firing alert's labels (besides severity/alertname)
    also: list = field(default_factory=list)  # (severity, value): the same alert name at another severity


PART = {"cluster": "c", "broker": "1", "topic": "orders", "partition": "3"}
BROKER = {"cluster": "c", "broker": "1"}
GROUP = {"cluster": "c", "group": "billing", "topic": "orders", "partition": "3"}


def sel(name: str, labels: dict) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def cases(t: Thresholds) -> list[Case]:
    n = 600  # samples, one a minute
    c = []

    def both(alert, severity, fire_series, fire_value, labels, miss_series):
        c.append(Case(alert, severity, fire_series, fire_value, labels))
        c.append(Case(alert, severity, miss_series, None, labels))

    both("LogCleanerThreadDead", "critical",
         {sel("kafka_compaction_broker_cleaner_dead_threads", BROKER): f"0 0 1x{n}"}, 1, BROKER,
         {sel("kafka_compaction_broker_cleaner_dead_threads", BROKER): f"0x{n}"})
    stalled = t.cleaner_stalled_seconds + 100
    both("LogCleanerStalled", "critical",
         {sel("kafka_compaction_broker_cleaner_time_since_last_run_seconds", BROKER): f"{stalled:g}x{n}",
          sel("kafka_compaction_partition_eligible", PART): f"1x{n}"}, stalled, BROKER,
         {sel("kafka_compaction_broker_cleaner_time_since_last_run_seconds", BROKER): f"{stalled:g}x{n}",
          sel("kafka_compaction_partition_eligible", PART): f"0x{n}"})
    over = t.dirty_ratio_margin + 0.2
    both("CompactionLagging", "warning",
         {sel("kafka_compaction_partition_dirty_ratio", PART): f"{0.5 + over:g}x{n}",
          sel("kafka_compaction_partition_min_cleanable_dirty_ratio", PART): f"0.5x{n}"}, (0.5 + over) - 0.5, PART,
         {sel("kafka_compaction_partition_dirty_ratio", PART): f"{0.5 + t.dirty_ratio_margin - 0.05:g}x{n}",
          sel("kafka_compaction_partition_min_cleanable_dirty_ratio", PART): f"0.5x{n}"})
    both("CompactionOverdue", "warning",
         {sel("kafka_compaction_partition_compaction_delay_seconds", PART): f"120x{n}"}, 120, PART,
         {sel("kafka_compaction_partition_compaction_delay_seconds", PART): f"0x{n}"})
    ld = {**BROKER, "log_dir": "/data/kafka"}
    both("UncleanablePartitions", "critical",
         {sel("kafka_compaction_broker_uncleanable_partitions", ld): f"2x{n}",
          sel("kafka_compaction_broker_uncleanable_bytes", ld): f"0x{n}"}, 2, ld,
         {sel("kafka_compaction_broker_uncleanable_partitions", ld): f"0x{n}",
          sel("kafka_compaction_broker_uncleanable_bytes", ld): f"0x{n}"})
    both("CleanerBufferSaturated", "warning",
         {sel("kafka_compaction_broker_cleaner_max_buffer_utilization_ratio", BROKER):
          f"{t.buffer_utilization_ratio + 0.05:g}x{n}"}, t.buffer_utilization_ratio + 0.05, BROKER,
         {sel("kafka_compaction_broker_cleaner_max_buffer_utilization_ratio", BROKER):
          f"{t.buffer_utilization_ratio - 0.05:g}x{n}"})
    both("CleanerSlow", "warning",
         {sel("kafka_compaction_broker_cleaner_max_clean_time_seconds", BROKER): f"{t.clean_time_seconds + 200:g}x{n}"},
         t.clean_time_seconds + 200, BROKER,
         {sel("kafka_compaction_broker_cleaner_max_clean_time_seconds", BROKER): f"{t.clean_time_seconds - 200:g}x{n}"})
    per_min = math.ceil(t.tombstone_growth_per_hour * 2 / 60)
    both("TombstonesPilingUp", "warning",
         {sel("kafka_compaction_partition_tombstones", {**PART, "section": "dirty"}): f"0+{per_min}x{n}"},
         per_min * 60, PART,
         {sel("kafka_compaction_partition_tombstones", {**PART, "section": "dirty"}):
          f"0+{math.floor(t.tombstone_growth_per_hour / 2 / 60)}x{n}"})
    both("TombstonesPastRetention", "warning",
         {sel("kafka_compaction_partition_tombstones_past_delete_horizon", PART): f"5x{n}"}, 5, PART,
         {sel("kafka_compaction_partition_tombstones_past_delete_horizon", PART): f"0x{n}"})
    warn = (t.consumer_lag_warning_fraction + 1) / 2
    both("ConsumerMayMissTombstones", "warning",
         {sel("kafka_compaction_consumer_group_lag_retention_ratio", GROUP): f"{warn:g}x{n}"}, warn, GROUP,
         {sel("kafka_compaction_consumer_group_lag_retention_ratio", GROUP):
          f"{t.consumer_lag_warning_fraction - 0.1:g}x{n}"})
    both("ConsumerMayMissTombstones", "critical",
         {sel("kafka_compaction_consumer_group_lag_retention_ratio", GROUP): f"1.5x{n}"}, 1.5, GROUP,
         {sel("kafka_compaction_consumer_group_lag_retention_ratio", GROUP): f"{warn:g}x{n}"})
    c[-1].also = [("warning", warn)]  # the critical near miss is still a warning
    src = {"cluster": "c", "source": "jmx:c:1", "kind": "jmx"}
    both("CompactionMonitorDown", "warning",
         {sel("kafka_compaction_source_up", src): f"0x{n}"}, 0, src,
         {sel("kafka_compaction_source_up", src): f"1x{n}"})
    return c


def render_tests(t: Thresholds | None = None, rule_file: str = "compaction.rules.yml") -> str:
    t = t or Thresholds()
    by_name = {}
    for a in alerts(t):
        by_name[(a.name, a.severity)] = a
    tests = []
    for case in cases(t):
        a = by_name[(case.alert, case.severity)]
        at = f"{int(minutes(a.for_)) + 70}m"  # delta[1h] needs an hour of history first
        fired = [(case.severity, case.value)] if case.value is not None else []
        exp = []
        for severity, value in fired + case.also:
            rule = by_name[(case.alert, severity)].rule(t.runbook_base)
            ann = {k: render_template(v, case.labels, value) for k, v in rule["annotations"].items()}
            exp.append({"exp_labels": {"severity": severity, **case.labels}, "exp_annotations": ann})
        tests.append({
            "name": f"{case.alert} ({case.severity}) {'fires' if fired else 'near miss does not fire'}",
            "interval": "1m",
            "input_series": [{"series": s, "values": v} for s, v in case.series.items()],
            "alert_rule_test": [{"eval_time": at, "alertname": case.alert,
                                 "exp_alerts": [e for e in exp]}],
        })
    doc = {"rule_files": [rule_file], "evaluation_interval": "1m", "tests": tests}
    header = ("# Generated by `compaction-monitor rules render --tests` with the rules beside it.\n"
              "# Run: promtool test rules alerts/compaction.rules.test.yml\n")
    return header + dump_yaml(doc)

"""Render the Prometheus rule file from the thresholds in ``monitor.yaml``.

One source of thresholds: the collector, the dashboard and these rules read the
same ``Thresholds``. ``alerts/compaction.rules.yml`` in the repository is the
render of the default config; a test keeps it so.

Annotation templates use only ``{{ $labels.x }}`` and ``{{ $value | humanize... }}``
forms, so the promtool tests beside the rules can state them exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from monitor.config import Thresholds

P = 'topic {{ $labels.topic }} partition {{ $labels.partition }} on broker {{ $labels.broker }} (cluster {{ $labels.cluster }})'
B = 'broker {{ $labels.broker }} (cluster {{ $labels.cluster }})'
G = ('group {{ $labels.group }} on topic {{ $labels.topic }} partition {{ $labels.partition }} '
     '(cluster {{ $labels.cluster }})')


@dataclass
class Alert:
    name: str
    expr: str
    for_: str
    severity: str
    summary: str
    description: str
    group: str
    extra_labels: dict = field(default_factory=dict)

    def rule(self, runbook_base: str) -> dict:
        return {
            "alert": self.name,
            "expr": self.expr,
            "for": self.for_,
            "labels": {"severity": self.severity, **self.extra_labels},
            "annotations": {
                "summary": self.summary,
                "description": self.description,
                "runbook": f"{runbook_base}#{self.name.lower()}",
            },
        }


def recording_rules() -> list[dict]:
    return [
        {"record": "kafka_compaction:partition_tombstones:sum",
         "expr": "sum without (section) (kafka_compaction_partition_tombstones)"},
        {"record": "kafka_compaction:partition_dirty_over_threshold:ratio",
         "expr": "kafka_compaction_partition_dirty_ratio - kafka_compaction_partition_min_cleanable_dirty_ratio"},
    ]


def alerts(t: Thresholds) -> list[Alert]:
    return [
        Alert("LogCleanerThreadDead", "kafka_compaction_broker_cleaner_dead_threads > 0", "1m", "critical",
              "A log cleaner thread died on " + B,
              "{{ $value }} log cleaner thread(s) died on " + B + ". Compaction on its log dirs has stopped or "
              "slowed; dirty logs and tombstones will pile up until the broker is restarted.", "kafka-log-cleaner"),
        Alert("LogCleanerStalled",
              f"kafka_compaction_broker_cleaner_time_since_last_run_seconds > {t.cleaner_stalled_seconds:g}\n"
              "and on (cluster, broker)\n"
              "count by (cluster, broker) (kafka_compaction_partition_eligible == 1) > 0",
              t.cleaner_stalled_for, "critical",
              "The log cleaner has not run for a while on " + B,
              "The cleaner on " + B + " last looked for work {{ $value | humanizeDuration }} ago while "
              "partitions are eligible for cleaning.", "kafka-log-cleaner"),
        Alert("CompactionLagging",
              f"kafka_compaction:partition_dirty_over_threshold:ratio > {t.dirty_ratio_margin:g}",
              t.lagging_for, "warning",
              "Compaction is lagging on " + P,
              "The dirty ratio of " + P + " has been {{ $value | humanizePercentage }} above its "
              "min.cleanable.dirty.ratio for " + t.lagging_for + ".", "kafka-compaction"),
        Alert("CompactionOverdue",
              "kafka_compaction_partition_compaction_delay_seconds > 0\n"
              "or\nkafka_compaction_broker_max_compaction_delay_seconds > 0",
              t.overdue_for, "warning",
              "max.compaction.lag.ms is exceeded",
              "Compaction is overdue by {{ $value | humanizeDuration }} past max.compaction.lag.ms "
              "(broker {{ $labels.broker }}, topic {{ $labels.topic }}, partition {{ $labels.partition }}, "
              "cluster {{ $labels.cluster }}).", "kafka-compaction"),
        Alert("UncleanablePartitions",
              "kafka_compaction_broker_uncleanable_partitions > 0\nor\nkafka_compaction_broker_uncleanable_bytes > 0",
              t.uncleanable_for, "critical",
              "Uncleanable partitions on " + B,
              "Log dir {{ $labels.log_dir }} of " + B + " has uncleanable partitions ({{ $value }}): the cleaner "
              "met an error and will not compact them again until the broker restarts.", "kafka-log-cleaner"),
        Alert("CleanerBufferSaturated",
              f"kafka_compaction_broker_cleaner_max_buffer_utilization_ratio > {t.buffer_utilization_ratio:g}",
              t.buffer_saturated_for, "warning",
              "The cleaner's dedupe buffer is full on " + B,
              "Dedupe buffer utilization on " + B + " is {{ $value | humanizePercentage }}: each clean covers "
              "only part of the dirty section. Raise log.cleaner.dedupe.buffer.size.", "kafka-log-cleaner"),
        Alert("CleanerSlow",
              f"kafka_compaction_broker_cleaner_max_clean_time_seconds > {t.clean_time_seconds:g}",
              t.cleaner_slow_for, "warning",
              "Log cleaning is slow on " + B,
              "The longest recent clean on " + B + " took {{ $value | humanizeDuration }}.", "kafka-log-cleaner"),
        Alert("TombstonesPilingUp",
              f"delta(kafka_compaction:partition_tombstones:sum[1h]) > {t.tombstone_growth_per_hour:g}",
              t.tombstones_piling_for, "warning",
              "Tombstones are piling up on " + P,
              "Tombstones on " + P + " grew by {{ $value | humanize }} in the last hour.", "kafka-tombstones"),
        Alert("TombstonesPastRetention",
              "kafka_compaction_partition_tombstones_past_delete_horizon > 0",
              t.tombstones_past_retention_for, "warning",
              "Tombstones outlived delete.retention.ms on " + P,
              "{{ $value }} tombstone(s) on " + P + " are past their delete horizon and still on disk: the "
              "cleaner has not revisited this log.", "kafka-tombstones"),
        Alert("ConsumerMayMissTombstones",
              f"kafka_compaction_consumer_group_lag_retention_ratio > {t.consumer_lag_warning_fraction:g}\n"
              "and\nkafka_compaction_consumer_group_lag_retention_ratio < 1",
              t.consumer_lag_for, "warning",
              "A consumer group's lag approaches delete.retention.ms",
              "Consumer " + G + " lags {{ $value | humanizePercentage }} of delete.retention.ms behind: once it "
              "passes 100% the cleaner may drop deletes before the group reads them.", "kafka-consumers"),
        Alert("ConsumerMayMissTombstones",
              "kafka_compaction_consumer_group_lag_retention_ratio >= 1",
              t.consumer_lag_for, "critical",
              "A consumer group may miss tombstones",
              "Consumer " + G + " lags {{ $value | humanizePercentage }} of delete.retention.ms behind: deletes "
              "may already have been removed before it read them.", "kafka-consumers"),
        Alert("CompactionMonitorDown",
              f'kafka_compaction_source_up == 0\nor\nup{{job="{t.monitor_job}"}} == 0',
              t.monitor_down_for, "warning",
              "A compaction-monitor source is down",
              "Source {{ $labels.source }} (cluster {{ $labels.cluster }}, instance {{ $labels.instance }}) "
              "has not answered for " + t.monitor_down_for + ".", "kafka-compaction-monitor"),
    ]


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper, data: str):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str)


def dump_yaml(doc) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)


def render_rules(t: Thresholds | None = None) -> str:
    t = t or Thresholds()
    groups: dict[str, list[dict]] = {}
    for a in alerts(t):
        groups.setdefault(a.group, []).append(a.rule(t.runbook_base))
    doc = {"groups": [{"name": "kafka-compaction-recording", "rules": recording_rules()}]
           + [{"name": name, "rules": rules} for name, rules in groups.items()]}
    header = ("# Generated by `compaction-monitor rules render` from the thresholds in monitor.yaml.\n"
              "# Edit the thresholds, not this file; alerts/RUNBOOK.md explains each alert.\n")
    return header + dump_yaml(doc)

"""The charts of compaction health, defined once: which PromQL each panel draws and which threshold it
marks, for the Grafana dashboard (``alerts/grafana.py`` renders it) and the Streamlit pages that draw
the same chart from Prometheus (``dashboards/panelqueries.py``).

Metric names are the collector's (``collectors/export/metrics.py``; a test checks every name here against it)
and thresholds are the rule table's (``monitor.contract.rules.threshold_of`` and ``bound``): a panel never holds
a number of its own to compare with. Queries are written as Grafana sends them, with its template
variables (``$cluster``, ``$__rate_interval``); ``instantiate`` substitutes them as Grafana does, for the
Streamlit pages and the tests.

Partition panels use the series the collector exports for every partition at any granularity
(``partition_cleanable_ratio``, ``partition_tombstones``, ``partition_compaction_cause``, the topic
configs); a healthy partition's other series may be left out at the default granularity, so a panel of
one of them (tombstones past their delete horizon) shows the unhealthy partitions only, which is what
it is for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from monitor.settings.config import Thresholds
from monitor.contract.rules import NS, RULES, bound, rule, threshold_of
from monitor.model.topicconfig import NO_THROTTLE

CLUSTER = 'cluster=~"$cluster"'
BROKER_LEGEND = "{{cluster}} broker {{broker}}"
PARTITION_LEGEND = "{{topic}}-{{partition}} (broker {{broker}})"
GROUP_LEGEND = "{{group}} on {{topic}}-{{partition}}"


def sel(metric: str, *matchers: str) -> str:
    """``metric`` (without the namespace) selected for the dashboard's ``$cluster``."""
    return f"{NS}{metric}{{{','.join((CLUSTER,) + matchers)}}}"


@dataclass(frozen=True)
class Query:
    """One PromQL query of a panel. ``instant`` for a table of current values (a table query without a
    ``legend`` is a set of labels: its value column is not shown). ``fault_only`` says why it returns no
    series on a healthy cluster (it is then checked for parsing only)."""

    expr: str
    legend: str = ""
    instant: bool = False
    fault_only: str | None = None


@dataclass(frozen=True)
class Mark:
    """A threshold drawn on a panel, taken from the rule table: the number ``threshold_of(metric)`` (a
    metric's lowest bound in the rules) or ``bound(alert, severity)`` (an alert's first comparison)."""

    color: str
    metric: str | None = None
    alert: tuple[str, str] | None = None

    def value(self, t: Thresholds) -> float:
        v = threshold_of(self.metric, t) if self.metric is not None else bound(*self.alert, t)
        if v is None:
            raise ValueError(f"no rule compares {self.metric or self.alert} with a number")
        return v


@dataclass(frozen=True)
class Panel:
    """One chart. ``kind`` is Grafana's panel type; ``unit`` Grafana's unit id; ``row`` the section it is
    shown in; ``width`` of Grafana's 24 columns."""

    key: str
    title: str
    kind: str
    row: str
    queries: tuple[Query, ...]
    unit: str = "short"
    marks: tuple[Mark, ...] = ()
    description: str = ""
    width: int = 8
    height: int = 8

    def thresholds(self, t: Thresholds) -> list[tuple[float, str]]:
        """The marks' values under ``t``, lowest first."""
        return sorted((m.value(t), m.color) for m in self.marks)


def alert_names() -> list[str]:
    """Every alert of the rule table, once, in its order."""
    return list(dict.fromkeys(r.alert for r in RULES))


def _broker(key: str, metric: str, title: str, unit: str, description: str, marked: bool = True) -> Panel:
    return Panel(key, title, "timeseries", "Log cleaner per broker", (Query(sel(metric), BROKER_LEGEND),), unit,
                 (Mark("red", metric=NS + metric),) if marked else (), description)


TOMBSTONE_GROWTH = rule("TombstonesPilingUp", "warning").clauses[0]


def unclustered_alerts() -> list[str]:
    """The alerts that can fire without a ``cluster`` label: those with a clause on a series the collector
    does not export (CompactionMonitorDown's ``up{job=...} == 0``: Prometheus' own series of the scrape,
    and one collector may serve several clusters). A ``cluster=~"$cluster"`` filter would drop them
    whenever a cluster is picked."""
    return list(dict.fromkeys(r.alert for r in RULES if any(not c.metric.startswith(NS) for c in r.clauses)))


def alerts_query() -> str:
    """The alert-state panel's query: the rule table's alerts of the picked cluster, and those that carry
    no cluster label at all (``unclustered_alerts``) whichever cluster is picked."""
    mine = f'ALERTS{{alertname=~"{"|".join(alert_names())}",{CLUSTER}}}'
    bare = unclustered_alerts()
    return mine + (f' or ALERTS{{alertname=~"{"|".join(bare)}",cluster=""}}' if bare else "")

PANELS: tuple[Panel, ...] = (
    # --- the broker's log cleaner (JMX gauges re-exported in base units, and its settings) ---
    _broker("clean_time", "broker_cleaner_max_clean_time_seconds", "Longest recent clean", "s",
            "max-clean-time-secs: the longest last clean of any cleaner thread. Line: CleanerSlow."),
    _broker("buffer_utilization", "broker_cleaner_max_buffer_utilization_ratio", "Dedupe buffer utilization",
            "percentunit", "max-buffer-utilization-percent: near 100% each clean covers only part of the dirty "
                           "section. Line: CleanerBufferSaturated."),
    _broker("since_last_run", "broker_cleaner_time_since_last_run_seconds", "Time since the cleaner last looked "
            "for work", "s", "time-since-last-run-ms. Line: LogCleanerStalled (which also needs an eligible log)."),
    _broker("dirty_ratio", "broker_max_dirty_ratio", "Max dirty ratio (the cleaner's last pick)", "percentunit",
            "max-dirty-percent: the highest cleanable ratio of the cleaner's last pick.", marked=False),
    _broker("recopy", "broker_cleaner_recopy_ratio", "Recopy ratio (bytes written / read)", "percentunit",
            "cleaner-recopy-percent: near 100% the cleans remove little.", marked=False),
    _broker("dead_threads", "broker_cleaner_dead_threads", "Dead cleaner threads", "short",
            "DeadThreadCount. Line: LogCleanerThreadDead."),
    Panel("threads", "Cleaner threads", "timeseries", "Log cleaner per broker",
          (Query(sel("broker_cleaner_threads"), BROKER_LEGEND + " log.cleaner.threads"),
           Query(sel("broker_cleaner_dead_threads"), BROKER_LEGEND + " dead")),
          description="log.cleaner.threads (admin API or config file) against the threads that died."),
    Panel("uncleanable_partitions", "Uncleanable partitions", "timeseries", "Log cleaner per broker",
          (Query(sel("broker_uncleanable_partitions"), BROKER_LEGEND + " {{log_dir}}"),), "short",
          (Mark("red", metric=NS + "broker_uncleanable_partitions"),),
          "uncleanable-partitions-count per log dir. Line: UncleanablePartitions."),
    Panel("uncleanable_bytes", "Uncleanable bytes", "timeseries", "Log cleaner per broker",
          (Query(sel("broker_uncleanable_bytes"), BROKER_LEGEND + " {{log_dir}}"),), "bytes",
          (Mark("red", metric=NS + "broker_uncleanable_bytes"),),
          "uncleanable-bytes per log dir. Line: UncleanablePartitions."),
    Panel("cleaner_io", "Cleaner I/O rate", "timeseries", "Log cleaner per broker",
          (Query(f"rate({sel('broker_cleaner_io_bytes_total')}[$__rate_interval])", BROKER_LEGEND),
           Query(f"{sel('broker_cleaner_io_max_bytes_per_second')} < {NO_THROTTLE!r}",  # not no_throttle
                 BROKER_LEGEND + " log.cleaner.io.max.bytes.per.second",
                 fault_only="drawn only where a throttle is set (Kafka's default, Double.MAX_VALUE, is none)")),
          "Bps", description="Bytes per second the cleaner read and wrote (its I/O throttler's count), averaged "
                             "over idle time; at the throttle line, the throttle holds the cleaner back."),
    # --- partitions ---
    Panel("cleanable_ratio", "Kafka's cleanable ratio per partition", "status-history", "Partitions",
          (Query(sel("partition_cleanable_ratio"), PARTITION_LEGEND),), "percentunit",
          description="cleanableBytes / (cleanBytes + cleanableBytes), as LogCleanerManager computes it. The "
                      "cleaner picks a log above its topic's min.cleanable.dirty.ratio (the table beside); "
                      "staying above is CompactionLagging.", width=16, height=10),
    Panel("ratio_table", "Cleanable ratio against min.cleanable.dirty.ratio", "table", "Partitions",
          (Query(sel("partition_cleanable_ratio"), "cleanable ratio", instant=True),
           Query(f"0 * {sel('partition_cleanable_ratio')} + on (cluster, topic) group_left() "
                 f"{sel('topic_min_cleanable_dirty_ratio')}", "min.cleanable.dirty.ratio", instant=True)),
          "percentunit", description="Each partition's cleanable ratio beside its topic's min.cleanable.dirty.ratio.",
          height=10),
    Panel("causes", "Why each partition is (not) compacting", "table", "Partitions",
          (Query(f"{sel('partition_compaction_cause')} == 1", instant=True),),
          description="The one cause per partition (monitor.verdicts.causes; `compaction-monitor explain` gives the "
                      "evidence and the fix).", width=16),
    Panel("cause_counts", "Partitions per cause", "bargauge", "Partitions",
          (Query(f"count by (cause) ({sel('partition_compaction_cause')} == 1)", "{{cause}}", instant=True),)),
    # --- tombstones ---
    Panel("tombstones", "Tombstones on disk per topic", "timeseries", "Tombstones",
          (Query(f"sum by (topic) ({sel('partition_tombstones')})", "{{topic}}"),),
          description="Tombstones in the cleaned and the dirty section."),
    Panel("tombstone_growth", "Tombstone growth over the last hour", "timeseries", "Tombstones",
          (Query(f"delta({TOMBSTONE_GROWTH.recorded}{{{CLUSTER}}}[{TOMBSTONE_GROWTH.delta}])", PARTITION_LEGEND),),
          marks=(Mark("orange", alert=("TombstonesPilingUp", "warning")),),
          description="Line: TombstonesPilingUp."),
    Panel("past_horizon", "Tombstones past their delete horizon", "timeseries", "Tombstones",
          (Query(f"sum by (topic) ({sel('partition_tombstones_past_delete_horizon')})", "{{topic}}",
                 fault_only="at the default granularity a partition carries this series only when it is "
                            "unhealthy, as with tombstones past their delete horizon"),),
          marks=(Mark("red", metric=NS + "partition_tombstones_past_delete_horizon"),),
          description="Still on disk after their batch's delete horizon: the cleaner missed them. Line: "
                      "TombstonesPastDeleteHorizon."),
    # --- consumer groups ---
    Panel("lag_retention", "Consumer groups: time lag against delete.retention.ms", "timeseries", "Consumer groups",
          (Query(sel("consumer_group_lag_retention_ratio"), GROUP_LEGEND),), "percentunit",
          (Mark("orange", alert=("ConsumerMayMissTombstones", "warning")),
           Mark("red", alert=("ConsumerMayMissTombstones", "critical"))),
          "Time lag / delete.retention.ms: past 100% the group may miss tombstones (ConsumerMayMissTombstones).",
          width=12),
    Panel("lag_seconds", "Consumer groups' time lag and delete.retention.ms", "timeseries", "Consumer groups",
          (Query(sel("consumer_group_lag_seconds"), GROUP_LEGEND),
           Query(f"{sel('topic_delete_retention_seconds')} and on (cluster, topic) group by (cluster, topic) "
                 f"({sel('consumer_group_lag_seconds')})", "{{topic}} delete.retention.ms")),
          "s", description="Now minus the timestamp of the record at the group's committed offset, beside the "
                           "topic's delete.retention.ms.", width=12),
    Panel("group_topics", "Consumer groups per topic", "table", "Consumer groups",
          (Query(sel("consumer_group_topic_lag_records"), "lag records", instant=True),
           Query(sel("consumer_group_topic_max_lag_seconds"), "max time lag (s)", instant=True),
           Query(sel("consumer_group_topic_unhealthy_partitions"), "unhealthy partitions", instant=True),
           Query(sel("consumer_group_topic_lag_seconds_unknown_partitions"), "time lag unknown", instant=True)),
          description="Per group and topic, over its partitions, at every granularity: lag in records, the "
                      "highest time lag, the partitions on which an alert rule's comparison holds (their every "
                      "series is exported) and those whose time lag cannot be told.", width=16),
    Panel("hidden_groups", "Groups the collector sees", "timeseries", "Consumer groups",
          (Query(sel("admin_listed_groups"), "{{cluster}} listed by ListGroups"),
           Query(sel("offsets_topic_groups"), "{{cluster}} with offsets in __consumer_offsets"),
           Query(sel("admin_unlisted_groups"), "{{cluster}} with offsets, not listed")),
          description="Groups ListGroups gives the collector's user, the groups with live committed offsets in "
                      "the __consumer_offsets partitions of the log dirs read, and those of them not listed: "
                      "the user lacks Describe on these and their lag is not exported (docs/security.md, least privilege)."),
    # --- alerts ---
    Panel("alerts", "Compaction alerts", "table", "Alerts",
          (Query(alerts_query(), "", instant=True),),
          description="The rule table's alerts, pending or firing (alerts/RUNBOOK.md has a section per alert); "
                      "a collector that does not answer its scrape (CompactionMonitorDown from up == 0) has no "
                      "cluster label and is shown whichever cluster is picked.",
          width=24),
)


def panel(key: str) -> Panel:
    for p in PANELS:
        if p.key == key:
            return p
    raise KeyError(key)


ALL_CLUSTERS = ".*"  # the cluster variable's "All" value, as the dashboard sets it


def instantiate(expr: str, cluster: str = ALL_CLUSTERS, rate_interval: str = "1m", **narrow: str) -> str:
    """``expr`` with Grafana's template variables replaced as Grafana does before it queries Prometheus:
    ``$cluster`` by the selected value (a regex; "All" is ``.*``), ``$__rate_interval`` by a duration.
    ``narrow`` adds label matchers (``topic="t"``) to every selector of the cluster, for a chart of one
    partition."""
    if narrow:
        extra = "".join(f',{k}="{v}"' for k, v in narrow.items())
        expr = expr.replace(CLUSTER + "}", CLUSTER + extra + "}")
    out = expr.replace("$__rate_interval", rate_interval).replace("$cluster", cluster)
    left = re.findall(r"\$\w+", out)
    if left:
        raise ValueError(f"unknown template variable(s) {left} in {expr!r}")
    return out

"""The alert rules, defined once: what each alert compares, with which threshold, for how long, how it
joins other series, its severity, its runbook section and its annotation templates.

Two forms are generated from this table, and a test keeps them in agreement:

* the Prometheus rule file (``alerts/render.py``) and its promtool tests (``alerts/promtool_tests.py``);
* the Python evaluator (``monitor.contract.rule_eval``) that the dashboard uses when there is no Prometheus.

A threshold is a number, a field of ``Thresholds`` (``monitor.yaml``'s ``thresholds:``), or a metric
holding a threshold per series (``min.cleanable.dirty.ratio`` per partition). Nothing else in the
project defines a comparison with a threshold: the dashboard counts "lagging" and "at risk" from the
evaluated alerts and draws its threshold lines with ``threshold_of``; the exporter applies one of the
table's comparisons (``LAG_PAST_RETENTION``). A comparison the model makes on Kafka's figures is the
model's (``monitor.model.comparison``): the table refers to it (``CLEANABLE_RATIO_ABOVE_MIN``), never the reverse.

Annotation templates use only ``{{ $labels.x }}``, ``{{ $value }}`` and ``{{ $value | humanize... }}``,
which ``monitor.contract.gotemplate`` renders as Prometheus does; ``<for>`` is replaced by the rule's window
when the rule is rendered.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from monitor.model import compaction, replicasafety
from monitor.model.comparison import OPS, Comparison
from monitor.settings.config import Thresholds
from monitor.contract.metricnames import PREFIX as NS  # clauses name a metric in full
from monitor.contract.metricnames import RECORDING_PREFIX, full_name


@dataclass(frozen=True)
class Threshold:
    """What a series is compared with: a number, a ``Thresholds`` field, or a per-series metric (the
    sample of ``metric`` with the same labels, as PromQL matches two vectors one-to-one)."""

    number: float | None = None
    field: str | None = None
    metric: str | None = None

    def value(self, t: Thresholds) -> float | None:
        """The number this threshold stands for under ``t``; None for a per-series threshold."""
        if self.field is not None:
            return float(getattr(t, self.field))
        return self.number

    def promql(self, t: Thresholds) -> str:
        return self.metric if self.metric is not None else f"{self.value(t):g}"


def number(v: float) -> Threshold:
    return Threshold(number=v)


def setting(field: str) -> Threshold:
    if field not in Thresholds.__dataclass_fields__:
        raise ValueError(f"Thresholds has no field {field!r}")
    return Threshold(field=field)


def per_series(metric: str) -> Threshold:
    return Threshold(metric=metric)


@dataclass(frozen=True)
class Compare:
    op: str
    threshold: Threshold


@dataclass(frozen=True)
class Join:
    """Keep a series only where, for the same ``on`` labels, some series of ``metric`` has ``op value``
    (PromQL: ``and on (on) count by (on) (metric op value) > 0``); with ``unless``, only where none has
    (PromQL: ``unless on (on) metric op value``)."""

    on: tuple[str, ...]
    metric: str
    op: str
    value: float
    unless: bool = False


@dataclass(frozen=True)
class Peers:
    """A series compared with its peers: the series alike in ``on`` (the replicas of one partition, which
    each broker's cleaner cleans on its own).

    ``spread``: the value compared is the series minus the lowest of its peers, itself included (PromQL:
    ``x - on (on) group_left min by (on) (x)``). ``not_all``: a series that holds is kept only where fewer
    series hold for the same ``on`` labels than ``not_all`` has (PromQL: ``and on (on) (count by (on)
    (x op t) < count by (on) (not_all))``): one replica marked while its peers are not. Without any
    ``not_all`` series for those labels (no admin source) nothing is kept."""

    on: tuple[str, ...]
    spread: bool = False
    not_all: str | None = None


@dataclass(frozen=True)
class Clause:
    """One selected series, compared; every comparison must hold (PromQL ``and`` on the same series).

    ``sum_without`` sums labels away first (a recording rule in PromQL). ``delta`` compares the change
    over that window instead of the value: PromQL's ``delta(x[window])``; in Python, the current sample
    minus the sample taken one window earlier (see ``monitor.contract.rule_eval``)."""

    metric: str
    compare: tuple[Compare, ...]
    matchers: tuple[tuple[str, str], ...] = ()
    sum_without: tuple[str, ...] = ()
    delta: str | None = None
    join: Join | None = None
    peers: Peers | None = None

    @property
    def recorded(self) -> str | None:
        """The recording rule's name when labels are summed away first."""
        if not self.sum_without:
            return None
        return RECORDING_PREFIX + self.metric[len(NS):] + ":sum"


@dataclass(frozen=True)
class Rule:
    """One alert at one severity. It fires where any clause holds (PromQL ``or``: per label set, the
    first clause that holds gives the value) for the window in the ``Thresholds`` field ``for_``."""

    alert: str
    severity: str
    group: str
    for_: str
    clauses: tuple[Clause, ...]
    summary: str
    description: str
    # An alert stated by two rules (a form each) carries which one fired as the static label ``evidence``:
    # Prometheus and promtool (``check rules --lint-fatal``) take two rules of one name and one label set for
    # a duplicate, and the on-call person sees what the alert stands on.
    evidence: str | None = None

    def labels(self) -> dict[str, str]:
        """The rule's static labels: its severity, and its form's ``evidence`` where it has two."""
        return {"severity": self.severity, **({"evidence": self.evidence} if self.evidence else {})}

    def window(self, t: Thresholds) -> str:
        return getattr(t, self.for_)

    def runbook(self, t: Thresholds) -> str:
        return f"{t.runbook_base}#{self.alert.lower()}"

    def annotations(self, t: Thresholds) -> dict[str, str]:
        """Go templates, as they go into the rule file."""
        w = self.window(t)
        return {"summary": self.summary.replace("<for>", w), "description": self.description.replace("<for>", w),
                "runbook": self.runbook(t)}


def stated(c: Comparison, threshold: Threshold | None = None) -> Compare:
    """The model's comparison ``c`` as the table states it: its operator against ``threshold`` (a series, a
    setting), or against the number ``c`` fixes."""
    return Compare(c.op, threshold if threshold is not None else number(c.number))


# Kafka's own test for picking a log by its ratio, which the model applies for ``eligible``
# (monitor.model.compaction), stated against the per-partition series of min.cleanable.dirty.ratio.
CLEANABLE_RATIO_ABOVE_MIN = stated(compaction.CLEANABLE_RATIO_ABOVE_MIN,
                                   per_series(NS + "partition_min_cleanable_dirty_ratio"))
# Kafka 4.4's test of a stored record against the topic's max.decompressed.message.bytes (the model's), stated
# against the per-partition series of that setting
DECOMPRESSED_OVER_LIMIT = stated(compaction.DECOMPRESSED_OVER_LIMIT,
                                 per_series(NS + "partition_max_decompressed_message_bytes"))
# A group lagging past delete.retention.ms, which the exporter states as consumer_group_tombstone_risk.
LAG_PAST_RETENTION = Compare(">=", number(1))
# ConsumerMayMissUpdates and CleanerThrottled compare a series the collector computes with the model's own
# comparisons (monitor.model.consumers: a group's time lag and committed offset against the partition leader's
# cleaner limit and first dirty offset, joined by the exporter since their labels differ; monitor.model.cleanerio:
# the cleaner's I/O rate against its throttle): those comparisons are stated there, not here.


def holds(c: Compare, value: float, threshold: float) -> bool:
    return OPS[c.op](value, threshold)


def _c(metric: str, op: str, threshold: Threshold, **kw) -> Clause:
    return Clause(NS + metric, (Compare(op, threshold),), **kw)


REPLICAS = ("cluster", "topic", "partition")  # the replicas of one partition: alike but for broker
UNCLEANABLE_NOT_NAMED = Join(("cluster", "broker"), NS + "partition_uncleanable", ">", 0, unless=True)

P = 'topic {{ $labels.topic }} partition {{ $labels.partition }} on broker {{ $labels.broker }} (cluster {{ $labels.cluster }})'
B = 'broker {{ $labels.broker }} (cluster {{ $labels.cluster }})'
G = ('group {{ $labels.group }} on topic {{ $labels.topic }} partition {{ $labels.partition }} '
     '(cluster {{ $labels.cluster }})')
LAG_RATIO = NS + "consumer_group_lag_retention_ratio"
REPLICA_OUT_RATIO = NS + "replica_out_of_sync_delete_retention_ratio"

RULES: tuple[Rule, ...] = (
    Rule("LogCleanerThreadDead", "critical", "kafka-log-cleaner", "dead_thread_for",
         (_c("broker_cleaner_dead_threads", ">", number(0)),),
         "A log cleaner thread died on " + B,
         "{{ $value }} log cleaner thread(s) died on " + B + ". Compaction on its log dirs has stopped or "
         "slowed; dirty logs and tombstones will pile up until the broker is restarted."),
    # Time since the cleaner last looked for work only matters where there is work: a partition of the
    # same broker that Kafka's cleaner may pick now.
    Rule("LogCleanerStalled", "critical", "kafka-log-cleaner", "cleaner_stalled_for",
         (_c("broker_cleaner_time_since_last_run_seconds", ">", setting("cleaner_stalled_seconds"),
             join=Join(("cluster", "broker"), NS + "partition_eligible", "==", 1)),),
         "The log cleaner has not run for a while on " + B,
         "The cleaner on " + B + " last looked for work {{ $value | humanizeDuration }} ago while "
         "partitions are eligible for cleaning."),
    # Two rules, one alert: the partition and its exception where the broker's log-cleaner.log is read
    # (kafka_compaction_partition_uncleanable), else the count per log dir from the broker's gauges. A
    # broker with named partitions does not also alert per log dir.
    Rule("UncleanablePartitions", "critical", "kafka-log-cleaner", "uncleanable_for",
         (_c("partition_uncleanable", ">", number(0)),),
         "A partition is uncleanable on " + P,
         "The cleaner marked " + P + " uncleanable after a {{ $labels.exception }} (log-cleaner.log): it will "
         "not compact it again until the broker restarts.", evidence="cleaner_log"),
    Rule("UncleanablePartitions", "critical", "kafka-log-cleaner", "uncleanable_for",
         (_c("broker_uncleanable_partitions", ">", number(0), join=UNCLEANABLE_NOT_NAMED),
          _c("broker_uncleanable_bytes", ">", number(0), join=UNCLEANABLE_NOT_NAMED)),
         "Uncleanable partitions on " + B,
         "Log dir {{ $labels.log_dir }} of " + B + " has uncleanable partitions ({{ $value }}): the cleaner "
         "met an error and will not compact them again until the broker restarts. No readable "
         "log-cleaner.log names them: look there on the broker.", evidence="broker_gauges"),
    # Kafka 4.4: a stored record above the topic's max.decompressed.message.bytes, the model's comparison
    # (monitor.model.compaction.DECOMPRESSED_OVER_LIMIT) on the two series of a topic that sets the cap. It fires
    # before the cleaner's next clean fails on it (and beside UncleanablePartitions after), with
    # UncleanablePartitions' window: the same consequence, named earlier.
    Rule("RecordOverDecompressedLimit", "critical", "kafka-log-cleaner", "uncleanable_for",
         (Clause(NS + "partition_max_decompressed_record_bytes",
                 (DECOMPRESSED_OVER_LIMIT,)),),
         "A stored record is above max.decompressed.message.bytes on " + P,
         "A record of {{ $value }} bytes (decompressed) on " + P + " is larger than the topic's "
         "max.decompressed.message.bytes: the cleaner fails on it (InvalidRecordException) and marks the "
         "partition uncleanable until the setting is raised and the broker restarts."),
    Rule("CleanerBufferSaturated", "warning", "kafka-log-cleaner", "buffer_saturated_for",
         (_c("broker_cleaner_max_buffer_utilization_ratio", ">", setting("buffer_utilization_ratio")),),
         "The cleaner's dedupe buffer is full on " + B,
         "Dedupe buffer utilization on " + B + " is {{ $value | humanizePercentage }}: each clean covers "
         "only part of the dirty section. Raise log.cleaner.dedupe.buffer.size."),
    Rule("CleanerSlow", "warning", "kafka-log-cleaner", "cleaner_slow_for",
         (_c("broker_cleaner_max_clean_time_seconds", ">", setting("clean_time_seconds")),),
         "Log cleaning is slow on " + B,
         "The longest recent clean on " + B + " took {{ $value | humanizeDuration }}."),
    # Kafka's cleaner picks a log when its cleanable ratio (LogCleanerManager's cleanableBytes over clean
    # plus cleanable bytes) exceeds the topic's min.cleanable.dirty.ratio, and a healthy cleaner does so
    # within log.cleaner.backoff.ms. A log that stays above for the window is one the cleaner is not
    # keeping up with. Bytes that min.compaction.lag.ms or an open transaction hold back are not
    # cleanable and do not count (kafka_compaction_partition_uncleaned_ratio shows them).
    Rule("CompactionLagging", "warning", "kafka-compaction", "lagging_for",
         (Clause(NS + "partition_cleanable_ratio", (CLEANABLE_RATIO_ABOVE_MIN,)),),
         "Compaction is lagging on " + P,
         "Kafka's cleanable ratio of " + P + " has stayed above its min.cleanable.dirty.ratio for <for> "
         "(now {{ $value | humanizePercentage }}): the log is eligible and the cleaner has not cleaned it."),
    Rule("CompactionOverdue", "warning", "kafka-compaction", "overdue_for",
         (_c("partition_compaction_delay_seconds", ">", number(0)),
          _c("broker_max_compaction_delay_seconds", ">", number(0))),
         "max.compaction.lag.ms is exceeded",
         "Compaction is overdue by {{ $value | humanizeDuration }} past max.compaction.lag.ms "
         "(broker {{ $labels.broker }}, topic {{ $labels.topic }}, partition {{ $labels.partition }}, "
         "cluster {{ $labels.cluster }})."),
    # The cleaner queue's forecast (monitor.model.cleanerqueue, issue 34): the partition's next clean starts past
    # its max.compaction.lag.ms deadline, a deadline still ahead (past it, CompactionOverdue says so). Kafka
    # offers an overdue log whatever its ratio but does not put it ahead of a dirtier one
    # (LogToClean.compareTo compares the ratio alone), so a busy queue makes the lag "not a hard guarantee".
    Rule("CompactionWillBeOverdue", "warning", "kafka-compaction", "will_be_overdue_for",
         (_c("partition_next_clean_forecast_late_seconds", ">", number(0)),),
         "Compaction will pass max.compaction.lag.ms on " + P,
         "The broker's cleaner queue, forecast, starts the next clean of " + P + " {{ $value | humanizeDuration }} "
         "after its max.compaction.lag.ms deadline: the logs ahead of it (dirtier ones first, one per cleaner "
         "thread, at the learned throughput) take longer than the time left."),
    # The cleaner never cleans past the last stable offset (LogCleanerManager caps the first uncleanable
    # offset at the LSO), so the oldest open transaction holds compaction back for as long as it is open.
    Rule("CompactionBlockedByTransaction", "warning", "kafka-transactions", "open_transaction_for",
         (_c("partition_oldest_open_transaction_age_seconds", ">", setting("open_transaction_seconds")),),
         "An open transaction holds compaction back on " + P,
         "The oldest open transaction on " + P + " started {{ $value | humanizeDuration }} ago: the last "
         "stable offset stays at its first offset, and the cleaner cleans nothing past it."),
    Rule("HangingTransaction", "critical", "kafka-transactions", "hanging_transaction_for",
         (_c("partition_hanging_transactions", ">", number(0)),),
         "A hanging transaction on " + P,
         "{{ $value }} transaction(s) on " + P + " have been open longer than the broker's "
         "transaction.max.timeout.ms: the coordinator will not end them (KIP-664). Compaction and "
         "read_committed consumers stay at the last stable offset until kafka-transactions.sh abort."),
    Rule("TombstonesPilingUp", "warning", "kafka-tombstones", "tombstones_piling_for",
         (_c("partition_tombstones", ">", setting("tombstone_growth_per_hour"), sum_without=("section",),
             delta="1h"),),
         "Tombstones are piling up on " + P,
         "Tombstones on " + P + " grew by {{ $value | humanize }} in the last hour."),
    Rule("TombstonesPastDeleteHorizon", "warning", "kafka-tombstones", "tombstones_past_horizon_for",
         (_c("partition_tombstones_past_delete_horizon", ">", number(0)),),
         "Tombstones past their delete horizon on " + P,
         "{{ $value }} tombstone(s) on " + P + " are past their delete horizon and still on disk: the "
         "cleaner has not revisited this log."),
    Rule("ConsumerMayMissTombstones", "warning", "kafka-consumers", "consumer_lag_for",
         (Clause(LAG_RATIO, (Compare(">", setting("consumer_lag_warning_fraction")), Compare("<", number(1)))),),
         "A consumer group's lag approaches delete.retention.ms",
         "Consumer " + G + " lags {{ $value | humanizePercentage }} of delete.retention.ms behind: once it "
         "passes 100% the cleaner may drop deletes before the group reads them."),
    Rule("ConsumerMayMissTombstones", "critical", "kafka-consumers", "consumer_lag_for",
         (Clause(LAG_RATIO, (LAG_PAST_RETENTION,)),),
         "A consumer group may miss tombstones",
         "Consumer " + G + " lags {{ $value | humanizePercentage }} of delete.retention.ms behind: deletes "
         "may already have been removed before it read them."),
    # Off for the groups monitor.yaml declares latest-value-only (latest_value_only_groups): the exporter
    # labels their series latest_value_only="true".
    Rule("ConsumerMayMissUpdates", "info", "kafka-consumers", "missed_updates_for",
         (Clause(NS + "consumer_group_may_miss_updates", (Compare("==", number(1)),),
                 matchers=(("latest_value_only", "false"),)),),
         "A consumer group may miss intermediate updates",
         "Consumer " + G + " may read an already compacted history ({{ $labels.reason }}): it sees only the "
         "latest value of the keys compacted before it reads them, not every update. Declare the group in "
         "latest_value_only_groups if that is all it needs."),
    # ListGroups leaves out, with no error, every group the collector's user may not Describe: their lag series
    # are absent and the two consumer alerts above cannot fire for them. The collector counts the groups with
    # live committed offsets in __consumer_offsets that ListGroups left out (monitor.kafka.offsetgroups.unlisted).
    Rule("ConsumerGroupsHidden", "warning", "kafka-consumers", "groups_hidden_for",
         (_c("admin_unlisted_groups", ">", number(0)),),
         "Consumer groups are hidden from the compaction monitor on cluster {{ $labels.cluster }}",
         "{{ $value }} consumer group(s) have committed offsets in __consumer_offsets, but ListGroups does not give "
         "them to the collector's user on cluster {{ $labels.cluster }}: their lag is not exported and no consumer "
         "alert can fire for them. Grant the user Describe on the GROUP resources."),
    Rule("CompactionMonitorDown", "warning", "kafka-compaction-monitor", "monitor_down_for",
         (_c("source_up", "==", number(0)),
          _c("log_dir_up", "==", number(0)),  # a log dir whose checkpoint is malformed: its partitions withdrawn
          Clause("up", (Compare("==", number(0)),), matchers=(("job", "<monitor_job>"),))),
         "A compaction-monitor source is down",
         "Source {{ $labels.source }}{{ $labels.log_dir }} (cluster {{ $labels.cluster }}, instance "
         "{{ $labels.instance }}) has not answered, or its files were not understood, for <for>."),
    # The cleaner copies each group of segments (LogCleaner.groupSegmentsBySize: up to segment.bytes) into
    # a .cleaned segment before swapping it in; without room for the largest group the copy fails with an
    # IOException and the broker takes the whole log dir offline (monitor.model.diskspace).
    Rule("LogDirNoRoomForClean", "critical", "kafka-log-cleaner", "no_room_for_clean_for",
         (_c("log_dir_free_bytes", "<", per_series(NS + "log_dir_clean_needed_bytes")),),
         "No room for the cleaner's next clean on log dir {{ $labels.log_dir }} of " + B,
         "Log dir {{ $labels.log_dir }} of " + B + " has {{ $value | humanize }}B free, less than the largest "
         "group of segments its next clean copies before swapping (kafka_compaction_log_dir_clean_needed_bytes). "
         "The copy would fail and the broker would take the log dir offline with every partition on it."),
    # log.cleaner.enable=false (admin API) on a broker whose log dirs hold compacted partitions (the log-dir
    # scanner exports partitions of compacted topics only): they are never cleaned and grow without bound.
    # Joined on the cause series, which every partition has at every granularity (monitor.verdicts.health: a join on
    # a per-partition series would make every partition unhealthy to keep it).
    Rule("CleanerDisabled", "critical", "kafka-log-cleaner", "cleaner_disabled_for",
         (_c("broker_cleaner_enabled", "==", number(0),
             join=Join(("cluster", "broker"), NS + "partition_compaction_cause", "==", 1)),),
         "The log cleaner is disabled on " + B,
         "log.cleaner.enable is false on " + B + ", which hosts compacted partitions: none of them is "
         "compacted, and they grow without bound. Set it true and restart the broker."),
    # The partition's cause (monitor.verdicts.causes) is throttled_cleaner: eligible while its broker's cleaner reads
    # and writes at log.cleaner.io.max.bytes.per.second (CLEANER_IO_AT_THROTTLE over the collector's refresh
    # window). The comparison needs the admin API's setting and two samples of the throttler's count, which
    # the collector joins; PromQL alone could only approximate it with rate() over another window.
    Rule("CleanerThrottled", "warning", "kafka-log-cleaner", "cleaner_throttled_for",
         (Clause(NS + "partition_compaction_cause", (Compare("==", number(1)),),
                 matchers=(("cause", "throttled_cleaner"),)),),
         "The cleaner's I/O throttle holds compaction back on " + P,
         P + " is eligible for cleaning while the broker's log cleaner reads and writes at its throttle, "
         "log.cleaner.io.max.bytes.per.second, for <for>. Raise the setting (a dynamic broker config); more "
         "cleaner threads would share the same throttle."),
    # Each broker cleans its own replica (LogCleaner runs per broker; followers copy the leader's records,
    # not its cleaning), so the replicas of one partition can disagree. Two rules, one alert: one replica
    # marked uncleanable while the metadata (kafka_compaction_partition_replica_info) lists peers that are
    # not; or, for a replica not marked, its cleanable ratio far above its least dirty peer's for the window.
    Rule("ReplicasDisagree", "warning", "kafka-compaction", "replicas_disagree_for",
         (_c("partition_uncleanable", ">", number(0),
             peers=Peers(REPLICAS, not_all=NS + "partition_replica_info")),),
         "One replica of a partition is uncleanable, its peers are not: " + P,
         "The cleaner on broker {{ $labels.broker }} marked its replica of topic {{ $labels.topic }} partition "
         "{{ $labels.partition }} (cluster {{ $labels.cluster }}) uncleanable after a {{ $labels.exception }}, "
         "while other replicas of the partition are not: the damage is in this broker's copy.",
         evidence="uncleanable_replica"),
    Rule("ReplicasDisagree", "warning", "kafka-compaction", "replicas_disagree_for",
         (_c("partition_cleanable_ratio", ">", setting("replica_spread_ratio"), peers=Peers(REPLICAS, spread=True),
             join=Join(("cluster", "broker", "topic", "partition"), NS + "partition_uncleanable", ">", 0,
                       unless=True)),),  # an uncleanable replica is dirtier for that reason: said above
         "One replica of a partition is far dirtier than its peers: " + P,
         "The cleanable ratio of the replica of topic {{ $labels.topic }} partition {{ $labels.partition }} "
         "on broker {{ $labels.broker }} (cluster {{ $labels.cluster }}) has stayed {{ $value | humanizePercentage }} "
         "above its least dirty replica's for <for>: this broker's cleaner is not keeping up with its peers'.",
         evidence="ratio_spread"),
    # A replica out of the ISR (or offline) while its leader cleans: a tombstone written after it fell out can be
    # removed on the leader delete.retention.ms after the leader's next clean (KIP-534's delete horizon), and the
    # replica, fetching on from its own log end, never sees it: the deleted key stays alive on it
    # (monitor.model.replicasafety). Warned before the limit, critical past it or past its broker's
    # producer.id.expiration.ms (the transaction markers it missed).
    Rule("ReplicaMayResurrectDeletes", "warning", "kafka-tombstones", "replica_out_of_sync_for",
         (Clause(REPLICA_OUT_RATIO, (Compare(">", setting("replica_out_warning_fraction")),
                                     Compare("<", number(replicasafety.PAST_THE_LIMIT.number)))),),
         "A replica has been out of sync for most of delete.retention.ms: " + P,
         "The replica of " + P + " has been out of the ISR for {{ $value | humanizePercentage }} of the topic's "
         "delete.retention.ms (lower_bound={{ $labels.lower_bound }}: true means at least that long). Past 100% "
         "the leader may clean away tombstones it never fetched and the deleted keys stay alive on it: bring it "
         "back in sync before then."),
    Rule("ReplicaMayResurrectDeletes", "critical", "kafka-tombstones", "replica_out_of_sync_for",
         (Clause(REPLICA_OUT_RATIO, (stated(replicasafety.PAST_THE_LIMIT),)),
          Clause(NS + "replica_out_of_sync_producer_id_expiration_ratio", (stated(replicasafety.PAST_THE_LIMIT),))),
         "A replica has been out of sync past delete.retention.ms: " + P,
         "The replica of " + P + " has been out of the ISR for {{ $value | humanizePercentage }} of its limit "
         "(the topic's delete.retention.ms, or its broker's producer.id.expiration.ms): the leader may have "
         "cleaned away tombstones or transaction markers it never fetched. Once back it may hold deleted keys: "
         "compare it with the leader and rebuild its copy (see the runbook) before it leads."),
)

# The alert names of the table as attributes (``ALERT.CompactionLagging``): the edges (dashboards, CLI)
# name an alert through this, never as a string of their own, so a renamed or dropped rule fails where
# it is used rather than silently matching nothing (tests/test_layout.py fails on a literal).
ALERT = SimpleNamespace(**{r.alert: r.alert for r in RULES})


def matchers(clause: Clause, t: Thresholds) -> tuple[tuple[str, str], ...]:
    """The clause's label matchers with ``<monitor_job>`` resolved from ``t``."""
    return tuple((k, t.monitor_job if v == "<monitor_job>" else v) for k, v in clause.matchers)


def rule(alert: str, severity: str) -> Rule:
    """The first rule of the alert at that severity (an alert with two forms, UncleanablePartitions, has
    one window for both)."""
    for r in RULES:
        if (r.alert, r.severity) == (alert, severity):
            return r
    raise KeyError((alert, severity))


def bound(alert: str, severity: str, t: Thresholds) -> float:
    """The number the rule's first clause is first compared with (e.g. ConsumerMayMissTombstones'
    warning fraction, or 1 for its critical)."""
    return rule(alert, severity).clauses[0].compare[0].threshold.value(t)


def threshold_of(metric: str, t: Thresholds) -> float | None:
    """The number a metric is compared with by the rules (the lowest, for a metric with several), for
    drawing a threshold line; None when no rule compares it with a number."""
    name = full_name(metric)
    found = [c.threshold.value(t) for r in RULES for cl in r.clauses if cl.metric == name and cl.delta is None
             for c in cl.compare if c.op in (">", ">=") and c.threshold.metric is None]
    return min(found) if found else None

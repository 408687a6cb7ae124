"""The configuration's dataclasses with their defaults (each field's ``key(doc, default)``), and
``ConfigError``: what ``monitor.settings.config`` parses a file into, and what the schema
(``monitor.settings.configschema``) and the reference (``docs/reference-config.yaml``) are made from.

Why apart from ``config``: ``config.parse_config`` checks a file against the schema (``configcheck``,
``configschema``), and the schema is made from these classes; in one module, config, configcheck and
configschema imported one another in a circle, and configfile (which raises ``ConfigError``) and config
did too. These import none of them: each of those imports this one way. ``monitor.settings.config``
gives every name here as well (``from monitor.settings.config import Config`` stays the way in).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field
from typing import ClassVar

from monitor.fileio.iobudget import DEFAULT_BYTES_PER_SECOND
from monitor.model import activekeys
from monitor.model.topicconfig import CLEANER_SETTINGS
from monitor.settings.roles import ALL, ROLES
from monitor.settings.valuecheck import URL_SHAPE


DEFAULT_IO_BUDGET = float(DEFAULT_BYTES_PER_SECOND)


class ConfigError(ValueError):
    """A config that cannot be used: ``key`` and ``reason`` of the first problem; ``problems``, every
    problem found (each a ConfigError naming its key path), for a command to print one a line."""

    def __init__(self, key: str, reason: str, file: str | None = None, problems: list | None = None):
        self.key, self.reason, self.file = key, reason, file
        where = f"{file}: " if file else ""
        self.message = f"{where}{key}: {reason}"
        self.problems = problems or [self]
        more = f" (and {len(self.problems) - 1} more problem(s))" if len(self.problems) > 1 else ""
        super().__init__(self.message + more)

    @property
    def lines(self) -> list[str]:
        return [p.message for p in self.problems]


# Names of the cleaner gauges on a rule-named JMX exporter page: the project's localkafka/jmx-exporter.yaml,
# Strimzi's, Confluent's and jmx_exporter's Kafka example all give kafka_<domain>_<type>_<name>
# (compared lowercased). The catch-all rule's shape is read by collectors.jmx.gauges itself.
DEFAULT_METRIC_NAMES = {
    "max_dirty_percent": ["kafka_log_logcleanermanager_max_dirty_percent"],
    "time_since_last_run_ms": ["kafka_log_logcleanermanager_time_since_last_run_ms"],
    "uncleanable_partitions_count": ["kafka_log_logcleanermanager_uncleanable_partitions_count"],
    "uncleanable_bytes": ["kafka_log_logcleanermanager_uncleanable_bytes"],
    "max_compaction_delay_secs": ["kafka_log_logcleaner_max_compaction_delay_secs",
                                  "kafka_log_logcleanermanager_max_compaction_delay_secs"],
    "max_clean_time_secs": ["kafka_log_logcleaner_max_clean_time_secs"],
    "max_buffer_utilization_percent": ["kafka_log_logcleaner_max_buffer_utilization_percent"],
    "cleaner_recopy_percent": ["kafka_log_logcleaner_cleaner_recopy_percent"],
    "dead_thread_count": ["kafka_log_logcleaner_deadthreadcount"],
    # the cleaner throttler Meter's Count (kafka.utils:type=Throttler,name=cleaner-io): a COUNTER rule
    # gives ..._count_total on the page, an untyped one ..._count
    "cleaner_io_bytes": ["kafka_utils_throttler_cleaner_io_count_total", "kafka_utils_throttler_cleaner_io_count",
                         "kafka_utils_throttler_cleaner_io_total"],
}


def key(doc: str, default=MISSING, *, factory=MISSING, schema: dict | None = None):
    """A key of ``monitor.yaml``: its default, what it does (``doc``, said once: the schema's ``description``,
    ``config check``'s reference file ``docs/reference-config.yaml`` and the configuration reference take it
    from here) and any shape beyond what its type gives (``schema``, ``monitor.settings.configschema``)."""
    metadata = {"doc": doc, **({"schema": schema} if schema else {})}
    return field(default=default, default_factory=factory, metadata=metadata)


@dataclass(frozen=True)
class Thresholds:
    """What counts as unhealthy: the numbers and windows of the rule table (``monitor.contract.rules``), read by
    the rendered alert rules and the dashboard's evaluator alike."""

    lagging_for: str = key("How long a partition's cleanable ratio stays above its min.cleanable.dirty.ratio "
                           "before CompactionLagging fires.", "30m")
    dead_thread_for: str = key("How long a dead log cleaner thread is seen before LogCleanerThreadDead fires.", "1m")
    cleaner_stalled_seconds: float = key("Seconds since the cleaner last looked for work (time-since-last-run) "
                                         "past which LogCleanerStalled compares, while partitions are eligible.", 900)
    cleaner_stalled_for: str = key("How long the cleaner stays stalled before LogCleanerStalled fires.", "10m")
    buffer_utilization_ratio: float = key("Dedupe buffer utilization (0..1) above which CleanerBufferSaturated "
                                          "compares.", 0.85)
    buffer_saturated_for: str = key("How long the buffer stays above it before CleanerBufferSaturated fires.", "1h")
    clean_time_seconds: float = key("Seconds of the longest recent clean above which CleanerSlow compares.", 1800)
    cleaner_slow_for: str = key("How long cleans stay that slow before CleanerSlow fires.", "1h")
    tombstone_growth_per_hour: float = key("Tombstones a partition may gain in an hour before TombstonesPilingUp "
                                           "compares.", 100_000)
    tombstones_piling_for: str = key("How long tombstones keep growing that fast before TombstonesPilingUp "
                                     "fires.", "6h")
    tombstones_past_horizon_for: str = key("How long tombstones past their delete horizon stay on disk before "
                                           "TombstonesPastDeleteHorizon fires.", "1h")
    consumer_lag_warning_fraction: float = key(
        "A consumer group's time lag, as a fraction of delete.retention.ms, above which ConsumerMayMissTombstones "
        "warns (at 1 it is critical).", 0.5)
    consumer_lag_for: str = key("How long a group lags that far before ConsumerMayMissTombstones fires.", "5m")
    overdue_for: str = key("How long a log stays past max.compaction.lag.ms before CompactionOverdue fires.", "15m")
    # CompactionWillBeOverdue (issue 34): the cleaner queue's forecast is remade at each refresh, and a start a
    # moment past the deadline in one refresh may be in time in the next (a clean ending early): the window
    # asks the forecast to hold
    will_be_overdue_for: str = key("How long the cleaner queue's forecast keeps a partition's next clean past its "
                                   "max.compaction.lag.ms deadline before CompactionWillBeOverdue fires.", "10m")
    missed_updates_for: str = key("How long a group may read a compacted history before ConsumerMayMissUpdates "
                                  "(info) fires.", "15m")
    # ConsumerGroupsHidden: a group can commit between the two reads (ListGroups, __consumer_offsets) and be
    # counted unlisted for a refresh; a missing ACL stays
    groups_hidden_for: str = key("How long consumer groups with committed offsets stay hidden from ListGroups "
                                 "before ConsumerGroupsHidden fires.", "15m")
    uncleanable_for: str = key("How long a partition stays uncleanable before UncleanablePartitions fires.", "5m")
    # CompactionBlockedByTransaction: an open transaction older than this holds the LSO, and the cleaner
    # with it. 300 s is 30x Kafka Streams' exactly-once transaction.timeout.ms (10 s) and 5x the producer
    # default (60 s): a transaction that old has outlived any timeout a producer commonly sets, while the
    # coordinator would still abort it before transaction.max.timeout.ms (15 min) makes it hanging.
    open_transaction_seconds: float = key("Age in seconds of the oldest open transaction above which "
                                          "CompactionBlockedByTransaction compares.", 300)
    open_transaction_for: str = key("How long the transaction stays open past that age before "
                                    "CompactionBlockedByTransaction fires.", "2m")
    # the count already means 15 min past its start
    hanging_transaction_for: str = key("How long a hanging transaction (older than the brokers' "
                                       "transaction.max.timeout.ms) is seen before HangingTransaction fires.", "1m")
    monitor_down_for: str = key("How long a collector source, log dir or scrape is down before "
                                "CompactionMonitorDown fires.", "5m")
    no_room_for_clean_for: str = key("How long a log dir's free space stays below its next clean's copy before "
                                     "LogDirNoRoomForClean fires.", "5m")
    cleaner_disabled_for: str = key("How long log.cleaner.enable=false is seen on a broker with compacted "
                                    "partitions before CleanerDisabled fires.", "5m")
    cleaner_throttled_for: str = key("How long partitions wait while the cleaner runs at its I/O throttle before "
                                     "CleanerThrottled fires.", "30m")
    # ReplicasDisagree: a healthy spread closes within log.cleaner.backoff.ms of crossing
    # min.cleanable.dirty.ratio, well inside the window (each broker cleans its own copy)
    replica_spread_ratio: float = key("How far (0..1) a replica's cleanable ratio may stay above its least dirty "
                                      "peer's before ReplicasDisagree compares.", 0.5)
    replicas_disagree_for: str = key("How long replicas disagree before ReplicasDisagree fires.", "30m")
    # ReplicaMayResurrectDeletes (monitor.model.replicasafety): a replica out of the ISR longer than the topic's
    # delete.retention.ms may have missed tombstones the leader cleaned away; warn at this fraction of it
    replica_out_warning_fraction: float = key(
        "A replica's time out of the ISR, as a fraction of the topic's delete.retention.ms, above which "
        "ReplicaMayResurrectDeletes warns (at 1 it is critical).", 0.5)
    replica_out_of_sync_for: str = key("How long a replica stays out that far before ReplicaMayResurrectDeletes "
                                       "fires.", "1m")
    monitor_job: str = key("The Prometheus job that scrapes the collector (CompactionMonitorDown watches its up "
                           "series).", "kafka-compaction-monitor")
    runbook_base: str = key("Where the alerts' runbook links point: this path or URL, then #<alert name in "
                            "lower case>. Point it at your copy of the runbook.", "alerts/RUNBOOK.md")


# Shapes beyond what a field's type says (monitor.settings.configschema derives the rest from the fields).
_URL = {"type": ["string", "null"], "check": "url", "shape": URL_SHAPE}
_PATHS = {"type": ["array", "string", "null"], "items": {"type": "string", "minLength": 1},
          "shape": "a path or a list of paths"}

_PATTERNS = {"type": ["array", "string", "null"], "items": {"type": "string", "minLength": 1},
             "minLength": 1, "shape": "a regular expression or a list of them"}
GRANULARITIES = ("topic", "partition")
SECRET_REFERENCE = "${env:NAME}, ${directory:DIR:NAME} or ${file:PATH:KEY}"


@dataclass(frozen=True)
class BrokerConfig:
    id: str = key("The broker's node.id (or a name): the broker label of its series.", schema={
        "type": ["string", "integer"], "minLength": 1, "shape": "the broker's node.id (or a name)", "examples": [1]})
    jmx_url: str | None = key("The broker's JMX exporter page (its /metrics URL): the log cleaner's gauges.",
                              None, schema=_URL)
    jolokia_url: str | None = key("The broker's Jolokia base URL, instead of a JMX exporter.", None, schema=_URL)
    log_dirs: tuple[str, ...] = key("The broker's log dirs (entries of log.dirs) readable here, or folders above "
                                    "them: per-partition dirty ratios, tombstones, transactions.", (),
                                    schema=_PATHS)
    cleaner_log: str | None = key("The broker's log-cleaner.log, readable here, followed through rotation: "
                                  "uncleanable partitions, thread deaths, clean stats.", None, schema={
                                      "shape": "one path (the broker's log-cleaner.log)"})
    # The password reference is checked at load and kept as written (DEFERRED_SECRETS): the collector resolves
    # it at every fetch, so a rotated secret file is picked up without a restart.
    jmx_username: str | None = key("HTTP Basic auth user for the JMX exporter (or Jolokia) endpoint.", None,
                                   schema={"minLength": 1, "shape": "a user name"})
    jmx_password: str | None = key("Its password, as a secret reference (" + SECRET_REFERENCE + "), resolved "
                                   "at every fetch: a rotated secret needs no restart.", None, schema={
                                       "minLength": 1, "shape": "a secret reference: " + SECRET_REFERENCE})
    jmx_ca_file: str | None = key("A PEM CA bundle to verify an https JMX exporter (or Jolokia) endpoint.", None,
                                  schema={"minLength": 1, "shape": "the path of a PEM CA bundle for an https endpoint"})
    io_budget_bytes_per_second: float | None = key(
        "This broker's log-dir read budget in bytes per second, over the top-level io_budget_bytes_per_second "
        "(a slower disk, or one with room to spare); 0: unlimited.", None)


@dataclass(frozen=True)
class ClusterConfig:
    name: str = key("The cluster label of every series.", "default")
    bootstrap_servers: str | None = key(
        "Kafka bootstrap servers (host:port, comma-separated or a list): the admin API (topic configs, broker "
        "settings, consumer groups). Unset: no admin source.", None, schema={
            "type": ["string", "array", "null"], "minLength": 1, "minItems": 1, "check": "bootstrap",
            "items": {"type": "string", "minLength": 1, "shape": "a host:port string"},
            "shape": "host:port[,host:port...] or a list of host:port"})
    client: dict = key("librdkafka properties passed as they are (security.protocol, sasl.*, ssl.*); give a "
                       "secret by reference (" + SECRET_REFERENCE + "), never written here.", factory=dict, schema={
                           "propertyNames": {"type": "string"},
                           "additionalProperties": {"type": ["string", "number", "boolean"],
                                                    "shape": "a string, number or boolean"},
                           "shape": "a mapping of librdkafka properties (security.protocol: SASL_SSL, ...)"})
    brokers: tuple[BrokerConfig, ...] = key("The brokers whose JMX pages, log dirs and log-cleaner.log this "
                                            "collector reads.", ())
    metric_names: dict = key("Names of the cleaner gauges on the brokers' JMX exporter pages, when your exporter "
                             "rules rename them (gauge -> a name or a list of candidates; default: the names of "
                             "Kafka's, Strimzi's and Confluent's exporter rules).", factory=dict, schema={
        "properties": {k: {"type": ["string", "array"], "items": {"type": "string", "minLength": 1},
                           "minLength": 1, "shape": "a metric name or a list of them"} for k in DEFAULT_METRIC_NAMES},
        "additionalProperties": False, "shape": "a mapping of gauge -> metric name(s)"})
    topics: dict = key("Topic configs per topic (Kafka's names: min.cleanable.dirty.ratio, ...), used where the "
                       "admin API cannot give the topic's (no bootstrap servers): the admin API's effective config "
                       "wins, these win over Kafka's defaults (monitor.model.topicconfig.effective_config).",
                       factory=dict, schema={
        "propertyNames": {"type": "string"},
        "additionalProperties": {
            "type": ["object", "null"], "propertyNames": {"type": "string"},
            "additionalProperties": {"type": ["string", "number", "array"], "items": {"type": "string"},
                                     "shape": "a Kafka topic config value (a string or number)"},
            "shape": "a mapping of Kafka topic configs (min.cleanable.dirty.ratio: 0.3, ...)"},
        "shape": "a mapping of topic -> its Kafka topic configs"})
    consumer_groups: bool = key("Read consumer groups' lag (time lag against delete.retention.ms: groups that may "
                                "miss tombstones).", True)
    jmx_url_template: str | None = key(
        "Each broker's JMX exporter page with {node_id}, filled with every broker the log dirs hold "
        "(meta.properties): a broker-role collector that finds its brokers at run time.", None, schema={
            "type": ["string", "null"], "check": "jmx_url_template", "shape": "an http(s) URL with {node_id}"})
    # monitor.model.topicconfig.effective_broker_setting is the precedence. Kafka: an int of at least 1
    # (TransactionStateManagerConfig)
    transaction_max_timeout_ms: int | None = key(
        "The brokers' transaction.max.timeout.ms when the admin API cannot give it (unset: Kafka's default, "
        "900000): transactions open longer are hanging.", None, schema={
            "minimum": 1, "maximum": 2**31 - 1, "shape": "a whole number of ms between 1 and 2147483647 (an int)"})
    latest_value_only_groups: tuple[str, ...] = key(
        "Consumer groups that need only each key's latest value (caches, materialised views; fnmatch patterns): "
        "no ConsumerMayMissUpdates for them.", (), schema={
            "type": ["array", "string", "null"], "minLength": 1, "items": {"type": "string", "minLength": 1},
            "shape": "a consumer group name or fnmatch pattern, or a list of them"})
    restore_throughput_bytes_per_second: float | None = key(
        "A consumer's restore throughput from this cluster in bytes per second, for the audit's restore-time "
        "estimate (audit --restore-throughput wins; else ./dev bench restore's measurement).", None, schema={
            "exclusiveMinimum": 0, "shape": "a number of bytes per second above 0"})
    # monitor.model.topicconfig.broker_cleaner_settings is the precedence
    cleaner: dict = key("The brokers' log cleaner settings (Kafka's names) when the admin API cannot give them; "
                        "else they are reported unknown.", factory=dict, schema={
        "propertyNames": {"enum": list(CLEANER_SETTINGS)},
        "additionalProperties": {"type": ["string", "number", "boolean"], "shape": "a string, number or boolean"},
        "shape": "a mapping of log cleaner settings (" + ", ".join(CLEANER_SETTINGS) + ")"})

    def metric_name_candidates(self, key: str) -> list[str]:
        custom = self.metric_names.get(key)
        if custom:
            return [custom] if isinstance(custom, str) else list(custom)
        return DEFAULT_METRIC_NAMES[key]


@dataclass(frozen=True)
class Intervals:
    """How often the collector reads each source, in seconds."""

    NUMBERS: ClassVar[dict] = {"float": {"exclusiveMinimum": 0, "shape": "a finite number of seconds above 0"}}

    jmx: float = key("Seconds between reads of each broker's JMX exporter or Jolokia page.", 15)
    log_dirs: float = key("Seconds between scans of the log dirs.", 60)
    cleaner_log: float = key("Seconds between reads of log-cleaner.log.", 15)
    admin: float = key("Seconds between admin API reads (topic configs, broker settings, offsets).", 30)
    consumer_groups: float = key("Seconds between reads of consumer groups' committed offsets.", 30)


@dataclass(frozen=True)
class Timeouts:
    """How long each fetch may take, and how much it may keep."""

    NUMBERS: ClassVar[dict] = {"float": {"exclusiveMinimum": 0, "shape": "a finite number of seconds above 0"},
                               "int": {"minimum": 1, "shape": "a whole number of bytes, at least 1"}}

    jmx: float = key("Seconds a whole JMX exporter / Jolokia fetch may take (boundedhttp).", 5)
    admin: float = key("Seconds each admin API request may take.", 10)
    max_page_bytes: int = key("The largest page any fetch keeps, collector and dashboard, in bytes.",
                              16 * 1024 * 1024)
    dashboard: float = key("Seconds the dashboard's whole fetch of Prometheus' API or a collector's /metrics may "
                           "take.", 10)
    # monitor.model.activekeys: past either bound the counts are unknown (over_bound), never partial
    active_segment_key_read_bytes: int = key(
        "Bytes of each active segment the key read (duplicates stuck in the active segment) may read; past it "
        "the counts are reported unknown, never partial.", activekeys.DEFAULT_MAX_BYTES)
    active_segment_max_keys: int = key("Distinct keys that read may hold; past it the counts are reported "
                                       "unknown.", activekeys.DEFAULT_MAX_KEYS,
                                       schema={"shape": "a whole number of keys, at least 1"})
    active_segment_keys_budget_bytes: int = key(
        "Memory all of a broker's active segments' key sets may hold together, in bytes (100 a distinct key); "
        "a segment whose keys would take it past this is counted unknown (reason over_budget), never partial.",
        activekeys.DEFAULT_BUDGET_BYTES)


@dataclass(frozen=True)
class Config:
    listen_address: str = key("The address /metrics is served on (0.0.0.0: every interface, as Prometheus' "
                              "exporters).", "0.0.0.0")  # listen: {address, port} in the file
    listen_port: int = key("The port /metrics is served on (0: any free one).", 9690)
    clusters: tuple[ClusterConfig, ...] = key("The Kafka clusters this collector watches (usually one).", ())
    intervals: Intervals = key("How often the collector reads each source, in seconds.", Intervals())
    timeouts: Timeouts = key("How long each fetch may take, and how much it may keep.", Timeouts())
    thresholds: Thresholds = key("What the alert rules and the dashboard call unhealthy: each alert's threshold "
                                 "and window (`compaction-monitor rules render` writes them into the rules).",
                                 Thresholds())
    prometheus_url: str | None = key("The dashboard's Prometheus (its base URL).", None, schema=_URL)
    audit_dir: str | None = key("The dashboard's folder of audit runs (the audit's --out).", None,
                                schema={"shape": "a folder"})
    collector_url: str | None = key("The dashboard's collector /metrics URL, when there is no Prometheus (it "
                                    "evaluates the alert rules itself).", None, schema=_URL)
    # cardinality (collectors.export.exporter): "topic" exports topic aggregates, 4 series per healthy partition
    # (collectors.export.metrics.PARTITION_DEFAULT), 2 per healthy consumer group's partition (GROUP_DEFAULT) and every
    # series of an unhealthy one (monitor.verdicts.health)
    granularity: str = key("topic: topic aggregates, 4 series per healthy partition, 2 per healthy consumer "
                           "group's partition, every series of an unhealthy one; partition: every series of every "
                           "partition.", "topic", schema={"enum": list(GRANULARITIES), "shape": "topic or partition"})
    # monitor.settings.topicfilter
    topics_allow: tuple[str, ...] = key("Export only topics whose whole name matches one of these regular "
                                        "expressions (none: every topic).", (), schema=_PATTERNS)
    topics_deny: tuple[str, ...] = key("Do not export topics whose whole name matches one of these (wins over "
                                       "topics_allow).", (), schema=_PATTERNS)
    # monitor.settings.roles
    role: str = key("Which sources this collector reads and which series it exports: all (one process), cluster "
                    "(the admin API, one per cluster) or broker (its brokers' files and JMX pages, one per broker).",
                    ALL, schema={"enum": list(ROLES), "shape": "all, cluster or broker"})
    # collectors.logdirs.summary_state.default_state_dir says why the fallbacks
    state_dir: str | None = key(
        "Where the collector keeps its summary cache, so a restart reads only the segments that changed (unset: "
        "$STATE_DIRECTORY, else /var/lib/compaction-monitor when writable, else "
        "$XDG_STATE_HOME/compaction-monitor).", None, schema={"minLength": 1, "shape": "a folder"})
    # a token bucket: monitor.fileio.iobudget reasons the default; 0 as Kafka's log.cleaner.io.max.bytes.per.second
    io_budget_bytes_per_second: float = key(
        "Bytes per second the collector's log-dir reads may take from each broker's disk (20 MiB/s by default); "
        "0: unlimited. A broker's own io_budget_bytes_per_second wins.", DEFAULT_IO_BUDGET)


    def io_budget_for(self, broker: "BrokerConfig") -> float | None:
        """The read budget of ``broker``'s log dirs, bytes per second; None: unlimited."""
        v = broker.io_budget_bytes_per_second
        v = self.io_budget_bytes_per_second if v is None else v
        return v or None

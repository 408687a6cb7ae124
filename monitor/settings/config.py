"""One configuration for the collector, the dashboard, the audit and the alert rules.

A YAML file (``monitor.yaml``) or, for the common cases, command-line flags.
Every option has a default, so ``collect --bootstrap-server HOST:PORT`` alone
works. Errors name the key path and the reason, at start, never mid-run::

    listen: {address: 0.0.0.0, port: 9690}
    clusters:
      - name: prod
        bootstrap_servers: kafka-1:9093,kafka-2:9093
        client:                      # passed to librdkafka as is (SASL, TLS, ...)
          security.protocol: SASL_SSL
          sasl.password: ${env:KAFKA_PASSWORD}   # a secret from the environment or a file,
                                     # never written here (monitor.settings.secrets: Kafka's ${provider:...})
        brokers:
          - id: 1
            jmx_url: http://kafka-1:7071/metrics
            log_dirs: [/var/lib/kafka/data]
            cleaner_log: /var/log/kafka/log-cleaner.log   # followed: uncleanable partitions, thread deaths
            io_budget_bytes_per_second: 52428800   # this broker's disk has room: over the one below
        metric_names: {max_dirty_percent: my_renamed_metric}
        topics:                      # config overrides (else the admin API, else Kafka's defaults)
          orders: {min.cleanable.dirty.ratio: 0.3}
        transaction_max_timeout_ms: 900000   # the brokers' transaction.max.timeout.ms when the admin
                                             # API cannot tell (hanging transactions are older than it)
        latest_value_only_groups: [cache-*, ui-state]   # groups that need only each key's latest value:
                                             # no ConsumerMayMissUpdates for them (fnmatch patterns)
        cleaner: {log.cleaner.threads: 2}    # the brokers' log cleaner settings when the admin API
                                             # cannot tell (else "unknown"; Kafka's names)
    intervals: {jmx: 15, log_dirs: 60, cleaner_log: 15, admin: 30, consumer_groups: 30}
    timeouts:  {jmx: 5, admin: 10, dashboard: 10, max_page_bytes: 16777216}
                                     # jmx, dashboard: the deadline of a whole HTTP fetch, in seconds
    thresholds: {...}                # what the alert rules and the dashboard call unhealthy
    granularity: topic               # topic: 4 series per healthy partition, 2 per healthy group's
                                     # partition; partition: every series
    topics_allow: [orders.*]         # regexes on the whole topic name (none: every topic); deny wins
    topics_deny: [__.*]
    role: all                        # all (one process), cluster (admin API only, one per cluster) or broker
                                     # (its brokers' files and JMX pages, one per broker): monitor.settings.roles
    state_dir: /var/lib/compaction-monitor   # the collector's summary cache: a restart reads only what
                                     # changed (collectors.summary_state; default: see there)
    io_budget_bytes_per_second: 20971520   # log-dir record reads per broker (monitor.fileio.iobudget); 0: unlimited

Here: the dataclasses with their defaults, and the entry points (``load_config``, ``parse_config``,
``to_data``). Beside it: reading the file safely (``configfile``), every problem of a parsed file
(``configcheck``), the command-line flags on top of it (``configflags``), the schema (``configschema``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import ClassVar, get_args, get_origin, get_type_hints

from monitor.fileio.iobudget import DEFAULT_BYTES_PER_SECOND
from monitor.model import activekeys
from monitor.settings.configcheck import problems, resolved_url_problems
from monitor.settings.roles import ALL, ROLES, conflicts
from monitor.settings.valuecheck import URL_SHAPE
from monitor.model.topicconfig import CLEANER_SETTINGS


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
# (compared lowercased). The catch-all rule's shape is read by collectors.cleaner_metrics itself.
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


@dataclass(frozen=True)
class Thresholds:
    """What counts as unhealthy: the numbers and windows of the rule table (``monitor.contract.rules``), read by
    the rendered alert rules and the dashboard's evaluator alike."""

    lagging_for: str = "30m"  # CompactionLagging: cleanable ratio above min.cleanable.dirty.ratio this long
    dead_thread_for: str = "1m"
    cleaner_stalled_seconds: float = 900  # time since last run
    cleaner_stalled_for: str = "10m"
    buffer_utilization_ratio: float = 0.85
    buffer_saturated_for: str = "1h"
    clean_time_seconds: float = 1800
    cleaner_slow_for: str = "1h"
    tombstone_growth_per_hour: float = 100_000
    tombstones_piling_for: str = "6h"
    tombstones_past_horizon_for: str = "1h"
    consumer_lag_warning_fraction: float = 0.5  # of delete.retention.ms
    consumer_lag_for: str = "5m"
    overdue_for: str = "15m"
    missed_updates_for: str = "15m"  # ConsumerMayMissUpdates (info)
    # ConsumerGroupsHidden: a group can commit between the two reads (ListGroups, __consumer_offsets) and be
    # counted unlisted for a refresh; a missing ACL stays
    groups_hidden_for: str = "15m"
    uncleanable_for: str = "5m"
    # CompactionBlockedByTransaction: an open transaction older than this holds the LSO, and the cleaner
    # with it. 300 s is 30x Kafka Streams' exactly-once transaction.timeout.ms (10 s) and 5x the producer
    # default (60 s): a transaction that old has outlived any timeout a producer commonly sets, while the
    # coordinator would still abort it before transaction.max.timeout.ms (15 min) makes it hanging.
    open_transaction_seconds: float = 300
    open_transaction_for: str = "2m"
    hanging_transaction_for: str = "1m"  # HangingTransaction: the count already means 15 min past its start
    monitor_down_for: str = "5m"
    no_room_for_clean_for: str = "5m"  # LogDirNoRoomForClean: free space below the largest clean's copy
    cleaner_disabled_for: str = "5m"  # CleanerDisabled: log.cleaner.enable=false where compacted partitions live
    cleaner_throttled_for: str = "30m"  # CleanerThrottled: partitions wait while the cleaner runs at its I/O throttle
    # ReplicasDisagree: one replica uncleanable while its peers are not, or its cleanable ratio this far
    # above its least dirty peer's (each broker cleans its own copy; a healthy spread closes within
    # log.cleaner.backoff.ms of crossing min.cleanable.dirty.ratio, well inside the window)
    replica_spread_ratio: float = 0.5
    replicas_disagree_for: str = "30m"
    monitor_job: str = "kafka-compaction-monitor"  # the Prometheus job that scrapes the collector
    runbook_base: str = "alerts/RUNBOOK.md"  # or the URL where your copy of the runbook lives


# Shapes beyond what a field's type says (monitor.settings.configschema derives the rest from the fields).
_URL = {"schema": {"type": ["string", "null"], "check": "url", "shape": URL_SHAPE}}
_PATHS = {"schema": {"type": ["array", "string", "null"], "items": {"type": "string", "minLength": 1},
                     "shape": "a path or a list of paths"}}

_PATTERNS = {"schema": {"type": ["array", "string", "null"], "items": {"type": "string", "minLength": 1},
                        "minLength": 1, "shape": "a regular expression or a list of them"}}
GRANULARITIES = ("topic", "partition")


@dataclass(frozen=True)
class BrokerConfig:
    id: str = field(metadata={"schema": {"type": ["string", "integer"], "minLength": 1,
                                         "shape": "the broker's node.id (or a name)"}})
    jmx_url: str | None = field(default=None, metadata=_URL)
    jolokia_url: str | None = field(default=None, metadata=_URL)
    log_dirs: tuple[str, ...] = field(default=(), metadata=_PATHS)
    cleaner_log: str | None = field(default=None, metadata={"schema": {
        "shape": "one path (the broker's log-cleaner.log)"}})  # the broker's log-cleaner.log, readable here
    # HTTP Basic auth and TLS for the broker's JMX exporter (and Jolokia) endpoint: the user, and its
    # password as a secret reference (monitor.settings.secrets: ${env:NAME}, ${directory:DIR:NAME}, ${file:PATH:KEY}).
    # The reference is checked at load and kept as written (DEFERRED_SECRETS): the collector resolves it at
    # every fetch, so a rotated secret file is picked up without a restart.
    jmx_username: str | None = field(default=None, metadata={"schema": {"minLength": 1, "shape": "a user name"}})
    jmx_password: str | None = field(default=None, metadata={"schema": {
        "minLength": 1, "shape": "a secret reference: ${env:NAME}, ${directory:DIR:NAME} or ${file:PATH:KEY}"}})
    jmx_ca_file: str | None = field(default=None, metadata={"schema": {
        "minLength": 1, "shape": "the path of a PEM CA bundle for an https endpoint"}})
    # this broker's log-dir read budget over the config's io_budget_bytes_per_second (a broker on a
    # slower disk, or one with room to spare); 0: unlimited
    io_budget_bytes_per_second: float | None = None


@dataclass(frozen=True)
class ClusterConfig:
    name: str = "default"
    bootstrap_servers: str | None = field(default=None, metadata={"schema": {
        "type": ["string", "array", "null"], "minLength": 1, "minItems": 1, "check": "bootstrap",
        "items": {"type": "string", "minLength": 1, "shape": "a host:port string"},
        "shape": "host:port[,host:port...] or a list of host:port"}})
    client: dict = field(default_factory=dict, metadata={"schema": {  # passed to librdkafka as is
        "propertyNames": {"type": "string"},
        "additionalProperties": {"type": ["string", "number", "boolean"], "shape": "a string, number or boolean"},
        "shape": "a mapping of librdkafka properties (security.protocol: SASL_SSL, ...)"}})
    brokers: tuple[BrokerConfig, ...] = ()
    metric_names: dict = field(default_factory=dict, metadata={"schema": {
        "properties": {k: {"type": ["string", "array"], "items": {"type": "string", "minLength": 1},
                           "minLength": 1, "shape": "a metric name or a list of them"} for k in DEFAULT_METRIC_NAMES},
        "additionalProperties": False, "shape": "a mapping of gauge -> metric name(s)"}})
    topics: dict = field(default_factory=dict, metadata={"schema": {  # topic -> TopicConfig overrides (strings)
        "propertyNames": {"type": "string"},
        "additionalProperties": {
            "type": ["object", "null"], "propertyNames": {"type": "string"},
            "additionalProperties": {"type": ["string", "number", "array"], "items": {"type": "string"},
                                     "shape": "a Kafka topic config value (a string or number)"},
            "shape": "a mapping of Kafka topic configs (min.cleanable.dirty.ratio: 0.3, ...)"},
        "shape": "a mapping of topic -> its Kafka topic configs"}})
    consumer_groups: bool = True
    # each broker's JMX exporter page, its {node_id} filled with each broker found in the log dirs
    # (monitor.settings.jmxtemplate): a broker-role collector that finds its brokers at run time
    jmx_url_template: str | None = field(default=None, metadata={"schema": {
        "type": ["string", "null"], "check": "jmx_url_template", "shape": "an http(s) URL with {node_id}"}})
    # the brokers' transaction.max.timeout.ms, used when the admin API cannot give it (None: Kafka's
    # default); monitor.model.topicconfig.effective_broker_setting is the precedence. Kafka: an int of at
    # least 1 (TransactionStateManagerConfig)
    transaction_max_timeout_ms: int | None = field(default=None, metadata={"schema": {
        "minimum": 1, "maximum": 2**31 - 1, "shape": "a whole number of ms between 1 and 2147483647 (an int)"}})
    # consumer groups that need only each key's latest value (caches, materialised views): fnmatch
    # patterns; ConsumerMayMissUpdates stays off for them (monitor.model.consumers)
    latest_value_only_groups: tuple[str, ...] = field(default=(), metadata={"schema": {
        "type": ["array", "string", "null"], "minLength": 1, "items": {"type": "string", "minLength": 1},
        "shape": "a consumer group name or fnmatch pattern, or a list of them"}})
    # a consumer's restore throughput from this cluster, bytes per second, for the audit's restore-time
    # estimate (monitor.verdicts.restore: --restore-throughput > this > ./dev bench restore's measurement)
    restore_throughput_bytes_per_second: float | None = field(default=None, metadata={"schema": {
        "exclusiveMinimum": 0, "shape": "a number of bytes per second above 0"}})
    # the brokers' log cleaner settings (Kafka's names: log.cleaner.threads, ...) used when the admin API
    # cannot give them; monitor.model.topicconfig.broker_cleaner_settings is the precedence
    cleaner: dict = field(default_factory=dict, metadata={"schema": {
        "propertyNames": {"enum": list(CLEANER_SETTINGS)},
        "additionalProperties": {"type": ["string", "number", "boolean"], "shape": "a string, number or boolean"},
        "shape": "a mapping of log cleaner settings (" + ", ".join(CLEANER_SETTINGS) + ")"}})

    def metric_name_candidates(self, key: str) -> list[str]:
        custom = self.metric_names.get(key)
        if custom:
            return [custom] if isinstance(custom, str) else list(custom)
        return DEFAULT_METRIC_NAMES[key]


@dataclass(frozen=True)
class Intervals:
    NUMBERS: ClassVar[dict] = {"float": {"exclusiveMinimum": 0, "shape": "a finite number of seconds above 0"}}

    jmx: float = 15
    log_dirs: float = 60
    cleaner_log: float = 15
    admin: float = 30
    consumer_groups: float = 30


@dataclass(frozen=True)
class Timeouts:
    NUMBERS: ClassVar[dict] = {"float": {"exclusiveMinimum": 0, "shape": "a finite number of seconds above 0"},
                               "int": {"minimum": 1, "shape": "a whole number of bytes, at least 1"}}

    jmx: float = 5  # the collector's JMX exporter / Jolokia fetch, whole response (boundedhttp)
    admin: float = 10  # each admin API request
    max_page_bytes: int = 16 * 1024 * 1024  # the largest page any fetch keeps, collector and dashboard
    dashboard: float = 10  # the dashboard's fetch of Prometheus' API or a collector's /metrics, whole response
    # bounds of the key read that counts duplicates stuck in each active segment (monitor.model.activekeys):
    # past either, the counts are reported unknown (over_bound), never partial
    active_segment_key_read_bytes: int = activekeys.DEFAULT_MAX_BYTES
    active_segment_max_keys: int = activekeys.DEFAULT_MAX_KEYS


@dataclass(frozen=True)
class Config:
    listen_address: str = "0.0.0.0"  # listen: {address, port} in the file
    listen_port: int = 9690
    clusters: tuple[ClusterConfig, ...] = ()
    intervals: Intervals = Intervals()
    timeouts: Timeouts = Timeouts()
    thresholds: Thresholds = Thresholds()
    prometheus_url: str | None = field(default=None, metadata=_URL)  # for the dashboard
    audit_dir: str | None = field(default=None, metadata={"schema": {"shape": "a folder"}})  # for the dashboard
    collector_url: str | None = field(default=None, metadata=_URL)  # for the dashboard without Prometheus
    # cardinality (collectors.exporter): "topic" (the default) exports topic aggregates, 4 series per
    # healthy partition (collectors.metrics.PARTITION_DEFAULT), 2 per healthy consumer group's partition
    # (GROUP_DEFAULT) and every series of an unhealthy one (monitor.verdicts.health); "partition" every series of
    # every partition
    granularity: str = field(default="topic", metadata={"schema": {
        "enum": list(GRANULARITIES), "shape": "topic or partition"}})
    # which topics are exported (monitor.settings.topicfilter): regular expressions matched against the whole
    # topic name; no allow pattern: every topic; deny wins
    topics_allow: tuple[str, ...] = field(default=(), metadata=_PATTERNS)
    topics_deny: tuple[str, ...] = field(default=(), metadata=_PATTERNS)
    # which sources the collector reads and which families it exports (monitor.settings.roles): all (one
    # process, the default), cluster (the admin API, one per cluster) or broker (its brokers' files and JMX
    # pages, one per broker)
    role: str = field(default=ALL, metadata={"schema": {"enum": list(ROLES), "shape": "all, cluster or broker"}})
    # where the collector keeps its summary cache (collectors.summary_state), so that a restart reads only the
    # segments that changed; None: $STATE_DIRECTORY (systemd), else /var/lib/compaction-monitor when writable, else
    # $XDG_STATE_HOME/compaction-monitor (collectors.summary_state.default_state_dir says why)
    state_dir: str | None = field(default=None, metadata={"schema": {"minLength": 1, "shape": "a folder"}})
    # bytes per second the collector's log-dir reads may take from each broker's disk (a token bucket:
    # monitor.fileio.iobudget, which reasons the default, 20 MiB/s); 0: unlimited, as Kafka's
    # log.cleaner.io.max.bytes.per.second. A broker's own io_budget_bytes_per_second wins.
    io_budget_bytes_per_second: float = DEFAULT_IO_BUDGET

    def io_budget_for(self, broker: "BrokerConfig") -> float | None:
        """The read budget of ``broker``'s log dirs, bytes per second; None: unlimited."""
        v = broker.io_budget_bytes_per_second
        v = self.io_budget_bytes_per_second if v is None else v
        return v or None


def _build(cls, d: dict | None):
    """A config dataclass from its mapping, already checked against the schema: a missing or empty
    key keeps its default; a nested dataclass, a list of them, a path or a list of paths, numbers as the
    field's type."""
    if d is None:
        return cls()
    hints = get_type_hints(cls)
    kw = {}
    for f in fields(cls):
        v = d.get(f.name)
        if v is None:
            continue
        tp = hints[f.name]
        item = get_args(tp)[0] if get_origin(tp) is tuple else None
        if is_dataclass(tp):
            kw[f.name] = _build(tp, v)
        elif is_dataclass(item):
            kw[f.name] = tuple(_build(item, x) for x in v)
        elif item is not None:  # a path or a list of paths
            kw[f.name] = tuple(str(x) for x in ([v] if isinstance(v, str) else v))
        elif isinstance(v, (bool, dict)):
            kw[f.name] = dict(v) if isinstance(v, dict) else v
        elif tp in (int, int | None):
            kw[f.name] = int(v)
        elif tp in (float, float | None):
            kw[f.name] = float(v)
        elif isinstance(v, list):  # bootstrap_servers as a list of host:port
            kw[f.name] = ",".join(v)
        else:
            kw[f.name] = str(v) if tp in (str, str | None) else v
    return cls(**kw)


# Secrets resolved where they are used, not at load (``monitor.settings.secrets.resolve``'s ``deferred``): checked
# at load all the same, kept as written in the Config.
DEFERRED_SECRETS = ("jmx_password",)


def parse_config(data: dict | None, file: str | None = None, environ=None) -> Config:
    """A Config from parsed YAML, or ConfigError listing every problem (``.problems``). The file is
    checked as written, then its ``${env:NAME}``/``${directory:DIR:NAME}``/``${file:PATH:KEY}``
    references are resolved (``monitor.settings.secrets``, from ``environ``, default the process's)."""
    from monitor.settings.secrets import resolve

    found = problems(data)
    if not found:
        written = data
        data, found = resolve(data, environ, deferred=DEFERRED_SECRETS)
        found = found or resolved_url_problems(written, data)
    if found:
        errors = [ConfigError(k, r, file) for k, r in found]
        raise ConfigError(found[0][0], found[0][1], file, problems=errors)
    data = data or {}
    listen = data.get("listen") or {}
    top = _build(Config, {k: v for k, v in data.items() if k != "listen"})
    found = conflicts(top)
    if found:
        errors = [ConfigError(k, r, file) for k, r in found]
        raise ConfigError(found[0][0], found[0][1], file, problems=errors)
    return replace(top, listen_address=str(listen.get("address") or top.listen_address),
                   listen_port=int(listen["port"]) if listen.get("port") is not None else top.listen_port)


def to_data(cfg: Config) -> dict:
    """A Config as ``monitor.yaml``'s mapping (``listen: {address, port}``, lists for tuples): what
    ``config check`` prints, and ``parse_config`` reads back to the same Config."""
    def plain(v):
        if is_dataclass(v):
            return {f.name: plain(getattr(v, f.name)) for f in fields(v)}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    out = plain(cfg)
    out = {"listen": {"address": out.pop("listen_address"), "port": out.pop("listen_port")}, **out}
    return out



def load_config(path: str | Path | None, environ=None) -> Config:
    """Read ``monitor.yaml`` (``monitor.settings.configfile``); no path gives the defaults."""
    from monitor.settings.configfile import read_config_data

    if path is None:
        return Config()
    return parse_config(read_config_data(path), str(path), environ)

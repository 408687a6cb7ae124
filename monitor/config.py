"""One configuration for the collector, the dashboard, the audit and the alert rules.

A YAML file (``monitor.yaml``) or, for the common cases, command-line flags.
Every option has a default, so ``collect --bootstrap-servers HOST:PORT`` alone
works. Errors name the key path and the reason, at start, never mid-run::

    listen: {address: 0.0.0.0, port: 9690}
    clusters:
      - name: prod
        bootstrap_servers: kafka-1:9093,kafka-2:9093
        client:                      # passed to librdkafka as is (SASL, TLS, ...)
          security.protocol: SASL_SSL
        brokers:
          - id: 1
            jmx_url: http://kafka-1:7071/metrics
            log_dirs: [/var/lib/kafka/data]
            cleaner_log: /var/log/kafka/log-cleaner.log   # followed: uncleanable partitions, thread deaths
        metric_names: {max_dirty_percent: my_renamed_metric}
        topics:                      # config overrides (else the admin API, else Kafka's defaults)
          orders: {min.cleanable.dirty.ratio: 0.3}
        transaction_max_timeout_ms: 900000   # the brokers' transaction.max.timeout.ms when the admin
                                             # API cannot tell (hanging transactions are older than it)
        cleaner: {log.cleaner.threads: 2}    # the brokers' log cleaner settings when the admin API
                                             # cannot tell (else "unknown"; Kafka's names)
    intervals: {jmx: 15, log_dirs: 60, cleaner_log: 15, admin: 30, consumer_groups: 30}
    timeouts:  {jmx: 5, admin: 10}
    thresholds: {...}                # what the alert rules and the dashboard call unhealthy
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from monitor.topicconfig import CLEANER_SETTINGS, ConfigValueError, TopicConfig, parse_broker_value


class ConfigError(ValueError):
    def __init__(self, key: str, reason: str, file: str | None = None):
        self.key, self.reason, self.file = key, reason, file
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{key}: {reason}")


# Names of the cleaner gauges in the JMX exporter's common catch-all form (lowercased).
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
}


@dataclass(frozen=True)
class Thresholds:
    """What counts as unhealthy: the numbers and windows of the rule table (``monitor.rules``), read by
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
    uncleanable_for: str = "5m"
    monitor_down_for: str = "5m"
    cleaner_disabled_for: str = "5m"  # CleanerDisabled: log.cleaner.enable=false where compacted partitions live
    monitor_job: str = "kafka-compaction-monitor"  # the Prometheus job that scrapes the collector
    runbook_base: str = "alerts/RUNBOOK.md"  # or the URL where your copy of the runbook lives


@dataclass(frozen=True)
class BrokerConfig:
    id: str
    jmx_url: str | None = None
    jolokia_url: str | None = None
    log_dirs: tuple[str, ...] = ()
    cleaner_log: str | None = None  # the broker's log-cleaner.log, readable here


@dataclass(frozen=True)
class ClusterConfig:
    name: str = "default"
    bootstrap_servers: str | None = None
    client: dict = field(default_factory=dict)
    brokers: tuple[BrokerConfig, ...] = ()
    metric_names: dict = field(default_factory=dict)
    topics: dict = field(default_factory=dict)  # topic -> TopicConfig overrides (strings)
    consumer_groups: bool = True
    # the brokers' transaction.max.timeout.ms, used when the admin API cannot give it (None: Kafka's
    # default); monitor.topicconfig.effective_broker_setting is the precedence
    transaction_max_timeout_ms: int | None = None
    # the brokers' log cleaner settings (Kafka's names: log.cleaner.threads, ...) used when the admin API
    # cannot give them; monitor.topicconfig.broker_cleaner_settings is the precedence
    cleaner: dict = field(default_factory=dict)

    def metric_name_candidates(self, key: str) -> list[str]:
        custom = self.metric_names.get(key)
        if custom:
            return [custom] if isinstance(custom, str) else list(custom)
        return DEFAULT_METRIC_NAMES[key]


@dataclass(frozen=True)
class Intervals:
    jmx: float = 15
    log_dirs: float = 60
    cleaner_log: float = 15
    admin: float = 30
    consumer_groups: float = 30


@dataclass(frozen=True)
class Timeouts:
    jmx: float = 5
    admin: float = 10
    max_page_bytes: int = 16 * 1024 * 1024


@dataclass(frozen=True)
class Config:
    listen_address: str = "0.0.0.0"
    listen_port: int = 9690
    clusters: tuple[ClusterConfig, ...] = ()
    intervals: Intervals = Intervals()
    timeouts: Timeouts = Timeouts()
    thresholds: Thresholds = Thresholds()
    prometheus_url: str | None = None  # for the dashboard
    audit_dir: str | None = None  # for the dashboard
    collector_url: str | None = None  # for the dashboard without Prometheus


def _check_keys(d: dict, allowed: set, path: str, file) -> None:
    for k in d:
        if k not in allowed:
            raise ConfigError(f"{path}{k}", f"unknown key (allowed: {', '.join(sorted(allowed))})", file)


def _num(value, key: str, file, *, cast=float, minimum=None):
    try:
        v = cast(value)
    except (TypeError, ValueError):
        raise ConfigError(key, f"{value!r} is not a number", file) from None
    if minimum is not None and v < minimum:
        raise ConfigError(key, f"must be at least {minimum}", file)
    return v


def _dataclass_from(cls, d, path: str, file):
    if d is None:
        return cls()
    if not isinstance(d, dict):
        raise ConfigError(path.rstrip("."), "must be a mapping", file)
    names = {f.name: f for f in fields(cls)}
    _check_keys(d, set(names), path, file)
    kw = {}
    for k, v in d.items():
        default = getattr(cls(), k)
        if isinstance(default, str):
            kw[k] = str(v)
        else:
            kw[k] = _num(v, f"{path}{k}", file, cast=type(default), minimum=0)
    return cls(**kw)


def _broker(d, path: str, file) -> BrokerConfig:
    if not isinstance(d, dict):
        raise ConfigError(path.rstrip("."), "must be a mapping", file)
    _check_keys(d, {"id", "jmx_url", "jolokia_url", "log_dirs", "cleaner_log"}, path, file)
    if "id" not in d:
        raise ConfigError(f"{path}id", "is required", file)
    for k in ("jmx_url", "jolokia_url"):
        url = d.get(k)
        if url is not None and not str(url).startswith(("http://", "https://")):
            raise ConfigError(f"{path}{k}", f"{url!r} is not an http(s) URL", file)
    dirs = d.get("log_dirs") or []
    if isinstance(dirs, str):
        dirs = [dirs]
    cleaner_log = d.get("cleaner_log")
    if cleaner_log is not None and not isinstance(cleaner_log, str):
        raise ConfigError(f"{path}cleaner_log", "must be one path (the broker's log-cleaner.log)", file)
    return BrokerConfig(str(d["id"]), d.get("jmx_url"), d.get("jolokia_url"), tuple(str(x) for x in dirs),
                        cleaner_log)


def _cluster(d, path: str, file) -> ClusterConfig:
    if not isinstance(d, dict):
        raise ConfigError(path.rstrip("."), "must be a mapping", file)
    _check_keys(d, {"name", "bootstrap_servers", "client", "brokers", "metric_names", "topics", "consumer_groups",
                    "transaction_max_timeout_ms", "cleaner"}, path, file)
    brokers = tuple(_broker(b, f"{path}brokers[{i}].", file) for i, b in enumerate(d.get("brokers") or []))
    names = d.get("metric_names") or {}
    for k in names:
        if k not in DEFAULT_METRIC_NAMES:
            raise ConfigError(f"{path}metric_names.{k}", f"unknown gauge (known: {', '.join(DEFAULT_METRIC_NAMES)})",
                              file)
    topics = d.get("topics") or {}
    for t, cfg in topics.items():
        try:
            TopicConfig.from_strings(cfg)
        except ConfigValueError as exc:
            raise ConfigError(f"{path}topics.{t}.{exc.key}", str(exc), file) from None
    bs = d.get("bootstrap_servers")
    if isinstance(bs, list):
        bs = ",".join(bs)
    tmt = d.get("transaction_max_timeout_ms")
    if tmt is not None:  # Kafka: an int of at least 1 (TransactionStateManagerConfig)
        if isinstance(tmt, bool) or not isinstance(tmt, int):
            raise ConfigError(f"{path}transaction_max_timeout_ms", f"{tmt!r} is not a whole number of ms", file)
        if not 1 <= tmt <= 2**31 - 1:
            raise ConfigError(f"{path}transaction_max_timeout_ms", "must be between 1 and 2147483647 (an int)", file)
    cleaner = d.get("cleaner") or {}
    if not isinstance(cleaner, dict):
        raise ConfigError(f"{path}cleaner", "must be a mapping of log cleaner settings", file)
    _check_keys(cleaner, set(CLEANER_SETTINGS), f"{path}cleaner.", file)
    for k, v in cleaner.items():
        try:
            parse_broker_value(k, v)
        except ConfigValueError as exc:
            raise ConfigError(f"{path}cleaner.{k}", str(exc), file) from None
    return ClusterConfig(str(d.get("name", "default")), bs, dict(d.get("client") or {}), brokers, dict(names),
                         dict(topics), bool(d.get("consumer_groups", True)), tmt,
                         {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in cleaner.items()})


def parse_config(data: dict | None, file: str | None = None) -> Config:
    data = data or {}
    if not isinstance(data, dict):
        raise ConfigError("(top level)", "must be a mapping", file)
    _check_keys(data, {"listen", "clusters", "intervals", "timeouts", "thresholds", "prometheus_url", "audit_dir",
                       "collector_url"}, "", file)
    listen = data.get("listen") or {}
    _check_keys(listen, {"address", "port"}, "listen.", file)
    port = int(_num(listen.get("port", 9690), "listen.port", file, cast=int, minimum=0))
    if port > 65535:
        raise ConfigError("listen.port", "must be at most 65535", file)
    clusters = tuple(_cluster(c, f"clusters[{i}].", file) for i, c in enumerate(data.get("clusters") or []))
    names = [c.name for c in clusters]
    if len(set(names)) != len(names):
        raise ConfigError("clusters", f"cluster names must be unique: {names}", file)
    return Config(
        listen_address=str(listen.get("address", "0.0.0.0")), listen_port=port, clusters=clusters,
        intervals=_dataclass_from(Intervals, data.get("intervals"), "intervals.", file),
        timeouts=_dataclass_from(Timeouts, data.get("timeouts"), "timeouts.", file),
        thresholds=_dataclass_from(Thresholds, data.get("thresholds"), "thresholds.", file),
        prometheus_url=data.get("prometheus_url"), audit_dir=data.get("audit_dir"),
        collector_url=data.get("collector_url"),
    )


def load_config(path: str | Path | None) -> Config:
    """Read ``monitor.yaml``; no path gives the defaults."""
    if path is None:
        return Config()
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("(file)", f"cannot read: {exc.strerror or exc}", str(path)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError("(yaml)", str(exc).replace("\n", " "), str(path)) from None
    return parse_config(data, str(path))


def with_command_line(cfg: Config, *, bootstrap_servers=None, jmx_urls=(), jolokia_urls=(), log_dirs=(),
                      cleaner_log=None, cluster=None, port=None, address=None) -> Config:
    """Flags on top of a file: they add to (or create) the first cluster. ``cleaner_log`` belongs to the
    one broker the flags describe (with several, give each its ``cleaner_log`` in the file)."""
    clusters = list(cfg.clusters) or [ClusterConfig(name=cluster or "default")]
    c = clusters[0]
    brokers = list(c.brokers)
    jmx_urls, jolokia_urls, log_dirs = list(jmx_urls), list(jolokia_urls), list(log_dirs)
    if len(jmx_urls) <= 1 and len(jolokia_urls) <= 1 and (jmx_urls or jolokia_urls or log_dirs or cleaner_log):
        # one broker described by flags: one label for its gauges, its partitions and its cleaner log
        url = (jmx_urls or jolokia_urls or [None])[0]
        bid = _node_id(log_dirs) or (_broker_id_from_url(url, 0) if url else "local")
        brokers.append(BrokerConfig(id=bid, jmx_url=jmx_urls[0] if jmx_urls else None,
                                    jolokia_url=jolokia_urls[0] if jolokia_urls else None, log_dirs=tuple(log_dirs),
                                    cleaner_log=cleaner_log))
    else:
        if cleaner_log:
            raise ConfigError("--cleaner-log", "belongs to one broker: with several --jmx-url/--jolokia-url, "
                              "give each broker's cleaner_log in the config file")
        for i, url in enumerate(jmx_urls):
            brokers.append(BrokerConfig(id=_broker_id_from_url(url, i), jmx_url=url))
        for i, url in enumerate(jolokia_urls):
            brokers.append(BrokerConfig(id=_broker_id_from_url(url, i), jolokia_url=url))
        if log_dirs:
            brokers.append(BrokerConfig(id=_node_id(log_dirs) or "local", log_dirs=tuple(log_dirs)))
    c = replace(c, brokers=tuple(brokers), bootstrap_servers=bootstrap_servers or c.bootstrap_servers,
                name=cluster or c.name)
    clusters[0] = c
    return replace(cfg, clusters=tuple(clusters), listen_port=cfg.listen_port if port is None else port,
                   listen_address=address or cfg.listen_address)


def _node_id(log_dirs) -> str | None:
    """The broker's node.id (broker.id in v0) from a log dir's meta.properties."""
    from monitor.logdir import read_meta_properties

    for d in log_dirs:
        meta = read_meta_properties(Path(d) / "meta.properties")
        nid = meta.get("node.id") or meta.get("broker.id")
        if nid:
            return nid
    return None


def _broker_id_from_url(url: str, i: int) -> str:
    from urllib.parse import urlparse

    u = urlparse(url)
    return f"{u.hostname}:{u.port}" if u.port else (u.hostname or str(i))

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
                                     # changed (collectors.logdirs.summary_state; default: see there)
    io_budget_bytes_per_second: 20971520   # log-dir record reads per broker (monitor.fileio.iobudget); 0: unlimited

Every key, its default and what it does: ``docs/reference-config.yaml``, generated from the dataclasses (each
field's ``key(doc, default)``) by ``monitor.settings.configdoc``.

Here: the entry points (``load_config``, ``parse_config``, ``to_data``), and every name of the
dataclasses with their defaults (``configmodel``, where they are defined). Beside it: reading the file
safely (``configfile``), every problem of a parsed file (``configcheck``), the command-line flags on top of
it (``configflags``), the schema (``configschema``).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import get_args, get_origin, get_type_hints

from monitor.settings.configcheck import problems, resolved_url_problems
from monitor.settings.configmodel import (DEFAULT_IO_BUDGET, DEFAULT_METRIC_NAMES, GRANULARITIES,  # noqa: F401
                                          SECRET_REFERENCE, BrokerConfig, ClusterConfig, Config, ConfigError,
                                          Intervals, Thresholds, Timeouts, key)
from monitor.settings.roles import conflicts


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

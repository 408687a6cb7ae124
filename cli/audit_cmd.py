"""``compaction-monitor audit``: the Spark audit, with the topic configs, the brokers' cleaner settings and
the replica placement gathered first (the admin API, else monitor.yaml), and its exit code from the
faults it met. Its flags are the audit's own parser's (``spark_analysis.job.build_parser``)."""

from __future__ import annotations

import argparse

from cli.clusterreach import UNREACHED_EXIT, cause
from cli.common import Parser
from cli.common import config_error as _config_error
from cli.common import err as _err


def audit_parser() -> argparse.ArgumentParser:
    """The audit's own parser (``spark_analysis.job``'s, which spark-submit runs too), with the command
    line's usage errors and help, and ``--log-level`` after ``audit`` as after every subcommand."""
    from cli.parsing import add_log_level
    from spark_analysis.job import build_parser

    parser = build_parser(parser_class=Parser)
    add_log_level(parser, "audit")
    return parser


def cmd_audit(args: argparse.Namespace) -> int:
    """The Spark audit; topic configs by the collector's rule (``AuditInputs.effective``): the admin API's,
    else the config file's; with a bootstrap server whose admin API does not give a topic's config the
    rest is unknown, Kafka's defaults (labelled so) only with no admin API at all. The brokers' cleaner
    settings and replica placement from the admin API too, under the flags (``job.cleaner_params``)."""
    from spark_analysis.job import run

    from monitor.settings.config import ConfigError, load_config
    from monitor.model.topicconfig import broker_cleaner_settings

    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        return _config_error(exc)
    admin, brokers, replicas, leaders = {}, None, None, {}
    snap, admin_error = None, None
    cluster = cfg.clusters[0] if cfg.clusters else None
    settings = broker_cleaner_settings(file=cluster.cleaner if cluster else None)  # nobody asked: the file, else Kafka's
    bootstrap = args.bootstrap_servers or (cluster.bootstrap_servers if cluster else None)
    if bootstrap and not args.bootstrap_servers:
        args.bootstrap_servers = bootstrap
    if bootstrap:
        try:
            from collectors.admin.source import AdminFetcher
            from monitor.settings.config import ClusterConfig

            fetcher = AdminFetcher(cluster or ClusterConfig(bootstrap_servers=bootstrap), timeout=cfg.timeouts.admin)
            try:
                snap = fetcher.topics()
            finally:
                fetcher.close()
            # each partition's leader: the replica the audit reads when the log dirs hold several
            leaders = {(t, p): po.leader for t, info in snap.topics.items() for p, po in info.partitions.items()
                       if po.leader is not None and po.leader >= 0}
            admin = {**snap.not_compacted, **{t: info.config for t, info in snap.topics.items()}}
            brokers = snap.cleaner_settings
            replicas = {(t, p): po.replicas for t, info in snap.topics.items() for p, po in info.partitions.items()}
            for b, got in sorted(brokers.items()):
                unknown = {s.reason for s in got.values() if s.source == "unknown"}
                for reason in unknown:
                    _err(f"broker {b}: cleaner settings unknown ({reason}); the estimate assumes Kafka's "
                         "defaults for them and says so")
            for topic, why in sorted(snap.refused.items()):
                _err(f"topic {topic}: config unknown ({why}); its figures that depend on it are reported unknown")
        except Exception as exc:  # noqa: BLE001 - the audit goes on: what needs the topic configs is unknown
            if (unreached := cause(exc)) is not None and args.input_kind == "topic":  # it reads the cluster itself
                _err(f"audit: {unreached.sentence}")
                return UNREACHED_EXIT
            exc = unreached.sentence if unreached is not None else exc  # the address, the kind and the advice
            admin_error = f"{bootstrap}: {exc}"
            _err(f"topic configs from {bootstrap} unavailable ({exc}); topics not in the config file have their "
                 "config unknown: the figures that depend on it are reported unknown, never with Kafka's defaults")
            settings = broker_cleaner_settings(file=cluster.cleaner if cluster else None,
                                               admin_error=f"the admin API at {bootstrap} failed: {exc}")
    try:
        _, summary = run(args, topic_configs=admin, file_configs=dict(cluster.topics) if cluster else {},
                         admin_asked=bool(bootstrap), admin=snap, admin_error=admin_error,
                         broker_settings=brokers, replicas=replicas, settings=settings, leaders=leaders,
                         restore_config=cluster.restore_throughput_bytes_per_second if cluster else None)
    except (FileNotFoundError, ValueError) as exc:
        _err(f"audit: {exc}")
        return 2
    return faults_exit_code(summary)


def faults_exit_code(summary: dict) -> int:
    """An audit that met corrupt or unreadable input (listed in its report) exits 1, as ``inspect`` and
    ``logdir`` do: the run is written, its figures leave those spots out."""
    if summary.get("faults"):
        _err(f"audit: {summary['faults']} corrupt or unreadable spot(s) met; the report lists them")
        return 1
    return 0

"""``compaction-monitor``: the subcommands, their flags, and the wiring of core and edges.

Each subcommand imports its edge (collectors, Spark, Streamlit, the local
broker) inside its handler, so ``compaction-monitor inspect`` never pays for
importing PySpark, and a subcommand runs where only its own edge is installed. A subcommand whose pip
extra is missing (cli/extras.py) says which one to install, in one line, exit 2.

This module is the one place the command line is put together: each subcommand's handler
(``HANDLERS``), given to the parser ``cli.parser`` builds (its flags, helps and examples, by the
conventions of ``cli.parsing``), and ``main``'s dispatch: logging set up once (``cli.logsetup``), the
exit codes 0/1/2/130. The handlers of the one-shot scans and the collector (inspect, collect, logdir,
explain, topics lint, config) are here; the other families have a module each: ``broker_cmd``,
``render_cmd`` (rules, grafana), ``audit_cmd``, ``dashboard_cmd`` (dashboard, demo), with what they
share in ``cli.common``.
"""

from __future__ import annotations

import argparse
import sys

from cli import extras, logsetup
from cli.audit_cmd import cmd_audit
from cli.broker_cmd import cmd_broker
from cli.clusterreach import admin_topics
from cli.clusterreach import exit_code as unreached_exit
from cli.common import config_error as _config_error
from cli.common import err as _err
from cli.dashboard_cmd import cmd_dashboard, cmd_demo
from cli.parsing import chosen, command_position, parse_args
from cli.render_cmd import cmd_grafana, cmd_rules

# ---------------------------------------------------------------- inspect


def cmd_inspect(args: argparse.Namespace) -> int:
    from cli.inspect_cmd import run_inspect

    return run_inspect(args.paths, fmt=args.format, skip_corrupt=not args.strict, stats=args.stats,
                       out=sys.stdout, err=sys.stderr)


def _load_config(args: argparse.Namespace):
    from monitor.settings.config import ConfigError, load_config
    from monitor.settings.configflags import with_command_line

    try:
        cfg = load_config(getattr(args, "config", None))
        return with_command_line(
            cfg, bootstrap_servers=getattr(args, "bootstrap_server", None),
            jmx_urls=getattr(args, "jmx_url", None) or (), jolokia_urls=getattr(args, "jolokia_url", None) or (),
            log_dirs=getattr(args, "log_dir", None) or (), cleaner_log=getattr(args, "cleaner_log", None),
            cluster=getattr(args, "cluster", None), jmx_url_template=getattr(args, "jmx_url_template", None),
            port=getattr(args, "port", None), address=getattr(args, "address", None))
    except ConfigError as exc:
        _config_error(exc)
        return None


def cmd_collect(args: argparse.Namespace) -> int:
    if not _role_flags_fit(args):
        return 2
    cfg = _load_config(args)
    if cfg is None:
        return 2
    cfg = _exposition_flags(cfg, args)
    if cfg is None:
        return 2
    from monitor.settings.jmxtemplate import template_problems
    from monitor.settings.roles import role_problems

    found = role_problems(cfg) + template_problems(cfg)
    for key, reason in found:
        _err(f"{args.config + ': ' if args.config and key.startswith('clusters') else ''}{key}: {reason}")
    if found:
        return 2
    web = None
    if args.web_config_file:
        from collectors.serving.webconfig import WebConfigError, load_web_config

        try:
            web = load_web_config(args.web_config_file)
        except WebConfigError as exc:
            _err(f"web config error: {exc}")
            return 2
    from collectors.app import run_collect

    if args.state_dir:
        from dataclasses import replace

        cfg = replace(cfg, state_dir=args.state_dir)
    return run_collect(cfg, once=args.once, web=web, out=sys.stdout, err=sys.stderr)


def _role_flags_fit(args: argparse.Namespace) -> bool:
    """A flag naming a source the ``--role`` does not read is an error that names the flag (say it before
    the flags are merged into the config, where they would be named by their key path)."""
    from monitor.settings.roles import BROKER_SOURCES, CLUSTER

    if args.role != CLUSTER:
        return True
    given = [flag for flag in BROKER_SOURCES.values() if getattr(args, flag[2:].replace("-", "_"))]
    for flag in given:
        _err(f"{flag}: the cluster role reads no broker's files or JMX page: run a collector with --role broker "
             "on the broker (or --role all), or leave it out")
    return not given


def _exposition_flags(cfg, args: argparse.Namespace):
    """``--granularity``, ``--topics-allow``, ``--topics-deny``, ``--role`` over the file's; None (after
    saying why) when a pattern is no regular expression."""
    from dataclasses import replace

    from monitor.settings.configcheck import pattern_problems

    changes = {}
    if getattr(args, "role", None):
        changes["role"] = args.role
    if args.granularity:
        changes["granularity"] = args.granularity
    if getattr(args, "io_budget", None) is not None:  # over the file's, for every broker without its own
        changes["io_budget_bytes_per_second"] = args.io_budget
    if getattr(args, "active_keys_budget", None) is not None:  # over the file's timeouts.active_segment_keys_budget_bytes
        changes["timeouts"] = replace(cfg.timeouts, active_segment_keys_budget_bytes=int(args.active_keys_budget))
    for key in ("topics_allow", "topics_deny"):
        given = getattr(args, key)
        if given:
            for _, reason in pattern_problems(key, given):
                _err(f"--{key.replace('_', '-')}: {reason}")
                return None
            changes[key] = tuple(given)
    return replace(cfg, **changes)


def _topic_overrides(args: argparse.Namespace) -> dict | None:
    """``--topic-config TOPIC:KEY=VALUE`` items by topic; None (after saying why) when one is malformed."""
    overrides = {}
    for item in args.topic_config or []:
        try:
            topic, kv = item.split(":", 1)
            k, v = kv.split("=", 1)
        except ValueError:
            _err(f"--topic-config {item!r}: expected TOPIC:KEY=VALUE")
            return None
        overrides.setdefault(topic, {})[k] = v
    from monitor.model.topicconfig import ConfigValueError, TopicConfig

    try:
        for t, c in overrides.items():
            TopicConfig.from_strings(c)
    except ConfigValueError as exc:
        _err(f"--topic-config: {exc}")
        return None
    return overrides


def cmd_logdir(args: argparse.Namespace) -> int:
    paths = [*args.paths, *(args.log_dir or [])]  # PATH and --log-dir PATH alike (parse_args: one at least)
    cfg = _load_config(argparse.Namespace(config=args.config))
    overrides = _topic_overrides(args)
    if cfg is None or overrides is None:
        return 2
    from cli.logdir_cmd import run_logdir

    return run_logdir(paths, config=cfg, fmt=args.format, include_all=args.all, topic_overrides=overrides,
                      cleaner_log=args.cleaner_log, out=sys.stdout, err=sys.stderr)


def cmd_explain(args: argparse.Namespace) -> int:
    """Why each selected partition is (not) compacting. Log dirs from --log-dir, else the config's first
    cluster's brokers; topic configs from the admin API when a bootstrap server is known."""
    cfg = _load_config(argparse.Namespace(config=args.config, bootstrap_server=args.bootstrap_server,
                                          log_dir=args.log_dir, cleaner_log=args.cleaner_log))
    overrides = _topic_overrides(args)
    if cfg is None or overrides is None:
        return 2
    cluster = cfg.clusters[0] if cfg.clusters else None
    log_dirs = [d for b in (cluster.brokers if cluster else ()) for d in b.log_dirs]
    # each broker's cleaner log with its log dirs: read for the broker found under them (explain_cmd)
    cleaner_logs = [(tuple(b.log_dirs), b.cleaner_log) for b in (cluster.brokers if cluster else ()) if b.cleaner_log]
    if not log_dirs:
        _err("explain: no log dir: give --log-dir (or brokers[].log_dirs in --config)")
        return 2
    bootstrap = cluster.bootstrap_servers if cluster else None
    groups: list = []  # the consumer groups' lags, for the configuration review's lines
    admin, admin_error, unreached = admin_topics("explain", cluster, groups=groups) if bootstrap else \
        (None, None, False)
    from cli.explain_cmd import run_explain

    code = run_explain(args.paths, config=cfg, log_dirs=log_dirs, fmt=args.format, bootstrap=bootstrap,
                       topic_overrides=overrides, admin=admin,
                       cleaner_log=cleaner_logs[0][1] if len(cleaner_logs) == 1 else None,
                       cleaner_logs=cleaner_logs if len(cleaner_logs) > 1 else None,
                       admin_error=admin_error, groups=groups[0] if groups else None, out=sys.stdout,
                       err=sys.stderr)
    return unreached_exit(unreached, code)


def cmd_topics_lint(args: argparse.Namespace) -> int:
    """``topics lint`` (``check-config`` in 0.1.0): every compacted topic's live settings against the
    pitfalls of ``monitor.verdicts.configreview``."""
    cfg = _load_config(argparse.Namespace(config=args.config, bootstrap_server=args.bootstrap_server,
                                          log_dir=args.log_dir))
    if cfg is None:
        return 2
    from cli.check_config_cmd import run_check_config

    return run_check_config(cfg, fmt=args.format, topics=args.topics, out=sys.stdout, err=sys.stderr)


def cmd_config(args: argparse.Namespace) -> int:
    """``config check FILE``: the config as the monitor reads it (defaults filled in, secrets as *** or
    as the ``${env:...}`` reference they come from), or every problem, one a line."""
    import yaml

    from monitor.settings.config import ConfigError, parse_config, to_data
    from monitor.settings.configfile import read_config_data
    from monitor.settings.redact import literal_secrets, redacted, with_references

    try:
        written = read_config_data(args.file)
        cfg = parse_config(written, args.file)
    except ConfigError as exc:
        return _config_error(exc)
    for key in literal_secrets(written):
        _err(f"config check: warning: {args.file}: {key}: a secret written in the file; give it by reference "
             "(${env:NAME}, ${directory:DIR:NAME} or ${file:PATH:KEY})")
    shown = with_references(redacted(to_data(cfg)), {"listen": {}, **(written or {})})
    sys.stdout.write(f"# {args.file}: valid; as the monitor reads it (defaults filled in, secrets as *** "
                     "or as the reference they come from)\n")
    sys.stdout.write(yaml.safe_dump(shown, sort_keys=False, default_flow_style=False))
    return 0


def cmd_replicas_compare(args: argparse.Namespace) -> int:
    """``replicas compare --leader PATH --follower PATH``: keys the follower holds that the leader deleted (#34)."""
    from cli.replicas_cmd import run_compare

    return run_compare(args.leader, args.follower, fmt=args.format, out=sys.stdout, err=sys.stderr)


HANDLERS = {"broker": cmd_broker, "inspect": cmd_inspect, "logdir": cmd_logdir, "explain": cmd_explain,
            "topics lint": cmd_topics_lint, "collect": cmd_collect, "rules": cmd_rules, "grafana": cmd_grafana,
            "audit": cmd_audit, "dashboard": cmd_dashboard, "config": cmd_config,
            "demo": cmd_demo, "replicas compare": cmd_replicas_compare}


def build_parser() -> argparse.ArgumentParser:
    """The whole command line (``cli.parser``), each subcommand wired to its handler here."""
    from cli.parser import build_parser as build

    return build(HANDLERS)


def audit_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | int:
    """``audit``: the top-level options before it read by ``parser``, every flag after it by the audit's
    own parser (``spark_analysis.job``'s, with ``--log-level``); 2 (said) when its extra is missing."""
    at = command_position(argv)
    top = parser.parse_args(argv[: at + 1])  # --log-level, --version, --help before it
    if (why := extras.check("audit")) is not None:
        _err(why)
        return 2
    from cli.audit_cmd import audit_parser

    args = audit_parser().parse_args(argv[at + 1:])
    args.log_level = getattr(args, "log_level", None) or top.log_level
    args.command, args.func = "audit", cmd_audit
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    at = command_position(argv)
    if argv[at:at + 1] == ["audit"]:
        args = audit_args(parser, argv)
        if isinstance(args, int):
            return args
    else:
        args = parse_args(parser, argv)
        if args.command == "logdir" and not args.paths and not args.log_dir:  # before any work, as every flag
            chosen(parser, args).error("no log dir: give PATH or --log-dir PATH")
        if (why := extras.check(args.command)) is not None:
            _err(why)
            return 2
    logsetup.configure(args.log_level, args.command, once=getattr(args, "once", False))
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

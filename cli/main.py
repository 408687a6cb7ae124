"""``compaction-monitor``: the subcommands, their flags, and the wiring of core and edges.

Each subcommand imports its edge (collectors, Spark, Streamlit, the local
broker) inside its handler, so ``compaction-monitor inspect`` never pays for
importing PySpark, and a subcommand runs where only its own edge is installed. A subcommand whose pip
extra is missing (cli/extras.py) says which one to install, in one line, exit 2.

This module is the one place the command line is put together: every subcommand's flags
(``build_parser``) and its handler (``set_defaults(func=...)``), and ``main``'s dispatch. The handlers of
the one-shot scans and the collector (inspect, collect, logdir, explain, check-config, config) are here;
the other families have a module each: ``broker_cmd``, ``render_cmd`` (rules, grafana), ``audit_cmd``,
``dashboard_cmd`` (dashboard, demo), with what they share in ``cli.common``.
"""

from __future__ import annotations

import argparse
import sys

from cli import extras, flags
from cli.audit_cmd import cmd_audit
from cli.broker_cmd import DEFAULT_BROKER_DIR, cmd_broker
from cli.clusterreach import admin_topics, exit_code as unreached_exit
from cli.common import Parser
from cli.common import config_error as _config_error
from cli.common import err as _err
from cli.dashboard_cmd import cmd_dashboard, cmd_demo
from cli.render_cmd import cmd_grafana, cmd_rules
from monitor.settings.roles import HELP as ROLE_HELP
from monitor.settings.roles import ROLES

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
            cfg, bootstrap_servers=getattr(args, "bootstrap_servers", None),
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
        from collectors.webconfig import WebConfigError, load_web_config

        try:
            web = load_web_config(args.web_config_file)
        except WebConfigError as exc:
            _err(f"web config error: {exc}")
            return 2
    from collectors.app import run_collect

    if args.state_dir:
        from dataclasses import replace

        cfg = replace(cfg, state_dir=args.state_dir)
    return run_collect(cfg, once=args.once, web=web)


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
    cfg = _load_config(argparse.Namespace(config=args.config))
    overrides = _topic_overrides(args)
    if cfg is None or overrides is None:
        return 2
    from cli.logdir_cmd import run_logdir

    return run_logdir(args.paths, config=cfg, fmt=args.format, include_all=args.all, topic_overrides=overrides,
                      cleaner_log=args.cleaner_log)


def cmd_explain(args: argparse.Namespace) -> int:
    """Why each selected partition is (not) compacting. Log dirs from --log-dir, else the config's first
    cluster's brokers; topic configs from the admin API when a bootstrap server is known."""
    cfg = _load_config(argparse.Namespace(config=args.config, bootstrap_servers=args.bootstrap_server,
                                          log_dir=args.log_dir, cleaner_log=args.cleaner_log))
    overrides = _topic_overrides(args)
    if cfg is None or overrides is None:
        return 2
    cluster = cfg.clusters[0] if cfg.clusters else None
    log_dirs = [d for b in (cluster.brokers if cluster else ()) for d in b.log_dirs]
    cleaner_logs = [b.cleaner_log for b in (cluster.brokers if cluster else ()) if b.cleaner_log]
    if len(cleaner_logs) > 1:
        _err("explain: several brokers have a cleaner_log; explain reads one broker's log dirs: give --log-dir "
             "and --cleaner-log of one broker")
        return 2
    if not log_dirs:
        _err("explain: no log dir: give --log-dir (or brokers[].log_dirs in --config)")
        return 2
    bootstrap = cluster.bootstrap_servers if cluster else None
    admin, admin_error, unreached = admin_topics("explain", cluster) if bootstrap else (None, None, False)
    from cli.explain_cmd import run_explain

    code = run_explain(args.paths, config=cfg, log_dirs=log_dirs, fmt=args.format, bootstrap=bootstrap,
                       topic_overrides=overrides, admin=admin, cleaner_log=cleaner_logs[0] if cleaner_logs else None,
                       admin_error=admin_error)
    return unreached_exit(unreached, code)


def cmd_check_config(args: argparse.Namespace) -> int:
    """Every compacted topic's live settings against the pitfalls of ``monitor.verdicts.configreview``."""
    cfg = _load_config(argparse.Namespace(config=args.config, bootstrap_servers=args.bootstrap_server,
                                          log_dir=args.log_dir))
    if cfg is None:
        return 2
    from cli.check_config_cmd import run_check_config

    return run_check_config(cfg, fmt=args.format, topics=args.topics)


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


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="compaction-monitor",
        description="Compaction health for Apache Kafka: log-cleaner metrics, per-partition dirty ratios, tombstones.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = sub.add_parser("broker", help="run a real Kafka (KRaft) broker, or a cluster of them, on loopback")
    # One sub-parser per action, so that each takes its own arguments in any order
    # (`dump-log FILE --dir D` as well as `dump-log --dir D FILE`).
    common = Parser(add_help=False)
    common.add_argument("--dir", default=str(DEFAULT_BROKER_DIR), help="state, data and logs (default: %(default)s)")
    actions = b.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("fetch", parents=[common], help="resolve the broker jars with Maven (once)")
    st = actions.add_parser("start", parents=[common], help="format storage if needed and start the broker")
    st.add_argument("--override", action="append", metavar="KEY=VALUE", help="extra broker property")
    st.add_argument("--brokers", type=flags.count, default=1,
                    help="nodes (combined broker+controller, one controller quorum); default %(default)s")
    st.add_argument("--security", choices=["plaintext", "sasl_ssl"], default="plaintext",
                    help="sasl_ssl: SCRAM-SHA-512 over TLS, ACLs on, users admin/monitor/blind (default %(default)s)")
    actions.add_parser("stop", parents=[common], help="stop the broker; keep its data and logs")
    actions.add_parser("status", parents=[common], help="print the broker's addresses")
    dl = actions.add_parser("dump-log", parents=[common], help="run Kafka's own kafka-dump-log on segment files")
    dl.add_argument("files", nargs="+", metavar="FILE", help="segment, index or snapshot files")
    dl.add_argument("--dump-arg", dest="dump_args", action="append", default=[],
                    help="argument passed to kafka-dump-log, e.g. --dump-arg=--print-data-log")
    b.set_defaults(func=cmd_broker)

    i = sub.add_parser("inspect", help="print the records of segment files, dumps or partition folders")
    i.add_argument("paths", nargs="+", metavar="PATH", type=flags.path)
    i.add_argument("--format", choices=["jsonl", "table"], default="table")
    i.add_argument("--strict", action="store_true",
                   help="stop at the first corrupt batch instead of skipping it; a truncated batch at a segment's "
                        "end (the batch a live segment is being appended) counts as corrupt too")
    i.add_argument("--stats", action="store_true",
                   help="print no record: totals per file, per partition and in all (text, or JSON lines with "
                        "--format jsonl)")
    i.set_defaults(func=cmd_inspect)

    ld = sub.add_parser("logdir", help="per-partition compaction state of broker log dirs (no broker needed)")
    ld.add_argument("paths", nargs="+", metavar="PATH", type=flags.path,
                    help="a broker log dir (an entry of log.dirs), or a folder above log dirs (found within 7 levels)")
    ld.add_argument("--format", choices=["json", "table"], default="table")
    ld.add_argument("--config", type=flags.path, help="monitor.yaml (topic configs under clusters[0].topics)")
    ld.add_argument("--topic-config", action="append", metavar="TOPIC:KEY=VALUE",
                    help="a topic config, e.g. orders:min.cleanable.dirty.ratio=0.3 (repeatable)")
    ld.add_argument("--all", action="store_true", help="also partitions of topics not known to be compacted")
    ld.add_argument("--cleaner-log", type=flags.path,
                    help="the broker's log-cleaner.log: names uncleanable partitions and why")
    ld.set_defaults(func=cmd_logdir)

    e = sub.add_parser("explain", help="why each partition is (not) compacting: cause, evidence, fix, forecast")
    e.add_argument("paths", nargs="*", metavar="TOPIC[-PARTITION]", help="topics or partitions (default: all)")
    e.add_argument("--log-dir", type=flags.path, action="append", help="a broker log dir readable here, or a folder above log dirs (repeatable)")
    e.add_argument("--config", type=flags.path, help="monitor.yaml (log dirs, bootstrap servers, topic configs)")
    e.add_argument("--bootstrap-server", type=flags.bootstrap,
                   help="Kafka bootstrap servers: topic configs, and the fixes' commands")
    e.add_argument("--topic-config", action="append", metavar="TOPIC:KEY=VALUE",
                   help="a topic config, e.g. orders:min.cleanable.dirty.ratio=0.3 (repeatable)")
    e.add_argument("--cleaner-log", type=flags.path,
                   help="the broker's log-cleaner.log: uncleanable partitions and dead threads")
    e.add_argument("--format", choices=["text", "json"], default="text")
    e.set_defaults(func=cmd_explain)

    cc = sub.add_parser("check-config", help="lint compacted topics' live settings against known pitfalls")
    cc.add_argument("topics", nargs="*", metavar="TOPIC", help="topics to check (default: every compacted topic)")
    cc.add_argument("--config", type=flags.path, help="monitor.yaml (bootstrap servers, client settings, log dirs)")
    cc.add_argument("--bootstrap-server", type=flags.bootstrap,
                    help="Kafka bootstrap servers: live topic configs and consumer groups")
    cc.add_argument("--log-dir", type=flags.path, action="append",
                    help="a broker log dir readable here (repeatable): write rates, tombstones, active segments")
    cc.add_argument("--format", choices=["text", "json"], default="text")
    cc.set_defaults(func=cmd_check_config)

    c = sub.add_parser("collect", help="serve compaction metrics to Prometheus")
    c.add_argument("--config", type=flags.path, help="monitor.yaml")
    c.add_argument("--bootstrap-servers", type=flags.bootstrap, help="Kafka bootstrap servers (admin API, consumer groups)")
    c.add_argument("--jmx-url", action="append", type=flags.url, help="a broker's JMX exporter /metrics URL (repeatable)")
    c.add_argument("--jolokia-url", action="append", type=flags.url, help="a broker's Jolokia base URL (repeatable)")
    c.add_argument("--jmx-url-template", type=flags.jmx_url_template, metavar="URL",
                   help="each broker's JMX exporter URL with {node_id}, filled with every broker the --log-dir "
                        "paths hold (their meta.properties), found at each refresh")
    c.add_argument("--log-dir", type=flags.path, action="append", help="a broker log dir readable here, or a folder above log dirs (repeatable)")
    c.add_argument("--cleaner-log", type=flags.path, help="the broker's log-cleaner.log, followed through rotation")
    c.add_argument("--cluster", help="the cluster label (default: the config's, else 'default')")
    c.add_argument("--port", type=flags.port, help="listen port (default 9690; 0 picks a free one)")
    c.add_argument("--address", help="listen address (default 0.0.0.0: every interface, as Prometheus' exporters)")
    c.add_argument("--web.config.file", dest="web_config_file", metavar="FILE",
                   help="TLS and basic auth for /metrics, in Prometheus exporter-toolkit's web config format")
    c.add_argument("--once", action="store_true", help="refresh every source once, print the metrics, exit")
    c.add_argument("--role", choices=list(ROLES), help=f"which sources are read and which series exported: {ROLE_HELP}")
    c.add_argument("--state-dir", type=flags.path,
                   help="where the summary cache is kept, so a restart reads only the segments that changed "
                        "(default: the config's state_dir, else $STATE_DIRECTORY, /var/lib/compaction-monitor when "
                        "writable, else $XDG_STATE_HOME/compaction-monitor; with --once only when given)")
    c.add_argument("--granularity", choices=["topic", "partition"],
                   help="topic (default): topic aggregates, 4 series per healthy partition, 2 per healthy consumer "
                        "group's partition, and every series of an "
                        "unhealthy one; partition: every series of every partition")
    c.add_argument("--io-budget", type=flags.bytes_per_second, metavar="BYTES_PER_SECOND",
                   help="bytes per second the log-dir reads may take from a broker's disk (default 20971520, "
                        "20 MiB/s: monitor.fileio.iobudget says why; 0: unlimited). Serving, every partition's "
                        "ratio and cause come from batch headers first, records at this pace after; --once "
                        "reads every record before it prints, at this pace")
    c.add_argument("--topics-allow", action="append", metavar="REGEX",
                   help="export only topics whose whole name matches (repeatable; default: every topic)")
    c.add_argument("--topics-deny", action="append", metavar="REGEX",
                   help="do not export topics whose whole name matches (repeatable; wins over --topics-allow)")
    c.set_defaults(func=cmd_collect)

    r = sub.add_parser("rules", help="render the Prometheus alert rules from monitor.yaml's thresholds")
    r.add_argument("action", choices=["render"])
    r.add_argument("--config", type=flags.path, help="monitor.yaml (thresholds:)")
    r.add_argument("--out", help="write the rule file here (default: stdout)")
    r.add_argument("--tests", metavar="FILE", help="also write promtool unit tests for the rendered rules")
    r.add_argument("--format", choices=["rules", "prometheusrule"], default="rules",
                   help="rules (default): a Prometheus rule file; prometheusrule: the same groups as a Prometheus "
                        "Operator PrometheusRule (deploy/k8s/prometheusrule.yaml)")
    r.set_defaults(func=cmd_rules)

    gr = sub.add_parser("grafana", help="render the Grafana dashboard from the panel table and monitor.yaml's thresholds")
    gr.add_argument("action", choices=["render"])
    gr.add_argument("--config", type=flags.path, help="monitor.yaml (thresholds:)")
    gr.add_argument("--out", help="write the dashboard JSON here (default: stdout)")
    gr.set_defaults(func=cmd_grafana)

    a = sub.add_parser("audit", help="Spark audit of segments, dumps or a live topic", add_help=False)
    a.add_argument("rest", nargs=argparse.REMAINDER)
    a.set_defaults(func=lambda args: cmd_audit(args.rest))

    d = sub.add_parser("dashboard", help="the Streamlit dashboard")
    d.add_argument("--config", type=flags.path, help="monitor.yaml (prometheus_url, collector_url, audit_dir)")
    d.add_argument("--port", type=flags.port, default=8501)
    d.add_argument("--address", default="127.0.0.1")
    d.add_argument("--prometheus-url", type=flags.url)
    d.add_argument("--collector-url", type=flags.url)
    d.add_argument("--audit-dir")
    d.set_defaults(func=cmd_dashboard)

    cf = sub.add_parser("config", help="check a monitor.yaml against the schema")
    cf.add_argument("action", choices=["check"])
    cf.add_argument("file", metavar="FILE", help="monitor.yaml")
    cf.set_defaults(func=cmd_config)

    dm = sub.add_parser("demo", help="a local broker, workload, collector, Prometheus, audit and dashboard")
    dm.add_argument("--dir", default=".compaction-monitor/demo", help="where everything is kept")
    dm.add_argument("--duration", type=flags.seconds, help="stop after this many seconds (default: until Ctrl-C)")
    dm.add_argument("--fast", action="store_true", help="short segment and retention times (for tests)")
    dm.set_defaults(func=cmd_demo)
    return p


FILE_ARGUMENTS = ("files", "paths", "topics")  # the positional lists of subcommands that take files


def parse_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parse_args``, except that a subcommand's files may stand anywhere among its options
    (argparse alone takes one run of positionals: ``dump-log A --dir D B`` would refuse ``B``)."""
    args, extra = parser.parse_known_args(argv)
    target = next((name for name in FILE_ARGUMENTS if isinstance(getattr(args, name, None), list)), None)
    unknown = [a for a in extra if a.startswith("-") and a != "-"] if target else extra
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if target and extra:
        getattr(args, target).extend(extra)
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["audit"]:  # the audit's own parser takes every option
        if (why := extras.check("audit")) is not None:
            _err(why)
            return 2
        try:
            return cmd_audit(argv[1:])
        except KeyboardInterrupt:
            return 130
    args = parse_args(build_parser(), argv)
    if (why := extras.check(args.command)) is not None:
        _err(why)
        return 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

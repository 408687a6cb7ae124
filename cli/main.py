"""``compaction-monitor``: the subcommands, their flags, and the wiring of core and edges.

Each subcommand imports its edge (collectors, Spark, Streamlit, the local
broker) inside its handler, so ``compaction-monitor inspect`` never pays for
importing PySpark, and a subcommand runs where only its own edge is installed. A subcommand whose pip
extra is missing (cli/extras.py) says which one to install, in one line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli import extras, flags

DEFAULT_BROKER_DIR = Path(".compaction-monitor") / "broker"


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line and exit code 2 (the full usage is ``--help``'s)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _err(msg: str) -> None:
    print(f"compaction-monitor: {msg}", file=sys.stderr)


def _config_error(exc) -> int:
    """Every problem of a config, one a line; 2, the exit code of a usage or config error."""
    for line in exc.lines:
        _err(f"config error: {line}")
    return 2


# ------------------------------------------------------------------ broker


def cmd_broker(args: argparse.Namespace) -> int:
    from localkafka import broker, cluster

    progress = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    try:
        if args.action == "fetch":
            path = broker.fetch_jars(progress=progress)
            print(path)
            return 0
        if args.action == "start":
            bad = [kv for kv in args.override or [] if "=" not in kv]
            if bad:
                _err(f"--override {bad[0]!r}: expected KEY=VALUE")
                return 2
            extra = dict(kv.split("=", 1) for kv in args.override or [])
            if args.brokers != 1 or args.security != "plaintext":
                if extra:
                    _err("--override applies to the single broker only")
                    return 2
                cstate = cluster.start(Path(args.dir), brokers=args.brokers, security=args.security,
                                       progress=progress)
                _print_cluster(cstate)
                return 0
            state = broker.start(Path(args.dir), extra_config=extra, progress=progress)
            _print_state(state, alive=True)
            return 0
        if args.action == "stop":
            if cluster.read_cluster(Path(args.dir)) is not None:
                if not cluster.stop(Path(args.dir), progress=progress):
                    _err(f"no cluster running from {args.dir}")
                    return 1
                return 0
            if not broker.stop(Path(args.dir), progress=progress):
                _err(f"no broker running from {args.dir}")
                return 1
            return 0
        if args.action == "status" and cluster.read_cluster(Path(args.dir)) is not None:
            cstate = cluster.read_cluster(Path(args.dir))
            alive = _print_cluster(cstate)
            return 0 if alive == len(cstate.nodes) else 1
        if args.action == "status":
            state = broker.read_state(Path(args.dir))
            if state is None:
                _err(f"no broker state in {args.dir} (start one with `compaction-monitor broker start`)")
                return 1
            alive = broker.is_alive(state.pid)
            _print_state(state, alive=alive)
            return 0 if alive else 1
        if args.action == "dump-log":
            sys.stdout.write(broker.dump_log(args.files, *args.dump_args))
            return 0
    except broker.BrokerError as exc:
        _err(str(exc))
        return 1
    return 2


def _print_state(state, alive: bool) -> None:
    print(f"status:      {'running' if alive else 'stopped'} (pid {state.pid})")
    print(f"kafka:       {state.kafka_version}")
    print(f"bootstrap:   {state.bootstrap}")
    print(f"jmx metrics: {state.jmx_url}")
    print(f"jolokia:     {state.jolokia_url}")
    print(f"log dir:     {state.log_dir}")
    print(f"logs:        {state.logs_dir} (server.log, log-cleaner.log)")


def _print_cluster(cstate) -> int:
    """Print a local cluster's addresses and where its secrets are (never the secrets); return how
    many of its nodes run."""
    from localkafka import broker

    nodes = cstate.brokers()
    alive = sum(broker.is_alive(b.pid) for b in nodes)
    print(f"cluster:     {cstate.cluster_id} ({len(cstate.nodes)} nodes, {alive} running, {cstate.security})")
    print(f"bootstrap:   {cstate.bootstrap}")
    if cstate.security == "sasl_ssl":
        print(f"security:    SASL_SSL, SCRAM-SHA-512; CA {cstate.ca_pem}")
        for user, path in cstate.password_files.items():
            print(f"user:        {user} (password in {path})")
    for b in nodes:
        print(f"node {b.node_id}:      {'running' if broker.is_alive(b.pid) else 'stopped'} (pid {b.pid}) "
              f"{b.bootstrap} jmx {b.jmx_url} jolokia {b.jolokia_url} log dir {b.log_dir} logs {b.logs_dir}")
    return alive


# ---------------------------------------------------------------- inspect


def cmd_inspect(args: argparse.Namespace) -> int:
    from cli.inspect_cmd import run_inspect

    return run_inspect(args.paths, fmt=args.format, skip_corrupt=not args.strict, stats=args.stats,
                       out=sys.stdout, err=sys.stderr)


def _load_config(args: argparse.Namespace):
    from monitor.config import ConfigError, load_config, with_command_line

    try:
        cfg = load_config(getattr(args, "config", None))
        return with_command_line(
            cfg, bootstrap_servers=getattr(args, "bootstrap_servers", None),
            jmx_urls=getattr(args, "jmx_url", None) or (), jolokia_urls=getattr(args, "jolokia_url", None) or (),
            log_dirs=getattr(args, "log_dir", None) or (), cleaner_log=getattr(args, "cleaner_log", None),
            cluster=getattr(args, "cluster", None),
            port=getattr(args, "port", None), address=getattr(args, "address", None))
    except ConfigError as exc:
        _config_error(exc)
        return None


def cmd_collect(args: argparse.Namespace) -> int:
    cfg = _load_config(args)
    if cfg is None:
        return 2
    cfg = _exposition_flags(cfg, args)
    if cfg is None:
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

    return run_collect(cfg, once=args.once, web=web)


def _exposition_flags(cfg, args: argparse.Namespace):
    """``--granularity``, ``--topics-allow``, ``--topics-deny`` over the file's; None (after saying
    why) when a pattern is no regular expression."""
    from dataclasses import replace

    from monitor.config import pattern_problems

    changes = {}
    if args.granularity:
        changes["granularity"] = args.granularity
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
    from monitor.topicconfig import ConfigValueError, TopicConfig

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
    admin, admin_error = None, None
    if bootstrap:
        try:
            from collectors.admin import AdminFetcher

            fetcher = AdminFetcher(cluster, timeout=10)
            try:
                admin = fetcher.topics()
            finally:
                fetcher.close()
        except Exception as exc:  # noqa: BLE001 - explain goes on with the config file; other configs unknown
            admin_error = f"topic configs from {bootstrap} unavailable ({exc})"
            _err(f"explain: {admin_error}; using the config file's, the others are unknown (never Kafka's "
                 "defaults: each config's source says which)")
    from cli.explain_cmd import run_explain

    return run_explain(args.paths, config=cfg, log_dirs=log_dirs, fmt=args.format, bootstrap=bootstrap,
                       topic_overrides=overrides, admin=admin, cleaner_log=cleaner_logs[0] if cleaner_logs else None,
                       admin_error=admin_error)


def cmd_check_config(args: argparse.Namespace) -> int:
    """Every compacted topic's live settings against the pitfalls of ``monitor.configreview``."""
    cfg = _load_config(argparse.Namespace(config=args.config, bootstrap_servers=args.bootstrap_server,
                                          log_dir=args.log_dir))
    if cfg is None:
        return 2
    from cli.check_config_cmd import run_check_config

    return run_check_config(cfg, fmt=args.format, topics=args.topics)


def cmd_rules(args: argparse.Namespace) -> int:
    from monitor.config import ConfigError, load_config

    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        return _config_error(exc)
    from alerts.promtool_tests import render_tests
    from alerts.render import render_rules

    from cli.outputs import OutputError, write_all

    text = render_rules(cfg.thresholds)
    files = [("--out", args.out, text)] if args.out else []
    if args.tests:
        rule_file = Path(args.out).name if args.out else "compaction.rules.yml"
        files.append(("--tests", args.tests, render_tests(cfg.thresholds, rule_file=rule_file)))
    try:
        write_all(files)  # every destination checked first; each written whole
    except OutputError as exc:
        _err(f"rules: {exc}")
        return 2
    if not args.out:
        sys.stdout.write(text)
    for flag, path, _ in files:
        print(f"wrote {path}" + (f" (run: promtool test rules {path})" if flag == "--tests" else ""), file=sys.stderr)
    return 0


def cmd_grafana(args: argparse.Namespace) -> int:
    from monitor.config import ConfigError, load_config

    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        return _config_error(exc)
    from alerts.grafana import render_dashboard

    from cli.outputs import OutputError, write_all

    text = render_dashboard(cfg.thresholds)
    if not args.out:
        sys.stdout.write(text)
        return 0
    try:
        write_all([("--out", args.out, text)])
    except OutputError as exc:
        _err(f"grafana: {exc}")
        return 2
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def cmd_audit(argv: list[str]) -> int:
    """The Spark audit; topic configs by the collector's rule (``AuditInputs.effective``): the admin API's,
    else the config file's; with a bootstrap server whose admin API does not give a topic's config the
    rest is unknown, Kafka's defaults (labelled so) only with no admin API at all. The brokers' cleaner
    settings and replica placement from the admin API too, under the flags (``job.cleaner_params``)."""
    from spark_analysis.job import build_parser, run

    args = build_parser(parser_class=Parser).parse_args(argv)
    from monitor.config import ConfigError, load_config
    from monitor.topicconfig import broker_cleaner_settings

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
            from collectors.admin import AdminFetcher
            from monitor.config import ClusterConfig

            fetcher = AdminFetcher(cluster or ClusterConfig(bootstrap_servers=bootstrap), timeout=10)
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


def cmd_dashboard(args: argparse.Namespace) -> int:
    import os
    import subprocess

    from cli.demo import dashboard_command

    env = dict(os.environ)
    if args.config:
        from monitor.config import ConfigError, load_config

        try:
            load_config(args.config)
        except ConfigError as exc:
            return _config_error(exc)
        env["COMPACTION_MONITOR_CONFIG"] = str(Path(args.config).resolve())
    for flag, var in (("prometheus_url", "COMPACTION_MONITOR_PROMETHEUS_URL"),
                      ("collector_url", "COMPACTION_MONITOR_COLLECTOR_URL"), ("audit_dir", "COMPACTION_MONITOR_AUDIT_DIR")):
        if getattr(args, flag):
            env[var] = getattr(args, flag)
    print(f"dashboard: http://{args.address}:{args.port}/", file=sys.stderr)
    try:
        return subprocess.run(dashboard_command(args.port, args.address), env=env).returncode
    except KeyboardInterrupt:
        return 0


def cmd_config(args: argparse.Namespace) -> int:
    """``config check FILE``: the config as the monitor reads it (defaults filled in, secrets as *** or
    as the ``${env:...}`` reference they come from), or every problem, one a line."""
    import yaml

    from monitor.config import ConfigError, parse_config, read_config_data, to_data
    from monitor.redact import literal_secrets, redacted, with_references

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


def cmd_demo(args: argparse.Namespace) -> int:
    from cli.demo import run_demo
    from dashboards.data import audit_run, records
    from localkafka.broker import BrokerError

    def partitions(run: Path) -> list[dict]:  # an audit run's partitions, read as the Audit page reads them
        return records(audit_run(str(run.parent), run.name)["partitions"])

    try:
        return run_demo(Path(args.dir), args.duration, fast=args.fast, partitions=partitions)
    except BrokerError as exc:  # the broker would not start (jars, ports, Java): said in one line, as `broker`
        _err(f"demo: {exc}")
        return 1


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
                    help="a broker log dir (an entry of log.dirs)")
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
    e.add_argument("--log-dir", type=flags.path, action="append", help="a broker log dir readable here (repeatable)")
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
    c.add_argument("--log-dir", type=flags.path, action="append", help="a broker log dir readable here (repeatable)")
    c.add_argument("--cleaner-log", type=flags.path, help="the broker's log-cleaner.log, followed through rotation")
    c.add_argument("--cluster", help="the cluster label (default: the config's, else 'default')")
    c.add_argument("--port", type=flags.port, help="listen port (default 9690; 0 picks a free one)")
    c.add_argument("--address", help="listen address (default 0.0.0.0: every interface, as Prometheus' exporters)")
    c.add_argument("--web.config.file", dest="web_config_file", metavar="FILE",
                   help="TLS and basic auth for /metrics, in Prometheus exporter-toolkit's web config format")
    c.add_argument("--once", action="store_true", help="refresh every source once, print the metrics, exit")
    c.add_argument("--granularity", choices=["topic", "partition"],
                   help="topic (default): topic aggregates, 4 series per healthy partition, 2 per healthy consumer "
                        "group's partition, and every series of an "
                        "unhealthy one; partition: every series of every partition")
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

"""Every subcommand's flags, its help and its example: ``compaction-monitor``'s parser, built from the
handlers ``cli.main`` gives it (the handlers stay beside the dispatch; this module only describes).

One family a function: the broker, the scans of log dirs and files (``cli.parser_scan``: inspect,
logdir, explain, topics lint, collect), the renderers, the audit, the dashboard and demo, the config
check. The conventions they all follow (``--bootstrap-server``, ``--log-dir``, ``--format text|json``,
``--log-level``, an example in every help, defaults shown, "did you mean") are ``cli.parsing``'s.

``leaves`` walks the result: every subcommand and action a user can run, with the parser that reads
its flags (the audit's own, ``spark_analysis.job``'s, in place of the pass-through stub here), for the
tests that hold every subcommand to the conventions and for the generated command-line reference.
"""

from __future__ import annotations

import argparse
from typing import Callable, Iterator, Mapping

from cli import flags
from cli.parser_scan import add_collect, add_explain, add_inspect, add_logdir, add_topics
from cli.parsing import Parser, add_format, add_log_level, example, leaf, subparsers

PROG = "compaction-monitor"
DESCRIPTION = "Compaction health for Apache Kafka: log-cleaner metrics, per-partition dirty ratios, tombstones."


def build_parser(handlers: Mapping[str, Callable]) -> Parser:
    """The whole command line; ``handlers``: each subcommand's function (``cli.main.HANDLERS``)."""
    from cli.version import VersionAction

    p = Parser(prog=PROG, description=DESCRIPTION, epilog=example(
        f"{PROG} explain --log-dir /var/lib/kafka/data --bootstrap-server localhost:9092 orders",
        f"{PROG} collect --bootstrap-server localhost:9092 --log-dir /var/lib/kafka/data",
        f"{PROG} COMMAND --help"))
    p.add_argument("--version", action=VersionAction, help="print the version and exit")
    add_log_level(p, top=True)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_broker(sub, handlers["broker"])
    add_inspect(sub, handlers["inspect"])
    add_logdir(sub, handlers["logdir"])
    add_explain(sub, handlers["explain"])
    add_topics(sub, handlers["topics lint"])
    add_collect(sub, handlers["collect"])
    add_render(sub, handlers["rules"], handlers["grafana"])
    add_audit(sub, handlers["audit"])
    add_dashboard(sub, handlers["dashboard"])
    add_config(sub, handlers["config"])
    add_replicas(sub, handlers["replicas compare"])
    add_demo(sub, handlers["demo"])
    for path, child in leaves(p, own_audit=False):
        if path != ("audit",):  # the audit's own parser has its --log-level (cli.audit_cmd)
            add_log_level(child, path[0])
    return p


def add_replicas(sub, handler: Callable) -> None:
    """``replicas compare``: a follower's copy of a partition against its leader's (#34 replica safety)."""
    compare_help = "the keys a follower's copy still holds that its leader deleted and cleaned away"
    compare_example = example(f"{PROG} replicas compare --leader /data/broker1/orders-0 --follower /data/broker3/orders-0",
                              f"{PROG} replicas compare --format json --leader leader/orders-0 --follower follower/orders-0")
    r = sub.add_parser("replicas", help="the replicas of a partition: compare a follower's copy with its leader's",
                       description="The replicas of a partition, read from their folders.", epilog=compare_example)
    actions = r.add_subparsers(dest="action", required=True, metavar="ACTION")
    c = leaf(actions, "compare", handler, help=compare_help, epilog=compare_example)
    c.add_argument("--leader", type=flags.path, metavar="PATH", required=True,
                   help="the leader's partition folder (TOPIC-PARTITION in its log dir, or a copy of it)")
    c.add_argument("--follower", type=flags.path, metavar="PATH", required=True,
                   help="the follower's folder of the same partition")
    add_format(c)


def kafka_version(text: str) -> str:
    """``--kafka-version``: one of the versions the launcher starts (``localkafka.jars.SUPPORTED_VERSIONS``,
    imported when the flag is given: the parser imports no edge)."""
    from localkafka.jars import BrokerError, supported

    try:
        return supported(text)
    except BrokerError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_broker(sub, handler: Callable) -> None:
    from cli.broker_cmd import DEFAULT_BROKER_DIR

    b = sub.add_parser("broker", help="run a real Kafka (KRaft) broker, or a cluster of them, on loopback",
                       description="A real Kafka (KRaft) broker, or a cluster of them, on loopback: for trying the "
                                   "monitor, its tests and the demo.",
                       epilog=example(f"{PROG} broker start", f"{PROG} broker status", f"{PROG} broker stop"))
    # One sub-parser per action, so that each takes its own arguments in any order
    # (`dump-log FILE --dir D` as well as `dump-log --dir D FILE`).
    common = Parser(add_help=False)
    common.add_argument("--dir", type=flags.path, default=str(DEFAULT_BROKER_DIR),
                        help="state, data and logs (default: %(default)s)")
    version = Parser(add_help=False)
    version.add_argument("--kafka-version", type=kafka_version, metavar="VERSION",
                         help="the broker's Kafka: one a real broker in the tests runs (docs/compatibility.md), a 3.x "
                              "one on a ZooKeeper node started and stopped with it, a 4.x one in KRaft; another is "
                              "refused, naming them (default: localkafka/pom.xml's)")
    actions = b.add_subparsers(dest="action", required=True, metavar="ACTION")
    leaf(actions, "fetch", handler, parents=[common, version], help="resolve the broker jars with Maven (once)",
         epilog=example(f"{PROG} broker fetch", f"{PROG} broker fetch --kafka-version 3.9.1"))
    st = leaf(actions, "start", handler, parents=[common, version],
              help="format storage if needed and start the broker",
              epilog=example(f"{PROG} broker start", f"{PROG} broker start --brokers 3 --security sasl_ssl --jmx-auth",
                             f"{PROG} broker start --override log.cleaner.threads=2",
                             f"{PROG} broker start --kafka-version 3.9.1"))
    st.add_argument("--override", action="append", metavar="KEY=VALUE",
                    help="an extra broker property (repeatable; the single plaintext broker only)")
    st.add_argument("--brokers", type=flags.count, default=1, metavar="N",
                    help="nodes (combined broker+controller, one controller quorum) (default: %(default)s)")
    st.add_argument("--security", choices=["plaintext", "sasl_ssl"], default="plaintext",
                    help="sasl_ssl: SCRAM-SHA-512 over TLS (a CA and keystores made with keytool), ACLs on, users "
                         "admin/monitor/blind (default: %(default)s)")
    st.add_argument("--jmx-auth", action="store_true",
                    help="the JMX exporter agents behind HTTP Basic auth (user prometheus, its password in a "
                         "mode-0600 file), as the test cluster runs them")
    leaf(actions, "stop", handler, parents=[common], help="stop the broker; keep its data and logs",
         epilog=example(f"{PROG} broker stop"))
    leaf(actions, "status", handler, parents=[common], help="print the broker's addresses",
         epilog=example(f"{PROG} broker status"))
    dl = leaf(actions, "dump-log", handler, parents=[common], help="run Kafka's own kafka-dump-log on segment files",
              epilog=example(f"{PROG} broker dump-log /var/lib/kafka/data/orders-0/00000000000000000000.log "
                             "--dump-arg=--print-data-log"))
    dl.add_argument("files", nargs="+", metavar="FILE", type=flags.path, help="segment, index or snapshot files")
    dl.add_argument("--dump-arg", dest="dump_args", action="append", default=[], metavar="ARG",
                    help="an argument passed to kafka-dump-log, e.g. --dump-arg=--print-data-log (repeatable; "
                         "default: none)")


def add_render(sub, rules: Callable, grafana: Callable) -> None:
    r = leaf(sub, "rules", rules, help="render the Prometheus alert rules from monitor.yaml's thresholds",
             epilog=example(f"{PROG} rules render --config monitor.yaml --out compaction.rules.yml "
                            "--tests compaction.tests.yml",
                            f"{PROG} rules render --format prometheusrule --out prometheusrule.yaml"))
    r.add_argument("action", choices=["render"], help="render: write the rules (the one action)")
    r.add_argument("--config", type=flags.path, metavar="FILE",
                   help="monitor.yaml (thresholds:; default: the built-in thresholds)")
    r.add_argument("--out", type=flags.path, metavar="FILE", help="write the rule file here (default: stdout)")
    r.add_argument("--tests", type=flags.path, metavar="FILE", help="also write promtool unit tests for the rules")
    r.add_argument("--format", choices=["rules", "prometheusrule"], default="rules",
                   help="rules: a Prometheus rule file; prometheusrule: the same groups as a Prometheus "
                        "Operator PrometheusRule (deploy/k8s/prometheusrule.yaml) (default: %(default)s)")

    gr = leaf(sub, "grafana", grafana,
              help="render the Grafana dashboard from the panel table and monitor.yaml's thresholds",
              epilog=example(f"{PROG} grafana render --config monitor.yaml --out compaction.json"))
    gr.add_argument("action", choices=["render"], help="render: write the dashboard (the one action)")
    gr.add_argument("--config", type=flags.path, metavar="FILE",
                    help="monitor.yaml (thresholds:; default: the built-in thresholds)")
    gr.add_argument("--out", type=flags.path, metavar="FILE", help="write the dashboard JSON here (default: stdout)")


def add_audit(sub, handler: Callable) -> None:
    """A pass-through: the audit's flags are its own parser's (``cli.audit_cmd.audit_parser``), which
    ``main`` hands every argument after ``audit``."""
    a = sub.add_parser("audit", help="Spark audit of segments, dumps or a live topic", add_help=False)
    a.add_argument("rest", nargs=argparse.REMAINDER)
    a.set_defaults(func=handler)


def add_dashboard(sub, handler: Callable) -> None:
    d = leaf(sub, "dashboard", handler, help="serve the Streamlit dashboard",
             epilog=example(f"{PROG} dashboard --config monitor.yaml",
                            f"{PROG} dashboard --prometheus-url http://localhost:9090 --audit-dir audits/"))
    d.add_argument("--config", type=flags.path, metavar="FILE",
                   help="monitor.yaml (prometheus_url, collector_url, audit_dir)")
    d.add_argument("--port", type=flags.port, default=8501, help="the dashboard's port (default: %(default)s)")
    d.add_argument("--address", type=flags.address, default="127.0.0.1",
                   help="listen address (default: %(default)s, this machine only; 0.0.0.0: every interface)")
    d.add_argument("--prometheus-url", type=flags.url, metavar="URL",
                   help="the Prometheus that scrapes the collector (default: the config's prometheus_url)")
    d.add_argument("--collector-url", type=flags.url, metavar="URL",
                   help="a collector's /metrics, read directly when there is no Prometheus (default: the "
                        "config's collector_url)")
    d.add_argument("--audit-dir", type=flags.path, metavar="DIR",
                   help="the audit runs' folder, the audit's --out (default: the config's audit_dir)")


def add_config(sub, handler: Callable) -> None:
    cf = leaf(sub, "config", handler, help="check a monitor.yaml against the schema",
              description="Check a monitor.yaml against the schema: print it as the monitor reads it (defaults "
                          "filled in, secrets as *** or their reference), or every problem, one a line (exit 2).",
              epilog=example(f"{PROG} config check /etc/compaction-monitor/monitor.yaml"))
    cf.add_argument("action", choices=["check"], help="check: read and check the file (the one action)")
    cf.add_argument("file", metavar="FILE", type=flags.path, help="monitor.yaml")


def add_demo(sub, handler: Callable) -> None:
    dm = leaf(sub, "demo", handler, help="a local broker, workload, collector, Prometheus, audit and dashboard",
              epilog=example(f"{PROG} demo", f"{PROG} demo --duration 600 --dir /tmp/demo"))
    dm.add_argument("--dir", type=flags.path, default=".compaction-monitor/demo",
                    help="where everything is kept (default: %(default)s)")
    dm.add_argument("--duration", type=flags.seconds, metavar="SECONDS",
                    help="stop after this many seconds (default: until Ctrl-C)")
    dm.add_argument("--fast", action="store_true", help="short segment and retention times (for tests)")


# ---------------------------------------------------------------- the walk


def leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), *,
           own_audit: bool = True) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every subcommand and action a user runs, ``(("broker", "start"), parser)``..., hidden aliases too
    (``("check-config",)``), with the parser that reads its flags: the audit's own for ``audit`` (unless
    ``own_audit`` is False: the pass-through stub)."""
    sub = subparsers(parser)
    if sub is None:
        if path == ("audit",) and own_audit:
            from cli.audit_cmd import audit_parser

            parser = audit_parser()
        yield path, parser
        return
    for name, child in sub.choices.items():
        yield from leaves(child, (*path, name), own_audit=own_audit)


def hidden(parser: argparse.ArgumentParser) -> set[tuple[str, ...]]:
    """The subcommands that are aliases, not listed in any help (``check-config``)."""
    out: set[tuple[str, ...]] = set()

    def walk(p, path):
        sub = subparsers(p)
        if sub is None:
            return
        listed = {a.dest for a in sub._choices_actions}
        for name, child in sub.choices.items():
            (walk(child, (*path, name)) if name in listed else out.add((*path, name)))

    walk(parser, ())
    return out

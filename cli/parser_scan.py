"""The flags of the subcommands that read a broker's files or its cluster: ``inspect``, ``logdir``,
``explain``, ``topics lint`` (and its old name ``check-config``, hidden) and ``collect``.

Apart from ``cli.parser`` because these five share most flags, given the same way in each (a log dir is
``--log-dir PATH``, repeatable; a cluster is ``--bootstrap-server``; a report is ``--format text|json``),
and they are most of the command line's flags.
"""

from __future__ import annotations

import textwrap
from typing import Callable

from cli import flags
from cli.oneshot import FAULT_EXIT, NOT_A_FAULT
from cli.parsing import add_bootstrap, add_format, add_log_dirs, example, leaf
from monitor.model.activekeys import DEFAULT_BUDGET_BYTES
from monitor.settings.roles import HELP as ROLE_HELP
from monitor.settings.roles import ROLES

PROG = "compaction-monitor"
LOG_DIR_HELP = "a broker log dir readable here, or a folder above log dirs (found within 7 levels)"
TOPIC_CONFIG_HELP = "a topic config, e.g. orders:min.cleanable.dirty.ratio=0.3 (repeatable; over the config file's)"


def exit_status(one: str) -> str:
    """The exit statuses of a command that reads log dirs, ``one`` what its exit 1 means."""
    return f"exit status: 0 nothing wrong found; 1 {one}; 2 a usage error, or a path with no log dir in it. {NOT_A_FAULT}"


def _about(help: str, one: str) -> str:
    """A subcommand's description: its help as a sentence, then its exit statuses (at 79 columns: the
    descriptions are printed as written)."""
    return f"{help[0].upper()}{help[1:]}.\n" + textwrap.fill(exit_status(one), 79)


def add_inspect(sub, handler: Callable) -> None:
    i = leaf(sub, "inspect", handler, help="print the records of segment files, dumps or partition folders",
              epilog=example(f"{PROG} inspect /var/lib/kafka/data/orders-0",
                             f"{PROG} inspect --format json 00000000000000000000.log | jq .key",
                             f"{PROG} inspect --stats /var/lib/kafka/data/orders-0"))
    i.add_argument("paths", nargs="+", metavar="PATH", type=flags.path,
                   help="a segment (.log), index or snapshot file, a kafka-dump-log output, or a partition folder")
    add_format(i, json_help="JSON Lines, one object per record, streamed (with --stats: one per total)")
    i.add_argument("--strict", action="store_true",
                   help="stop at the first corrupt batch instead of skipping it; a truncated batch at a segment's "
                        "end (the batch a live segment is being appended) counts as corrupt too")
    i.add_argument("--stats", action="store_true",
                   help="print no record: totals per file, per partition and in all")


def add_logdir(sub, handler: Callable) -> None:
    ld_help = "per-partition compaction state of broker log dirs (no broker needed)"
    ld = leaf(sub, "logdir", handler, help=ld_help,
              description=_about(ld_help, f"{FAULT_EXIT}, or the cleaner log unreadable"),
               epilog=example(f"{PROG} logdir /var/lib/kafka/data",
                              f"{PROG} logdir --log-dir /data/d1 --log-dir /data/d2 --format json"))
    ld.add_argument("paths", nargs="*", metavar="PATH", type=flags.path,
                    help=f"{LOG_DIR_HELP}; the same as --log-dir PATH")
    add_log_dirs(ld, LOG_DIR_HELP)
    add_format(ld)
    ld.add_argument("--config", type=flags.path, metavar="FILE",
                    help="monitor.yaml (topic configs under clusters[0].topics)")
    ld.add_argument("--topic-config", action="append", metavar="TOPIC:KEY=VALUE", help=TOPIC_CONFIG_HELP)
    ld.add_argument("--all", action="store_true", help="also partitions of topics not known to be compacted")
    ld.add_argument("--cleaner-log", type=flags.path, metavar="FILE",
                    help="the broker's log-cleaner.log: names uncleanable partitions and why")


def add_explain(sub, handler: Callable) -> None:
    e_help = "why each partition is (not) compacting: cause, evidence, fix, forecast"
    e = leaf(sub, "explain", handler, help=e_help,
             description=_about(e_help, f"{FAULT_EXIT}, the cluster out of reach, or the cleaner log unreadable"),
              epilog=example(f"{PROG} explain --log-dir /var/lib/kafka/data --bootstrap-server localhost:9092 "
                             "orders orders-3",
                             f"{PROG} explain --config monitor.yaml --format json"))
    e.add_argument("paths", nargs="*", metavar="TOPIC[-PARTITION]", help="topics or partitions (default: all)")
    add_log_dirs(e, LOG_DIR_HELP)
    e.add_argument("--config", type=flags.path, metavar="FILE",
                   help="monitor.yaml (log dirs, bootstrap servers, topic configs)")
    add_bootstrap(e, "the cluster: live topic configs, and the fixes' commands (default: the config's)")
    e.add_argument("--topic-config", action="append", metavar="TOPIC:KEY=VALUE", help=TOPIC_CONFIG_HELP)
    e.add_argument("--cleaner-log", type=flags.path, metavar="FILE",
                   help="the broker's log-cleaner.log: uncleanable partitions and dead threads")
    add_format(e)


def _lint_arguments(p) -> None:
    p.add_argument("topics", nargs="*", metavar="TOPIC", help="topics to check (default: every compacted topic)")
    p.add_argument("--config", type=flags.path, metavar="FILE",
                   help="monitor.yaml (bootstrap servers, client settings, log dirs)")
    add_bootstrap(p, "the cluster: live topic configs and consumer groups (default: the config's)")
    add_log_dirs(p, "a broker log dir readable here: write rates, tombstones, active segments")
    add_format(p)


def add_topics(sub, handler: Callable) -> None:
    """``topics lint``, and ``check-config``, its name in 0.1.0, hidden (it read too much like ``config
    check``, which checks the YAML file, not the topics)."""
    lint_help = "lint compacted topics' live settings against known pitfalls"
    lint_about = (f"{lint_help[0].upper()}{lint_help[1:]}.\n"
                  "A check whose input is not given is not run, and is named with the input it\n"
                  "needs: the consumer-group check needs --bootstrap-server, the tombstone and\n"
                  "segment checks --log-dir.\n"
                  "exit status: 0 every check ran on every topic and passed; 1 a finding, a check\n"
                  "not run, or the cluster out of reach; 2 a usage error.")
    lint_example = example(f"{PROG} topics lint --bootstrap-server localhost:9092",
                           f"{PROG} topics lint --bootstrap-server localhost:9092 --log-dir /var/lib/kafka/data orders")
    t = sub.add_parser("topics", help="the cluster's topics: lint their live settings",
                       description="The cluster's topics, read with the admin API.", epilog=lint_example)
    actions = t.add_subparsers(dest="action", required=True, metavar="ACTION")
    _lint_arguments(leaf(actions, "lint", handler, help=lint_help, description=lint_about, epilog=lint_example))
    _lint_arguments(leaf(sub, "check-config", handler, help=None, description=f"{lint_about}\n(The old name of "
                          f"`{PROG} topics lint`.)", epilog=lint_example))


def add_collect(sub, handler: Callable) -> None:
    c = leaf(sub, "collect", handler, help="serve compaction metrics to Prometheus",
              epilog=example(f"{PROG} collect --bootstrap-server localhost:9092 --log-dir /var/lib/kafka/data "
                             "--jmx-url http://localhost:7071/metrics",
                             f"{PROG} collect --config monitor.yaml --once"))
    c.add_argument("--config", type=flags.path, metavar="FILE",
                   help="monitor.yaml")
    add_bootstrap(c, "the cluster's admin API and consumer groups (default: the config's)")
    c.add_argument("--jmx-url", action="append", type=flags.url, metavar="URL",
                   help="a broker's JMX exporter /metrics URL (repeatable)")
    c.add_argument("--jolokia-url", action="append", type=flags.url, metavar="URL",
                   help="a broker's Jolokia base URL (repeatable)")
    c.add_argument("--jmx-url-template", type=flags.jmx_url_template, metavar="URL",
                   help="each broker's JMX exporter URL with {node_id}, filled with every broker the --log-dir "
                        "paths hold (their meta.properties), found at each refresh")
    add_log_dirs(c, LOG_DIR_HELP)
    c.add_argument("--cleaner-log", type=flags.path, metavar="FILE",
                   help="the broker's log-cleaner.log, followed through rotation")
    c.add_argument("--cluster", metavar="NAME", help="the cluster label (default: the config's, else 'default')")
    c.add_argument("--port", type=flags.port, help="listen port (default: 9690; 0 picks a free one)")
    c.add_argument("--address", type=flags.address,
                   help="listen address (default: 0.0.0.0, every interface, as Prometheus' exporters)")
    c.add_argument("--web.config.file", dest="web_config_file", metavar="FILE", type=flags.path,
                   help="TLS and basic auth for /metrics, in Prometheus exporter-toolkit's web config format")
    c.add_argument("--once", action="store_true", help=f"refresh every source once, print the metrics, exit; "
                   f"{exit_status(f'a source that failed, or {FAULT_EXIT}')}")
    c.add_argument("--role", choices=list(ROLES), help=f"which sources are read and which series exported: {ROLE_HELP}")
    c.add_argument("--state-dir", type=flags.path, metavar="DIR",
                   help="where the summary cache is kept, so a restart reads only the segments that changed "
                        "(default: the config's state_dir, else $STATE_DIRECTORY, /var/lib/compaction-monitor when "
                        "writable, else $XDG_STATE_HOME/compaction-monitor; with --once only when given)")
    c.add_argument("--granularity", choices=["topic", "partition"],
                   help="topic (default): topic aggregates, 4 series per healthy partition, 2 per healthy consumer "
                        "group's partition, and every series of an "
                        "unhealthy one; partition: every series of every partition")
    c.add_argument("--io-budget", type=flags.bytes_per_second, metavar="BYTES_PER_SECOND",
                   help="bytes per second the log-dir reads may take from a broker's disk (default: 20971520, "
                        "20 MiB/s: monitor.fileio.iobudget says why; 0: unlimited). Serving, every partition's "
                        "ratio and cause come from batch headers first, records at this pace after; --once "
                        "reads every record before it prints, at this pace")
    c.add_argument("--active-keys-budget", type=flags.byte_count, metavar="BYTES",
                   help="memory all of a broker's active segments' key sets may hold together, over the config's "
                        f"timeouts.active_segment_keys_budget_bytes (default: {DEFAULT_BUDGET_BYTES}, "
                        f"{DEFAULT_BUDGET_BYTES // 2**20} MiB: "
                        "monitor.model.activekeys says why); a partition past it has its active segment's "
                        "duplicates unknown, reason over_budget")
    c.add_argument("--topics-allow", action="append", metavar="REGEX",
                   help="export only topics whose whole name matches (repeatable; default: every topic)")
    c.add_argument("--topics-deny", action="append", metavar="REGEX",
                   help="do not export topics whose whole name matches (repeatable; wins over --topics-allow)")

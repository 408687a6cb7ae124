"""``compaction-monitor``: the one command line that wires the edges together.

Each subcommand imports its edge (collectors, Spark, Streamlit, the local
broker) lazily, inside its handler, so ``compaction-monitor inspect`` never
pays for importing PySpark and the core stays importable without them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_BROKER_DIR = Path(".compaction-monitor") / "broker"


def _err(msg: str) -> None:
    print(f"compaction-monitor: {msg}", file=sys.stderr)


# ------------------------------------------------------------------ broker


def cmd_broker(args: argparse.Namespace) -> int:
    from monitor.localkafka import broker

    progress = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    try:
        if args.action == "fetch":
            path = broker.fetch_jars(progress=progress)
            print(path)
            return 0
        if args.action == "start":
            extra = dict(kv.split("=", 1) for kv in args.override or [])
            state = broker.start(Path(args.dir), extra_config=extra, progress=progress)
            _print_state(state, alive=True)
            return 0
        if args.action == "stop":
            if not broker.stop(Path(args.dir), progress=progress):
                _err(f"no broker running from {args.dir}")
                return 1
            return 0
        if args.action == "status":
            state = broker.read_state(Path(args.dir))
            if state is None:
                _err(f"no broker state in {args.dir} (start one with `compaction-monitor broker start`)")
                return 1
            alive = broker.is_alive(state.pid)
            _print_state(state, alive=alive)
            return 0 if alive else 3
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
    print(f"log dir:     {state.log_dir}")
    print(f"logs:        {state.logs_dir} (server.log, log-cleaner.log)")


# ---------------------------------------------------------------- inspect


def cmd_inspect(args: argparse.Namespace) -> int:
    from monitor.inspect_cmd import run_inspect

    return run_inspect(args.paths, fmt=args.format, skip_corrupt=not args.strict,
                       out=sys.stdout, err=sys.stderr)


def _not_yet(name: str):
    def handler(args: argparse.Namespace) -> int:
        _err(f"`{name}` is not built yet")
        return 2

    return handler


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="compaction-monitor",
        description="Compaction health for Apache Kafka: log-cleaner metrics, per-partition dirty ratios, tombstones.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = sub.add_parser("broker", help="run a real single-node Kafka (KRaft) broker on loopback")
    b.add_argument("action", choices=["fetch", "start", "stop", "status", "dump-log"])
    b.add_argument("--dir", default=str(DEFAULT_BROKER_DIR), help="state, data and logs (default: %(default)s)")
    b.add_argument("--override", action="append", metavar="KEY=VALUE", help="extra broker property (start)")
    b.add_argument("files", nargs="*", help="segment files (dump-log)")
    b.add_argument("--dump-arg", dest="dump_args", action="append", default=[],
                   help="argument passed to kafka-dump-log, e.g. --dump-arg=--print-data-log")
    b.set_defaults(func=cmd_broker)

    i = sub.add_parser("inspect", help="print the records of segment files, dumps or partition folders")
    i.add_argument("paths", nargs="+", metavar="PATH")
    i.add_argument("--format", choices=["jsonl", "table"], default="table")
    i.add_argument("--strict", action="store_true", help="stop at the first corrupt batch instead of skipping it")
    i.set_defaults(func=cmd_inspect)

    for name, help_ in [
        ("logdir", "per-partition compaction state of one broker log dir"),
        ("collect", "serve compaction metrics to Prometheus"),
        ("audit", "Spark audit of segments, dumps or a live topic"),
        ("dashboard", "the Streamlit dashboard"),
        ("rules", "render the Prometheus alert rules"),
        ("demo", "a local broker, workload, collector, Prometheus and dashboard"),
    ]:
        s = sub.add_parser(name, help=help_)
        s.add_argument("rest", nargs=argparse.REMAINDER)
        s.set_defaults(func=_not_yet(name))
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

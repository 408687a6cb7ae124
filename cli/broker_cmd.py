"""``compaction-monitor broker start|stop|status|fetch|dump-log``: a real Kafka broker (or a cluster of
them) on loopback, from ``localkafka``; imported by the command's handler only, as every edge is."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli.common import err as _err

DEFAULT_BROKER_DIR = Path(".compaction-monitor") / "broker"


def cmd_broker(args: argparse.Namespace) -> int:
    from localkafka import broker, cluster, jars, kafkatools

    progress = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    try:
        version = args.kafka_version if args.action in ("fetch", "start") and args.kafka_version else jars.KAFKA_VERSION
        if args.action == "fetch":
            path = jars.fetch_jars(progress=progress, version=version)
            print(path)
            return 0
        if args.action == "start":
            bad = [kv for kv in args.override or [] if "=" not in kv]
            if bad:
                _err(f"--override {bad[0]!r}: expected KEY=VALUE")
                return 2
            extra = dict(kv.split("=", 1) for kv in args.override or [])
            if args.brokers != 1 or args.security != "plaintext" or args.jmx_auth:
                if extra or version != jars.KAFKA_VERSION:
                    _err(f"{'--override' if extra else '--kafka-version'} applies to the single plaintext broker only "
                         f"(a cluster runs Kafka {jars.KAFKA_VERSION})")
                    return 2
                cstate = cluster.start(Path(args.dir), brokers=args.brokers, security=args.security,
                                       jmx_auth=args.jmx_auth, progress=progress)
                _print_cluster(cstate)
                return 0
            state = broker.start(Path(args.dir), extra_config=extra, kafka_version=version, progress=progress)
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
            sys.stdout.write(kafkatools.dump_log(args.files, *args.dump_args))
            return 0
    except broker.BrokerError as exc:
        _err(str(exc))
        return 1
    return 2


def _print_state(state, alive: bool) -> None:
    print(f"status:      {'running' if alive else 'stopped'} (pid {state.pid})")
    print(f"kafka:       {state.kafka_version} ({'ZooKeeper' if state.zookeeper else 'KRaft'})")
    if state.zookeeper:
        print(f"zookeeper:   {state.zookeeper} (pid {state.zookeeper_pid}, stopped with the broker)")
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
    if cstate.jmx_username:
        print(f"jmx auth:    HTTP Basic, user {cstate.jmx_username} (password in {cstate.jmx_password_file})")
    if cstate.collect_config:
        # the client settings collect is given, as in the file: the password a reference to its file
        from localkafka.security import collect_config

        client = collect_config(cstate)["clusters"][0]["client"]
        for key, value in client.items():
            print(f"client:      {key}={value}")
        print(f"collect:     compaction-monitor collect --config {cstate.collect_config}  (mode 0600; the "
              "passwords by reference to their files)")
    for b in nodes:
        print(f"node {b.node_id}:      {'running' if broker.is_alive(b.pid) else 'stopped'} (pid {b.pid}) "
              f"{b.bootstrap} jmx {b.jmx_url} jolokia {b.jolokia_url} log dir {b.log_dir} logs {b.logs_dir}")
    return alive

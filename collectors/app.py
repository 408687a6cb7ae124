"""Wiring a config into sources and an HTTP exporter: ``collect`` and ``logdir``.

Fetching (sources) and exposing (the collectors in ``exporter``) meet only in
the ``Store``.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from dataclasses import dataclass

from boundedhttp import get_text
from prometheus_client import CollectorRegistry, generate_latest, start_http_server

from collectors.cleaner_log import CleanerLogFollower
from collectors.cleaner_metrics import jolokia_read_url, parse_exposition, parse_jolokia
from collectors.exporter import register_all
from collectors.logdirs import TRANSACTION_MAX_TIMEOUT, LogDirScanner
from collectors.runner import Runner, Source, Store
from monitor.config import ClusterConfig, Config
from monitor.lsocheck import LeaderLso
from monitor.topicconfig import effective_broker_setting, effective_config


@dataclass
class Collector:
    config: Config
    store: Store
    runner: Runner
    registry: CollectorRegistry
    closers: list

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def close(self) -> None:
        self.runner.stop()
        for c in self.closers:
            try:
                c()
            except Exception:  # noqa: BLE001
                pass


def _config_lookup(cluster: ClusterConfig, store: Store, admin_name: str | None, command_line: dict | None = None):
    """Topic configs for the log-dir scanner, by ``effective_config``'s precedence: the admin source's
    latest snapshot, the config file's topics, Kafka's defaults, then ``command_line`` overrides."""
    command_line = command_line or {}

    def lookup(topic: str, compacted: bool):
        snap = store.snapshot(admin_name) if admin_name else None
        info = snap.topics.get(topic) if snap is not None else None
        return effective_config(topic, admin=info.config if info is not None else None,
                                file=cluster.topics.get(topic), command_line=command_line.get(topic),
                                compacted=compacted)

    return lookup


def _transaction_max_timeout(cluster: ClusterConfig, store: Store, admin_name: str | None):
    """The brokers' transaction.max.timeout.ms for the log-dir scanner, by ``effective_broker_setting``'s
    precedence: the admin source's latest snapshot, the config file's value, Kafka's default."""

    def lookup():
        snap = store.snapshot(admin_name) if admin_name else None
        return effective_broker_setting(TRANSACTION_MAX_TIMEOUT,
                                        admin=snap.transaction_max_timeout_ms if snap is not None else None,
                                        file=cluster.transaction_max_timeout_ms)

    return lookup


def _leader_lso(store: Store, admin_name: str | None):
    """The leader's LSO of a partition, from the admin source's latest snapshot (ListOffsets at
    READ_COMMITTED and READ_UNCOMMITTED), for the log-dir scanner's check (``monitor.lsocheck``)."""

    def lookup(topic: str, partition: int) -> LeaderLso | None:
        snap = store.snapshot(admin_name) if admin_name else None
        info = snap.topics.get(topic) if snap is not None else None
        po = info.partitions.get(partition) if info is not None else None
        if po is None or po.stable < 0:
            return None
        return LeaderLso(po.leader, po.stable, po.latest, snap.taken_at)

    return lookup


def build_sources(config: Config, store: Store, include_all: bool = False) -> tuple[list[Source], list]:
    sources, closers = [], []
    to = config.timeouts
    for cluster in config.clusters:
        admin_name = None
        if cluster.bootstrap_servers:
            from collectors.admin import AdminFetcher

            fetcher = AdminFetcher(cluster, timeout=to.admin)
            closers.append(fetcher.close)
            admin_name = f"admin:{cluster.name}"
            sources.append(Source(admin_name, "admin", cluster.name, fetcher.topics, config.intervals.admin))
            if cluster.consumer_groups:
                groups_fetcher = AdminFetcher(cluster, timeout=to.admin)  # its own clients: its own thread
                closers.append(groups_fetcher.close)

                def groups(f=groups_fetcher, name=admin_name):
                    snap = store.snapshot(name)
                    if snap is None:
                        raise RuntimeError("no topic list yet from the admin source")
                    return f.group_lags(snap.topics)

                sources.append(Source(f"consumer_groups:{cluster.name}", "consumer_groups", cluster.name, groups,
                                      config.intervals.consumer_groups))
        for b in cluster.brokers:
            if b.jmx_url:
                def jmx(url=b.jmx_url, c=cluster):
                    return parse_exposition(get_text(url, deadline=to.jmx, max_bytes=to.max_page_bytes),
                                            c, url)

                sources.append(Source(f"jmx:{cluster.name}:{b.id}", "jmx", cluster.name, jmx, config.intervals.jmx, b.id))
            if b.jolokia_url:
                def jolokia(url=b.jolokia_url):
                    u = jolokia_read_url(url)
                    return parse_jolokia(get_text(u, deadline=to.jmx, max_bytes=to.max_page_bytes), u)

                sources.append(Source(f"jolokia:{cluster.name}:{b.id}", "jolokia", cluster.name, jolokia,
                                      config.intervals.jmx, b.id))
            if b.log_dirs:
                scanner = LogDirScanner(b.log_dirs, _config_lookup(cluster, store, admin_name), include_all=include_all,
                                        transaction_max_timeout=_transaction_max_timeout(cluster, store, admin_name),
                                        leader_lso=_leader_lso(store, admin_name), broker_id=b.id)
                sources.append(Source(f"log_dirs:{cluster.name}:{b.id}", "log_dirs", cluster.name, scanner.refresh,
                                      config.intervals.log_dirs, b.id))
            if b.cleaner_log:
                follower = CleanerLogFollower(b.cleaner_log)
                closers.append(follower.close)
                sources.append(Source(f"cleaner_log:{cluster.name}:{b.id}", "cleaner_log", cluster.name,
                                      follower.refresh, config.intervals.cleaner_log, b.id))
    return sources, closers


def build(config: Config) -> Collector:
    store = Store()
    sources, closers = build_sources(config, store)
    registry = CollectorRegistry(auto_describe=False)
    register_all(registry, store)
    return Collector(config, store, Runner(store, sources), registry, closers)


def run_collect(config: Config, *, once: bool = False, out=sys.stdout, err=sys.stderr) -> int:
    if not any(c.brokers or c.bootstrap_servers for c in config.clusters):
        print("collect: nothing to collect: give --bootstrap-servers, --jmx-url, --log-dir or a --config", file=err)
        return 2
    col = build(config)
    try:
        if once:
            # the admin source first, so log dirs and groups see the topic configs
            ok = col.runner.refresh_all()
            out.write(col.exposition().decode())
            for st in col.store.statuses():
                if not st.up:
                    print(f"collect: source {st.name} failed: {st.last_error}", file=err)
                down = getattr(st.snapshot, "down", {})
                for d, (_, reason) in down.items():
                    print(f"collect: source {st.name}: log dir {d} down: {reason}", file=err)
                ok = ok and not down
            return 0 if ok else 1
        server, thread = start_http_server(config.listen_port, config.listen_address, registry=col.registry)
        col.runner.start()
        port = server.server_address[1]
        print(f"collect: serving http://{config.listen_address}:{port}/metrics "
              f"({len(col.runner.sources)} sources)", file=err, flush=True)
        done = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: done.set())
        done.wait()
        server.shutdown()
        return 0
    finally:
        col.close()


def _read_cleaner_log(path: str, err) -> tuple[dict, bool]:
    """(topic, partition) -> Uncleanable from a whole log-cleaner.log; False when it cannot be read."""
    follower = CleanerLogFollower(path)
    try:
        snap = follower.refresh()
    except OSError as exc:
        print(f"logdir: {path}: cannot read the cleaner log: {exc.strerror or exc}", file=err)
        return {}, False
    finally:
        follower.close()
    for bad in snap.state.malformed:
        print(f"logdir: {bad}", file=err)
    if snap.state.malformed_total > len(snap.state.malformed):
        print(f"logdir: {path}: {snap.state.malformed_total} malformed lines in all", file=err)
    return snap.state.uncleanable, True


def run_logdir(paths, *, config: Config, fmt: str = "table", include_all: bool = False, out=sys.stdout,
               err=sys.stderr, topic_overrides: dict | None = None, cleaner_log: str | None = None) -> int:
    """Per-partition state of log dirs, no broker needed; with the broker's ``cleaner_log``, each row
    also says whether the cleaner marked the partition uncleanable, and why."""
    cluster = config.clusters[0] if config.clusters else ClusterConfig()
    scanner = LogDirScanner(paths, _config_lookup(cluster, Store(), None, topic_overrides), include_all=include_all,
                            transaction_max_timeout=_transaction_max_timeout(cluster, Store(), None))
    snap = scanner.refresh()
    uncleanable, log_ok = _read_cleaner_log(cleaner_log, err) if cleaner_log else ({}, True)
    for d, reason in snap.log_dir_errors.items():  # a checkpoint error already names its file and line
        print(f"logdir: {reason}" if reason.startswith(d) else f"logdir: {d}: {reason}", file=err)
    for d in snap.down:
        print(f"logdir: {d}: log dir down, none of its partitions printed", file=err)
    for p, reason in snap.partition_errors.items():
        print(f"logdir: {p}: {reason}", file=err)
    for d, folder, kind in snap.not_live:
        print(f"logdir: {d}/{folder}: not a live replica ({kind}), skipped", file=err)
    tmt = snap.transaction_max_timeout
    rows = [r.state.as_dict() | {"log_dir": r.log_dir, "config_source": r.config_source,
                                 "transaction_max_timeout_ms": tmt.value,
                                 "transaction_max_timeout_ms_source": tmt.source} for r in snap.partitions]
    if cleaner_log:
        for r in rows:
            u = uncleanable.get((r["topic"], r["partition"])) if log_ok else None
            r["uncleanable"] = None if u is None else {"exception": u.exception, "message": u.message,
                                                       "source": u.source}
    if fmt == "json":
        json.dump(rows, out, indent=2)
        out.write("\n")
    else:
        cols = [("topic", 28), ("partition", 9), ("first_dirty_offset", 12), ("clean_bytes", 12),
                ("cleanable_bytes", 12), ("cleanable_ratio", 8), ("eligible", 8), ("tombstones", 10),
                ("oldest_tombstone_age_ms", 14)]
        heads = ["topic", "part", "first dirty", "clean B", "cleanable B", "ratio", "eligible", "tombstones",
                 "oldest tomb s"]
        out.write("  ".join(h.ljust(w) for h, (_, w) in zip(heads, cols)) + "\n")
        for r in rows:
            vals = []
            for k, w in cols:
                v = r[k]
                if k == "cleanable_ratio":
                    v = f"{v:.3f}"
                elif k == "oldest_tombstone_age_ms":
                    v = "-" if v is None else f"{v / 1000:.0f}"
                vals.append(str(v)[:w].ljust(w))
            out.write("  ".join(vals) + "\n")
        for r in rows:
            if r.get("uncleanable"):
                u = r["uncleanable"]
                out.write(f"uncleanable: {r['topic']}-{r['partition']}: {u['exception']}: {u['message']} "
                          f"({u['source']}; clears on a broker restart)\n")
    fatal = all(snap.down.get(d, ("",))[0] == "io" for d in snap.log_dirs)  # no path given was a readable log dir
    return 2 if fatal else (1 if snap.log_dir_errors or snap.partition_errors or not log_ok else 0)


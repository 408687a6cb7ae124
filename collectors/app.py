"""Wiring a config into sources and an HTTP exporter: ``collect`` and ``logdir``.

Fetching (sources) and exposing (the collectors in ``exporter``) meet only in
the ``Store``.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from boundedhttp import FetchError, get_text
from prometheus_client import CollectorRegistry, generate_latest

from collectors.cleaner_log import CleanerLogFollower
from collectors.cleaner_metrics import IoSampler, jolokia_io_url, jolokia_read_url, parse_exposition, parse_jolokia
from collectors.exporter import View, register_all
from collectors.exposition import RenderedExposition
from collectors.logdir_snapshot import offsets_topic_groups
from collectors.logdirs import LogDirScanner
from collectors.runner import Runner, Source, Store
from monitor.causes import BrokerFacts, duration, unknown_cause
from monitor.kafkanames import partition_name
from monitor.config import BrokerConfig, ClusterConfig, Config
from monitor.regularfile import os_reason
from monitor.lsocheck import LeaderLso
from monitor.offsetgroups import unlisted
from monitor.streams import streams_role
from monitor.topicconfig import NOT_LISTED, admin_refusal, effective_broker_setting, effective_config
from monitor.transactions import TRANSACTION_MAX_TIMEOUT
from monitor import strictjson

log = logging.getLogger("compaction_monitor.collect")


# seconds: collectors.exposition's render thread (pure Python) yields the interpreter this often, not every
# 5 ms (CPython's default): 50 socket ping-pong threads beside one CPU-bound thread, on this machine, had
# p99 round trips of 12 ms at 1 ms against 21-48 ms at 5 ms, and twice the round trips done
SWITCH_INTERVAL = 0.001


@dataclass
class Collector:
    config: Config
    store: Store
    runner: Runner
    registry: CollectorRegistry
    closers: list
    rendered: RenderedExposition  # what /metrics serves: rendered once per refresh (the runner's hook)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def close(self) -> None:
        self.runner.stop()
        self.rendered.stop()
        for c in self.closers:
            try:
                c()
            except Exception:  # noqa: BLE001
                pass


def _config_lookup(cluster: ClusterConfig, store: Store, admin_name: str | None, command_line: dict | None = None,
                   said: set | None = None):
    """Topic configs for the log-dir scanner, by ``effective_config``'s precedence: the admin source's
    latest snapshot, the config file's topics, then ``command_line`` overrides; with an admin source that
    does not give a topic's config, the values neither gives are unknown (``admin_refusal``), never
    Kafka's defaults; with no admin source at all, Kafka's defaults, stated as such (source ``default``).
    An admin source that lists no topic at all while the log dirs hold compacted partitions is logged
    once per ``said`` (shared by the cluster's scanners; its user lacks Describe on every topic)."""
    command_line = command_line or {}
    said = set() if said is None else said

    def lookup(topic: str, compacted: bool):
        if not admin_name:
            return effective_config(topic, file=cluster.topics.get(topic), command_line=command_line.get(topic),
                                    compacted=compacted)
        snap = store.snapshot(admin_name)
        refusal = admin_refusal(snap, topic)
        info = snap.topics.get(topic) or snap.not_compacted.get(topic) if refusal is None else None
        found = effective_config(topic, admin=getattr(info, "config", info), file=cluster.topics.get(topic),
                                 command_line=command_line.get(topic), compacted=compacted, refusal=refusal)
        if refusal is not None and refusal.code == NOT_LISTED and not snap.listed and found.config.compacted \
                and cluster.name not in said:
            said.add(cluster.name)
            log.warning("cluster %s: the admin API lists no topic at all for %s, yet the log dirs hold compacted "
                        "partitions (%s, ...): their configs are unknown; grant Describe and DescribeConfigs on "
                        "the topics (see the README's ACL table)", cluster.name, snap.principal or "the client",
                        topic)
        return found

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


def _kafka_endpoint(cluster: ClusterConfig) -> str:
    """The admin API's endpoint as errors name it: bootstrap servers and security protocol (a
    SASL_PLAINTEXT client on a PLAINTEXT listener fails as a transport error, so the protocol helps)."""
    return f"bootstrap {cluster.bootstrap_servers}, {cluster.client.get('security.protocol', 'PLAINTEXT')}"


def _admin_down_why(store: Store, name: str) -> str:
    """Why the admin source has no snapshot: down with its last error, or not answered yet."""
    s = next((x for x in store.statuses() if x.name == name), None)
    if s is not None and s.last_error:
        return f"is down ({s.last_error})"
    return "has not answered yet"


def build_sources(config: Config, store: Store, include_all: bool = False) -> tuple[list[Source], list]:
    sources, closers = [], []
    to = config.timeouts
    for cluster in config.clusters:
        admin_name, said = None, set()
        if cluster.bootstrap_servers:
            from collectors.admin import AdminFetcher

            fetcher = AdminFetcher(cluster, timeout=to.admin)
            closers.append(fetcher.close)
            admin_name = f"admin:{cluster.name}"
            sources.append(Source(admin_name, "admin", cluster.name, fetcher.topics, config.intervals.admin,
                                  endpoint=_kafka_endpoint(cluster)))
            if cluster.consumer_groups:
                groups_fetcher = AdminFetcher(cluster, timeout=to.admin)  # its own clients: its own thread
                closers.append(groups_fetcher.close)

                def groups(f=groups_fetcher, name=admin_name, endpoint=_kafka_endpoint(cluster)):
                    snap = store.snapshot(name)
                    if snap is None:  # the groups' topics and offsets are read against the admin source's list
                        raise FetchError(endpoint, "admin_down", f"no topic list: the admin source {name} "
                                         f"{_admin_down_why(store, name)}")
                    return f.group_lags(snap.topics, snap.taken_at)

                sources.append(Source(f"consumer_groups:{cluster.name}", "consumer_groups", cluster.name, groups,
                                      config.intervals.consumer_groups, endpoint=_kafka_endpoint(cluster)))
        for b in cluster.brokers:
            if b.jmx_url:
                def jmx(url=b.jmx_url, c=cluster, b=b, sampled=IoSampler()):
                    return sampled(parse_exposition(get_text(url, deadline=to.jmx, max_bytes=to.max_page_bytes,
                                                             auth=jmx_credentials(b, url), ca_file=b.jmx_ca_file),
                                                    c, url))

                sources.append(Source(f"jmx:{cluster.name}:{b.id}", "jmx", cluster.name, jmx, config.intervals.jmx, b.id,
                                      endpoint=b.jmx_url))
            if b.jolokia_url:
                def jolokia(url=b.jolokia_url, b=b, sampled=IoSampler()):
                    u = jolokia_read_url(url)
                    auth = jmx_credentials(b, url)
                    page = get_text(u, deadline=to.jmx, max_bytes=to.max_page_bytes, auth=auth, ca_file=b.jmx_ca_file)
                    try:  # the throttler's count is extra: the gauges stand without it
                        io = get_text(jolokia_io_url(url), deadline=to.jmx, max_bytes=to.max_page_bytes,
                                      auth=auth, ca_file=b.jmx_ca_file)
                    except FetchError:
                        io = None
                    return sampled(parse_jolokia(page, u, io))

                sources.append(Source(f"jolokia:{cluster.name}:{b.id}", "jolokia", cluster.name, jolokia,
                                      config.intervals.jmx, b.id, endpoint=b.jolokia_url))
            if b.log_dirs:
                scanner = LogDirScanner(b.log_dirs, _config_lookup(cluster, store, admin_name, said=said),
                                        include_all=include_all,
                                        transaction_max_timeout=_transaction_max_timeout(cluster, store, admin_name),
                                        leader_lso=_leader_lso(store, admin_name), broker_id=b.id,
                                        active_key_max_bytes=to.active_segment_key_read_bytes,
                                        active_key_max_keys=to.active_segment_max_keys, say_faults=True)
                sources.append(Source(f"log_dirs:{cluster.name}:{b.id}", "log_dirs", cluster.name, scanner.refresh,
                                      config.intervals.log_dirs, b.id))
            if b.cleaner_log:
                follower = CleanerLogFollower(b.cleaner_log)
                closers.append(follower.close)
                sources.append(Source(f"cleaner_log:{cluster.name}:{b.id}", "cleaner_log", cluster.name,
                                      follower.refresh, config.intervals.cleaner_log, b.id))
    return sources, closers


def jmx_credentials(broker: BrokerConfig, endpoint: str) -> tuple[str, str] | None:
    """(user, password) for the broker's JMX exporter / Jolokia endpoint; None without ``jmx_username``.
    ``jmx_password`` is a secret reference (``monitor.secrets``) resolved now, at every fetch, so a rotated
    secret file is picked up at the next one. A password that cannot be had puts the source down
    (``source_errors_total{error="credentials"}``) naming the reference, never a value."""
    from monitor.secrets import SecretError, resolve_string

    if not broker.jmx_username:
        if broker.jmx_password:
            raise FetchError(endpoint, "credentials", "jmx_password given without jmx_username")
        return None
    if not broker.jmx_password:
        raise FetchError(endpoint, "credentials", "jmx_username needs jmx_password (${env:NAME}, "
                                                  "${directory:DIR:NAME} or ${file:PATH:KEY})")
    try:
        return broker.jmx_username, resolve_string(broker.jmx_password)
    except SecretError as exc:
        raise FetchError(endpoint, "credentials", f"jmx_password: {exc}") from None


class HiddenGroupsNotice:
    """A runner hook: logs, once per cluster and per change of the counts, when ListGroups gives fewer
    groups than ``__consumer_offsets`` in the log dirs read holds live committed offsets for
    (``monitor.offsetgroups``). ListGroups leaves out, with no error, every group the principal may not
    Describe: without this the groups' lag series would be silently absent."""

    def __init__(self, store: Store):
        self.store = store
        self._said: dict[str, tuple | None] = {}
        self._lock = threading.Lock()  # the hook runs on every source's thread

    def __call__(self) -> None:
        statuses = self.store.statuses()
        for st in statuses:
            if st.kind != "consumer_groups" or st.snapshot is None or st.snapshot.listed is None:
                continue
            known = offsets_topic_groups(x.snapshot for x in statuses if x.kind == "log_dirs"
                                         and x.cluster == st.cluster and x.snapshot is not None)
            hidden = unlisted(known, st.snapshot.listed)
            if hidden is None:
                continue
            state = (len(st.snapshot.listed), len(known), len(hidden)) if hidden else None
            with self._lock:
                if self._said.get(st.cluster) == state:
                    continue
                self._said[st.cluster] = state
            if state is None:
                continue
            admin = next((x.snapshot for x in statuses if x.kind == "admin" and x.cluster == st.cluster
                          and x.snapshot is not None), None)
            log.warning("cluster %s: ListGroups gives %d consumer group(s) to %s, yet __consumer_offsets in the "
                        "log dirs read holds live committed offsets of %d group(s), %d of them not listed (%s, ...): "
                        "their lag is not exported; grant Describe on the GROUP resources (the README's "
                        "least-privilege section has the kafka-acls command)", st.cluster, state[0],
                        getattr(admin, "principal", "") or "the client", state[1], state[2], min(hidden))


def build(config: Config) -> Collector:
    store = Store()
    sources, closers = build_sources(config, store)
    registry = CollectorRegistry(auto_describe=False)
    register_all(registry, store, view=View.of(config))
    rendered = RenderedExposition(registry)
    runner = Runner(store, sources, on_refresh=[HiddenGroupsNotice(store), rendered.invalidate])
    return Collector(config, store, runner, registry, closers, rendered)


def run_collect(config: Config, *, once: bool = False, out=sys.stdout, err=sys.stderr, web=None) -> int:
    """``collect``: once (print the exposition) or serving /metrics, over TLS and basic auth when ``web``
    (a ``collectors.webconfig.WebConfig``) says so; a web config whose keys cannot be loaded stops it here,
    before any source starts (exit 2)."""
    from collectors import webserver
    from collectors.webconfig import WebConfigError

    if not any(c.brokers or c.bootstrap_servers for c in config.clusters):
        print("collect: nothing to collect: give --bootstrap-servers, --jmx-url, --log-dir or a --config", file=err)
        return 2
    try:
        ctx, auth = webserver.prepare(web)
    except WebConfigError as exc:
        print(f"collect: web config error: {exc}", file=err)
        return 2
    col = build(config)
    try:
        if once:
            # the admin source first, so log dirs and groups see the topic configs
            ok = col.runner.refresh_all()
            out.write(col.exposition().decode())
            for st in col.store.statuses():
                if not st.up:
                    # the endpoint named (its password masked) unless the error already does
                    at = f" ({st.endpoint})" if st.endpoint and st.endpoint not in (st.last_error or "") else ""
                    print(f"collect: source {st.name}{at} failed: {st.last_error}", file=err)
                also = getattr(st.snapshot, "also_on_page", ()) if st.kind == "jmx" else ()
                if also:
                    print(f"collect: source {st.name}: the page carries the {st.snapshot.shape} and "
                          f"{' and '.join(also)} shapes; read {st.snapshot.shape} (rule-named before catch-all, "
                          "always)", file=err)
                down = getattr(st.snapshot, "down", {})
                for d, (_, reason) in down.items():
                    print(f"collect: source {st.name}: log dir {d} down: {reason}", file=err)
                ok = ok and not down
            return 0 if ok else 1
        _serving_log(err)
        col.rendered.start()  # a first page (every source down) before any refresh, then one per refresh
        # the render thread is pure Python; the scrape threads wait on the GIL for at most this, not 5 ms
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            server = webserver.start(col.rendered, config.listen_address, config.listen_port, ctx, auth)
        except OSError as exc:
            print(f"collect: cannot listen on {config.listen_address}:{config.listen_port}: {exc.strerror or exc}",
                  file=err)
            return 2
        col.runner.start()
        port = server.server_address[1]
        scheme = "https" if ctx else "http"
        guard = f", basic auth ({len(auth.users)} user(s))" if auth else ""
        print(f"collect: serving {scheme}://{config.listen_address}:{port}/metrics "
              f"({len(col.runner.sources)} sources{guard})", file=err, flush=True)
        done = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: done.set())
        done.wait()
        server.shutdown()
        server.server_close()
        return 0
    finally:
        col.close()


def _serving_log(err) -> None:
    """Serving, the log lines (sources' state changes, librdkafka's own lines) go to ``err`` with their
    time and logger, unless the embedding program set up logging itself (a handler on the root logger)."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(err)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)  # the root logger's level stays (WARNING unless set)


def _read_cleaner_log(path: str, err, prog: str):
    """What a whole log-cleaner.log says (``CleanerLogState``), problems printed naming file and line;
    None when it cannot be read."""
    follower = CleanerLogFollower(path)
    try:
        snap = follower.refresh()
    except OSError as exc:
        print(f"{prog}: {path}: cannot read the cleaner log: {os_reason(exc)}", file=err)
        return None
    finally:
        follower.close()
    for bad in snap.state.malformed:
        print(f"{prog}: {bad}", file=err)
    if snap.state.malformed_total > len(snap.state.malformed):
        print(f"{prog}: {path}: {snap.state.malformed_total} malformed lines in all", file=err)
    return snap.state


def _scan_once(paths, config: Config, topic_overrides: dict | None, err, prog: str, admin=None,
               include_all: bool = False, admin_error: str | None = None):
    """One refresh of a scanner over ``paths`` (``logdir``, ``explain``), with every problem printed to
    ``err`` naming the log dir, file or partition. ``admin``: an admin source's snapshot, for topic configs;
    ``admin_error``: the admin API was asked and failed (the configs it would give are unknown)."""
    cluster = config.clusters[0] if config.clusters else ClusterConfig()
    store, admin_name = Store(), None
    if admin is not None or admin_error is not None:
        admin_name = "admin"
        store.register(admin_name, "admin", cluster.name)
        if admin is not None:
            store.success(admin_name, admin, 0.0, 0.0)
        else:
            store.failure(admin_name, RuntimeError(admin_error), 0.0)
    named: list[str] = []  # names Kafka would not create or load (monitor.kafkanames), one line each
    scanner = LogDirScanner(paths, _config_lookup(cluster, store, admin_name, topic_overrides), include_all=include_all,
                            transaction_max_timeout=_transaction_max_timeout(cluster, store, admin_name),
                            notify=named.append)
    snap = scanner.refresh()
    for line in named:  # a duplicate folder that is a partition's fault is printed with the partition's below
        if line not in snap.partition_errors.values():
            print(f"{prog}: {line}", file=err)
    for d, reason in snap.log_dir_errors.items():  # a checkpoint error already names its file and line
        print(f"{prog}: {reason}" if reason.startswith(d) else f"{prog}: {d}: {reason}", file=err)
    for d in snap.down:
        print(f"{prog}: {d}: log dir down, none of its partitions printed", file=err)
    for (topic, p), reason in snap.partition_errors.items():
        print(f"{prog}: {topic}-{p}: {reason}", file=err)
    for d, folder, kind in snap.not_live:
        print(f"{prog}: {d}/{folder}: not a live replica ({kind}), skipped", file=err)
    return snap


def _exit_code(snap, cleaner_ok: bool = True) -> int:
    fatal = all(snap.down.get(d, ("",))[0] == "io" for d in snap.log_dirs)  # no path given was a readable log dir
    return 2 if fatal else (1 if snap.log_dir_errors or snap.partition_errors or not cleaner_ok else 0)


def run_logdir(paths, *, config: Config, fmt: str = "table", include_all: bool = False, out=sys.stdout,
               err=sys.stderr, topic_overrides: dict | None = None, cleaner_log: str | None = None) -> int:
    """Per-partition state of log dirs, no broker needed; each row with its cause (``monitor.causes``);
    with the broker's ``cleaner_log``, each row also says whether the cleaner marked the partition
    uncleanable, and why."""
    snap = _scan_once(paths, config, topic_overrides, err, "logdir", include_all=include_all)
    cleaner = _read_cleaner_log(cleaner_log, err, "logdir") if cleaner_log else None
    tmt = snap.transaction_max_timeout
    rows = []
    for r in snap.partitions:
        cause = r.cause(snap.taken_at, one_shot=True, cleaner=cleaner).as_dict()
        del cause["topic"], cause["partition"]
        row = r.state.as_dict() | {"log_dir": r.log_dir, "config_source": r.config_source,
                                   "transaction_max_timeout_ms": tmt.value,
                                   "transaction_max_timeout_ms_source": tmt.source, "cause": cause,
                                   "leftover_files": [x.as_dict(int(snap.taken_at * 1000)) for x in r.leftovers],
                                   "clean_needed_bytes": r.clean_needed_bytes,
                                   "streams_role": streams_role(r.state.topic)}
        if cleaner_log:
            u = cleaner.uncleanable.get((r.state.topic, r.state.partition)) if cleaner is not None else None
            row["uncleanable"] = None if u is None else {"exception": u.exception, "message": u.message,
                                                         "source": u.source}
        rows.append(row | {"fault": None})
    rows += _fault_rows(snap)
    if fmt == "json":
        strictjson.dump(rows, out, indent=2)
        out.write("\n")
    else:
        cols = [("topic", 28), ("partition", 9), ("first_dirty_offset", 12), ("clean_bytes", 12),
                ("cleanable_bytes", 12), ("cleanable_ratio", 8), ("eligible", 8), ("tombstones", 10),
                ("oldest_tombstone_age_ms", 14), ("cause", 20), ("streams_role", 11)]
        heads = ["topic", "part", "first dirty", "clean B", "cleanable B", "ratio", "eligible", "tombstones",
                 "oldest tomb s", "cause", "streams"]
        out.write("  ".join(h.ljust(w) for h, (_, w) in zip(heads, cols)) + "\n")
        for r in rows:
            vals = []
            for k, w in cols:
                v = r.get(k)
                if v is None and r["fault"] and k != "cause":
                    v = "-"  # a faulted partition: its figures are unknown (the fault line below says why)
                elif k == "cleanable_ratio":
                    v = f"{v:.3f}"
                elif k == "oldest_tombstone_age_ms":
                    v = "-" if v is None else f"{v / 1000:.0f}"
                elif k == "cause":
                    v = v["cause"]
                vals.append(str(v)[:w].ljust(w))
            out.write("  ".join(vals) + "\n")
        for r in rows:
            if r["fault"]:
                out.write(f"fault: {r['topic']}-{r['partition']}: {r['fault']}\n")
            if r.get("uncleanable"):
                u = r["uncleanable"]
                out.write(f"uncleanable: {r['topic']}-{r['partition']}: {u['exception']}: {u['message']} "
                          f"({u['source']}; clears on a broker restart)\n")
        _open_transactions_table(rows, out)
        _leftovers_table(rows, out)
        _space_lines(snap, out)
    return _exit_code(snap, cleaner_ok=cleaner is not None or not cleaner_log)


def _fault_rows(snap) -> list[dict]:
    """A row for each partition whose state could not be computed (a segment unreadable or vanished, a
    checkpoint entry that cannot be right): reported with its fault, its figures unknown, never left out."""
    rows = []
    read = {(r.state.topic, r.state.partition) for r in snap.partitions}
    for tp, reason in snap.partition_errors.items():
        if tp in read:
            continue  # a partition read with a fault (a .txnindex that disagrees) has its row, faults counted
        topic, p = tp
        cause = unknown_cause(topic, p, reason).as_dict()
        del cause["topic"], cause["partition"]
        rows.append({"topic": topic, "partition": p, "log_dir": None, "fault": reason, "cause": cause,
                     "streams_role": streams_role(topic)})
    return rows


def _space_lines(snap, out) -> None:
    """Each log dir's free space against the room its largest clean needs (``monitor.diskspace``)."""
    for sp in snap.space:
        if sp.error:
            out.write(f"free space: {sp.error}\n")
            continue
        need = "no compacted segment to clean" if sp.need is None else (
            f"the largest clean needs {sp.need.bytes} B ({sp.need.topic}-{sp.need.partition}): "
            + ("room for it" if sp.room_for_clean else "NO ROOM: the cleaner's copy would fail and the broker "
               "would take this log dir offline"))
        out.write(f"free space: {sp.log_dir}: {sp.free_bytes} B free; {need}\n")


def _leftovers_table(rows, out) -> None:
    """Kafka's temporary files left behind (``monitor.logdir.Leftover``), one line each, when there are any."""
    for r in rows:
        for x in r.get("leftover_files") or ():
            out.write(f"leftover: {r['log_dir']}/{r['topic']}-{r['partition']}/{x['file']}: {x['kind']}, "
                      f"{x['bytes']} B, unchanged {x['unchanged_ms'] / 1000:.0f} s (> file.delete.delay.ms; "
                      "the broker removes or completes it on its next start)\n")


def parse_selectors(selectors, topics) -> tuple[set, set, list]:
    """``TOPIC`` or ``TOPIC-PARTITION`` (topic names may hold ``-``: a whole topic name wins) against the
    topics found; returns (topics, (topic, partition) pairs, selectors that match nothing)."""
    whole, parts, missing = set(), set(), []
    for sel in selectors:
        if sel in topics:
            whole.add(sel)
            continue
        tp = partition_name(sel)  # as Kafka reads a folder name: "orders-03" is orders-3
        if tp is not None and tp.topic in topics:
            parts.add((tp.topic, tp.partition))
        else:
            missing.append(sel)
    return whole, parts, missing


def run_explain(selectors, *, config: Config, log_dirs, fmt: str = "text", bootstrap: str | None = None,
                topic_overrides: dict | None = None, admin=None, cleaner_log: str | None = None, out=sys.stdout,
                err=sys.stderr, admin_error: str | None = None) -> int:
    """``explain``: each selected partition's one cause, with evidence, fix and forecast. One read of the
    log dirs: the write rate is the one-shot estimate from each dirty section, and how long a partition has
    been eligible is unknown (the collector measures both)."""
    snap = _scan_once(log_dirs, config, topic_overrides, err, "explain", admin=admin, admin_error=admin_error)
    cleaner = _read_cleaner_log(cleaner_log, err, "explain") if cleaner_log else None
    topics = {r.state.topic for r in snap.partitions} | {t for t, _ in snap.partition_errors}
    whole, parts, missing = parse_selectors(selectors, topics)
    for sel in missing:
        print(f"explain: {sel}: no such compacted topic or partition in {', '.join(map(str, log_dirs))}", file=err)
    chosen = [r for r in snap.partitions
              if not selectors or r.state.topic in whole or (r.state.topic, r.state.partition) in parts]
    broker = _admin_broker_facts(admin, log_dirs)
    causes = [(r.log_dir, r.cause(snap.taken_at, bootstrap=bootstrap, one_shot=True, cleaner=cleaner, broker=broker))
              for r in chosen]
    for tp, reason in snap.partition_errors.items():  # unreadable partitions have no state: unknown
        topic, p = tp
        if not any(c.topic == topic and c.partition == p for _, c in causes) and (
                not selectors or topic in whole or tp in parts):
            causes.append((None, unknown_cause(topic, p, reason)))
    causes.sort(key=lambda x: (x[1].topic, x[1].partition))
    if fmt == "json":
        strictjson.dump([c.as_dict() | {"log_dir": d} for d, c in causes], out, indent=2)
        out.write("\n")
    else:
        for d, c in causes:
            out.write(format_cause(c, d) + "\n")
    if missing:
        return 2
    return _exit_code(snap, cleaner_ok=cleaner is not None or not cleaner_log)


def _admin_broker_facts(admin, log_dirs) -> BrokerFacts | None:
    """log.cleaner.enable and log.cleaner.threads of the broker whose log dirs these are (its node.id
    from meta.properties), from an admin snapshot; None without either."""
    if admin is None:
        return None
    from monitor.logdir import meta_node_id, read_meta_properties

    node = next((nid for nid in (meta_node_id(read_meta_properties(Path(d) / "meta.properties"))
                                 for d in log_dirs) if nid), None)
    enabled = admin.cleaner_setting(node, "log.cleaner.enable") if node else None
    threads = admin.cleaner_setting(node, "log.cleaner.threads") if node else None
    if enabled is None and threads is None:
        return None
    return BrokerFacts(cleaner_enabled=enabled.value if enabled else None,
                       cleaner_threads=threads.value if threads else None)


def format_cause(c, log_dir: str | None) -> str:
    """A cause for a person: the sentence, the evidence that matters, the fix and the forecast."""
    ev = c.evidence
    lines = [f"{c.topic}-{c.partition}" + (f"  ({log_dir})" if log_dir else ""),
             f"  cause:     {c.cause}", f"  why:       {c.summary}"]
    if "first_dirty_offset" in ev:
        def fmt(v, spec=""):  # a figure made from a topic config that is unknown: "unknown"
            return "unknown" if v is None else format(v, spec)

        lines.append(f"  offsets:   log start {ev['log_start_offset']}, first dirty {ev['first_dirty_offset']} "
                     f"(checkpoint {ev['checkpoint_offset']}), first uncleanable {fmt(ev['first_uncleanable_offset'])} "
                     f"({fmt(ev['uncleanable_reason'])}), last stable {ev['last_stable_offset']}, "
                     f"log end {ev['log_end_offset']}")
        lines.append(f"  sizes:     clean {ev['clean_bytes']} B, cleanable {fmt(ev['cleanable_bytes'])} B, uncleaned "
                     f"{ev['uncleaned_bytes']} B (cleanable ratio {fmt(ev['cleanable_ratio'], '.3f')}, "
                     f"min.cleanable.dirty.ratio {fmt(ev['min_cleanable_dirty_ratio'], 'g')}); active segment "
                     f"{ev['active_segment']}")
    for k, v in ev.items():
        if k in ("configs",) and v:
            lines.append("  configs:   " + ", ".join(f"{n}={'unknown' if x['value'] is None else x['value']} "
                                                 f"({x['source']})" for n, x in v.items()))
        elif k == "leftover_files" and v:
            for x in v:
                lines.append(f"  leftover:  {x['file']} ({x['kind']}, {x['bytes']} B, unchanged "
                             f"{duration(x['unchanged_ms'])}; removed or completed by the broker on its next start)")
        elif k == "transaction" and v:
            lines.append(f"  txn:       producer {v['producer_id']} epoch {v['producer_epoch']} from offset "
                         f"{v['first_offset']}, age {duration(v['age_ms'])}")
        elif k in ("exception", "message", "cleaner_log", "dead_threads", "cleaner_threads", "cleaner_enabled",
                   "last_error", "first_fault", "reason",
                   "held_from_segment", "compaction_delay_ms") and v is not None:
            lines.append(f"  {k + ':':<10} {v}")
    for i, fix in enumerate(c.fix):
        lines.append(f"  {'fix:' if i == 0 else '':<10} {fix}")
    names = {"threshold": "ratio above min.cleanable.dirty.ratio", "next_clean_due": "next clean due",
             "active_segment_roll": "active segment rolls"}
    for k, label in names.items():
        f = c.forecast[k]
        when = ("unknown" if f["at_ms"] is None else "now" if f["in_seconds"] == 0
                else f"in {duration(f['in_seconds'] * 1000)}")
        lines.append(f"  forecast:  {label}: {when} ({f['reason']})")
    lines.append(f"  rate:      {c.forecast['write_rate_basis']}")
    for k, why in c.unchecked.items():
        lines.append(f"  unchecked: {k} ({why})")
    return "\n".join(lines)


def _open_transactions_table(rows: list[dict], out) -> None:
    """Below the partition table, one line per open transaction (from ``PartitionState.as_dict``),
    with whether it hangs (open longer than transaction.max.timeout.ms)."""
    txns = [(r, t) for r in rows for t in r.get("open_transactions") or ()]
    if not txns:
        return
    out.write("\nopen transactions (hanging: open longer than transaction.max.timeout.ms)\n")
    heads = [("partition", 34), ("producer id", 12), ("epoch", 6), ("first offset", 13), ("age s", 9), ("hanging", 7)]
    out.write("  ".join(h.ljust(w) for h, w in heads) + "\n")
    for r, t in txns:
        age = "-" if t["age_ms"] is None else f"{t['age_ms'] / 1000:.0f}"
        vals = [f"{r['topic']}-{r['partition']}", t["producer_id"], t["producer_epoch"], t["first_offset"], age,
                "yes" if t["hanging"] else "no"]
        out.write("  ".join(str(v)[:w].ljust(w) for v, (_, w) in zip(vals, heads)) + "\n")


def run_check_config(config: Config, *, fmt: str = "text", topics=(), out=sys.stdout, err=sys.stderr) -> int:
    """``check-config``: one refresh of the first cluster's sources (the admin API for the live configs
    and consumer groups, the log dirs given for write rates, tombstones and active segments), then the
    review (``monitor.configreview``). 0: every check passed; 1: a pitfall found; 2: no live configs."""
    from collectors.review import topic_facts
    from monitor.configreview import format_review, review

    cluster = config.clusters[0] if config.clusters else None
    if cluster is None or not cluster.bootstrap_servers:
        print("check-config: no bootstrap server: the live topic configs come from the admin API", file=err)
        return 2
    col = build(replace(config, clusters=(cluster,)))
    try:
        col.runner.refresh_all()
        for st in col.store.statuses():
            if not st.up:
                print(f"check-config: source {st.name} failed: {st.last_error}", file=err)
        statuses = col.store.statuses()
        if not any(st.kind == "admin" and st.snapshot is not None for st in statuses):
            return 2
        facts = topic_facts(statuses, cluster.name, time.time())
    finally:
        col.close()
    if topics:
        missing = sorted(set(topics) - {f.topic for f in facts})
        for t in missing:
            print(f"check-config: {t}: no such compacted topic on {cluster.bootstrap_servers}", file=err)
        facts = [f for f in facts if f.topic in topics]
        if missing:
            return 2
    result = review(facts, bootstrap=cluster.bootstrap_servers)
    if fmt == "json":
        strictjson.dump(result.as_dict(), out, indent=2, default=str)
        out.write("\n")
    else:
        out.write(format_review(result) + "\n")
    return 0 if result.passed else 1

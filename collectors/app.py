"""Wiring a config into sources and an HTTP exporter (``collect``), and a one-shot scan of log dirs.

Fetching (sources) and exposing (the collectors in ``exporter``) meet only in
the ``Store``. The text of ``logdir``, ``explain`` and ``topics lint`` is the CLI's (``cli/``), made
from the facts (``collectors.export.facts``) of a ``scan_once`` or of one refresh of ``build``'s sources.
"""

from __future__ import annotations

import logging
import signal
from functools import partial
import sys
import threading
import time
from dataclasses import dataclass

from boundedhttp import FetchError, get_text
from prometheus_client import CollectorRegistry, generate_latest

from collectors.logdirs.cleaner_log import CleanerLogFollower
from collectors.jmx.gauges import IoSampler, jolokia_io_url, jolokia_read_url, parse_jolokia
from collectors.export.exporter import View, register_all
from collectors.export.exposition import RenderedExposition
from collectors.export.facts import offsets_groups
from collectors.jmx.pages import jmx_credentials, jmx_source
from collectors.jmx.template import TemplatedJmx
from collectors.logdirs.brokers import FollowedBrokers
from collectors.logdirs.paths import split_by_broker, split_nodes
from collectors.logdirs.scanner import LogDirScanner
from collectors.serving.refresh_log import RefreshLog, startup_line
from collectors.logdirs.summary_state import SummaryState, cache_name, default_state_dir
from monitor.fileio.iobudget import IoBudget
from monitor.fileio.regularfile import os_reason
from monitor.model.transactions import TRANSACTION_MAX_TIMEOUT
from collectors.serving.runner import Runner, Source, Store, refresh_once
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from monitor.settings.roles import BROKER, BROKER_SOURCES, CLUSTER
from monitor.model.lsocheck import LeaderLso
from monitor.kafka.offsetgroups import unlisted
from monitor.model.topicconfig import NOT_LISTED, admin_refusal, effective_broker_setting, effective_config
from monitor.contract.sourcekinds import ADMIN, CLEANER_LOG, GROUPS, JMX, JOLOKIA, LOG_DIRS

log = logging.getLogger("compaction_monitor.collect")


# seconds: collectors.export.exposition's render thread (pure Python) yields the interpreter this often, not every
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

    def second_sample(self, gap: float | None = None) -> bool:
        """For a one-shot (``collect --once``, ``topics lint``): a second log-end-offset sample, ``gap``
        seconds after the first, when a group's time lag could not be read from its record (compacted away,
        or Read refused) and one sample cannot date it: the admin and consumer-groups sources refreshed once
        more, so the lag is interpolated (or extrapolated) from the log end's progress between the two, as
        the collector does between refreshes. Without it a group days behind on a cleaned topic could not be
        judged in one read (issue 41: lint passed it while ConsumerMayMissTombstones fired). True when taken."""
        from collectors.admin.groups import SAMPLE_GAP_SECONDS, undated

        if not any(undated(st.snapshot) for st in self.store.statuses() if st.kind == GROUPS):
            return False
        time.sleep(SAMPLE_GAP_SECONDS if gap is None else gap)  # a rate needs two points in time: the log end offsets' progress over the gap
        for kind in (ADMIN, GROUPS):  # the admin source first: the groups read its offsets
            for src in [x for x in self.runner.sources if x.kind == kind]:
                refresh_once(self.store, src)
        return True

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
                        "the topics (see docs/security.md's ACL table)", cluster.name, snap.principal or "the client",
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
    READ_COMMITTED and READ_UNCOMMITTED), for the log-dir scanner's check (``monitor.model.lsocheck``)."""

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


def _read_suffix(config: Config, cluster: ClusterConfig) -> str:
    """The admin API's sources of a broker-role collector are named after its brokers (``admin:prod:1``):
    it reads them for its own judgements only, and its ``source_up`` must not be the cluster role's series."""
    if config.role != BROKER:
        return ""
    return ":" + "+".join(b.id for b in cluster.brokers if any(getattr(b, k) for k in BROKER_SOURCES))


def scanner_source(config: Config, store: Store, cluster: ClusterConfig, b: BrokerConfig, label: str | None, node, *,
                   admin_name: str | None, said: set, include_all: bool = False, state_dir: str | None = None,
                   headers_first: bool = False) -> Source:
    """The log-dir source of one broker found under ``b``'s paths (``collectors.logdirs.paths.split_nodes``:
    its ``label``, and the ``node`` filter of its scanner), with its summary cache file in ``state_dir`` and
    its I/O budget: one definition for the sources built at the start and those a broker found later gets
    (``collectors.logdirs.brokers``). ``label`` None: paths holding no broker yet (series with no broker)."""
    to = config.timeouts
    scanner = LogDirScanner(b.log_dirs, _config_lookup(cluster, store, admin_name, said=said), include_all=include_all,
                            transaction_max_timeout=_transaction_max_timeout(cluster, store, admin_name),
                            leader_lso=_leader_lso(store, admin_name), broker_id=label,
                            active_key_max_bytes=to.active_segment_key_read_bytes,
                            active_key_max_keys=to.active_segment_max_keys,
                            active_key_budget_bytes=to.active_segment_keys_budget_bytes, say_faults=True, node=node,
                            state=SummaryState(state_dir, cache_name(cluster.name, label, b.log_dirs))
                            if state_dir and label is not None else None,
                            headers_first=headers_first, io_budget=IoBudget(config.io_budget_for(b)),
                            serves=lambda nodes: (label, node) in split_nodes(b.id, nodes))
    name = f"log_dirs:{cluster.name}:{label}" if label is not None else f"log_dirs:{cluster.name}"
    # serving (headers first): the record pass on a thread of its own, started and joined with the source's
    return Source(name, LOG_DIRS, cluster.name, scanner.refresh, config.intervals.log_dirs, label,
                  busy=scanner.busy, start=scanner.start_records if headers_first else None,
                  stop=scanner.stop_records)


def build_sources(config: Config, store: Store, include_all: bool = False,
                  state_dir: str | None = None, headers_first: bool = False,
                  scanners: dict | None = None) -> tuple[list[Source], list]:
    """The sources of ``config``'s role (``monitor.settings.roles``): the cluster role reads the admin API
    only; the broker role its brokers' log dirs, cleaner logs and JMX/Jolokia pages, and the admin API
    (topic configs, leaders' LSOs, the brokers' cleaner settings, the groups' positions) for its own
    judgements; all, everything. ``state_dir``: where each broker's log-dir scanner keeps its summary
    cache (``collectors.logdirs.summary_state``), None for none. With ``headers_first`` (``collect`` serving), log
    dirs are read headers first (``collectors.logdirs.scanner``): every partition's ratio and cause on the first page,
    records after; without (``collect --once``) every segment is read whole before the page is made (at the
    I/O budget's pace). ``scanners``: per (cluster, broker config id) with log dirs, its ``scanner_source``
    and its (source, node filter) by label, for the hook that follows the brokers found (``logdir_brokers``)."""
    sources, closers = [], []
    scanners = {} if scanners is None else scanners
    to = config.timeouts
    for cluster in config.clusters:
        admin_name, said, suffix = None, set(), _read_suffix(config, cluster)
        if cluster.bootstrap_servers:
            from collectors.admin.source import AdminFetcher

            fetcher = AdminFetcher(cluster, timeout=to.admin)
            closers.append(fetcher.close)
            admin_name = f"admin:{cluster.name}{suffix}"
            sources.append(Source(admin_name, ADMIN, cluster.name, fetcher.topics, config.intervals.admin,
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

                sources.append(Source(f"consumer_groups:{cluster.name}{suffix}", GROUPS, cluster.name,
                                      groups, config.intervals.consumer_groups, endpoint=_kafka_endpoint(cluster)))
        scanner = partial(
            scanner_source, config, store, admin_name=admin_name, said=said, include_all=include_all,
            state_dir=state_dir, headers_first=headers_first)
        for b in cluster.brokers if config.role != CLUSTER else ():
            if b.jmx_url:
                sources.append(jmx_source(config, cluster, b, b.id, b.jmx_url))
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

                sources.append(Source(f"jolokia:{cluster.name}:{b.id}", JOLOKIA, cluster.name, jolokia,
                                      config.intervals.jmx, b.id, endpoint=b.jolokia_url))
            # one scanner per broker whose log dirs are under the paths (a DaemonSet's node may run two); the
            # runner's hook (collectors.logdirs.brokers) follows the brokers found there after each refresh
            if b.log_dirs:
                found = {label: (scanner(cluster, b, label, node), node)
                         for label, node in split_by_broker(b.id, b.log_dirs)}
                sources.extend(src for src, _ in found.values())
                scanners[(cluster.name, b.id)] = (scanner, found)
            if b.cleaner_log:
                follower = CleanerLogFollower(b.cleaner_log)
                closers.append(follower.close)
                sources.append(Source(f"cleaner_log:{cluster.name}:{b.id}", CLEANER_LOG, cluster.name,
                                      follower.refresh, config.intervals.cleaner_log, b.id))
    return sources, closers


class HiddenGroupsNotice:
    """A runner hook: logs, once per cluster and per change of the counts, when ListGroups gives fewer
    groups than ``__consumer_offsets`` in the log dirs read holds live committed offsets for
    (``monitor.kafka.offsetgroups``). ListGroups leaves out, with no error, every group the principal may not
    Describe: without this the groups' lag series would be silently absent."""

    def __init__(self, store: Store):
        self.store = store
        self._said: dict[str, tuple | None] = {}
        self._lock = threading.Lock()  # the hook runs on every source's thread

    def __call__(self) -> None:
        statuses = self.store.statuses()
        for st in statuses:
            if st.kind != GROUPS or st.snapshot is None or st.snapshot.listed is None:
                continue
            known = offsets_groups(statuses).get(st.cluster)
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
            admin = next((x.snapshot for x in statuses if x.kind == ADMIN and x.cluster == st.cluster
                          and x.snapshot is not None), None)
            log.warning("cluster %s: ListGroups gives %d consumer group(s) to %s, yet __consumer_offsets in the "
                        "log dirs read holds live committed offsets of %d group(s), %d of them not listed (%s, ...): "
                        "their lag is not exported; grant Describe on the GROUP resources (docs/security.md's "
                        "least-privilege section has the kafka-acls command)", st.cluster, state[0],
                        getattr(admin, "principal", "") or "the client", state[1], state[2], min(hidden))


def build(config: Config, state_dir: str | None = None, headers_first: bool = False) -> Collector:
    store = Store()
    scanners: dict = {}
    sources, closers = build_sources(config, store, state_dir=state_dir, headers_first=headers_first,
                                     scanners=scanners)
    registry = CollectorRegistry(auto_describe=False)
    facts = register_all(registry, store, view=View.of(config))
    rendered = RenderedExposition(registry, after_render=facts.release)  # the facts kept no longer than a render
    templated = TemplatedJmx(config if config.role != CLUSTER else Config(), store, partial(jmx_source, config))
    # the log-dir sources follow the brokers found first: the templated JMX sources follow theirs
    followed = FollowedBrokers(config, store, scanners)
    said = RefreshLog(store)  # an INFO line per round of refreshes
    runner = Runner(store, sources, on_refresh=[followed, templated, HiddenGroupsNotice(store), rendered.invalidate,
                                                said])
    followed.attach(runner)
    said.attach(runner)
    templated.attach(runner)
    return Collector(config, store, runner, registry, closers, rendered)


def run_collect(config: Config, *, once: bool = False, out=sys.stdout, err=sys.stderr, web=None) -> int:
    """``collect``: once (print the exposition) or serving /metrics, over TLS and basic auth when ``web``
    (a ``collectors.serving.webconfig.WebConfig``) says so; a web config whose keys cannot be loaded stops it here,
    before any source starts (exit 2)."""
    from collectors.serving import webserver
    from collectors.serving.webconfig import WebConfigError

    if not any(c.brokers or c.bootstrap_servers for c in config.clusters):
        print("collect: nothing to collect: give --bootstrap-server, --jmx-url, --log-dir or a --config", file=err)
        return 2
    try:
        ctx, auth = webserver.prepare(web)
    except WebConfigError as exc:
        print(f"collect: web config error: {exc}", file=err)
        return 2
    # the summary cache: always when serving; for --once only when a state dir is given (a one-shot check
    # neither needs one nor leaves files behind unasked)
    state_dir = config.state_dir if once else config.state_dir or default_state_dir()
    col = build(config, state_dir, headers_first=not once)
    try:
        if once:
            log.info("%s", startup_line(config, col.runner.sources, state_dir=state_dir, listening=None))
            # the admin source first, so log dirs and groups see the topic configs
            ok, wrong = col.runner.refresh_all(), False
            col.second_sample()
            out.write(col.exposition().decode())
            for st in col.store.statuses():
                if not st.up:
                    # the endpoint named (its password masked) unless the error already does
                    at = f" ({st.endpoint})" if st.endpoint and st.endpoint not in (st.last_error or "") else ""
                    print(f"collect: source {st.name}{at} failed: {st.last_error}", file=err)
                also = getattr(st.snapshot, "also_on_page", ()) if st.kind == JMX else ()
                if also:
                    print(f"collect: source {st.name}: the page carries the {st.snapshot.shape} and "
                          f"{' and '.join(also)} shapes; read {st.snapshot.shape} (rule-named before catch-all, "
                          "always)", file=err)
                down = getattr(st.snapshot, "down", {})
                said = _said_by_scanner(st.snapshot)
                for d, (_, reason) in down.items():
                    if d not in said:  # (a path that yields no log dir, a log dir whose broker is unknown: logged)
                        print(f"collect: source {st.name}: log dir {d} down: {reason}", file=err)
                ok = ok and not down
                # a fault of a log dir, checkpoint entry or partition (the scanner has logged each, naming its
                # file): exit 1 by the rule logdir's and explain's exit by (LogDirSnapshot.faults_met,
                # cli.oneshot.FAULT_EXIT); the source stays up and the page carries the partition, unknown
                ok = ok and not getattr(st.snapshot, "faults_met", False)
                wrong = wrong or bool(getattr(st.snapshot, "unresolved", None))  # a path that is no log dir
            return 2 if wrong else 0 if ok else 1
        col.rendered.start()  # a first page (every source down) before any refresh, then one per refresh
        # the render thread is pure Python; the scrape threads wait on the GIL for at most this, not 5 ms
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            server = webserver.start(col.rendered, config.listen_address, config.listen_port, ctx, auth)
        except OSError as exc:
            print(f"collect: cannot listen on {config.listen_address}:{config.listen_port}: {os_reason(exc)}",
                  file=err)
            return 2
        port = server.server_address[1]
        scheme = "https" if ctx else "http"
        log.info("%s", startup_line(config, col.runner.sources, state_dir=state_dir,
                                    listening=f"{scheme}://{config.listen_address}:{port}/metrics"))
        col.runner.start()
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


def _said_by_scanner(snap) -> set:
    """The down paths a log-dir scanner has logged itself (``collectors.logdirs.paths``: found or not found)."""
    found = getattr(snap, "found", {})
    return set(getattr(snap, "unresolved", {})) | {d for d, f in found.items() if f.problem is not None}


def scan_once(paths, config: Config, topic_overrides: dict | None = None, *, admin=None, include_all: bool = False,
              admin_error: str | None = None, list_undecided: bool = False, progress=None):
    """One refresh of a scanner over ``paths`` (``logdir``, ``explain``): the snapshot, and the names Kafka
    would not create or load (``monitor.kafka.kafkanames``), one line each, for the caller to print. ``admin``: an
    admin source's snapshot, for topic configs; ``admin_error``: the admin API was asked and failed (the
    configs it would give are unknown); ``progress``: the scanner's callback (``collectors.logdirs.scanner.ScanProgress``)."""
    cluster = config.clusters[0] if config.clusters else ClusterConfig()
    store, admin_name = Store(), None
    if admin is not None or admin_error is not None:
        admin_name = "admin"
        store.register(admin_name, ADMIN, cluster.name)
        if admin is not None:
            store.success(admin_name, admin, 0.0, 0.0)
        else:
            store.failure(admin_name, RuntimeError(admin_error), 0.0)
    named: list[str] = []
    scanner = LogDirScanner(paths, _config_lookup(cluster, store, admin_name, topic_overrides), include_all=include_all,
                            transaction_max_timeout=_transaction_max_timeout(cluster, store, admin_name),
                            notify=named.append, list_undecided=list_undecided, progress=progress)
    return scanner.refresh(), named

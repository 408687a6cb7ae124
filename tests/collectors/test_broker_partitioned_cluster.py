"""A broker of the 3-broker SASL_SSL cluster (tests/conftest.py ``kafka_cluster``) that stops answering
without going away, while the collector runs as ``collect`` runs it: every source on its own thread
(``Runner.start``), the page rendered once per refresh (``RenderedExposition.start``) and served over
HTTP (``collectors.serving.webserver``), scraped here as Prometheus would.

What it simulates: the node's JVM frozen with SIGSTOP (``clusternodes.paused``). Its sockets stay
open, so the kernel still completes TCP handshakes on its ports (until their accept queues fill, then
SYNs go unanswered) but nothing ever answers: every fetch from it hangs until its deadline, as from a
broker partitioned away, hung in a GC pause or on a dead disk. The JMX exporter agent runs inside that
JVM, so its page hangs too. The other nodes see it exactly as the collector does (it stops answering
their fetches and heartbeats), so the controller fences it and leadership moves.

What it does not simulate: a partial partition, where the node still reaches some peers (the quorum,
its followers) while the collector cannot reach it, or the reverse; and packet loss that lets some
bytes through. Those need the node's traffic filtered (iptables/nft, tc with a drop action, or the node
in its own network namespace from its start). Checked here: ``unshare -n`` and ``ip netns`` work, but
there is no iptables or nft binary, and this kernel has no netem, prio qdisc or tc action module (``tc
filter ... action drop``: "Failed to load TC action module"), and the session's cluster shares the
loopback of the machine with the other tests' brokers; so a frozen process is the partition we can make.

Expected values come from outside the code under test: the node frozen, its JMX exporter's address
from the cluster's state, the time the pause began (taken here), and the cluster's own metadata (the
admin client's: every ISR full again after SIGCONT)."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from boundedhttp import get_text
from clusternodes import paused, wait_whole
from collectors.serving import webserver
from collectors.app import build
from kafkatools import client_config, cluster_admin, cluster_brokers, wait_for
from monitor.contract.metricnames import PREFIX
from monitor.settings.config import parse_config

pytestmark = pytest.mark.slow

NS = PREFIX  # the exported series are named PREFIX + name (monitor.contract.metricnames)


def _scrape(url: str) -> dict:
    """The served page as {(sample name, frozenset of labels): value}."""
    text = get_text(url, deadline=10, max_bytes=16 << 20)
    return {(s.name, frozenset(s.labels.items())): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def _key(name: str, **labels) -> tuple:
    return NS + name, frozenset({"cluster": "c3", **labels}.items())


class _Failures:
    """Failed refreshes of each source from now on, counted at each ``poll`` (called often): a failure
    sets ``up`` to 0 and adds one error (``Store.failure``); a success may add errors too (the parts of a
    refresh that failed) but leaves ``up`` at 1. Refreshes are at least 0.5 s apart (``Runner._loop``),
    so no two land between polls 0.1 s apart."""

    def __init__(self, statuses):
        self.seen = {s.name: sum(s.errors.values()) for s in statuses}
        self.count = Counter()

    def poll(self, statuses) -> None:
        for s in statuses:
            total = sum(s.errors.values())
            if not s.up and total > self.seen[s.name]:
                self.count[s.name] += 1
            self.seen[s.name] = total


def test_a_paused_broker_hangs_only_its_own_sources(kafka_cluster):
    brokers = {b.node_id: b for b in kafka_cluster.brokers()}
    frozen = max(brokers)
    others = sorted(n for n in brokers if n != frozen)
    cfg = parse_config({
        "timeouts": {"jmx": 2, "admin": 5},
        "intervals": {"jmx": 1, "log_dirs": 2, "admin": 2, "consumer_groups": 2},
        "clusters": [{
            "name": "c3", "bootstrap_servers": kafka_cluster.bootstrap,
            "client": {k: v for k, v in client_config(kafka_cluster, "monitor").items() if k != "bootstrap.servers"},
            "brokers": cluster_brokers(kafka_cluster)}]})  # the exporters' basic auth by reference
    col = build(cfg)
    server = None
    secrets = [kafka_cluster.password("monitor"), Path(kafka_cluster.jmx_password_file).read_text().strip()]
    jmx = f"jmx:c3:{frozen}"
    try:
        col.rendered.start()
        server = webserver.start(col.rendered, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
        col.runner.start()
        names = {s.name for s in col.runner.sources}
        assert {jmx, "admin:c3", "consumer_groups:c3"} <= names

        def status():
            return {s.name: s for s in col.store.statuses()}

        wait_for(lambda: all(s.up for s in status().values()), 120, "every source up with the whole cluster")

        with paused(brokers[frozen]):
            paused_at = time.time()

            def frozen_down():
                s = status()[jmx]
                return not s.up and s.errors["timeout"] >= 1 and s

            gone = wait_for(frozen_down, 60, f"broker {frozen}'s JMX source down with a timeout")
            assert brokers[frozen].jmx_url.split("/metrics")[0] in gone.last_error, gone.last_error
            assert not any(p in gone.last_error for p in secrets)
            down_at = time.time()
            # the cluster's own view: the controller fences the node once its heartbeats stop
            # (broker.session.timeout.ms) and the metadata drops it; a client made now never had a
            # working connection to it, so it asks the two nodes left
            observer = cluster_admin(kafka_cluster)
            wait_for(lambda: frozen not in observer.list_topics(timeout=10).brokers, 90,
                     f"the cluster's metadata to drop broker {frozen}")
            failures = _Failures(col.store.statuses())

            def the_others_flow():
                # after the frozen source's fetch hung and failed, every other source succeeded again
                st = col.store.statuses()
                failures.poll(st)
                return all(s.up and s.last_success > down_at for s in st if s.name != jmx) and \
                    {s.name: s for s in st}

            st = wait_for(the_others_flow, 120, f"every source but {jmx} refreshed after it went down")
            # once the cluster has failed over, the admin API answers from the two nodes left: each of the
            # cluster-wide sources fails at most the refresh under way then, and one whose request still
            # went to the frozen node (librdkafka keeps a connection that never answers "up" until a
            # request on it times out: socket.timeout.ms, the admin timeout here; before, 60 s of failed
            # refreshes) and, for consumer groups, one that found no admin snapshot after such a failure
            assert failures.count["admin:c3"] <= 2, failures.count
            assert failures.count["consumer_groups:c3"] <= 3, failures.count
            assert not st[jmx].up and (st[jmx].last_success or 0) < paused_at  # still frozen: still down

            def served():
                page = _scrape(url)  # every scrape is answered while a source hangs
                ups = {dict(k[1])["source"]: v for k, v in page.items() if k[0] == NS + "source_up"}
                # only the frozen broker's JMX source down, the others' values there
                return ups == {n: 0 if n == jmx else 1 for n in names} and all(
                    page.get(_key("broker_cleaner_dead_threads", broker=str(n))) == 0 for n in others) and page

            page = wait_for(served, 60, "the served page with the others' values and only the frozen source down",
                            interval=0.5)
            # the hang is counted with boundedhttp's kind for it
            assert page[_key("source_errors_total", source=jmx, kind="jmx", error="timeout")] >= 1
            # its broker-level series are withdrawn, not left stale
            assert _key("broker_cleaner_dead_threads", broker=str(frozen)) not in page
            # the frozen node's log dir is still on disk (a sidecar reads files, not the broker): it flows
            assert all(page.get(_key("source_last_success_timestamp_seconds", source=f"log_dirs:c3:{n}",
                                     kind="log_dirs"), 0) > paused_at for n in brokers)
            assert not any(p.encode() in get_text(url, deadline=10, max_bytes=16 << 20).encode() for p in secrets)

        wait_whole(kafka_cluster)
        wait_for(lambda: status()[jmx].up, 60, f"{jmx} up again after SIGCONT")
    finally:
        col.close()
        if server is not None:
            server.shutdown()
            server.server_close()
        wait_whole(kafka_cluster)

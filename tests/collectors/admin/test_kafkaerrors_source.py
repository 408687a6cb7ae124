"""The collector's admin source against a cluster it cannot reach (a loopback port bound and never
listened on: refused): it never stops; each refresh is down with the kind (``source_errors_total{error=
"refused"}``, ``source_last_error_info`` naming the bootstrap address and the kind), given up in about a
second rather than the admin timeout (every bootstrap broker refused), and librdkafka's connection
failures are logged once for the address however many refreshes and retries there are."""

from __future__ import annotations

import logging
import socket

import pytest
from prometheus_client import CollectorRegistry

from collectors.admin import client as admin_client
from collectors.admin.source import AdminFetcher
from collectors.export.exporter import register_all
from collectors.admin.errors import ClusterUnreachable
from collectors.serving.runner import Source, Store, refresh_once
from monitor.settings.config import ClusterConfig

pytestmark = pytest.mark.slow  # a real client's connection retries: about a second a refresh

TIMEOUT = 10.0


def test_an_unreachable_cluster_is_a_down_source_of_that_kind_logged_once_per_address(caplog, monkeypatch):
    slices = []  # the metadata waits each refresh asked librdkafka for: how long it waited, counted not timed
    real = admin_client.AdminClient.list_topics

    def counted(self, *args, **kwargs):
        slices.append(kwargs.get("timeout"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(admin_client.AdminClient, "list_topics", counted)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        bootstrap = f"127.0.0.1:{held.getsockname()[1]}"
        fetcher = AdminFetcher(ClusterConfig(name="c", bootstrap_servers=bootstrap), timeout=TIMEOUT)
        store = Store()
        store.register("admin:c", "admin", "c")
        source = Source("admin:c", "admin", "c", fetcher.topics, 60.0, endpoint=f"bootstrap {bootstrap}")
        try:
            with caplog.at_level(logging.WARNING, logger="compaction_monitor.librdkafka"):
                per_refresh = []
                for _ in range(3):
                    before = len(slices)
                    assert refresh_once(store, source) is False
                    per_refresh.append(len(slices) - before)
        finally:
            fetcher.close()
    [st] = store.statuses()
    assert not st.up and st.last_error_kind == "refused" and st.errors == {"refused": 3}
    assert f"cannot reach the cluster at {bootstrap} (connection refused)" in st.last_error
    # every bootstrap broker refused: each refresh gave up after a slice or two of the metadata wait, not
    # after the admin timeout's worth of them (what happened, counted: no wall-clock bound)
    whole = int(TIMEOUT / admin_client.LIST_SLICE_SECONDS)
    assert all(1 <= n < whole / 2 for n in per_refresh), (per_refresh, slices)
    reg = CollectorRegistry(auto_describe=False)
    register_all(reg, store)
    samples = {s.name: s for m in reg.collect() for s in m.samples if s.labels.get("source") == "admin:c"}
    assert samples["kafka_compaction_source_up"].value == 0
    info = samples["kafka_compaction_source_last_error_info"].labels
    assert info["error"] == "refused" and f"cannot reach the cluster at {bootstrap} (connection refused)" in \
        info["message"]
    mine = [r.getMessage() for r in caplog.records if bootstrap in r.getMessage()]
    assert len(mine) == 1 and mine[0].startswith(f"librdkafka: broker {bootstrap}: connection refused"), mine


def test_a_port_that_accepts_and_never_answers_is_a_timeout_naming_the_wait():
    """No broker failure is heard (the connection is up, its first request unanswered): after the whole
    admin timeout with no broker usable, the kind is ``timeout``, not librdkafka's "transport failure"."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel accepts; nobody ever reads
        bootstrap = f"127.0.0.1:{silent.getsockname()[1]}"
        fetcher = AdminFetcher(ClusterConfig(name="c", bootstrap_servers=bootstrap), timeout=1)
        try:
            with pytest.raises(ClusterUnreachable) as got:
                fetcher.topics()
        finally:
            fetcher.close()
    assert got.value.kind == "timeout"
    assert str(got.value).startswith(f"cannot reach the cluster at {bootstrap} (no answer in time): is the address "
                                     "reachable from here")

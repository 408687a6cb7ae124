"""A broker that accepts TCP and never answers (its JVM frozen with SIGSTOP: ``clusternodes.paused``) on
the session's real broker, mid-refresh: it answers the refresh's metadata and its first offsets, then is
frozen before the ListOffsets at READ_COMMITTED, and runs again (SIGCONT) between refreshes. One broker
stands for a cluster whose other brokers answer the metadata while the frozen one leads the partitions.

Issue 42: over several such refreshes the clients are rebuilt once, not at every refresh (at most once per
``REBUILD_BACKOFF_SECONDS``: the clock is injected, no minute is waited for), the rebuild's log line says
when the next may come, and the failed ListOffsets is one error for the call, naming the broker and how
many partitions it covered, in the snapshot's errors, in ``source_errors_total`` and in
``source_last_error_info``: not one per partition. The broker's address and the partitions come from
outside the code under test (the broker's state, the topic made here)."""

from __future__ import annotations

import contextlib
import logging
import re

import pytest
from confluent_kafka import IsolationLevel, KafkaException
from confluent_kafka.admin import AdminClient
from prometheus_client import CollectorRegistry

from clusternodes import paused
from collectors.admin import client as admin_client
from collectors.admin.source import AdminFetcher
from collectors.export.exporter import register_all
from collectors.serving.runner import Source, Store, refresh_once
from kafkatools import compacted, create_topic, unique_topic, wait_for, watermarks
from monitor.settings.config import ClusterConfig

pytestmark = pytest.mark.slow  # the session broker, frozen for a request timeout per refresh

TIMEOUT = 2.0
PARTITIONS = 5


def said_by_the_monitor(records) -> list:
    """The log records of the monitor's own work: librdkafka's lines of other clients in this process (another
    test's producer, kept open on purpose, times out too while the broker is frozen) are theirs, told apart by
    their handle's client.id (``collectors.admin.client.CLIENT_ID``)."""
    return [r for r in records if not (r.getMessage().startswith("librdkafka:")
                                       and f"[{admin_client.CLIENT_ID}#" not in r.getMessage())]


def test_a_frozen_broker_costs_one_rebuild_per_backoff_and_one_error_per_list_offsets_call(kafka, caplog,
                                                                                           monkeypatch):
    topic = create_topic(kafka.bootstrap, unique_topic("frozen-offsets"), PARTITIONS, **compacted())
    def answers(p):
        try:
            return watermarks(kafka.bootstrap, topic, p) == (0, 0)
        except KafkaException:  # led in the metadata, not yet by the broker (NOT_LEADER_FOR_PARTITION)
            return False

    for p in range(PARTITIONS):  # every partition answering its offsets before the refreshes
        wait_for(lambda: answers(p), 30, f"partition {p} of {topic} answering its offsets")
    frozen = contextlib.ExitStack()
    freezing = {"on": True, "asked": 0}
    real = AdminClient.list_offsets

    def freezes_before_read_committed(self, request, *args, **kwargs):
        if freezing["on"] and kwargs.get("isolation_level") == IsolationLevel.READ_COMMITTED:
            freezing["asked"] += 1
            frozen.enter_context(paused(kafka))
        return real(self, request, *args, **kwargs)

    monkeypatch.setattr(AdminClient, "list_offsets", freezes_before_read_committed)
    now = [1000.0]
    fetcher = AdminFetcher(ClusterConfig(name="c", bootstrap_servers=kafka.bootstrap), timeout=TIMEOUT)
    fetcher.session.clock = lambda: now[0]
    snaps = []

    def refresh():
        try:
            snaps.append(fetcher.topics())
        finally:
            frozen.close()  # SIGCONT: running again before the next refresh
        return snaps[-1]

    store = Store()
    store.register("admin:c", "admin", "c")
    source = Source("admin:c", "admin", "c", refresh, 60.0, endpoint=f"bootstrap {kafka.bootstrap}")
    try:
        with caplog.at_level(logging.WARNING, logger="compaction_monitor"):
            said = []
            for _ in range(3):  # the same minute: one rebuild, at the first
                assert refresh_once(store, source)
                said.append([r.getMessage() for r in said_by_the_monitor(caplog.records)])
            rebuilds_in_the_minute = fetcher.rebuilds
            now[0] += admin_client.REBUILD_BACKOFF_SECONDS  # the backoff over: the next such refresh rebuilds
            assert refresh_once(store, source)
            freezing["on"] = False
            wait_for(lambda: refresh_once(store, source) and not snaps[-1].errors, 60,
                     "a refresh with every answer once the broker runs on")
    finally:
        frozen.close()
        fetcher.close()
    assert freezing["asked"] == 4
    assert rebuilds_in_the_minute == 1 and fetcher.rebuilds == 2
    rebuilt = [r.getMessage() for r in caplog.records if "new admin client" in r.getMessage()]
    assert len(rebuilt) == 1, rebuilt  # the second rebuild is within REBUILD_LOG_SECONDS of the first line
    assert f"no other rebuild for {admin_client.REBUILD_BACKOFF_SECONDS:g}s" in rebuilt[0]
    # the same broker failing the same way three times: each thing said once. Not "nothing new after the
    # first refresh": librdkafka's lines reach the log when its client is next polled, so the first
    # refresh's request timeout may be said during the second (it did at load 15)
    kinds = [re.sub(r"\d+", "N", m) for m in said[2]]
    assert said[2] and len(kinds) == len(set(kinds)), said
    assert not any(f"{topic}-{p}" in r.getMessage() for r in caplog.records for p in range(PARTITIONS))

    where = f"broker 1 ({kafka.bootstrap})"
    for snap in snaps[:4]:
        said = {k: v for k, v in snap.errors.items() if k.startswith("list_offsets")}
        compacted_partitions = sum(len(t.partitions) for t in snap.topics.values())
        assert PARTITIONS <= compacted_partitions
        assert list(said) == [f"list_offsets read_committed to {where}, {compacted_partitions} partition(s)"], said
        assert all(po.stable == -1 and po.latest >= 0 for po in snap.topics[topic].partitions.values())
        # one error kind per failed call (the ListOffsets; the broker's describe_configs asked after it),
        # not one per partition
        assert len(snap.error_kinds) <= 2, snap.error_kinds
    [st] = store.statuses()
    assert sum(st.errors.values()) == sum(len(s.error_kinds) for s in snaps) <= 2 * 4
    reg = CollectorRegistry(auto_describe=False)
    register_all(reg, store)
    # the last refresh answered everything: the last error still names the broker and the count
    info = [s.labels for m in reg.collect() for s in m.samples if s.name == "kafka_compaction_source_last_error_info"
            and s.labels.get("source") == "admin:c"]
    assert len(info) == 1 and info[0]["message"].startswith(f"list_offsets read_committed to {where}, "), info
    assert info[0]["error"] == "timeout" and " partition(s): " in info[0]["message"], info

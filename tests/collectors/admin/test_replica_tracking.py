"""collectors.admin.replicas and the replica-safety series: since when each replica is out of the ISR,
across refreshes; what the collector cannot know (out before its first look) said as a lower bound."""

from __future__ import annotations

from dataclasses import replace

from prometheus_client import CollectorRegistry

import factsfixtures as ff
from collectors.export import metrics as M
from collectors.export.replicas import ReplicaSafetyCollector
from collectors.admin.replicas import OutOfSync, OutOfSyncTracker
from collectors.serving.runner import Store

LIVE = frozenset({1, 2, 3})


def test_out_since_the_first_refresh_that_found_it_out_and_forgotten_once_back():
    tr = OutOfSyncTracker()
    assert tr.update(100.0, {("t", 0): ((1, 2, 3), (1, 2, 3), LIVE)}) == {}
    assert tr.update(110.0, {("t", 0): ((1, 2, 3), (1, 2), LIVE - {3})}) == {("t", 0, 3): OutOfSync(110.0, False, True)}
    assert tr.update(130.0, {("t", 0): ((1, 2, 3), (1, 2), LIVE)}) == {("t", 0, 3): OutOfSync(110.0, False, False)}
    assert tr.update(140.0, {("t", 0): ((1, 2, 3), (1, 2, 3), LIVE)}) == {}
    assert tr.update(150.0, {("t", 0): ((1, 2, 3), (1, 3), LIVE)}) == {("t", 0, 2): OutOfSync(150.0, False, False)}


def test_out_at_the_first_look_is_a_lower_bound():
    tr = OutOfSyncTracker()
    assert tr.update(100.0, {("t", 0): ((1, 2), (1,), LIVE)}) == {("t", 0, 2): OutOfSync(100.0, True, False)}
    assert tr.update(200.0, {("t", 0): ((1, 2), (1,), LIVE)})[("t", 0, 2)].lower_bound  # stays one
    # a partition first seen later (a topic created, or made compacted) is a first look too
    assert tr.update(300.0, {("t", 0): ((1, 2), (1,), LIVE), ("u", 0): ((1, 2), (1,), LIVE)})[("u", 0, 2)] == \
        OutOfSync(300.0, True, False)


def test_the_series_against_delete_retention_and_producer_id_expiration():
    snap = ff.admin()  # orders: delete.retention.ms Kafka's default, 86400000
    snap = replace(snap, out_of_sync={("orders", 0, 2): OutOfSync(1000.0, False, True)},
                   producer_id_expiration_ms={2: 172_800_000})
    store = Store()
    store.register("admin:c", "admin", "c")
    store.success("admin:c", snap, 0.0, 100.0)
    reg = CollectorRegistry(auto_describe=False)
    reg.register(ReplicaSafetyCollector(store, clock=lambda: 1000.0 + 43_200))
    lb = {"cluster": "c", "broker": "2", "topic": "orders", "partition": "0", "lower_bound": "false",
          "offline": "true"}
    assert reg.get_sample_value(M.P_REPLICA_OUT_SECONDS, lb) == 43_200
    assert reg.get_sample_value(M.P_REPLICA_OUT_RATIO, lb) == 0.5
    assert reg.get_sample_value(M.P_REPLICA_OUT_PID_RATIO, lb) == 0.25
    # the replicas in sync have no series
    assert reg.get_sample_value(M.P_REPLICA_OUT_SECONDS, lb | {"broker": "1"}) is None

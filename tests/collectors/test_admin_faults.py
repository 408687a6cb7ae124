"""The admin source against an endpoint that accepts connections and never answers the Kafka protocol
(tests/faultserver.py holding every request): each admin call ends by its own timeout with an error
the runner counts, never a hang. A fake on purpose: a real broker cannot be made to hang like this."""

from __future__ import annotations

import concurrent.futures
import threading

import pytest

from boundedhttp import FetchError
from collectors.admin import AdminFetcher
from collectors.admin_client import _client_conf
from collectors.runner import Source, Store, refresh_once
from faultserver import FaultServer
from monitor.config import ClusterConfig


@pytest.fixture
def silent():
    fs = FaultServer()
    fs.set_mode("hang")
    yield fs.url.removeprefix("http://").removesuffix("/metrics")
    fs.close()


def ends(fn):
    """fn() on a thread joined with a generous bound (a hang guard, not a timing): its error or its result."""
    out = {}

    def run():
        try:
            out["result"] = fn()
        except Exception as exc:  # noqa: BLE001 - what the runner would count
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(90)
    assert not t.is_alive(), "the admin call did not end"
    return out


@pytest.mark.parametrize("call", ["topics", "group_lags"])
def test_admin_calls_end_by_their_timeout_on_a_silent_endpoint(silent, call):
    fetcher = AdminFetcher(ClusterConfig(name="c", bootstrap_servers=silent), timeout=1)
    try:
        store = Store()
        src = Source("admin:c", "admin", "c", fetcher.topics if call == "topics" else lambda: fetcher.group_lags({}), 1)
        store.register(src.name, src.kind, src.cluster)
        got = ends(lambda: refresh_once(store, src))
        assert got.get("result") is False
        (st,) = store.statuses()
        assert not st.up and sum(st.errors.values()) == 1 and set(st.errors) <= {"kafka", "timeout"}, st.errors
    finally:
        fetcher.close()


def test_librdkafka_drops_a_silent_broker_after_the_admin_timeout_unless_the_client_section_says():
    """socket.timeout.ms is how long a request stays in flight on a broker that never answers before
    librdkafka drops that connection; by default the admin timeout, not librdkafka's 60 s (a frozen broker
    kept the admin source down that long: tests/collectors/test_broker_partitioned_cluster.py)."""
    cluster = ClusterConfig(name="c", bootstrap_servers="127.0.0.1:9")
    assert _client_conf(cluster, 5)["socket.timeout.ms"] == 5000
    assert _client_conf(cluster, 0.001)["socket.timeout.ms"] == 10  # librdkafka's least
    assert "socket.timeout.ms" not in _client_conf(cluster)
    own = ClusterConfig(name="c", bootstrap_servers="127.0.0.1:9", client={"socket.timeout.ms": 30000})
    assert _client_conf(own, 5)["socket.timeout.ms"] == 30000


def test_a_result_settled_by_librdkafkas_own_timeout_is_not_lost_to_the_wait():
    """librdkafka settles a request at its request_timeout (a fan-out to every broker with the answers it
    got and an error for each broker that did not answer); waiting only as long lost that race, and the
    source went down with a bare TimeoutError. A future settled at the request timeout is read; one never
    settled ends in a timeout naming the endpoint."""
    fetcher = AdminFetcher(ClusterConfig(name="c", bootstrap_servers="127.0.0.1:9"), timeout=0.2)
    try:
        late = concurrent.futures.Future()
        timer = threading.Timer(fetcher.timeout, late.set_result, ("partial",))
        timer.start()
        assert fetcher.session.result(late, "list_consumer_groups") == "partial"
        with pytest.raises(FetchError) as err:
            fetcher.session.result(concurrent.futures.Future(), "list_consumer_groups")
        assert err.value.kind == "timeout" and "bootstrap 127.0.0.1:9" in str(err.value)
        assert "list_consumer_groups: no answer within" in str(err.value)
    finally:
        fetcher.close()


def test_a_listing_with_an_error_leaves_the_listed_groups_unknown():
    """ListGroups goes to every broker; one that does not answer adds an error and leaves out the groups it
    coordinates. Such a listing is partial: the snapshot keeps the groups' lags, but which groups ListGroups
    gives is unknown (else their absence would count as hidden by ACLs: admin_unlisted_groups,
    ConsumerGroupsHidden). A fake listing on purpose: which broker a real cluster fails on is not ours to pick."""
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import ConsumerGroupListing, ListConsumerGroupsResult

    fetcher = AdminFetcher(ClusterConfig(name="c", bootstrap_servers="127.0.0.1:9"), timeout=0.2)
    try:
        def listing(errors):
            fut = concurrent.futures.Future()
            fut.set_result(ListConsumerGroupsResult(valid=[ConsumerGroupListing("g1", False)], errors=errors))
            return fut

        fetcher.session.admin.list_consumer_groups = lambda **kw: listing([])
        fetcher.session.admin.list_consumer_group_offsets = lambda *a, **kw: {"g1": _settled([])}
        assert fetcher.group_lags({}).listed == frozenset({"g1"})
        fetcher.session.admin.list_consumer_groups = lambda **kw: listing([KafkaError(KafkaError._TIMED_OUT)])
        snap = fetcher.group_lags({})
        assert snap.listed is None and snap.errors  # partial: unknown, and the error counted
    finally:
        fetcher.close()


def _settled(partitions):
    from confluent_kafka import ConsumerGroupTopicPartitions

    fut = concurrent.futures.Future()
    fut.set_result(ConsumerGroupTopicPartitions("g1", partitions))
    return fut


def test_the_groups_source_says_the_admin_source_is_down_when_it_has_no_topic_list(silent):
    """The consumer-groups source reads against the admin source's topic list: with the admin source down
    it fails with its own kind, naming that source and the admin source's own error."""
    from collectors.app import build
    from monitor.config import parse_config

    col = build(parse_config({"timeouts": {"admin": 2}, "clusters": [{
        "name": "c", "bootstrap_servers": silent, "consumer_groups": True}]}))
    try:
        ends(col.runner.refresh_all)
        status = {s.name: s for s in col.store.statuses()}
        admin, groups = status["admin:c"], status["consumer_groups:c"]
        assert not admin.up and not groups.up
        assert groups.errors == {"admin_down": 1}
        assert f"no topic list: the admin source admin:c is down ({admin.last_error})" in groups.last_error
        assert silent in groups.last_error  # the endpoint it serves
    finally:
        col.close()

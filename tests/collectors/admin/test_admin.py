"""The admin source against an endpoint that accepts connections and never answers the Kafka protocol
(tests/faultserver.py holding every request): each admin call ends by its own timeout with an error
the runner counts, never a hang. A fake on purpose: a real broker cannot be made to hang like this."""

from __future__ import annotations

import threading

import pytest

from collectors.admin.source import AdminFetcher
from collectors.serving.runner import Source, Store, refresh_once
from faultserver import FaultServer
from monitor.settings.config import ClusterConfig


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


def test_the_groups_source_says_the_admin_source_is_down_when_it_has_no_topic_list(silent):
    """The consumer-groups source reads against the admin source's topic list: with the admin source down
    it fails with its own kind, naming that source and the admin source's own error."""
    from collectors.app import build
    from monitor.settings.config import parse_config

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

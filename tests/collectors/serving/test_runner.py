"""The runner's order at start: a source that reads the admin source's snapshot (log dirs: topic
configs; consumer groups: topics and offsets) waits for the cluster's admin source's first refresh, so
that it does not start with every topic config unknown (monitor.model.topicconfig never fills in Kafka's
defaults). Plain functions as sources: the order is what is tested, no broker is needed."""

from __future__ import annotations

import threading

from collectors.serving.runner import Runner, Source, Store
from waiting import wait_for


def test_log_dirs_and_groups_first_refresh_after_the_admin_sources_first():
    store = Store()
    started, go = threading.Event(), threading.Event()
    seen = {}

    def admin():
        started.set()
        go.wait(30)
        return "topics"

    def reader(kind):
        def refresh():
            seen.setdefault(kind, store.snapshot("admin:c"))
            return kind
        return refresh

    sources = [Source("admin:c", "admin", "c", admin, 3600),
               Source("log_dirs:c:1", "log_dirs", "c", reader("log_dirs"), 3600),
               Source("consumer_groups:c", "consumer_groups", "c", reader("groups"), 3600),
               Source("log_dirs:other:1", "log_dirs", "other", reader("other"), 3600)]
    runner = Runner(store, sources)
    runner.start()
    try:
        wait_for(started.is_set, 30, "the admin source's first refresh to start")
        wait_for(lambda: "other" in seen, 30, "another cluster's log dirs, which do not wait")
        assert "log_dirs" not in seen and "groups" not in seen  # still waiting for the admin source
        go.set()
        wait_for(lambda: {"log_dirs", "groups"} <= set(seen), 30, "the readers' first refresh")
        assert seen["log_dirs"] == "topics" == seen["groups"]
    finally:
        go.set()
        runner.stop()


def test_a_source_added_while_serving_is_refreshed_on_its_own_thread_and_one_removed_stops_and_leaves():
    """``Runner.add``/``remove`` (a broker found or gone: collectors.jmx.template): the added source is
    registered and refreshed; the removed one leaves the store, and a refresh it was in the middle of
    writes nothing back (its status is not re-created)."""
    store = Store()
    runner = Runner(store, [Source("log_dirs:c:1", "log_dirs", "c", lambda: "dirs", 0.5)])
    inside, leave = threading.Event(), threading.Event()
    calls = []

    def page():
        calls.append(1)
        if len(calls) == 2:  # the second refresh is held until the source has been removed
            inside.set()
            leave.wait(30)
        return "gauges"

    runner.start()
    try:
        runner.add(Source("jmx:c:1", "jmx", "c", page, 0.5, "1"))
        runner.add(Source("jmx:c:1", "jmx", "c", page, 0.5, "1"))  # the same name twice: one source
        wait_for(lambda: store.snapshot("jmx:c:1") == "gauges", 30, "the added source's first refresh")
        wait_for(inside.is_set, 30, "the added source's second refresh")
        runner.remove("jmx:c:1")
        leave.set()
        assert [s.name for s in runner.sources] == ["log_dirs:c:1"]
        [thread] = [t for t in runner._threads if t.name == "source-jmx:c:1"]
        thread.join(30)  # it ends after the refresh it was in, without another
        assert not thread.is_alive() and store.snapshot("log_dirs:c:1") == "dirs"
        assert len(calls) == 2 and [s.name for s in store.statuses()] == ["log_dirs:c:1"]
    finally:
        leave.set()
        runner.stop()


def test_a_busy_source_refreshes_again_at_once_not_after_its_interval():
    """A log-dir scanner with records still to read (headers first) says so through ``busy``: its next
    refresh follows after BUSY_PAUSE_SECONDS, not its hour-long interval; once it is not busy, it waits."""
    store = Store()
    calls = []
    left = [3]

    def refresh():
        calls.append(1)
        left[0] = max(left[0] - 1, 0)
        return object()

    runner = Runner(store, [Source("log_dirs:c:1", "log_dirs", "c", refresh, 3600.0, "1", busy=lambda: left[0] > 0)])
    runner.start()
    try:
        wait_for(lambda: len(calls) >= 3, timeout=30, what="three refreshes while busy")
    finally:
        runner.stop()
    assert len(calls) == 3  # the third left it idle: the interval (an hour) again


def test_a_sources_own_work_starts_with_it_wakes_it_and_stops_with_it():
    """``Source.start``/``stop`` (a log-dir scanner's record pass on its own thread): started when its thread is
    spawned, with the call that ends its pause at once (the next refresh then, not after its hour-long
    interval); stopped when the source is removed, and by the runner's stop for those still there."""
    store = Store()
    calls, woken, stopped = [], [], []
    sources = [Source(name, "log_dirs", "c", lambda: calls.append(1) or object(), 3600.0, "1",
                      start=woken.append, stop=lambda name=name: stopped.append(name))
               for name in ("log_dirs:c:1", "log_dirs:c:2")]
    runner = Runner(store, sources)
    runner.start()
    try:
        assert len(woken) == 2
        wait_for(lambda: len(calls) >= 2, timeout=30, what="both first refreshes")
        woken[0]()  # its own work done: the first source refreshes again, its interval not waited out
        wait_for(lambda: len(calls) >= 3, timeout=30, what="a refresh after the wake")
        runner.remove("log_dirs:c:2")
        assert stopped == ["log_dirs:c:2"]
    finally:
        runner.stop()
    assert stopped == ["log_dirs:c:2", "log_dirs:c:1"]

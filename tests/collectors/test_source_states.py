"""A source's state as the runner keeps it (issue 35): its state changes logged once, rate-limited; its
last error's kind exported, redacted. What makes the admin and consumer-groups refreshes up or down is
in test_admin_topics.py and test_admin_groups.py."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from prometheus_client import CollectorRegistry

from collectors.export.exporter import register_all
from collectors.serving.runner import StateLog, Store


def test_the_last_errors_text_is_exported_redacted():
    store = Store()
    store.register("jmx:c:1", "jmx", "c", "1")
    store.failure("jmx:c:1", RuntimeError("GET https://admin:s3cret@host:9404/metrics: refused"), 0.1)
    reg = CollectorRegistry(auto_describe=False)
    register_all(reg, store)
    [sample] = [s for m in reg.collect() for s in m.samples if s.name == "kafka_compaction_source_last_error_info"]
    assert sample.labels["error"] == "error" and "s3cret" not in sample.labels["message"]
    assert "https://admin:***@host" in sample.labels["message"]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def status(up: bool, error: str | None = None):
    return SimpleNamespace(name="admin:c", up=up, last_error=error, endpoint="bootstrap b:9092")


def test_state_changes_are_logged_once_and_a_flapping_source_at_most_twice_per_interval(caplog):
    clock = Clock()
    states = StateLog(interval=60, clock=clock, logger=logging.getLogger("test.states"))
    with caplog.at_level(logging.INFO, logger="test.states"):
        states.observe(status(True))  # a first refresh that works: nothing to say
        clock.now = 10
        states.observe(status(False, "FetchError: bootstrap b:9092: no answer within 12s"))
        states.observe(status(False, "FetchError: bootstrap b:9092: no answer within 12s"))  # no change
        for i in range(100):  # flapping every refresh for 50 s, up first: that recovery is said at once
            clock.now = 11 + i * 0.5
            states.observe(status(i % 2 == 0, "FetchError: x" if i % 2 else None))
        clock.now = 65  # still within the minute of the first two lines: nothing
        states.observe(status(False, "FetchError: y"))
        clock.now = 75  # the interval is over and the state differs from the one last logged (up)
        states.observe(status(False, "FetchError: y"))
        clock.now = 80
        states.observe(status(False, "FetchError: y"))
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["source admin:c is down: FetchError: bootstrap b:9092: no answer within 12s",
                     "source admin:c (bootstrap b:9092) is up again",
                     "source admin:c (bootstrap b:9092) is down: FetchError: y (98 state changes since the last "
                     "line not logged)"], lines


def test_a_source_down_from_the_start_is_logged_and_its_recovery_too(caplog):
    clock = Clock()
    states = StateLog(interval=60, clock=clock, logger=logging.getLogger("test.states2"))
    with caplog.at_level(logging.INFO, logger="test.states2"):
        states.observe(status(False, "boom"))
        clock.now = 5  # a recovery right after: said at once
        states.observe(status(True))
    assert [r.getMessage() for r in caplog.records] == [
        "source admin:c (bootstrap b:9092) is down: boom", "source admin:c (bootstrap b:9092) is up again"]




def test_a_log_dir_down_in_a_refresh_that_succeeded_names_its_path_and_reason(tmp_path):
    """The log-dir source is up, one of its log dirs is down (a checkpoint Kafka would not read): the
    exported last error is that log dir's, with its path and why, never an empty message."""
    from collectors.logdirs.scanner import LogDirScanner
    from recordfixtures import three_v2_batches

    good, bad = tmp_path / "good", tmp_path / "bad"
    for d in (good, bad):
        three_v2_batches(d / "orders-0" / "00000000000000000000.log")
        (d / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAA\n")
    (bad / "cleaner-offset-checkpoint").write_text("7\n0\n")  # a version Kafka does not write
    store = Store()
    store.register("log_dirs:c:1", "log_dirs", "c", "1")
    store.success("log_dirs:c:1", LogDirScanner([good, bad], broker_id="1").refresh(), 0.1, 100.0)
    reg = CollectorRegistry(auto_describe=False)
    register_all(reg, store)
    [sample] = [s for m in reg.collect() for s in m.samples if s.name == "kafka_compaction_source_last_error_info"]
    assert sample.labels["error"] == "checkpoint", sample.labels
    # (the path shortened to its last two parts, as every message label: collectors.export.view.message_label)
    assert sample.labels["message"].startswith(".../bad/cleaner-offset-checkpoint: line 1: "), sample.labels
    assert "unsupported version 7" in sample.labels["message"], sample.labels

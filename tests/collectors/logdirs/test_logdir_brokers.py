"""collectors.logdirs.brokers: a broker-role collector on a Kubernetes node (the DaemonSet reads the kubelet's
pod volumes) started before any broker volume was mounted there follows the brokers found at each refresh:
the path is down with no broker label while it holds none (never "local": every node's collector would
claim that one), broker 1's log dir appearing gets its own source labelled 1 (with its summary cache file),
broker 2's beside it a second one, and broker 1's going away withdraws its series, said once in the log.
Log dirs with real record batches in kubelet-shaped trees (tests/collectors/logdirs/test_logdir_paths.py); the
collector built as ``collect`` serving builds it (headers first, a state dir) and refreshed in-process."""

from __future__ import annotations

import logging
import shutil
import threading
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from collectors.app import build
from collectors.logdirs.summary_state import cache_name
from monitor.settings.config import BrokerConfig, ClusterConfig, Config, Intervals
from monitor.settings.configflags import with_command_line
from test_logdir_paths import POD, log_dir


def page(col) -> dict:
    """The exported page: (name, labels without cluster) -> value; an empty label is none (as Prometheus has it)."""
    return {(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "cluster" and v))): s.value
            for fam in text_string_to_metric_families(col.exposition().decode()) for s in fam.samples}


def brokers(samples: dict, prefix: str) -> set:
    """The broker label of every series named ``prefix...`` ("" for none)."""
    return {dict(labels).get("broker", "") for name, labels in samples if name.startswith(prefix)}


def test_the_scanners_follow_the_brokers_found_on_the_node(tmp_path, caplog):
    pods, state = tmp_path / "pods", tmp_path / "state"
    pods.mkdir()  # the kubelet's pods dir: no broker volume mounted yet
    cfg = with_command_line(Config(role="broker", granularity="partition"), log_dirs=[str(pods)])
    col = build(cfg, str(state), headers_first=True)
    try:
        def sources():
            return sorted((s.name, s.broker) for s in col.store.statuses() if s.kind == "log_dirs")

        col.runner.refresh_all()
        got = page(col)
        assert sources() == [("log_dirs:default", None)]
        assert got[("kafka_compaction_log_dir_up", (("log_dir", str(pods)),))] == 0.0  # down, no broker label
        assert got[("kafka_compaction_log_dir_down_info", (("log_dir", str(pods)), ("reason", "not_found")))] == 1.0
        assert brokers(got, "kafka_compaction_") == {""}

        one = log_dir(tmp_path / POD.format(uid="a") / "kafka-log1", node=1)
        col.runner.refresh_all()
        got = page(col)
        assert sources() == [("log_dirs:default:1", "1")]
        assert got[("kafka_compaction_log_dir_up", (("broker", "1"), ("log_dir", str(one))))] == 1.0
        assert brokers(got, "kafka_compaction_partition_") == brokers(got, "kafka_compaction_log_dir_") == {"1"}
        assert (state / cache_name("default", "1", [str(pods)])).is_file()  # its own summary cache

        two = log_dir(tmp_path / POD.format(uid="b") / "kafka-log2", node=2)
        col.runner.refresh_all()
        got = page(col)
        assert sources() == [("log_dirs:default:1", "1"), ("log_dirs:default:2", "2")]
        assert got[("kafka_compaction_log_dir_up", (("broker", "2"), ("log_dir", str(two))))] == 1.0
        assert got[("kafka_compaction_log_dir_up", (("broker", "1"), ("log_dir", str(one))))] == 1.0
        assert ("kafka_compaction_log_dir_up", (("broker", "1"), ("log_dir", str(two)))) not in got  # each its own
        assert brokers(got, "kafka_compaction_partition_") == {"1", "2"}

        shutil.rmtree(tmp_path / POD.format(uid="a"))  # broker 1's pod moved to another node
        with caplog.at_level(logging.WARNING, "compaction_monitor.collect"):
            col.runner.refresh_all()
            col.runner.refresh_all()
        got = page(col)
        assert sources() == [("log_dirs:default:2", "2")]
        assert brokers(got, "kafka_compaction_partition_") == brokers(got, "kafka_compaction_log_dir_") == {"2"}
        assert [r.getMessage() for r in caplog.records if "no longer found" in r.getMessage()] == [
            f"cluster default: broker 1's log dirs are no longer found under {pods}: its source log_dirs:default:1 "
            "is removed and its series withdrawn"]
    finally:
        col.close()


def test_a_broker_the_config_names_keeps_its_label_on_a_path_holding_none(tmp_path):
    """The configured broker id labels the path that holds no broker yet, and the one broker found there."""
    pods = tmp_path / "pods"
    pods.mkdir()
    cfg = Config(role="broker", clusters=(ClusterConfig(name="c", brokers=(
        BrokerConfig(id="kafka-0", log_dirs=(str(pods),)),)),))
    col = build(cfg)
    try:
        col.runner.refresh_all()
        assert page(col)[("kafka_compaction_log_dir_up", (("broker", "kafka-0"), ("log_dir", str(pods))))] == 0.0
        one = log_dir(tmp_path / POD.format(uid="a") / "kafka-log1", node=1)
        col.runner.refresh_all()
        got = page(col)
        assert got[("kafka_compaction_log_dir_up", (("broker", "kafka-0"), ("log_dir", str(one))))] == 1.0
        assert [s.name for s in col.store.statuses()] == ["log_dirs:c:kafka-0"]
    finally:
        col.close()


def test_the_refresh_that_finds_a_broker_reads_its_log_dir_once(tmp_path):
    """Carried item (issue 42): the no-broker source's refresh that found broker 1's log dir read every
    segment of it, then the source the hook put in its place read them all again; likewise broker 1's
    source (it kept every log dir) read broker 2's when it showed beside it. Now a scanner that the
    node.ids found are no longer for reads nothing: each segment is read once, by its broker's own source.
    Counted by every log-dir refresh's ``segments_read`` and ``bytes_read`` (the snapshots in the store, seen
    by a hook that runs before the one replacing the source)."""
    pods = tmp_path / "pods"
    pods.mkdir()
    cfg = with_command_line(Config(role="broker", granularity="partition"), log_dirs=[str(pods)])
    col = build(cfg, str(tmp_path / "state"), headers_first=True)
    seen: dict[int, tuple] = {}  # id -> (source, snapshot): each refresh's snapshot once (kept, so ids stay unique)

    def reads() -> list:
        out = sorted((name, snap.segments_read, snap.bytes_read) for name, snap in seen.values())
        seen.clear()
        return out

    col.runner.on_refresh.insert(0, lambda: seen.update(
        (id(s.snapshot), (s.name, s.snapshot)) for s in col.store.statuses()
        if s.kind == "log_dirs" and s.snapshot is not None))
    try:
        col.runner.refresh_all()
        assert reads() == [("log_dirs:default", 0, 0)]
        one = log_dir(tmp_path / POD.format(uid="a") / "kafka-log1", node=1)
        col.runner.refresh_all()
        none, (first, segments, read) = reads()
        assert none == ("log_dirs:default", 0, 0)  # found broker 1's log dir, handed it over unread
        assert first == "log_dirs:default:1" and segments == len(list(one.glob("*/*.log"))) > 0 and read > 0

        two = log_dir(tmp_path / POD.format(uid="b") / "kafka-log2", node=2)
        col.runner.refresh_all()
        got = reads()
        # broker 1's scanner (of every log dir) found broker 2's beside it: replaced by one of broker 1's log dirs
        # only (same name; its summary cache loaded), having read nothing; broker 2's read once, by its own
        assert [name for name, *_ in got] == ["log_dirs:default:1", "log_dirs:default:1", "log_dirs:default:2"]
        assert got[-1][1] == len(list(two.glob("*/*.log"))) > 0
        assert sum(n for _, n, _ in got) == got[-1][1]
        assert brokers(page(col), "kafka_compaction_partition_") == {"1", "2"}
    finally:
        col.close()


def _until(check, seconds: float = 20.0):
    """Polls ``check`` (the serving runner refreshes on its own threads) until it holds; its last value."""
    deadline, pause = time.monotonic() + seconds, threading.Event()
    while not (got := check()) and time.monotonic() < deadline:
        pause.wait(0.05)
    return got


@pytest.mark.slow  # the runner's threads, waited on over several refreshes
def test_serving_a_broker_found_later_is_read_on_its_own_thread_and_one_gone_stops(tmp_path):
    """The same, the runner serving (each source on its own thread): the source added for broker 1 refreshes
    by itself, the no-broker source it replaces stops, and the no-broker one is back once broker 1 is gone."""
    pods = tmp_path / "pods"
    pods.mkdir()
    cfg = with_command_line(Config(role="broker", granularity="partition", intervals=Intervals(log_dirs=0.1)),
                            log_dirs=[str(pods)])
    col = build(cfg, str(tmp_path / "state"), headers_first=True)
    col.runner.start()
    try:
        def up():
            return {dict(labels).get("broker", ""): v for (name, labels), v in page(col).items()
                    if name == "kafka_compaction_log_dir_up"}

        assert _until(lambda: up() == {"": 0.0}), up()
        log_dir(tmp_path / POD.format(uid="a") / "kafka-log1", node=1)
        assert _until(lambda: up() == {"1": 1.0}), up()
        assert _until(lambda: [t.name for t in col.runner._threads if t.is_alive()] == [
            "source-log_dirs:default:1"])  # the no-broker source's thread ended
        shutil.rmtree(tmp_path / POD.format(uid="a"))
        assert _until(lambda: up() == {"": 0.0}), up()
    finally:
        col.close()

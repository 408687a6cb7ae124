"""A long-running collector never dies of one bad source: it keeps answering /metrics, marks the
source down, counts the error by kind, and recovers when the source does.

The endpoint here is a fake on purpose (tests/faultserver.py): it injects what a real broker cannot be
made to show (an HTML login page, a 500, garbage, a hang, a huge, endless or dripping page)."""

from __future__ import annotations

import shutil
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from collectors.serving import webserver
from collectors.app import build
from faultserver import FaultServer
from monitor.settings.config import BrokerConfig, ClusterConfig, Config, Intervals, Timeouts
from recordfixtures import items, three_v2_batches, v2, write
from waiting import wait_for


@pytest.fixture
def running(request):
    """A collector scraping the fault server every 0.2 s, served on /metrics; the JMX fetch timeout is
    1 s unless the test passes another (indirect parametrization)."""
    fs = FaultServer()
    jmx_timeout = getattr(request, "param", 1)
    cfg = Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", jmx_url=fs.url),)),),
                 intervals=Intervals(jmx=0.2, log_dirs=0.2),
                 timeouts=Timeouts(jmx=jmx_timeout, max_page_bytes=1 << 20))
    col = build(cfg)
    col.rendered.start()
    server = webserver.start(col.rendered, "127.0.0.1", 0)  # collect's own server: the page as of the last refresh
    col.runner.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    yield fs, col, url
    col.close()
    server.shutdown()
    server.server_close()
    fs.close()


def scrape(url):
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(samples, name, **labels):
    for (n, lb), v in samples.items():
        if n == name and all(dict(lb).get(k) == str(w) for k, w in labels.items()):
            return v
    return None


def wait(url, pred, what):
    """Scrape /metrics until ``pred`` holds on the samples; return them."""
    return wait_for(lambda: (lambda s: s if pred(s) else None)(scrape(url)), 10, what)


def up_with_gauges(s):
    return value(s, "kafka_compaction_source_up", kind="jmx") == 1.0 \
        and value(s, "kafka_compaction_broker_max_dirty_ratio") == 0.12  # 12.0 percent on the fake's page


@pytest.mark.parametrize("mode, kind", [("html", "parse"), ("500", "http"), ("garbage", "parse"),
                                        ("hang", "timeout"), ("huge", "too_large"), ("endless", "too_large"),
                                        ("claims_huge", "too_large"), ("drip", "deadline"),
                                        ("drip_headers", "deadline"), ("close", "read"), ("bomb", "parse")])
def test_bad_source_is_marked_down_counted_and_recovers(running, mode, kind):
    fs, col, url = running
    wait(url, up_with_gauges, "the source up with the fake's gauges")
    fs.set_mode(mode)
    s = wait(url, lambda s: (value(s, "kafka_compaction_source_errors_total", kind="jmx", error=kind) or 0) >= 1
             and value(s, "kafka_compaction_source_up", kind="jmx") == 0.0,
             f"the source marked down with a {kind} error counted")
    assert value(s, "kafka_compaction_broker_max_dirty_ratio") is None  # no stale numbers from a down source
    if mode == "hang":
        # /metrics answers while the collector's fetch is still held by the source
        assert fs.held >= 1
        s = scrape(url)
        assert value(s, "kafka_compaction_source_up", kind="jmx") == 0.0 and fs.held >= 1
    fs.set_mode("ok")
    wait(url, up_with_gauges, "the source up again with the fake's gauges")


@pytest.mark.parametrize("running", [300], indirect=True)  # a fetch timeout far beyond the scrape's
def test_metrics_answers_while_a_fetch_is_held(running):
    """/metrics is served from what the collector last knew: it does not wait for a source, even one
    that holds the collector's fetch open for longer than the scraper would wait."""
    fs, col, url = running
    wait(url, up_with_gauges, "the source up with the fake's gauges")
    fs.set_mode("hang")
    wait_for(lambda: fs.held >= 1, 10, "the fault server to hold a fetch")
    s = scrape(url)  # urlopen gives up after 10 s: a /metrics that waited for the fetch fails here
    assert fs.held >= 1, "the fetch was let go before /metrics answered"
    assert value(s, "kafka_compaction_source_up", kind="jmx") is not None
    fs.set_mode("ok")
    wait(url, up_with_gauges, "the source up again once the fetch is let go")


def test_broker_gone_is_a_connect_error(running):
    fs, col, url = running
    wait(url, lambda s: value(s, "kafka_compaction_source_up", kind="jmx") == 1.0, "the source up")
    fs.close()
    wait(url, lambda s: (value(s, "kafka_compaction_source_errors_total", kind="jmx", error="connect") or 0) >= 1,
         "a connect error counted")


# ------------------------------------------------------------------ log dirs

def _log_dir(tmp_path):
    """Two partitions, each a rolled segment of offsets 0..5 (three v2 batches) and an empty active one."""
    d = tmp_path / "logs"
    for t in ("good-0", "broken-0"):
        three_v2_batches(d / t / "00000000000000000000.log")
        (d / t / "00000000000000000006.log").write_bytes(b"")
    (d / "cleaner-offset-checkpoint").write_text("0\n2\ngood 0 0\nbroken 0 0\n")
    return d


def test_log_dir_faults_do_not_stop_other_partitions(tmp_path):
    from collectors.logdirs.scanner import LogDirScanner

    d = _log_dir(tmp_path)
    scanner = LogDirScanner([d])
    snap = scanner.refresh()
    assert {r.state.topic for r in snap.partitions} == {"good", "broken"} and not snap.partition_errors

    # a segment truncated while the broker was writing it / corrupted on disk
    seg = d / "broken-0" / "00000000000000000000.log"
    data = seg.read_bytes()
    seg.write_bytes(data[:100] + b"\xff" * 50 + data[150:])
    # a partition being deleted
    (d / "gone-0.0123456789abcdef0123456789abcdef-delete").mkdir()
    snap = scanner.refresh()
    assert {r.state.topic for r in snap.partitions} == {"good", "broken"}
    assert ("broken", 0) in snap.partition_errors and "byte" in snap.partition_errors[("broken", 0)]
    assert ("gone-0.0123456789abcdef0123456789abcdef-delete", "delete") in [(f, k) for _, f, k in snap.not_live]
    assert not snap.down

    # a malformed cleaner checkpoint: the log dir is down, none of its partitions computed without it
    good_checkpoint = (d / "cleaner-offset-checkpoint").read_text()
    (d / "cleaner-offset-checkpoint").write_text("0\n5\ngood 0 0\n")
    snap = scanner.refresh()
    assert not snap.partitions and snap.down[str(d)][0] == "checkpoint"
    assert any("cleaner-offset-checkpoint" in k for k in snap.log_dir_errors)
    (d / "cleaner-offset-checkpoint").write_text(good_checkpoint)

    # an unreadable file: a dangling symlink where a segment should be
    (d / "broken-0" / "00000000000000000003.log").symlink_to(tmp_path / "nowhere")
    snap = scanner.refresh()
    assert [r.state.topic for r in snap.partitions] == ["good"] and ("broken", 0) in snap.partition_errors

    # the whole log dir vanishes: an error for it, no exception
    shutil.rmtree(d)
    snap = scanner.refresh()
    assert not snap.partitions and str(d) in snap.log_dir_errors and snap.down[str(d)][0] == "io"


def test_incremental_refresh_reads_only_what_changed(tmp_path):
    from collectors.logdirs.scanner import LogDirScanner

    d = _log_dir(tmp_path)
    scanner = LogDirScanner([d])
    first = scanner.refresh()
    assert first.segments_read == 2  # the two non-empty segments
    again = scanner.refresh()
    assert again.segments_read == 0 and again.bytes_read == 0
    active = d / "good-0" / "00000000000000000006.log"
    src = write(tmp_path / "src" / "00000000000000000006.log", [v2(items(range(6, 8))), v2(items(range(8, 10)), "lz4")])
    active.write_bytes(src.path.read_bytes())  # appended to the empty active segment
    third = scanner.refresh()
    assert third.segments_read == 1 and third.bytes_read == src.path.stat().st_size
    good = next(r.state for r in third.partitions if r.state.topic == "good")
    assert good.records == 6 + 4


@pytest.mark.parametrize("mode, kind", [("drip", "deadline"), ("endless", "too_large"), ("drip_headers", "deadline")])
def test_collect_once_ends_by_the_deadline_on_a_dripping_or_endless_page(tmp_path, mode, kind):
    """`collect --once` against a page that never ends: exit 1 (a data fault), the source named down with
    the reason, the error counted by kind in the printed metrics."""
    import subprocess
    import sys

    fs = FaultServer()
    try:
        fs.set_mode(mode)
        cfg = tmp_path / "monitor.yaml"
        cfg.write_text(f"clusters:\n  - name: c\n    brokers:\n      - id: 1\n        jmx_url: {fs.url}\n"
                       f"timeouts: {{jmx: 1, max_page_bytes: 1048576}}\n")
        # a child, not tests/clirun.py: the deadline is what is tested; a run that misses it is cut off here
        proc = subprocess.run([sys.executable, "-m", "cli", "collect", "--once", "--config", str(cfg)],
                              capture_output=True, text=True, timeout=120)  # a hang guard, not a timing
    finally:
        fs.close()
    assert proc.returncode == 1, proc.stderr
    assert f"source jmx:c:1 failed: FetchError: {fs.url}" in proc.stderr and "Traceback" not in proc.stderr
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for fam in text_string_to_metric_families(proc.stdout) for s in fam.samples}
    assert value(samples, "kafka_compaction_source_errors_total", kind="jmx", error=kind) == 1.0
    assert value(samples, "kafka_compaction_source_up", kind="jmx") == 0.0


def test_impossible_checkpoint_entries_make_only_their_partition_unknown(tmp_path):
    """A well-formed checkpoint with an offset past the log end, a negative offset and a negative
    partition: the two partitions are left out with their problem named (file and line), the third
    partition and the log dir stay up, and each entry is counted as a checkpoint_entry error."""
    d = tmp_path / "logs"
    for t in ("good-0", "past-0", "neg-0"):
        three_v2_batches(d / t / "00000000000000000000.log")  # offsets 0..5
        (d / t / "00000000000000000006.log").write_bytes(b"")
    (d / "cleaner-offset-checkpoint").write_text("0\n4\ngood 0 6\npast 0 7\nneg 0 3\nghost -2 0\n")
    (d / "log-start-offset-checkpoint").write_text("0\n1\nneg 0 -1\n")
    cfg = Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", log_dirs=(str(d),)),)),))
    col = build(cfg)
    try:
        assert col.runner.refresh_all()
        reg = col.registry
        part = {"cluster": "c", "broker": "1", "partition": "0"}
        assert reg.get_sample_value("kafka_compaction_partition_cleanable_ratio", {**part, "topic": "good"}) == 0.0
        for t in ("past", "neg"):
            assert reg.get_sample_value("kafka_compaction_partition_cleanable_ratio", {**part, "topic": t}) is None
        assert reg.get_sample_value("kafka_compaction_log_dir_up", {"cluster": "c", "broker": "1",
                                                                    "log_dir": str(d)}) == 1.0
        errors = {s.labels["error"]: s.value for fam in reg.collect() for s in fam.samples
                  if s.name == "kafka_compaction_source_errors_total"}
        assert errors == {"checkpoint_entry": 3.0}
        snap = col.store.snapshot("log_dirs:c:1")
        assert snap.partition_errors[("past", 0)] == (f"{d}/cleaner-offset-checkpoint: line 4: past 0 7: offset 7 is past "
                                                   "the log end offset 6; the partition's compaction figures are unknown")
        assert snap.partition_errors[("neg", 0)].startswith(f"{d}/log-start-offset-checkpoint: line 3: neg 0 -1: "
                                                         "negative offset -1")
        assert snap.log_dir_errors[f"{d}/cleaner-offset-checkpoint:6"].endswith(
            "line 6: ghost -2 0: negative partition -2; it names no partition, ignored")
    finally:
        col.close()

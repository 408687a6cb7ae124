"""The collector says what it does at INFO (issue 33 point 6; ``collectors.serving.refresh_log``): one start-up line of
what it watches (sources by kind and count, the admin API's bootstrap, log-dir paths, role, granularity,
state dir, I/O budget, where it serves; never a password), then one line per round of refreshes (sources up
of all, the down ones named, partitions, bytes read, the slowest source), not more often than the shortest
source interval. Before, a running collector printed "serving ..." once and never logged a refresh.

The rounds are driven here through the real store, runner and log-dir scanner over log dirs made in the test,
with an injected clock; ``collect --once`` in process; a serving collector as its own process."""

from __future__ import annotations

import logging
import re
import sys
from io import StringIO

import pytest

from boundedhttp import FetchError
from collectors.app import run_collect
from collectors.logdirs.scanner import LogDirScanner
from collectors.serving.refresh_log import RefreshLog, startup_line
from collectors.serving.runner import Runner, Source, Store
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from procs import process
from recordfixtures import three_v2_batches
from waiting import wait_for


def make_logs(d, n: int, start: int = 0):
    """``n`` compacted partitions of three batches (502 bytes) each, cleaned to offset 3."""
    for i in range(start, start + n):
        three_v2_batches(d / f"orders-{i}" / "00000000000000000000.log")
    (d / "cleaner-offset-checkpoint").write_text(
        f"0\n{start + n}\n" + "".join(f"orders {i} 3\n" for i in range(start + n)))
    return d


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_start_up_line_says_what_is_watched_and_no_secret():
    cfg = Config(granularity="partition", io_budget_bytes_per_second=20 * 1024 * 1024, clusters=(ClusterConfig(
        name="prod", bootstrap_servers="k1:9093,k2:9093",
        client={"security.protocol": "SASL_SSL", "sasl.username": "monitor", "sasl.password": "s3cret"},
        brokers=(BrokerConfig(id="1", jmx_url="http://jmx:jmxpw@k1:7071/metrics", log_dirs=("/data/a",),
                              cleaner_log="/logs/log-cleaner.log"),
                 BrokerConfig(id="2", jmx_url="http://k2:7071/metrics", log_dirs=("/data/b",),
                              io_budget_bytes_per_second=1024 * 1024))),))
    sources = [Source("admin:prod", "admin", "prod", dict, 30), Source("consumer_groups:prod", "consumer_groups",
                                                                       "prod", dict, 30),
               Source("jmx:prod:1", "jmx", "prod", dict, 15), Source("jmx:prod:2", "jmx", "prod", dict, 15),
               Source("log_dirs:prod:1", "log_dirs", "prod", dict, 60),
               Source("log_dirs:prod:2", "log_dirs", "prod", dict, 60),
               Source("cleaner_log:prod:1", "cleaner_log", "prod", dict, 15)]
    line = startup_line(cfg, sources, state_dir="/var/lib/compaction-monitor",
                        listening="http://0.0.0.0:9690/metrics")
    for part in ("cluster prod: ", "1 admin API source", "1 consumer-groups source", "2 JMX pages",
                 "2 log-dir scanners", "1 cleaner log", "bootstrap k1:9093,k2:9093 (SASL_SSL)",
                 "log dirs under /data/a, /data/b", "role all", "granularity partition",
                 "state dir /var/lib/compaction-monitor", "log-dir I/O budget 1.0 MiB/s to 20.0 MiB/s per broker",
                 "serving http://0.0.0.0:9690/metrics"):
        assert part in line, (part, line)
    assert "s3cret" not in line and "jmxpw" not in line and "\n" not in line
    assert startup_line(Config(), [], state_dir=None, listening=None).endswith(
        "no state dir (every segment read at start); once (no listener)")


def test_one_line_per_round_not_more_often_than_the_shortest_interval(tmp_path, caplog):
    logs = make_logs(tmp_path / "logs", 3)
    clock, store = Clock(), Store()
    scanner = LogDirScanner([logs])
    sources = [Source("log_dirs:c:1", "log_dirs", "c", scanner.refresh, 60, "1"),
               Source("jmx:c:1", "jmx", "c", dict, 15, "1", endpoint="http://k1:7071/metrics")]
    said = RefreshLog(store, clock=clock)
    said.attach(Runner(store, sources))  # not started: the refreshes are driven here, in order

    def dirs(seconds: float):
        store.success("log_dirs:c:1", scanner.refresh(), seconds, clock.now)
        said()

    def jmx_down(seconds: float):
        store.failure("jmx:c:1", FetchError("http://k1:7071/metrics", "timeout", "no answer in 5 s"), seconds)
        said()

    caplog.set_level(logging.INFO, logger="compaction_monitor.collect")
    lines = lambda: [r.getMessage() for r in caplog.records if r.name == "compaction_monitor.collect"]  # noqa: E731
    said()
    dirs(0.25)
    assert lines() == []  # the JMX source has not refreshed yet: the round is not over
    jmx_down(5.0)
    assert lines() == ["refresh: 1 of 2 sources up (down: jmx:c:1 (timeout)); 3 partitions in log dirs; "
                       "1.5 KiB read from log dirs; slowest jmx:c:1 5 s"]
    assert caplog.records[-1].levelno == logging.INFO

    make_logs(logs, 1, start=3)  # a partition more: its 502 bytes are read by the next refresh
    clock.now += 5
    dirs(0.5)
    jmx_down(5.0)
    assert len(lines()) == 1  # a whole round, but 5 s after the last line: the shortest interval is 15 s
    make_logs(logs, 1, start=4)
    clock.now += 10
    dirs(0.5)
    assert len(lines()) == 2  # 15 s on, every source refreshed since the last line
    assert lines()[-1].startswith("refresh: 1 of 2 sources up (down: jmx:c:1 (timeout)); 5 partitions in log dirs; "
                                  "1004 B read from log dirs")  # both refreshes since the last line, each once


def test_collect_once_logs_what_it_watches_and_its_refresh(tmp_path, caplog):
    logs = make_logs(tmp_path / "logs", 3)
    cfg = Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", log_dirs=(str(logs),)),)),))
    caplog.set_level(logging.INFO, logger="compaction_monitor.collect")
    out, err = StringIO(), StringIO()
    assert run_collect(cfg, once=True, out=out, err=err) == 0, err.getvalue()
    lines = [r.getMessage() for r in caplog.records if r.name == "compaction_monitor.collect"]
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"watching cluster c: 1 log-dir scanner, log dirs under {logs}; role all; ")
    assert lines[0].endswith("once (no listener)")
    assert re.fullmatch(r"refresh: 1 of 1 sources up; 3 partitions in log dirs; 1\.5 KiB read from log dirs; "
                        r"slowest log_dirs:c:1 \S+ m?s", lines[1]), lines[1]


SERVE = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
from cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow  # a process
def test_a_serving_collector_logs_its_start_and_its_first_refresh(tmp_path):
    logs = make_logs(tmp_path / "logs", 40)
    out = tmp_path / "collect.log"
    cmd = [sys.executable, "-c", SERVE, "collect", "--log-dir", str(logs), "--port", "0", "--address", "127.0.0.1",
           "--state-dir", str(tmp_path / "state"), "--cluster", "c"]
    with process(cmd, out):
        text = wait_for(lambda: "refresh: " in out.read_text() and out.read_text(), 60, "a refresh line")
    start = re.search(r"INFO compaction_monitor.collect: (watching .*)", text).group(1)
    assert start.startswith(f"watching cluster c: 1 log-dir scanner, log dirs under {logs}; role all; "
                            f"granularity topic; state dir {tmp_path / 'state'}; log-dir I/O budget 20.0 MiB/s per "
                            "broker; serving http://127.0.0.1:"), start
    refresh = re.search(r"INFO compaction_monitor.collect: (refresh: .*)", text).group(1)
    assert refresh.startswith("refresh: 1 of 1 sources up; 40 partitions in log dirs; "), refresh
    assert text.index(start) < text.index(refresh)

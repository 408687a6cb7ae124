"""collectors.jmx.template: a broker-role collector given only a folder above log dirs and a JMX URL
template reads the JMX page of each broker the log-dir discovery finds there (meta.properties' node.id
in the URL), labelled as that broker's partitions, so a partition's cause that weighs the broker's
cleaner gauges (``cleaner_dead``) is found; a broker found later gets its JMX source then, one gone loses
it. Real inputs: a log dir written with kafka-python's builders in a Strimzi-shaped tree
(``data/kafka-log7``), the JMX exporter page recorded from Kafka 4.3 with DeadThreadCount set to 1 (a dead
cleaner thread cannot be made on purpose in a real broker), served over real HTTP on loopback."""

from __future__ import annotations

import gzip
import http.server
import shutil
import threading

import pytest

import factsfixtures as ff
from clirun import run_cli
from collectors.app import build
from monitor.settings.config import Config
from monitor.settings.configflags import with_command_line
from waiting import wait_for

DEAD = gzip.decompress(ff.PAGE.read_bytes()).decode().replace(
    "kafka_log_logcleaner_deadthreadcount 0.0", "kafka_log_logcleaner_deadthreadcount 1.0").encode()


@pytest.fixture
def pages():
    """A JMX exporter serving broker 7's page at /broker-7/metrics only (404 elsewhere); the paths asked."""
    asked = []

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            asked.append(self.path)
            ok = self.path == "/broker-7/metrics"
            self.send_response(200 if ok else 404)
            body = DEAD if ok else b"not found\n"
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/broker-{{node_id}}/metrics", asked
    finally:
        server.shutdown()
        server.server_close()
        t.join(5)


def _log_dir(root):
    """factsfixtures' log dir of broker ``7`` without its segment swap in progress (no fault this refresh)."""
    d = ff.log_dir(root, node="7")
    (d / "orders-1" / f"{0:020d}.index.swap").unlink()
    return d


def _cause_lines(text: str, cause: str) -> list[str]:
    return [line for line in text.splitlines()
            if line.startswith("kafka_compaction_partition_compaction_cause{") and f'cause="{cause}"' in line
            and line.endswith(" 1.0")]


def _collect_once(*argv: str) -> str:
    proc = run_cli("collect", "--once", *argv)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_broker_found_in_the_log_dirs_gets_its_jmx_page_and_its_dead_cleaner_is_the_cause(tmp_path, pages):
    template, asked = pages
    _log_dir(tmp_path / "data" / "kafka-log7")
    argv = ["--role", "broker", "--log-dir", str(tmp_path / "data")]
    out = _collect_once(*argv, "--jmx-url-template", template)
    assert asked == ["/broker-7/metrics"]
    assert 'kafka_compaction_broker_cleaner_dead_threads{broker="7",cluster="default"} 1.0' in out
    [dead] = _cause_lines(out, "cleaner_dead")
    assert 'broker="7"' in dead and 'topic="orders"' in dead and 'partition="0"' in dead
    # without the template (the collector before it): no page read, the cause is not found
    assert _cause_lines(_collect_once(*argv), "cleaner_dead") == [] and asked == ["/broker-7/metrics"]


def test_a_broker_found_later_gets_its_jmx_source_then_and_one_gone_loses_it(tmp_path, pages):
    template, asked = pages
    (tmp_path / "data").mkdir()  # the volume is there, the broker's log dir not yet
    cfg = with_command_line(Config(role="broker"), log_dirs=[str(tmp_path / "data")], jmx_url_template=template)
    col = build(cfg)
    try:
        def jmx():
            return {s.name: (s.broker, s.endpoint, s.up) for s in col.store.statuses() if s.kind == "jmx"}

        col.runner.refresh_all()
        assert jmx() == {} and asked == []
        _log_dir(tmp_path / "data" / "kafka-log7")
        col.runner.refresh_all()
        # the log dirs' scanner found later is labelled by its node.id (collectors.logdirs.brokers): the page too
        assert jmx() == {"jmx:default:7": ("7", template.replace("{node_id}", "7"), True)}
        assert asked == ["/broker-7/metrics"]
        assert _cause_lines(col.exposition().decode(), "cleaner_dead")
        shutil.rmtree(tmp_path / "data" / "kafka-log7")  # the broker's pod moved to another node
        col.runner.refresh_all()
        assert jmx() == {} and "kafka_compaction_broker_cleaner_dead_threads{" not in col.exposition().decode()
    finally:
        col.close()


def test_a_broker_whose_page_the_config_gives_is_read_there_not_from_the_template(tmp_path, pages):
    template, asked = pages
    _log_dir(tmp_path / "data" / "kafka-log7")
    given = template.replace("{node_id}", "7").replace("/broker-7/", "/given/")
    cfg = with_command_line(Config(role="broker"), log_dirs=[str(tmp_path / "data")], jmx_urls=[given],
                            jmx_url_template=template)
    col = build(cfg)
    try:
        col.runner.refresh_all()
        assert [(s.name, s.endpoint) for s in col.store.statuses() if s.kind == "jmx"] == [("jmx:default:7", given)]
        assert asked == ["/given/metrics"]
    finally:
        col.close()


def test_a_second_broker_appearing_under_a_scanner_labelled_by_node_id_gets_its_own_page(tmp_path, pages):
    """A scanner started on broker 7's volume is labelled 7; broker 9's volume appearing under the same path
    later gets its own scanner (collectors.logdirs.brokers) and its own page; 7's page is read as before."""
    template, asked = pages
    _log_dir(tmp_path / "data" / "kafka-log7")
    cfg = with_command_line(Config(role="broker"), log_dirs=[str(tmp_path / "data")], jmx_url_template=template)
    assert cfg.clusters[0].brokers[0].id == "7"
    col = build(cfg)
    try:
        col.runner.refresh_all()
        ff.log_dir(tmp_path / "data" / "kafka-log9", node="9")
        col.runner.refresh_all()
        assert sorted((s.name, s.up) for s in col.store.statuses() if s.kind == "jmx") == [
            ("jmx:default:7", True), ("jmx:default:9", False)]  # 9's page is not served here
        # a request is recorded when the server's thread handles it, which a loaded machine may run after the
        # collector gave up on the 404 page: waited for, then every request counted
        wait_for(lambda: "/broker-9/metrics" in asked, 30, "broker 9's page asked for")
        assert sorted(asked) == ["/broker-7/metrics"] * 2 + ["/broker-9/metrics"]
    finally:
        col.close()


def test_two_brokers_on_one_node_each_get_their_own_page_and_one_that_cannot_be_read_is_down_alone(tmp_path, pages):
    """A node running two broker pods: one scanner per node.id (collectors.logdirs.paths.split_by_broker), each with
    its own JMX source; broker 9's page is not served (another node pool's pod name, say): its source is down with
    the URL, broker 7's gauges and causes go on."""
    template, asked = pages
    _log_dir(tmp_path / "data" / "kafka-log7")
    ff.log_dir(tmp_path / "data-b" / "kafka-log9", node="9")
    cfg = with_command_line(Config(role="broker"), log_dirs=[str(tmp_path / "data"), str(tmp_path / "data-b")],
                            jmx_url_template=template)
    col = build(cfg)
    try:
        assert col.runner.refresh_all() is False
        jmx = {s.broker: s for s in col.store.statuses() if s.kind == "jmx"}
        wait_for(lambda: len(asked) >= 2, 30, "both pages asked for")  # recorded by the server's thread
        assert sorted(jmx) == ["7", "9"] and sorted(asked) == ["/broker-7/metrics", "/broker-9/metrics"]
        assert jmx["7"].up and not jmx["9"].up and "/broker-9/metrics" in jmx["9"].last_error
        [dead] = _cause_lines(col.exposition().decode(), "cleaner_dead")
        assert 'broker="7"' in dead
    finally:
        col.close()

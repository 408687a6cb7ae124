"""No output of the monitor carries a secret. One distinctive password is put where users put theirs:
the environment (``${env:...}``) for the Kafka client's SASL password and a JMX exporter's basic auth,
a mounted secret file (``${directory:...}``) for Jolokia's, and literally in a URL given on the command
line. Then every output is searched for it: ``collect --once`` (stdout, stderr, librdkafka's own log
lines), a running collector's /metrics and log, ``config check``, ``explain``, the dashboard's pages
(AppTest), the audit's report. The endpoints fail as wrong credentials do: a 401 and a 500 from a fault
server (which checks the password really was sent), and a SASL client against the session broker's
plaintext listener (librdkafka cannot authenticate)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from faultserver import FaultServer
from kafkatools import compacted, copy_partition, create_topic, produce, unique_topic
from procs import free_port, process
from waiting import wait_for
from webauth import bcrypt_hash

PW = "Canary-Pw-8mQz41"
ENV = {"KM_LEAK_PW": PW}
VIEWS = Path(__file__).resolve().parents[2] / "dashboards" / "views"


@pytest.fixture(scope="module")
def faults():
    unauthorized, broken = FaultServer(), FaultServer()
    unauthorized.set_mode("401")
    broken.set_mode("500")
    yield unauthorized, broken
    unauthorized.close()
    broken.close()


@pytest.fixture
def config(tmp_path, faults, kafka):
    """monitor.yaml with the password by reference only; the secret file beside it."""
    unauthorized, broken = faults
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "jolokia").write_text(PW + "\n")
    host_401 = unauthorized.url.removeprefix("http://")
    host_500 = broken.url.removeprefix("http://")
    cfg = {"clusters": [{
        "name": "leak", "bootstrap_servers": kafka.bootstrap,
        "client": {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                   "sasl.username": "monitor", "sasl.password": "${env:KM_LEAK_PW}"},
        "brokers": [{"id": 1, "jmx_url": "http://monitor:${env:KM_LEAK_PW}@" + host_401,
                     "log_dirs": [kafka.log_dir]},
                    {"id": 2, "jolokia_url": "http://monitor:${directory:%s:jolokia}@%s" % (
                        tmp_path / "secrets", host_500.removesuffix("/metrics") + "/jolokia")}]}],
        "intervals": {"jmx": 1, "log_dirs": 5, "admin": 2, "consumer_groups": 5},
        "timeouts": {"admin": 3, "jmx": 3}}
    path = tmp_path / "monitor.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert PW not in path.read_text()
    return path


# a child, not tests/clirun.py: everything the process writes is searched, whoever in it writes it
def cli(*args, timeout=180) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **ENV})


def no_secret(*texts) -> None:
    for t in texts:
        assert PW not in t and base64.b64encode(f"monitor:{PW}".encode()).decode() not in t


def config_bootstrap(path: Path) -> str:
    return yaml.safe_load(path.read_text())["clusters"][0]["bootstrap_servers"]


def sent_password(server: FaultServer) -> str:
    return base64.b64decode(server.last_headers["Authorization"].removeprefix("Basic ")).decode()


def test_collect_once_says_which_endpoint_failed_and_never_the_password(config, faults):
    unauthorized, broken = faults
    r = cli("collect", "--once", "--config", str(config),
            "--jmx-url", f"http://monitor:{PW}@{broken.url.removeprefix('http://')}")  # the literal form too
    assert r.returncode == 1, r.stderr
    no_secret(r.stdout, r.stderr)
    assert sent_password(unauthorized) == f"monitor:{PW}" and sent_password(broken) == f"monitor:{PW}"
    # wrong credentials: the endpoint named, its password masked
    assert f"http://monitor:***@{unauthorized.url.removeprefix('http://')}: HTTP 401" in r.stderr
    assert "http://monitor:***@" in r.stderr and "HTTP 500" in r.stderr
    # SASL against a plaintext listener: the cluster out of reach (kind credentials); the endpoint and protocol named
    assert f"source admin:leak (bootstrap {config_bootstrap(config)}, SASL_PLAINTEXT) failed: ClusterUnreachable" \
        in r.stderr
    assert "kafka_compaction_source_up" in r.stdout


def test_a_running_collector_and_the_dashboard_show_no_password(config, faults, tmp_path, monkeypatch):
    port = free_port()
    web = tmp_path / "web.yml"
    web.write_text(yaml.safe_dump({"basic_auth_users": {"monitor": bcrypt_hash(PW)}}))
    log = tmp_path / "collector.log"
    cmd = [sys.executable, "-m", "cli", "collect", "--config", str(config), "--address", "127.0.0.1",
           "--port", str(port), "--web.config.file", str(web)]
    metrics_url = f"http://127.0.0.1:{port}/metrics"
    auth = {"Authorization": "Basic " + base64.b64encode(f"monitor:{PW}".encode()).decode()}

    def scrape() -> str:
        with urllib.request.urlopen(urllib.request.Request(metrics_url, headers=auth), timeout=10) as r:
            return r.read().decode()

    def failed_everywhere():
        try:
            page = scrape()
        except OSError:
            return None
        kinds = ('kind="jmx"', 'kind="jolokia"', 'kind="admin"')
        lines = [ln for ln in page.splitlines() if ln.startswith("kafka_compaction_source_errors_total{")]
        return page if all(any(k in ln for ln in lines) for k in kinds) else None

    with process(cmd, log, env=ENV):
        page = wait_for(failed_everywhere, 90, "every secured source failing at least once")
        no_secret(page)
        # the dashboard reads the collector with the password from the environment, by reference
        dash_cfg = tmp_path / "dashboard.yaml"
        dash_cfg.write_text(yaml.safe_dump({"collector_url": f"http://monitor:${{env:KM_LEAK_PW}}@127.0.0.1:{port}/metrics"}))
        monkeypatch.setenv("KM_LEAK_PW", PW)
        monkeypatch.setenv("COMPACTION_MONITOR_NO_AUTOREFRESH", "1")
        for var in ("COMPACTION_MONITOR_PROMETHEUS_URL", "COMPACTION_MONITOR_COLLECTOR_URL",
                    "COMPACTION_MONITOR_AUDIT_DIR"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("COMPACTION_MONITOR_CONFIG", str(dash_cfg))
        for view in sorted(VIEWS.glob("*.py")):
            no_secret(*_page_text(view))
        # a data source that refuses the password: the error names it, masked
        unauthorized, _ = faults
        monkeypatch.setenv("COMPACTION_MONITOR_PROMETHEUS_URL",
                           f"http://monitor:{PW}@{unauthorized.url.removeprefix('http://').removesuffix('/metrics')}")
        texts = _page_text(VIEWS / "overview.py")
        no_secret(*texts)
        assert any("HTTP 401" in t and "monitor:***@" in t for t in texts), texts
    no_secret(log.read_text())


def _page_text(view: Path) -> list[str]:
    from streamlit.testing.v1 import AppTest  # here, not at the top: collecting the fast tier skips its 0.4 s

    at = AppTest.from_file(str(view), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    out = []
    for kind in ("markdown", "caption", "error", "warning", "info", "title", "header", "subheader", "text",
                 "code", "metric", "json", "table", "dataframe", "exception", "success"):
        for el in getattr(at, kind, []):
            out.append(str(getattr(el, "value", "")) + " " + str(getattr(el, "label", "")) + " " + repr(el))
    return out


def test_config_check_and_explain_show_no_password(config, kafka):
    r = cli("config", "check", str(config))
    assert r.returncode == 0, r.stderr
    no_secret(r.stdout, r.stderr)
    assert "${env:KM_LEAK_PW}" in r.stdout
    r = cli("explain", "--config", str(config), "--format", "json")
    no_secret(r.stdout, r.stderr)
    assert f"explain: cannot reach the cluster at {config_bootstrap(config)} (SASL authentication failed)" in \
        r.stderr  # SASL refused: named, not shown
    # a reference that cannot be resolved: a config error naming the key, exit 2
    import os

    env = {k: v for k, v in os.environ.items() if k != "KM_LEAK_PW"}
    r = subprocess.run([sys.executable, "-m", "cli", "collect", "--once", "--config", str(config)],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 2 and "clusters[0].client.sasl.password: ${env:KM_LEAK_PW}" in r.stderr


def test_the_audit_report_shows_no_password(config, kafka, tmp_path):
    topic = create_topic(kafka.bootstrap, unique_topic("leak-audit"), **compacted())
    produce(kafka.bootstrap, topic, [(f"k{i % 5}".encode(), b"v") for i in range(30)])
    src = copy_partition(Path(kafka.log_dir) / f"{topic}-0", tmp_path / "copy")
    out = tmp_path / "audits"
    r = cli("audit", "--input", str(src.parent), "--out", str(out), "--config", str(config), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    no_secret(r.stdout, r.stderr)
    written = [f for f in out.rglob("*") if f.is_file()]
    assert any(f.name == "report.html" for f in written)
    for f in written:
        no_secret(f.read_bytes().decode("utf-8", "replace"))
    summary = next(f for f in written if f.name == "summary.json")
    assert json.loads(summary.read_text())["partitions"] == 1

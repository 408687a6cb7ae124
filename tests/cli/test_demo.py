"""The main job end to end: `compaction-monitor demo` run headless for a bounded time brings up a
real broker, the workload, the collector, Prometheus, an audit and the dashboard; the stopped consumer
fires its alert, the topic held back by min.compaction.lag.ms is shown as blocked and fires no
CompactionLagging (nothing in it is cleanable); the first audit shows reclaimable bytes and a cleaning
time in seconds (the backlog topic held from the throttled cleaner); the exactly-once topic's
transaction left open is the one the broker's own kafka-transactions.sh find-hanging names, at the
broker's last stable offset, and holds the cleaner there; on exit everything it started is stopped. Every URL it prints opens; nothing fired on the healthy topic
for the whole run; nothing was written outside its --dir (the collector's summary cache); its
dashboard.log holds no deprecation line and stays small."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from cli.logdir_cmd import run_logdir
from kafkatools import CLI_MODULE, localtools
from tests_support_browser import NO_AUTOREFRESH
from monitor.settings.config import Config
from waiting import wait_for

EOS = "demo.eos-changelog"

pytestmark = [pytest.mark.kafka, pytest.mark.slow]  # about three minutes: until its first audit is written


def urls(text: str) -> dict:
    out = {}
    for label in ("Kafka bootstrap", "Collector metrics", "Prometheus", "Dashboard"):
        m = re.search(rf"^  {label}\s+(\S+)", text, re.M)  # the URL block the demo prints
        if m:
            out[label] = m.group(1)
    return out


def caches_outside(demo_dir: Path) -> list[Path]:
    """Summary caches of this demo's broker (named by a digest of its log dir, ``cache_name``) in the
    collector's default state dirs: /var/lib/compaction-monitor when writable, else ~/.local/state/..."""
    from collectors.logdirs.summary_state import HOST_STATE_DIR, cache_name, default_state_dir

    digest = cache_name("demo", "1", [str(demo_dir / "broker" / "data")]).rsplit("-", 1)[1]
    dirs = {Path(default_state_dir()), Path(HOST_STATE_DIR), Path.home() / ".local" / "state" / "compaction-monitor"}
    return [p for d in dirs if d.is_dir() for p in d.glob(f"summaries-*-{digest}")]


def test_demo_headless(tmp_path):
    log = tmp_path / "demo.log"
    assert caches_outside(tmp_path / "demo") == []
    with open(log, "wb") as out:
        # the test stops it (Ctrl-C) once it has seen everything; --duration only bounds a test gone wrong
        # the dashboard without its 30 s rerun (NO_AUTOREFRESH): visit_every_page waits for a moment when no
        # script runs, which a page whose run outlasts the interval on a loaded machine never has (it did not
        # in 120 s at load 15); the rerun itself is tests/dashboards/test_sources.py's
        proc = subprocess.Popen([sys.executable, "-m", CLI_MODULE, "demo", "--dir", str(tmp_path / "demo"),
                                 "--fast", "--duration", "900"], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, env=os.environ | NO_AUTOREFRESH)
    try:
        def printed_urls():
            assert proc.poll() is None, log.read_text()[-3000:]  # the demo died: fail at once
            got = urls(log.read_text(errors="replace"))
            return got if len(got) == 4 else None

        found = wait_for(printed_urls, 120, "the demo printing its four URLs", interval=0.25)
        for label in ("Collector metrics", "Prometheus", "Dashboard"):  # every page the demo sends a user to
            assert urllib.request.urlopen(found[label], timeout=10).status == 200, (label, found[label])
        prom = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(found["Prometheus"]))

        def alerts_once_consumer_alert_fires():
            data = json.load(urllib.request.urlopen(f"{prom}/api/v1/alerts", timeout=5))["data"]["alerts"]
            firing = {a["labels"]["alertname"] for a in data if a["state"] == "firing"}
            return data if "ConsumerMayMissTombstones" in firing else None

        data = wait_for(alerts_once_consumer_alert_fires, 120, "ConsumerMayMissTombstones firing in the demo's Prometheus",
                        interval=0.5)
        lagging = [a for a in data if a["labels"]["alertname"] == "CompactionLagging"]
        assert "demo.lagging-cdc" not in {a["labels"].get("topic") for a in lagging}

        metrics = urllib.request.urlopen(found["Collector metrics"], timeout=5).read().decode()
        assert 'kafka_compaction_consumer_group_tombstone_risk{cluster="demo",group="demo-reporting"' in metrics
        assert re.search(r'kafka_compaction_partition_uncleaned_ratio\{[^}]*topic="demo.lagging-cdc"[^}]*\} 1.0', metrics)
        assert re.search(r'kafka_compaction_partition_cleanable_ratio\{[^}]*topic="demo.lagging-cdc"[^}]*\} 0.0', metrics)
        assert re.search(r'kafka_compaction_partition_compaction_blocked\{(?=[^}]*reason="min_compaction_lag")'
                         r'(?=[^}]*topic="demo.lagging-cdc")[^}]*\} 1.0', metrics)
        assert "kafka_compaction_broker_cleaner_dead_threads" in metrics
        check_open_transaction(found, tmp_path / "demo" / "broker" / "data")
        assert urllib.request.urlopen(f"{found['Dashboard']}/_stcore/health", timeout=5).status == 200

        # a person looking: each page's script runs, and logs what it logs; those that show no audit run
        # while the first audit is under way (it was waited out first: up to a minute of two idle cores)
        visit_every_page(found["Dashboard"], [p for p in PAGES if p not in AUDIT_PAGES])
        audits = tmp_path / "demo" / "run" / "audits"

        def first_audit():
            assert proc.poll() is None, log.read_text()[-3000:]
            runs = sorted(p for p in audits.glob("run-*") if (p / "_SUCCESS").exists())
            return runs[0] if runs else None

        # a Spark audit in local mode: about a minute alone, several on a loaded machine
        first = wait_for(first_audit, 360, "the demo's first audit run", interval=0.25)
        assert (first / "report.html").exists()
        check_first_audit(first)
        # the healthy topic's alerts over the whole run (ALERTS keeps every pending and firing series)
        query = urllib.parse.urlencode({"query": 'max_over_time(ALERTS{topic="demo.healthy-changelog",'
                                                 'alertstate="firing"}[1h])'})
        fired = json.load(urllib.request.urlopen(f"{prom}/api/v1/query?{query}", timeout=10))["data"]["result"]
        assert fired == [], fired
        visit_every_page(found["Dashboard"], [p for p in PAGES if p in AUDIT_PAGES])  # and the Audit page
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the demo stops everything it started, and exits 0
        assert proc.wait(timeout=240) == 0, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(60)
    text = log.read_text()
    assert "stopped. Data kept in" in text
    assert caches_outside(tmp_path / "demo") == []
    assert list((tmp_path / "demo" / "run" / "state").glob("summaries-demo-*")), "no summary cache under --dir"
    dashboard_log = (tmp_path / "demo" / "run" / "dashboard.log").read_text(errors="replace").splitlines()
    assert not [ln for ln in dashboard_log if DEPRECATION.search(ln)], dashboard_log[:20]
    assert len(dashboard_log) < 50, dashboard_log[:50]  # its start and stop lines, and whatever went wrong
    state = json.loads((tmp_path / "demo" / "broker" / "broker.json").read_text())
    from localkafka.broker import is_alive

    assert not is_alive(state["pid"]), "the demo left its broker running"
    for url in (found["Collector metrics"], prom + "/-/ready", found["Dashboard"]):
        with pytest.raises(OSError):
            urllib.request.urlopen(url, timeout=2)


# Streamlit's deprecation lines (streamlit.deprecation_util): "Please replace `x` with `y`.", "`x` will be
# removed after <date>.", and Python's DeprecationWarning / FutureWarning lines
DEPRECATION = re.compile(r"deprecat|Please replace `|will be removed after|FutureWarning", re.I)
PAGES = ("", "brokers", "partitions", "tombstones", "config_review", "audit")  # dashboards/app.py's pages
# the pages whose view reads the audit's runs (dashboards.auditruns), by their path (the view's file name)
VIEWS = Path(__file__).resolve().parents[2] / "dashboards" / "views"
AUDIT_PAGES = {v.stem for v in VIEWS.glob("*.py") if "auditruns" in v.read_text()}


def visit_every_page(dashboard: str, pages) -> None:
    from tests_support_browser import browser, wait_rendered

    assert AUDIT_PAGES and AUDIT_PAGES <= set(PAGES), AUDIT_PAGES  # else a page is read before its audit run
    with browser() as d:
        d.set_script_timeout(120)  # the demo's broker, Spark and the browser share two cores: a page may be slow
        d.set_page_load_timeout(120)
        for page in pages:
            d.get(f"{dashboard}/{page}")
            wait_rendered(d, 0, timeout=120)


def check_first_audit(run) -> None:
    """The demo's first audit shows real reclaimable bytes and a cleaning time in seconds: the backlog
    topic was held from the cleaner while it read it, and the demo's broker throttles its cleaner (a
    dynamic broker config, read back by the audit through the admin API) to cli.demo_scenario's 1 MiB/s."""
    import pyarrow.parquet as pq

    from cli.demo_scenario import FAST, Names

    summary = json.loads((run / "summary.json").read_text())
    assert summary["cleaner"]["io_max_bytes_per_second"] == FAST.cleaner_throttle_bytes_per_second
    assert summary["cleaner"]["sources"]["log.cleaner.io.max.bytes.per.second"] == "admin"
    assert summary["reclaimable_bytes"] > 0 and summary["estimated_clean_seconds"] > 0
    backlog = [r for r in pq.read_table(run / "partitions").to_pylist() if r["topic"] == Names().backlog]
    assert len(backlog) == 3 and all(r["reclaimable_bytes"] > 0 for r in backlog)
    for r in backlog:  # a clean reads at least the dirty bytes, at no more than the throttle
        assert r["estimated_clean_seconds"] >= r["cleanable_bytes"] / FAST.cleaner_throttle_bytes_per_second > 0


def _sample(metrics: str, name: str, **labels) -> float | None:
    want = "".join(f'(?=[^}}]*{k}="{re.escape(v)}")' for k, v in labels.items())
    m = re.search(rf"^{name}\{{{want}[^}}]*\}} (\S+)$", metrics, re.M)
    return float(m.group(1)) if m else None


def check_open_transaction(found: dict, log_dir) -> None:
    """The transaction the demo leaves open on demo.eos-changelog-0: the broker's find-hanging names its
    producer id and start offset (timeout 0: every open transaction the coordinator does not know), the
    broker's READ_COMMITTED end offset (its LSO) is that start offset; logdir folds the same from the log,
    and the collector exports that LSO and the partition as held back by it."""
    bootstrap = found["Kafka bootstrap"]
    proc = localtools.transactions_tool(bootstrap, "find-hanging", "--topic", EOS, "--partition", "0",
                                         "--max-transaction-timeout", "0")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()]
    rows = [dict(zip(lines[0], r)) for r in lines[1:]]
    assert rows, f"find-hanging lists no open transaction on {EOS}-0:\n{proc.stdout}"
    ghost = min(rows, key=lambda r: int(r["StartOffset"]))  # the oldest: the demo's, written before any other
    pid, start = int(ghost["ProducerId"]), int(ghost["StartOffset"])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(EOS, 0)
    lso = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=IsolationLevel.READ_COMMITTED)[tp].result(30)
    assert lso.offset == start

    out, err = io.StringIO(), io.StringIO()
    run_logdir([log_dir], config=Config(), fmt="json", out=out, err=err,
               topic_overrides={EOS: {"cleanup.policy": "compact"}})
    [row] = [r for r in json.loads(out.getvalue()) if r["topic"] == EOS and r["partition"] == 0]
    first = row["open_transactions"][0]
    assert (first["producer_id"], first["first_offset"]) == (pid, start)
    assert row["last_stable_offset"] == start and row["transaction_faults"] == []

    def exported():
        m = urllib.request.urlopen(found["Collector metrics"], timeout=5).read().decode()
        held = _sample(m, "kafka_compaction_partition_compaction_blocked", topic=EOS, partition="0",
                       reason="last_stable_offset")
        return m if held == 1.0 else None

    metrics = wait_for(exported, 90, f"the collector showing {EOS}-0 held back by its last stable offset", interval=0.5)
    assert _sample(metrics, "kafka_compaction_partition_last_stable_offset", topic=EOS, partition="0") == start
    assert _sample(metrics, "kafka_compaction_partition_open_transactions", topic=EOS, partition="0") >= 1

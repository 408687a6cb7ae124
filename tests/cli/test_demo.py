"""The main job end to end: `compaction-monitor demo` run headless for a bounded time brings up a
real broker, the workload, the collector, Prometheus, an audit and the dashboard; the stopped consumer
fires its alert, the topic held back by min.compaction.lag.ms is shown as blocked and fires no
CompactionLagging (nothing in it is cleanable); on exit everything it started is stopped."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request

import pytest

from kafkatools import CLI_MODULE
from waiting import wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]  # about three minutes: the demo runs for 150 s


def urls(text: str) -> dict:
    out = {}
    for label in ("Kafka bootstrap", "Collector metrics", "Prometheus", "Dashboard"):
        m = re.search(rf"^  {label}\s+(\S+)", text, re.M)  # the URL block the demo prints
        if m:
            out[label] = m.group(1)
    return out


def test_demo_headless(tmp_path):
    log = tmp_path / "demo.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", CLI_MODULE, "demo", "--dir", str(tmp_path / "demo"),
                                 "--fast", "--duration", "150"], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        def printed_urls():
            assert proc.poll() is None, log.read_text()[-3000:]  # the demo died: fail at once
            got = urls(log.read_text(errors="replace"))
            return got if len(got) == 4 else None

        found = wait_for(printed_urls, 120, "the demo printing its four URLs", interval=1)
        prom = found["Prometheus"].removesuffix("/alerts")

        def alerts_once_consumer_alert_fires():
            data = json.load(urllib.request.urlopen(f"{prom}/api/v1/alerts", timeout=5))["data"]["alerts"]
            firing = {a["labels"]["alertname"] for a in data if a["state"] == "firing"}
            return data if "ConsumerMayMissTombstones" in firing else None

        data = wait_for(alerts_once_consumer_alert_fires, 120, "ConsumerMayMissTombstones firing in the demo's Prometheus",
                        interval=2)
        lagging = [a for a in data if a["labels"]["alertname"] == "CompactionLagging"]
        assert "demo.lagging-cdc" not in {a["labels"].get("topic") for a in lagging}

        metrics = urllib.request.urlopen(found["Collector metrics"], timeout=5).read().decode()
        assert 'kafka_compaction_consumer_group_tombstone_risk{cluster="demo",group="demo-reporting"' in metrics
        assert re.search(r'kafka_compaction_partition_uncleaned_ratio\{[^}]*topic="demo.lagging-cdc"[^}]*\} 1.0', metrics)
        assert re.search(r'kafka_compaction_partition_cleanable_ratio\{[^}]*topic="demo.lagging-cdc"[^}]*\} 0.0', metrics)
        assert re.search(r'kafka_compaction_partition_compaction_blocked\{(?=[^}]*reason="min_compaction_lag")'
                         r'(?=[^}]*topic="demo.lagging-cdc")[^}]*\} 1.0', metrics)
        assert "kafka_compaction_broker_cleaner_dead_threads" in metrics
        assert urllib.request.urlopen(f"{found['Dashboard']}/_stcore/health", timeout=5).status == 200

        assert proc.wait(timeout=240) == 0, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(60)
    text = log.read_text()
    assert "stopped. Data kept in" in text
    audits = list((tmp_path / "demo" / "run" / "audits").glob("run-*/report.html"))
    assert audits, (tmp_path / "demo" / "run" / "audit.log").read_text()[-2000:]
    state = json.loads((tmp_path / "demo" / "broker" / "broker.json").read_text())
    from localkafka.broker import is_alive

    assert not is_alive(state["pid"]), "the demo left its broker running"
    for url in (found["Collector metrics"], prom + "/-/ready", found["Dashboard"]):
        with pytest.raises(OSError):
            urllib.request.urlopen(url, timeout=2)

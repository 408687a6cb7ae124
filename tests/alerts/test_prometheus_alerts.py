"""A real Prometheus, configured from deploy/prometheus.yml, scrapes the real collector running
against the real broker with the rendered rules loaded: CompactionLagging goes pending, then firing."""

from __future__ import annotations

import json
import shutil
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from alerts.render import render_rules
from kafkatools import compacted, create_topic, unique_topic, write_rounds_min_lag
from monitor.config import parse_config
from procs import free_port, process

pytestmark = pytest.mark.kafka
ROOT = Path(__file__).resolve().parents[2]


def alerts_for(prom: str, name: str, topic: str) -> list[dict]:
    data = json.load(urllib.request.urlopen(f"{prom}/api/v1/alerts", timeout=5))["data"]["alerts"]
    return [a for a in data if a["labels"].get("alertname") == name and a["labels"].get("topic") == topic]


def test_compaction_lagging_goes_pending_then_firing(kafka, tmp_path):
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.fail("prometheus is missing: ./dev installs Debian's prometheus package")
    topic = create_topic(kafka.bootstrap, unique_topic("alerting"),
                         **compacted(**{"min.compaction.lag.ms": 3_600_000, "min.cleanable.dirty.ratio": 0.5}))
    write_rounds_min_lag(kafka.bootstrap, topic)

    cport, pport = free_port(), free_port()
    cfg = {
        "listen": {"address": "127.0.0.1", "port": cport},
        "clusters": [{"name": "local", "bootstrap_servers": kafka.bootstrap,
                      "brokers": [{"id": 1, "jmx_url": kafka.jmx_url, "log_dirs": [kafka.log_dir]}]}],
        "intervals": {"jmx": 1, "log_dirs": 1, "admin": 2, "consumer_groups": 5},
        "thresholds": {"lagging_for": "4s"},
    }
    (tmp_path / "monitor.yaml").write_text(yaml.safe_dump(cfg))
    rules = tmp_path / "compaction.rules.yml"
    rules.write_text(render_rules(parse_config(cfg).thresholds))
    prom_cfg = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text())
    prom_cfg["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    prom_cfg["rule_files"] = [str(rules)]
    prom_cfg.pop("alerting")
    prom_cfg["scrape_configs"][0]["static_configs"] = [{"targets": [f"127.0.0.1:{cport}"]}]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(prom_cfg))

    collector = [sys.executable, "-m", "cli", "collect", "--config", str(tmp_path / "monitor.yaml")]
    prom_cmd = [prometheus, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{pport}", "--log.level=warn"]
    prom = f"http://127.0.0.1:{pport}"
    with process(collector, tmp_path / "collector.log", f"http://127.0.0.1:{cport}/metrics"), \
            process(prom_cmd, tmp_path / "prometheus.log", f"{prom}/-/ready"):
        states = []
        deadline = time.time() + 90
        while time.time() < deadline:
            found = alerts_for(prom, "CompactionLagging", topic)
            if found:
                state = found[0]["state"]
                if not states or states[-1] != state:
                    states.append(state)
                if state == "firing":
                    break
            time.sleep(0.5)
        assert states[:1] == ["pending"] and states[-1] == "firing", states
        alert = alerts_for(prom, "CompactionLagging", topic)[0]
        assert alert["labels"]["severity"] == "warning" and alert["labels"]["partition"] == "0"
        assert topic in alert["annotations"]["description"]
        assert alert["annotations"]["runbook"].endswith("#compactionlagging")
        # the collector's own health is visible to Prometheus too
        q = urllib.request.urlopen(f"{prom}/api/v1/query?query=min(kafka_compaction_source_up)", timeout=5)
        assert json.load(q)["data"]["result"][0]["value"][1] == "1"

"""The deployment examples parse and point at files that exist; the example configs load."""

from pathlib import Path

import yaml

from monitor.config import load_config

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"


def test_example_configs_load():
    cfg = load_config(DEPLOY / "monitor.example.yaml")
    c = cfg.clusters[0]
    assert len(c.brokers) == 3 and c.client["security.protocol"] == "SASL_SSL"
    assert load_config(DEPLOY / "monitor.compose.yaml").clusters[0].brokers[0].log_dirs


def test_compose_services_and_mounts():
    doc = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert {"kafka", "compaction-monitor", "prometheus", "alertmanager", "dashboard"} <= set(doc["services"])
    for svc in doc["services"].values():
        for vol in svc.get("volumes", []):
            src = vol.split(":")[0]
            if src.startswith((".", "/")) and "jmx_prometheus_javaagent.jar" not in src \
                    and "compaction.rules.yml" not in src:
                assert (DEPLOY / src).resolve().exists(), src


def test_k8s_sidecar_reads_the_volume_read_only():
    doc = yaml.safe_load((DEPLOY / "k8s" / "kafka-logdir-sidecar.yaml").read_text())
    side = [c for c in doc["spec"]["template"]["spec"]["containers"] if c["name"] == "compaction-monitor"][0]
    assert side["volumeMounts"][0]["readOnly"] is True and "collect" in side["args"]


def test_cron_and_spark_submit_run_the_audit():
    assert "compaction-monitor audit" in (DEPLOY / "audit.cron").read_text()
    assert "spark_analysis.job" in (DEPLOY / "spark-submit.sh").read_text()

"""The deployment examples parse, agree with each other, and point at files that exist; the example
configs load to what their YAML says."""

import importlib.util
import re
from pathlib import Path

import yaml

from monitor.settings.config import load_config

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"


def test_example_configs_load():
    raw = yaml.safe_load((DEPLOY / "monitor.example.yaml").read_text())["clusters"][0]
    c = load_config(DEPLOY / "monitor.example.yaml", environ={"KAFKA_PASSWORD": "from-the-env"}).clusters[0]
    assert c.client["sasl.password"] == "from-the-env"  # by reference, never in the file
    assert [(b.id, b.jmx_url) for b in c.brokers] == [(str(b["id"]), b["jmx_url"]) for b in raw["brokers"]]
    assert len(c.brokers) == 3 and c.client["security.protocol"] == "SASL_SSL"


def test_compose_monitor_reads_the_log_dir_its_container_mounts():
    """monitor.compose.yaml's log dir is where docker-compose.yml mounts Kafka's data, read-only."""
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    broker = load_config(DEPLOY / "monitor.compose.yaml").clusters[0].brokers[0]
    assert broker.log_dirs == ("/var/lib/kafka/data",)
    mounts = [v.split(":") for v in compose["compaction-monitor"]["volumes"]]
    assert [m[1:] for m in mounts if m[0] == "kafka-data"] == [["/var/lib/kafka/data", "ro"]]
    assert any(v.split(":")[0] == "kafka-data" for v in compose["kafka"]["volumes"])


def test_compose_services_and_mounts():
    doc = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert {"kafka", "compaction-monitor", "prometheus", "alertmanager", "grafana", "dashboard"} <= set(doc["services"])
    for svc in doc["services"].values():
        for vol in svc.get("volumes", []):
            src = vol.split(":")[0]
            if src.startswith((".", "/")) and "jmx_prometheus_javaagent.jar" not in src \
                    and "compaction.rules.yml" not in src:
                assert (DEPLOY / src).resolve().exists(), src


def test_cron_and_spark_submit_run_the_audit():
    lines = [ln for ln in (DEPLOY / "audit.cron").read_text().splitlines() if ln and not ln.startswith("#")
             and "=" not in ln.split()[0]]
    assert len(lines) == 1 and re.match(r"^(\S+\s+){5}kafka\s+\S*compaction-monitor audit ", lines[0]), lines
    script = (DEPLOY / "spark-submit.sh").read_text()
    (module,) = re.findall(r"import (spark_analysis\.\w+) as j", script)
    assert importlib.util.find_spec(module) is not None, f"spark-submit.sh runs {module}, which does not exist"


def test_compose_grafana_is_provisioned_with_prometheus_and_the_rendered_dashboard():
    """The grafana service (a pinned image) mounts the provisioning folder and the folder holding the
    committed dashboard; the dashboard provider reads where that folder is mounted; the data source
    points at the compose Prometheus' service and port."""
    services = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    grafana = services["grafana"]
    image, _, tag = grafana["image"].partition(":")
    assert image == "docker.io/grafana/grafana-oss" and re.fullmatch(r"\d+\.\d+\.\d+", tag), grafana["image"]
    mounts = {src: dst for src, dst, *_ in (v.split(":") for v in grafana["volumes"])}
    assert mounts["./grafana/provisioning"] == "/etc/grafana/provisioning"
    prov = DEPLOY / "grafana" / "provisioning"
    (provider,) = yaml.safe_load((prov / "dashboards" / "compaction.yml").read_text())["providers"]
    dashboards_src = next(src for src, dst in mounts.items() if dst == provider["options"]["path"])
    assert (DEPLOY / dashboards_src / "compaction.json").is_file()
    (ds,) = yaml.safe_load((prov / "datasources" / "prometheus.yml").read_text())["datasources"]
    assert ds["type"] == "prometheus" and ds["isDefault"]
    host, port = re.fullmatch(r"http://([\w-]+):(\d+)", ds["url"]).groups()
    assert f"{port}:{port}" in services[host]["ports"]
    assert "prometheus" in grafana["depends_on"]

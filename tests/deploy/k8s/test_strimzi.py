"""deploy/k8s/strimzi agrees with the one definition of each thing it restates: the JMX exporter rules are
localkafka/jmx-exporter.yaml (the agent config the tests run on a real broker; its recorded page is read by the
collector in the rule-named shape), the KafkaUser's ACLs are docs/security.md "Least privilege"'s commands and the 3-broker
test cluster's MONITOR_ACLS, and the DaemonSet's JMX URL template names Strimzi's broker pods by node id."""

from __future__ import annotations

import gzip
import re
import shlex
from urllib.parse import urlparse

import yaml

import k8smanifests as m
from collectors.jmx.gauges import parse_exposition
from localkafka.security import MONITOR_ACLS
from monitor.settings.config import ClusterConfig
from monitor.settings.jmxtemplate import expand, template_problem

AGENT_CONFIG = m.ROOT / "localkafka" / "jmx-exporter.yaml"
RECORDED = m.ROOT / "tests" / "collectors" / "pages" / "jmx-exporter.kafka-4.3.0.prom.gz"
STRIMZI_METRICS_PORT = 9404  # Strimzi's tcp-prometheus port on every broker pod


def _kafka() -> dict:
    (kafka,) = m.of_kind("Kafka")
    return kafka


def test_the_metrics_config_is_the_agent_config_the_tests_run():
    mc = _kafka()["spec"]["kafka"]["metricsConfig"]
    assert mc["type"] == "jmxPrometheusExporter" and "valueFrom" in mc  # the CRD's CEL rule, which jsonschema skips
    ref = mc["valueFrom"]["configMapKeyRef"]
    cm = m.one("ConfigMap", ref["name"])
    assert cm["metadata"]["namespace"] == _kafka()["metadata"]["namespace"]  # Strimzi reads it from the Kafka's
    assert yaml.safe_load(cm["data"][ref["key"]]) == yaml.safe_load(AGENT_CONFIG.read_text())


def test_the_page_those_rules_gave_a_real_broker_is_read_in_the_rule_named_shape():
    """The page recorded from a real broker's agent with these rules (tests/collectors/pages/record.py): every
    cleaner gauge the rules define is read, none from a fallback shape."""
    g = parse_exposition(gzip.decompress(RECORDED.read_bytes()).decode(), ClusterConfig(), RECORDED.name)
    assert (g.shape, g.also_on_page) == ("rule_named", ())
    for gauge in ("max_dirty_percent", "dead_thread_count", "max_clean_time_secs", "max_buffer_utilization_percent",
                  "cleaner_recopy_percent", "time_since_last_run_ms"):
        assert g.values.get(gauge) is not None, gauge
    assert g.cleaner_io_bytes() > 0 and g.per_log_dir["uncleanable_partitions_count"]


def _readme_acls() -> tuple[set, set]:
    """(required, optional) ACLs of docs/security.md "Least privilege"'s kafka-acls commands, as (type, name,
    operation): the commands after the comment line "only for the exact time lag" are optional."""
    text = (m.ROOT / "docs" / "security.md").read_text()
    block = re.search(r"A read-only monitor.*?```sh\n(.*?)```", text, re.S).group(1).replace("\\\n", " ")
    required, optional = set(), set()
    target = required
    for line in block.splitlines():
        if line.startswith("#"):
            target = optional if "exact time lag" in line else target
            continue
        words = shlex.split(line)
        ops = [words[i + 1] for i, w in enumerate(words) if w == "--operation"]
        resources = [("topic", words[i + 1]) for i, w in enumerate(words) if w == "--topic"]
        resources += [("group", words[i + 1]) for i, w in enumerate(words) if w == "--group"]
        resources += [("cluster", None) for w in words if w == "--cluster"]
        target |= {(t, n, op) for t, n in resources for op in ops}
    return required, optional


def _monitor_acls() -> set:
    out = set()
    for resources, ops in MONITOR_ACLS:
        for r in resources:
            t, _, n = r.removeprefix("--").partition("=")
            out |= {(t, n or None, op) for op in ops}
    return out


def _kafkauser_acls(user: dict) -> set:
    return {(a["resource"]["type"], a["resource"].get("name"), op)
            for a in user["spec"]["authorization"]["acls"] for op in a["operations"]
            if a.get("type", "allow") == "allow"}


def test_the_kafkauser_has_the_least_privilege_acls():
    user = m.one("KafkaUser", "compaction-monitor")
    assert user["metadata"]["labels"]["strimzi.io/cluster"] == _kafka()["metadata"]["name"]
    assert user["spec"]["authentication"]["type"] == "scram-sha-512"
    required, optional = _readme_acls()
    assert required and optional == {("topic", "*", "Read")}
    assert _kafkauser_acls(user) == required == _monitor_acls()
    # "*" is every topic or group only as a literal pattern
    assert all(a["resource"].get("patternType", "literal") == "literal" for a in user["spec"]["authorization"]["acls"])
    listener_auth = {lst.get("authentication", {}).get("type") for lst in _kafka()["spec"]["kafka"]["listeners"]}
    assert "scram-sha-512" in listener_auth and _kafka()["spec"]["kafka"]["authorization"]["type"] == "simple"


def test_the_daemonset_reads_each_broker_pod_it_finds_by_its_node_id():
    """Strimzi names a broker pod <Kafka name>-<pool>-<node id> under the headless Service
    <Kafka name>-kafka-brokers (KafkaPool.nodeRef, KafkaResources.brokersServiceName) and serves the JMX exporter
    on 9404: the DaemonSet's jmx_url_template fills {node_id} with the node id it reads from meta.properties, so
    a broker's gauges and its partitions come from one collector under one label."""
    (cm,) = [d for d in m.of_kind("ConfigMap") if d["metadata"]["name"] == "kafka-compaction-monitor-broker"]
    (cluster,) = yaml.safe_load(cm["data"]["monitor.yaml"])["clusters"]
    name, template = cluster["name"], cluster["jmx_url_template"]
    assert template_problem(template) is None
    u = urlparse(expand(template, "12"))
    pod, service = u.hostname.split(".")[:2]
    assert re.fullmatch(rf"{re.escape(name)}-[a-z0-9-]+-12", pod), template
    assert service == f"{name}-kafka-brokers" and u.port == STRIMZI_METRICS_PORT, template
    assert not [d for d in m.documents() if "broker-jmx" in str(d[0])]  # no second collector of the gauges


def test_the_docs_name_only_manifests_that_exist():
    """docs/strimzi.md and docs/deployment.md point at these files: each one they name exists."""
    docs = (m.ROOT / "docs" / "strimzi.md").read_text() + (m.ROOT / "docs" / "deployment.md").read_text()
    named = set(re.findall(r"`([\w./-]+\.yaml)`", docs)) - {"monitor.yaml"}
    named = {n for n in named if not n.startswith("examples/")}  # Strimzi's own repository's
    assert {"broker-daemonset.yaml", "strimzi/kafkauser.yaml", "deploy/k8s/kafka-logdir-sidecar.yaml"} <= named
    for name in named:
        assert (m.ROOT / name).is_file() or (m.K8S / name).is_file(), name

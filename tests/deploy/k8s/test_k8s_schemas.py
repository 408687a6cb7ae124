"""Every manifest under deploy/k8s fits its schema: Kubernetes' kinds the API's at the versions of
k8smanifests.KUBERNETES_VERSIONS (``kubernetes-validate``, strict), the Prometheus Operator's and Strimzi's
custom resources their CRDs' openAPIV3Schema (vendored in crds/, each naming its source and version).
No cluster is needed."""

from __future__ import annotations

import copy

import pytest

import k8smanifests as m


@pytest.mark.parametrize("path", m.files(), ids=lambda p: str(p.relative_to(m.K8S)))
def test_every_manifest_fits_its_schema(path):
    docs = [d for p, d in m.documents() if p == path]
    assert docs, f"{path} holds no manifest"
    for doc in docs:
        assert m.problems(doc) == [], f"{path}: {doc['kind']} {doc['metadata'].get('name')}"


def test_every_kind_has_a_schema():
    """A kind with neither a Kubernetes schema nor a vendored CRD is an error, not skipped."""
    assert m.problems({"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic", "metadata": {"name": "t"}})


def test_the_checks_can_fail():
    """A misspelt field of the DaemonSet (the API's schema, strict), of the PodMonitor and of the KafkaUser (the
    CRDs' schemas, strict as kubectl apply), and an operation Strimzi does not know, are each found."""
    ds = copy.deepcopy(m.one("DaemonSet", "kafka-compaction-monitor-broker"))
    ds["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["mountPropogation"] = "HostToContainer"
    assert any("mountPropogation" in p for p in m.problems(ds))
    pm = copy.deepcopy(m.one("PodMonitor", "kafka-compaction-monitor-broker"))
    pm["spec"]["podMetricEndpoints"] = pm["spec"].pop("podMetricsEndpoints")
    assert any("podMetricEndpoints" in p for p in m.problems(pm))
    user = copy.deepcopy(m.one("KafkaUser", "compaction-monitor"))
    user["spec"]["authorization"]["acls"][0]["operations"].append("DescribeAll")
    assert any("DescribeAll" in p for p in m.problems(user))
    rule = copy.deepcopy(m.one("PrometheusRule", "kafka-compaction-monitor"))
    rule["spec"]["groups"][1]["rules"][0]["for"] = "five minutes"
    assert m.problems(rule)


def test_the_vendored_schemas_name_their_source():
    for p in sorted(m.CRDS.glob("*.yaml")):
        head = p.read_text().split("\n", 3)[:3]
        assert any("prometheus-operator/prometheus-operator" in ln or "strimzi/strimzi-kafka-operator" in ln
                   for ln in head) and any("tag" in ln for ln in head), p.name

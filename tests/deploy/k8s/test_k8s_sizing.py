"""The broker-role collector's resources in deploy/k8s are those bench/sizing.py derives from the measured
figures (``bench logdir --broker-size``): one definition, written in two manifests and stated in the docs."""

from __future__ import annotations

import k8smanifests as m
from bench import sizing


def test_the_broker_role_manifests_carry_the_measured_resources():
    found = {}
    for w, _, c in m.collectors():
        if m.arg(c, "--role") == "broker":
            path = next(p for p, d in m.documents() if d is w)
            found[path.name] = c["resources"]
            text = path.read_text()
            # the comment says how they were derived and for how many partitions
            assert "bench/sizing.py" in text and f"{sizing.DESIGN_PARTITIONS:,} partitions" in text, path.name
            assert f"{sizing.INTERPRETER_MIB:.0f} MiB + {sizing.KIB_PER_PARTITION:g} KiB a partition" in text
            assert f"({sizing.INTERPRETER_MIB:.0f} + N x {sizing.KIB_PER_PARTITION / 1024:.4f}) x {sizing.HEADROOM:g}" \
                in text, path.name
    assert sorted(found) == sorted(sizing.MANIFESTS)
    for name, res in found.items():
        assert res == sizing.resources(), name


def test_memory_scales_with_partitions_and_holds_the_measured_peak_with_headroom():
    assert sizing.INTERPRETER_MIB > 0 and sizing.KIB_PER_PARTITION > 0 and sizing.CPU_CORES_READING > 0
    for n in (1_000, 4_000, 20_000, 50_000):
        assert sizing.memory_mib(n) >= sizing.peak_mib(n) * sizing.HEADROOM
        assert sizing.memory_mib(n) % sizing.MEMORY_STEP_MIB == 0
        assert sizing.request_memory_mib(n) <= sizing.memory_mib(n)
    assert sizing.memory_mib(40_000) > sizing.memory_mib(20_000)


def test_the_deployment_docs_state_the_rule_and_the_figures():
    text = (m.ROOT / "docs" / "deployment.md").read_text()
    r = sizing.resources()
    assert "bench/sizing.py" in text
    assert r["limits"]["memory"] in text and r["requests"]["cpu"] in text

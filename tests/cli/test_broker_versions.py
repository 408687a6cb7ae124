"""``broker start|fetch --kafka-version`` (issue 44): the versions a real broker in the tests runs
(localkafka.jars.SUPPORTED_VERSIONS: the pom's and the compatibility tier's), another refused in one line
that names them, before any work; a cluster runs the pom's only; a directory holding one family's data is
not started as the other's. The broker each supported version starts is the compatibility tier's
(tests/compat/conftest.py starts it with this command). The command line in-process (tests/clirun.py)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from clirun import run_cli
from localkafka import jars

COMPAT = Path(__file__).resolve().parents[1] / "compat"


@pytest.mark.parametrize("action", ["start", "fetch"])
def test_an_unsupported_version_is_one_line_naming_the_supported_ones_exit_2(action, tmp_path):
    r = run_cli("broker", action, "--dir", str(tmp_path / "b"), "--kafka-version", "3.8.0")
    assert r.returncode == 2 and r.stdout == ""
    [line] = r.stderr.strip().splitlines()
    assert line == (f"compaction-monitor broker {action}: error: argument --kafka-version: expected a Kafka version the launcher starts and the "
                         f"tests run: 3.9.1 (on ZooKeeper {jars.ZOOKEEPER_VERSION}), 4.3.0 (KRaft), {jars.KAFKA_VERSION} "
                         f"(KRaft, the default); got '3.8.0' (see compaction-monitor broker {action} --help)"), line
    assert not (tmp_path / "b").exists()


def test_the_supported_versions_are_the_pom_s_and_the_compatibility_tier_s():
    """The default and one of each family besides it, each with a compat module (./dev setup fetches the
    default and ``COMPAT_VERSIONS``: a module of a version not there would download in the middle of a run)."""
    modules = {}
    for path in sorted(COMPAT.glob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["KAFKA_VERSION"]:
                modules[path.name] = node.value.value
    assert set(modules.values()) == {*jars.COMPAT_VERSIONS, jars.KAFKA_VERSION}, modules
    assert jars.SUPPORTED_VERSIONS == ("3.9.1", "4.3.0", jars.KAFKA_VERSION) and jars.KAFKA_VERSION == "4.4.0"
    assert {jars.family(v) for v in jars.COMPAT_VERSIONS} == {jars.ZOOKEEPER, jars.KRAFT}


def test_a_cluster_runs_the_default_version_only(tmp_path):
    r = run_cli("broker", "start", "--dir", str(tmp_path / "c"), "--brokers", "3", "--kafka-version", "3.9.1")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"compaction-monitor: --kafka-version applies to the single plaintext broker only (a cluster runs Kafka "
        f"{jars.KAFKA_VERSION})"]
    assert not (tmp_path / "c").exists()


def test_a_directory_of_one_family_s_data_is_not_started_as_the_other_s(tmp_path):
    """A KRaft broker's stopped directory (its broker.json, a version-1 meta.properties) started as 3.9.1 on
    ZooKeeper would wait out the start timeout for a broker that cannot read it: refused at once, naming the
    directory and the version that wrote it."""
    d = tmp_path / "b"
    (d / "data").mkdir(parents=True)
    (d / "data" / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=c\n")
    (d / "broker.json").write_text(json.dumps({
        "dir": str(d), "pid": 2 ** 22 + 1, "node_id": 1, "cluster_id": "c", "bootstrap": "127.0.0.1:1",
        "controller": "127.0.0.1:2", "jmx_url": "http://127.0.0.1:3/metrics", "log_dir": str(d / "data"),
        "logs_dir": str(d / "logs"), "kafka_version": "4.4.0", "started_at": 0.0}))
    r = run_cli("broker", "start", "--dir", str(d), "--kafka-version", "3.9.1")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"compaction-monitor: {d}: holds the data of a Kafka 4.4.0 broker (kraft), which a zookeeper broker of "
        "Kafka 3.9.1 cannot read: start Kafka 4.4.0 there, or use another directory"]
    assert sorted(p.name for p in d.iterdir()) == ["broker.json", "data"]

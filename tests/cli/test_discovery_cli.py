"""Issue #30's "done when" for log-dir discovery: ``logdir``, ``explain`` and ``collect --once`` given a
Strimzi-shaped tree (``data/kafka-log1``; JBOD ``data-0/kafka-log1`` and ``data-1/kafka-log1``), a
Bitnami one, the kubelet's pod volumes and a bare one find the same partitions, with the same figures, as
when given the log dir itself; on ``/etc``, a partition dir and an empty dir every command exits 2 with
one line naming the path (the collector: ``log_dir_up 0`` with the reason, everything else served).

The log dir is the session broker's own: this test's topic's partition folders, its meta.properties and
offset checkpoints, copied (small: two partitions of a few segments) into each shape."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clirun import run_cli
from prometheus_client.parser import text_string_to_metric_families

from kafkatools import copy_partition, create_topic, partition_dir, unique_topic, write_rounds
from monitor.kafka.checkpoint import CHECKPOINT_FILES

pytestmark = pytest.mark.kafka

POD = "0b6c3c5e-6a51-4b57-9d8e-1f0e2b7c9a10"


@pytest.fixture(scope="module")
def source(kafka, tmp_path_factory):
    """(topic, a log dir holding its two partitions as the broker wrote them, the broker's node.id)."""
    t = create_topic(kafka.bootstrap, unique_topic("discover"), partitions=2, **{"cleanup.policy": "compact"})
    for p in (0, 1):
        write_rounds(kafka.bootstrap, t, 2, keys=20, partition=p, roll_wait=0.2)
    d = tmp_path_factory.mktemp("discover") / "kafka-log1"
    for p in (0, 1):
        copy_partition(partition_dir(kafka.log_dir, t, p), d)
    for name in ("meta.properties",) + CHECKPOINT_FILES:
        if (Path(kafka.log_dir) / name).exists():
            shutil.copy(Path(kafka.log_dir) / name, d / name)
    return t, d, str(kafka.node_id)


def shape(src: Path, root: Path, name: str) -> Path:
    """``src`` laid out as ``name`` under ``root``; returns the path an operator would give."""
    if name == "strimzi":
        shutil.copytree(src, root / "data" / src.name)
        return root / "data"
    if name == "strimzi-jbod":  # one partition on each volume, as Kafka spreads them
        for i in (0, 1):
            dst = shutil.copytree(src, root / f"data-{i}" / src.name)
            shutil.rmtree(next(dst.glob(f"*-{1 - i}")))
        return root
    if name == "bitnami":
        shutil.copytree(src, root / "bitnami" / "kafka" / "data")
        return root / "bitnami"
    if name == "kubelet":
        shutil.copytree(src, root / "pods" / POD / "volumes" / "kubernetes.io~csi" / "pvc-1" / "mount" / src.name)
        (root / "pods" / "other-pod" / "volumes" / "kubernetes.io~empty-dir" / "cache").mkdir(parents=True)
        return root / "pods"
    assert name == "bare"  # a log.dirs entry: its parent given
    shutil.copytree(src, root / "kafka-logs")
    return root


def run(*args) -> tuple[int, str, str]:
    """The command as a user runs it (its lines from the scanner's log included, as Python prints them)."""
    r = run_cli(*map(str, args))
    return r.returncode, r.stdout, r.stderr


def logdir_rows(t, path) -> tuple[int, dict, str]:
    code, out, err = run("logdir", path, "--format", "json", "--topic-config", f"{t}:cleanup.policy=compact")
    keep = ("first_dirty_offset", "log_end_offset", "log_bytes", "clean_bytes", "cleanable_bytes")
    return code, {(r["topic"], r["partition"]): {**{k: r.get(k) for k in keep}, "cause": r["cause"]["cause"]}
                  for r in json.loads(out) if r["topic"] == t}, err


def explain_causes(t, path) -> tuple[int, dict]:
    code, out, err = run("explain", t, "--log-dir", path, "--format", "json",
                         "--topic-config", f"{t}:cleanup.policy=compact")
    return code, {(c["topic"], c["partition"]): (c["cause"], c["evidence"].get("log_end_offset"))
                  for c in json.loads(out)}


def collect_series(t, paths: dict, tmp_path) -> tuple[int, dict, str]:
    """One ``collect --once`` reading each path as a broker of the config file (``brokers[].log_dirs``, the
    broker named after the path's shape): (broker, partition) -> the partition's log end offset."""
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text(json.dumps({"clusters": [{"name": "c", "topics": {t: {"cleanup.policy": "compact"}}, "brokers": [
        {"id": name, "log_dirs": [str(p)]} for name, p in paths.items()]}]}))
    code, out, err = run("collect", "--once", "--config", cfg, "--granularity", "partition")
    series = {(s.labels["broker"], s.labels["partition"]): s.value for fam in text_string_to_metric_families(out)
              for s in fam.samples if s.name == "kafka_compaction_partition_log_end_offset" and s.labels["topic"] == t}
    return code, series, out


SHAPES = ["strimzi", "strimzi-jbod", "bitnami", "kubelet", "bare"]


@pytest.fixture(scope="module")
def reference(source, tmp_path_factory):
    """What logdir and explain find given the log dir itself."""
    t, src, node = source
    code, rows, _ = logdir_rows(t, src)
    assert code == 0 and sorted(rows) == [(t, 0), (t, 1)]
    code, causes = explain_causes(t, src)
    assert code == 0 and sorted(causes) == [(t, 0), (t, 1)]
    return rows, causes


@pytest.mark.parametrize("name", SHAPES)
def test_logdir_and_explain_find_in_each_layout_the_partitions_of_the_log_dir_itself(source, reference, name,
                                                                                     tmp_path):
    t, src, node = source
    rows, causes = reference
    given = shape(src, tmp_path / "tree", name)
    code, got, err = logdir_rows(t, given)
    assert code == 0 and got == rows, err
    assert f"logdir: {given}: found log dir " in err and f"(node.id {node}, cluster.id " in err, err
    assert explain_causes(t, given) == (0, causes)


def test_collect_once_finds_in_each_layout_the_partitions_of_the_log_dir_itself(source, tmp_path):
    t, src, node = source
    paths = {"itself": src} | {name: shape(src, tmp_path / name, name) for name in SHAPES}
    code, series, page = collect_series(t, paths, tmp_path)
    assert code == 0
    want = {p: v for (b, p), v in series.items() if b == "itself"}
    assert sorted(want) == ["0", "1"]
    for name in SHAPES:
        assert {p: v for (b, p), v in series.items() if b == name} == want, name
        assert 'kafka_compaction_log_dir_up{broker="%s",cluster="c",log_dir="%s/' % (name, paths[name]) in page


def test_collect_once_labels_each_brokers_log_dirs_under_one_path_with_its_node_id(source, tmp_path):
    """A DaemonSet's node running two broker pods: one --log-dir, two brokers, each its own series."""
    t, src, node = source
    pods = tmp_path / "pods"
    for uid, nid in (("p1", "1"), ("p2", "2")):
        d = shutil.copytree(src, pods / uid / "volumes" / "kubernetes.io~csi" / f"pvc-{uid}" / "mount" / f"kafka-log{nid}")
        meta = (d / "meta.properties").read_text()
        (d / "meta.properties").write_text("\n".join(f"node.id={nid}" if x.startswith("node.id=") else x
                                                     for x in meta.splitlines()) + "\n")
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text(json.dumps({"clusters": [{"name": "c", "topics": {t: {"cleanup.policy": "compact"}}}]}))
    code, out, err = run("collect", "--once", "--config", cfg, "--log-dir", pods, "--granularity", "partition")
    assert code == 0, err
    got = sorted((s.labels["broker"], s.labels["partition"]) for fam in text_string_to_metric_families(out)
                 for s in fam.samples if s.name == "kafka_compaction_partition_log_end_offset" and s.labels["topic"] == t)
    assert got == [("1", "0"), ("1", "1"), ("2", "0"), ("2", "1")]
    assert 'source="log_dirs:c:1"' in out and 'source="log_dirs:c:2"' in out


def _bad(tmp_path: Path, src: Path) -> dict:
    """kind -> (path, the start of its line)."""
    p = next(src.glob("*-0"))
    (tmp_path / "empty").mkdir()
    return {"not_found": (Path("/etc"), "/etc: no Kafka log dir; expected a Kafka log dir"),
            "partition_dir": (p, f"{p}: a partition folder ({p.name}), not a log dir: its log dir is the parent, {src}"),
            "empty": (tmp_path / "empty", f"{tmp_path / 'empty'}: an empty folder; expected a Kafka log dir")}


def test_a_path_with_no_log_dir_is_exit_2_in_every_command_and_down_in_the_collector(source, kafka, tmp_path):
    """/etc, a partition folder and an empty folder, each a line naming it: logdir and explain print it;
    collect --once and check-config, which refresh the collector's sources, have it from the scanner's log
    (the serving collector logs it once while it lasts)."""
    t, src, node = source
    bad = _bad(tmp_path, src)
    paths = [p for p, _ in bad.values()]
    flags = [x for p in paths for x in ("--log-dir", p)]
    for args in (["logdir", *paths], ["explain", *flags], ["check-config", "--bootstrap-server", kafka.bootstrap, *flags],
                 ["collect", "--once", *flags]):
        code, out, err = run(*args)
        assert code == 2, (args, err)
        for path, says in bad.values():
            lines = [x for x in err.splitlines() if str(path) in x]
            assert len(lines) == 1 and says in lines[0], (args, lines)
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for fam in text_string_to_metric_families(out)
               for s in fam.samples}
    for kind, (path, _) in bad.items():
        # no broker found and none configured: no broker label (collectors.logdirs.paths.split_nodes), not "local"
        labels = {"cluster": "default", "broker": "", "log_dir": str(path)}
        assert samples[("kafka_compaction_log_dir_up", tuple(sorted(labels.items())))] == 0.0
        reason = "not_found" if kind == "empty" else kind
        assert samples[("kafka_compaction_log_dir_down_info", tuple(sorted({**labels, "reason": reason}.items())))] == 1.0
    assert not [k for k in samples if k[0].startswith("kafka_compaction_partition_")]  # never up with zero partitions

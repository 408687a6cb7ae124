"""The collector over paths that are not all good log dirs (issue #30's bad input): a hostPath with no
broker volume, the volume of a pod that is not Kafka, a meta.properties that cannot be read, two log dirs
claiming one broker with different cluster ids. Each is down with its reason (``log_dir_up 0``,
``log_dir_down_info{reason}``), said once in the log naming the path, and the good log dir beside it is
served; a path that yields a log dir later is read from the next refresh. Log dirs made with real record
batches (tests/recordfixtures.py); the collector built and refreshed in-process as ``collect`` does."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from collectors.app import build
from collectors.logdirs.paths import ANY, resolve, split_by_broker
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from recordfixtures import three_v2_batches

POD = "pods/{uid}/volumes/kubernetes.io~csi/pvc-{uid}/mount"


def log_dir(d: Path, node: int | None, cluster: str = "c1", topic: str = "orders") -> Path:
    three_v2_batches(d / f"{topic}-0" / "00000000000000000000.log")
    (d / "cleaner-offset-checkpoint").write_text(f"0\n1\n{topic} 0 0\n")
    if node is not None:
        (d / "meta.properties").write_text(f"version=1\nnode.id={node}\ncluster.id={cluster}\n")
    return d


def collector(paths, broker="1"):
    return build(Config(granularity="partition", clusters=(ClusterConfig(
        name="c", topics={"orders": {"cleanup.policy": "compact"}, "pay": {"cleanup.policy": "compact"}},
        brokers=(BrokerConfig(id=broker, log_dirs=tuple(map(str, paths))),)),)))


def samples(col) -> dict:
    return {(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k not in ("cluster",)))): s.value
            for fam in col.registry.collect() for s in fam.samples}


def down(col, broker: str) -> dict:
    """log_dir -> reason of each log_dir_down_info series; log_dir -> up of each log_dir_up series."""
    got = {}
    for (name, labels), v in samples(col).items():
        lb = dict(labels)
        if name == "kafka_compaction_log_dir_up" and lb["broker"] == broker:
            got.setdefault(lb["log_dir"], [v, None])[0] = v
        if name == "kafka_compaction_log_dir_down_info" and lb["broker"] == broker:
            got.setdefault(lb["log_dir"], [None, None])[1] = lb["reason"]
    return {d: tuple(x) for d, x in got.items()}


def partitions(col, broker: str) -> set:
    return {(dict(lb)["topic"], dict(lb)["partition"]) for (name, lb), _ in samples(col).items()
            if name == "kafka_compaction_partition_log_end_offset" and dict(lb)["broker"] == broker}


@pytest.mark.parametrize("case", ["no_volume", "not_kafka_pod", "meta_properties", "cluster_conflict"])
def test_a_bad_path_is_down_with_its_reason_and_the_good_log_dir_is_served(tmp_path, case, caplog):
    good = log_dir(tmp_path / "good" / "kafka-log1", node=1)
    if case == "no_volume":  # a hostPath of the kubelet's pods holding no broker volume
        bad = tmp_path / "kubelet" / "pods"
        (bad / "u1" / "volumes" / "kubernetes.io~empty-dir" / "tmp").mkdir(parents=True)
        want, says = (0.0, "not_found"), f"{bad}: no Kafka broker volume among the pods' volumes"
    elif case == "not_kafka_pod":
        bad = tmp_path / POD.format(uid="pg")
        (bad / "pgdata" / "base").mkdir(parents=True)
        want, says = (0.0, "not_found"), f"{bad}: the volume of a pod that is not Kafka"
    elif case == "meta_properties":
        bad = log_dir(tmp_path / "bad" / "kafka-log1", node=None, topic="pay")
        (bad / "meta.properties").write_bytes(b"node.id=\xfe1\n")
        want, says = (0.0, "meta_properties"), f"{bad}/meta.properties: byte 8: not UTF-8 text"
    else:
        bad = log_dir(tmp_path / "bad" / "kafka-log1", node=1, cluster="other", topic="pay")
        want, says = (0.0, "cluster_conflict"), f"{bad}: claims node.id 1 of cluster.id other, and so does {good}"
    caplog.set_level(logging.WARNING, logger="compaction_monitor.logdirs")
    col = collector([good, bad.parent if case in ("meta_properties", "cluster_conflict") else bad])
    try:
        assert col.runner.refresh_all()
        got = down(col, "1")
        if case == "cluster_conflict":  # which of the two is this cluster's broker cannot be told: both down
            assert got == {str(good): want, str(bad): want}
            assert partitions(col, "1") == set()
        else:
            assert got == {str(good): (1.0, None), str(bad): want}
            assert partitions(col, "1") == {("orders", "0")}  # the good log dir served
        assert len([m for m in caplog.messages if m.startswith(says)]) == 1, caplog.messages
        assert col.runner.refresh_all()
        assert len([m for m in caplog.messages if m.startswith(says)]) == 1  # said once while it lasts
    finally:
        col.close()


def test_a_broker_volume_mounted_after_the_start_is_read_at_the_next_refresh(tmp_path):
    pods = tmp_path / "pods"
    pods.mkdir()
    col = collector([pods])
    try:
        assert col.runner.refresh_all()
        assert down(col, "1") == {str(pods): (0.0, "not_found")} and partitions(col, "1") == set()
        d = log_dir(tmp_path / POD.format(uid="k0") / "kafka-log1", node=1)
        assert col.runner.refresh_all()
        assert down(col, "1") == {str(d): (1.0, None)} and partitions(col, "1") == {("orders", "0")}
    finally:
        col.close()


def test_two_brokers_under_one_path_are_two_scanners_each_with_its_node_id(tmp_path):
    pods = tmp_path / "pods"
    a = log_dir(tmp_path / POD.format(uid="a") / "kafka-log3", node=3)
    b = log_dir(tmp_path / POD.format(uid="b") / "kafka-log4", node=4)
    assert split_by_broker("local", [pods]) == [("3", "3"), ("4", "4")]
    assert split_by_broker("b3", [a]) == [("b3", ANY)]  # one broker: the configured name stays
    assert split_by_broker("local", [a]) == [("3", ANY)]  # none configured (the flags' "local"): its node.id
    assert split_by_broker("local", [tmp_path / "none"]) == [(None, ANY)]  # no broker: no label
    res = resolve([pods], "4")
    assert res.log_dirs == [str(b)] and f"{a} (other broker)" in res.said
    col = collector([pods], broker="local")
    try:
        assert col.runner.refresh_all()
        assert [s.name for s in col.store.statuses()] == ["log_dirs:c:3", "log_dirs:c:4"]
        assert down(col, "3") == {str(a): (1.0, None)} and down(col, "4") == {str(b): (1.0, None)}
        assert partitions(col, "3") == partitions(col, "4") == {("orders", "0")}
    finally:
        col.close()


def test_the_same_log_dir_under_two_paths_is_read_once(tmp_path):
    d = log_dir(tmp_path / "data" / "kafka-log1", node=1)
    res = resolve([tmp_path / "data", d, tmp_path])
    assert res.log_dirs == [str(d)] and not res.down

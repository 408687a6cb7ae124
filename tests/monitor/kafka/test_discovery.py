"""Log-dir discovery (monitor.kafka.discovery): the log dirs of each real layout found under the path an
operator gives, and one line naming the path and what was expected when there is none. The trees are
made here, each log dir with a partition of real record batches (tests/recordfixtures.py) and the
files a broker writes beside them; the CLI and collector tests (tests/cli/test_discovery_cli.py) read
the session broker's own log dir copied into these shapes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from monitor.kafka.discovery import (CLUSTER_CONFLICT, DEFAULT_MAX_DEPTH, IO, META, NOT_FOUND, PARTITION_DIR,
                                     LogDirNotFound, discover_log_dirs)
from recordfixtures import three_v2_batches


def log_dir(d: Path, node: int | None = 0, cluster: str = "c1", marker: bool = True) -> Path:
    """A log dir as a broker leaves it: meta.properties (``node`` None: none), a checkpoint, a partition."""
    three_v2_batches(d / "orders-0" / "00000000000000000000.log")
    if marker:
        (d / "recovery-point-offset-checkpoint").write_text("0\n1\norders 0 6\n")
    if node is not None:
        (d / "meta.properties").write_text(f"version=1\nnode.id={node}\ncluster.id={cluster}\n")
    return d


KUBELET = "var/lib/kubelet/pods/0b6c3c5e-6a51-4b57-9d8e-1f0e2b7c9a10/volumes/kubernetes.io~csi/pvc-1/mount"


@pytest.mark.parametrize("layout, given, where", [
    ("strimzi", "var/lib/kafka/data", ["var/lib/kafka/data/kafka-log0"]),
    ("strimzi-jbod", "var/lib/kafka", ["var/lib/kafka/data-0/kafka-log0", "var/lib/kafka/data-1/kafka-log0"]),
    ("bitnami", "bitnami", ["bitnami/kafka/data"]),
    ("confluent", "var/lib/kafka", ["var/lib/kafka/data"]),
    ("apache", "tmp", ["tmp/kraft-combined-logs"]),
    ("bare", "data/kafka", ["data/kafka"]),
    ("kubelet", "var/lib/kubelet/pods", [f"{KUBELET}/kafka-log0"]),
    ("kubelet-root", "var/lib/kubelet", [f"{KUBELET}/kafka-log0"]),
])
def test_each_layout_is_found_with_its_broker(tmp_path, layout, given, where):
    for w in where:
        log_dir(tmp_path / w, node=0)
    (tmp_path / "var/lib/kafka/other").mkdir(parents=True, exist_ok=True)  # a folder that is no log dir
    found = discover_log_dirs(tmp_path / given)
    assert [f.path for f in found.log_dirs] == [str(tmp_path / w) for w in where]
    assert {(f.node_id, f.cluster_id, f.problem) for f in found.log_dirs} == {("0", "c1", None)}
    if layout.startswith("strimzi") or layout.startswith("kubelet"):
        assert all(f.layout.startswith("Strimzi") for f in found.log_dirs), found
    if layout.startswith("kubelet"):
        assert found.log_dirs[0].layout == "Strimzi in a pod volume"


def test_the_default_depth_reaches_the_kubelets_pod_volumes(tmp_path):
    """A Bitnami volume under the kubelet (its log dir is data/ in the volume) is 7 below /var/lib/kubelet."""
    log_dir(tmp_path / KUBELET / "data", node=2)
    assert len(Path(KUBELET, "data").parts) - 3 == DEFAULT_MAX_DEPTH
    assert [f.node_id for f in discover_log_dirs(tmp_path / "var/lib/kubelet").log_dirs] == ["2"]
    with pytest.raises(LogDirNotFound):
        discover_log_dirs(tmp_path / "var/lib/kubelet", max_depth=DEFAULT_MAX_DEPTH - 1)


def test_the_log_dir_itself_and_a_copy_of_partitions_only(tmp_path):
    d = log_dir(tmp_path / "logs", node=None, marker=False)  # partition folders only (a copy)
    [f] = discover_log_dirs(d).log_dirs
    assert f.path == str(d) and f.node_id is None and f.problem is None
    [f] = discover_log_dirs(tmp_path).log_dirs
    assert f.path == str(d)


def test_two_brokers_under_one_path_each_with_its_node_id(tmp_path):
    pods = tmp_path / "pods"
    for i, uid in enumerate(("a1", "b2")):
        log_dir(pods / uid / "volumes/kubernetes.io~csi" / f"pvc-{uid}" / "mount" / f"kafka-log{i}", node=i)
    assert [(Path(f.path).name, f.node_id) for f in discover_log_dirs(pods).log_dirs] == [("kafka-log0", "0"),
                                                                                          ("kafka-log1", "1")]


@pytest.mark.parametrize("case", ["etc", "empty", "partition", "missing", "file", "not-kafka-pod", "unlistable"])
def test_no_log_dir_is_one_line_naming_the_path_and_what_was_expected(tmp_path, case):
    if case == "etc":
        path, kind, says = Path("/etc"), NOT_FOUND, "/etc: no Kafka log dir; expected a Kafka log dir (meta.properties"
    elif case == "empty":
        path, kind, says = tmp_path, NOT_FOUND, f"{tmp_path}: an empty folder; expected a Kafka log dir"
    elif case == "partition":
        path = log_dir(tmp_path / "logs") / "orders-0"
        kind, says = PARTITION_DIR, (f"{path}: a partition folder (orders-0), not a log dir: its log dir is the "
                                     f"parent, {tmp_path / 'logs'}")
    elif case == "missing":
        path, kind, says = tmp_path / "nope", IO, f"cannot read log dir: {tmp_path / 'nope'}: no such file or directory"
    elif case == "file":
        (tmp_path / "f").write_text("x")
        path, kind, says = tmp_path / "f", IO, f"cannot read log dir: {tmp_path / 'f'}: not a directory; expected"
    elif case == "not-kafka-pod":
        path = tmp_path / "var/lib/kubelet/pods/u1/volumes/kubernetes.io~csi/pvc-pg/mount"
        (path / "pgdata" / "base-1").mkdir(parents=True)  # a name like a partition's, holding no Kafka file
        (path / "pgdata" / "base-1" / "PG_VERSION").write_text("16\n")
        kind, says = NOT_FOUND, f"{path}: the volume of a pod that is not Kafka: expected a Kafka log dir"
    else:
        if os.geteuid() == 0:
            pytest.skip("root lists any folder")
        path = tmp_path / "locked"
        path.mkdir(mode=0)
        kind, says = IO, f"cannot read log dir: {path}: permission denied"
    with pytest.raises(LogDirNotFound) as exc:
        discover_log_dirs(path)
    assert exc.value.kind == kind and exc.value.path == str(path)
    assert str(exc.value).startswith(says) and "\n" not in str(exc.value), str(exc.value)


def test_symlink_loops_and_a_volume_seen_twice_are_walked_once(tmp_path):
    d = log_dir(tmp_path / "vol" / "kafka-log0")
    (tmp_path / "vol" / "up").symlink_to(tmp_path)  # a loop back to the top
    (tmp_path / "again").symlink_to(tmp_path / "vol")  # the same volume under another name
    found = discover_log_dirs(tmp_path)
    assert [f.path for f in found.log_dirs] == [str(tmp_path / "again" / "kafka-log0")] or \
        [f.path for f in found.log_dirs] == [str(d)]
    assert found.entries < 20


def test_it_never_descends_into_a_log_dir_and_stays_within_its_entry_budget(tmp_path):
    d = log_dir(tmp_path / "data")
    log_dir(d / "nested" / "kafka-log9", node=9)  # inside a log dir: not walked
    assert [f.path for f in discover_log_dirs(tmp_path).log_dirs] == [str(d)]
    wide = tmp_path / "wide"
    for i in range(50):
        (wide / f"f{i}" / "g").mkdir(parents=True)
    log_dir(wide / "zz" / "deep", node=1)
    with pytest.raises(LogDirNotFound) as exc:
        discover_log_dirs(wide, max_entries=40)
    assert "the walk stopped after 40 entries" in str(exc.value)
    assert [f.node_id for f in discover_log_dirs(wide).log_dirs] == ["1"]


def test_an_unreadable_meta_properties_is_the_log_dirs_problem_naming_the_file(tmp_path):
    good = log_dir(tmp_path / "data-0" / "kafka-log0", node=0)
    bad = log_dir(tmp_path / "data-1" / "kafka-log0", node=None)
    (bad / "meta.properties").write_bytes(b"version=1\nnode.id=\xff\n")
    damaged = log_dir(tmp_path / "data-2" / "kafka-log0", node=None)
    (damaged / "meta.properties").write_text("version=1\ncluster.id=c1\n")
    found = {Path(f.path).parent.name: f for f in discover_log_dirs(tmp_path).log_dirs}
    assert found["data-0"].problem is None and found["data-0"].path == str(good)
    kind, why = found["data-1"].problem
    assert kind == META and why.startswith(f"{bad}/meta.properties: byte 18: not UTF-8 text; which broker")
    kind, why = found["data-2"].problem
    assert kind == META and why.startswith(f"{damaged}/meta.properties: no node.id or broker.id")


def test_two_log_dirs_claiming_one_broker_of_two_clusters_are_both_named(tmp_path):
    a = log_dir(tmp_path / "a" / "kafka-log0", node=0, cluster="east")
    b = log_dir(tmp_path / "b" / "kafka-log0", node=0, cluster="west")
    c = log_dir(tmp_path / "c" / "kafka-log1", node=1, cluster="west")
    found = {f.path: f for f in discover_log_dirs(tmp_path).log_dirs}
    assert found[str(c)].problem is None
    kind, why = found[str(a)].problem
    assert kind == CLUSTER_CONFLICT and why.startswith(f"{a}: claims node.id 0 of cluster.id east, and so does {b} "
                                                       "(cluster.id west)")
    assert found[str(b)].problem[0] == CLUSTER_CONFLICT and str(a) in found[str(b)].problem[1]


def test_a_log_dir_is_known_by_its_files_without_listing_its_partitions(tmp_path):
    """A broker's log dir of many partitions costs a few stats, not a listing (the collector resolves its
    paths at every refresh): nothing is listed, so a budget of one entry still finds it, below a folder too."""
    d = log_dir(tmp_path / "data" / "kafka-log0")
    for i in range(30):
        (d / f"t{i}-0").mkdir()
    found = discover_log_dirs(d, max_entries=1)
    assert [f.path for f in found.log_dirs] == [str(d)] and found.entries == 0
    assert [f.path for f in discover_log_dirs(tmp_path / "data", max_entries=1).log_dirs] == [str(d)]


def test_a_meta_properties_of_each_era_names_its_broker_and_an_unknown_or_mixed_one_is_said_in_one_line(tmp_path):
    """Version 0 (a ZooKeeper-mode broker: broker.id, as Kafka 3.9 writes it) and version 1 (a KRaft node:
    node.id and directory.id, as 4.x writes it) both name the broker; a version this reader does not know,
    and a broker id under the other version's key, are the log dir's problem in one line naming the file
    and what was expected; the other log dirs are read."""
    zk = log_dir(tmp_path / "zk" / "kafka-log0", node=None)
    (zk / "meta.properties").write_text("#\n#Mon Dec 07 14:51:40 UTC 2026\nbroker.id=1\nversion=0\n"
                                        "cluster.id=B9zIzbXZQ_-zXnk77uo4Dw\n")
    kraft = log_dir(tmp_path / "kraft" / "kafka-log0", node=None)
    (kraft / "meta.properties").write_text("#\nnode.id=2\ndirectory.id=szo-ppIvTiuL3Zv31NjCfw\nversion=1\n"
                                           "cluster.id=B9zIzbXZQ_-zXnk77uo4Dw\n")
    future = log_dir(tmp_path / "future" / "kafka-log0", node=None)
    (future / "meta.properties").write_text("version=2\nnode.id=3\ncluster.id=c\n")
    mixed = log_dir(tmp_path / "mixed" / "kafka-log0", node=None)
    (mixed / "meta.properties").write_text("version=1\nbroker.id=4\ncluster.id=c\n")
    found = {Path(f.path).parent.name: f for f in discover_log_dirs(tmp_path).log_dirs}
    assert (found["zk"].node_id, found["zk"].problem) == ("1", None)
    assert (found["kraft"].node_id, found["kraft"].problem) == ("2", None)
    expected = "expected version=0 (ZooKeeper mode: broker.id) or version=1 (KRaft: node.id, directory.id)"
    kind, why = found["future"].problem
    assert kind == META and why.startswith(f"{future}/meta.properties: version='2': a meta.properties version "
                                           f"this reader does not know; {expected}; which broker")
    kind, why = found["mixed"].problem
    assert kind == META and why.startswith(f"{mixed}/meta.properties: version=1 (KRaft) names its broker by "
                                           f"broker.id, the other version's key (ZooKeeper-era and KRaft-era keys "
                                           f"mixed); {expected}")
    assert "\n" not in why

"""The log dir walk: partition folder names, not-live folders, segments, checkpoints."""

import os

import pytest

from kafkatools import create_topic, partition_dir, unique_topic, write_rounds
from monitor.kafka.logdir import parse_partition_dir_name, scan_log_dir, scan_partition


@pytest.mark.parametrize("name, expected", [
    ("orders-0", ("orders", 0)),
    ("orders.v2-eu-12", ("orders.v2-eu", 12)),
    ("__consumer_offsets-49", ("__consumer_offsets", 49)),
    ("my_topic-with-dashes-3", ("my_topic-with-dashes", 3)),
    ("orders-0.5b3c1e2f9c8d4e6fa1b2c3d4e5f60718-delete", None),
    ("orders-0.5b3c1e2f9c8d4e6fa1b2c3d4e5f60718-future", None),
    ("orders-0.5b3c1e2f9c8d4e6fa1b2c3d4e5f60718-stray", None),
    ("lost+found", None),
    ("orders", None),
    ("orders-03", ("orders", 3)),  # Kafka's loader reads it as partition 3 (Integer.parseInt)
    ("orders-٣", ("orders", 3)),
    ("t-99999999999999999999", None),  # not an int32: Kafka's loader refuses it
    ("t-2147483648", None),
    ("orders-²", None),
    ("orders-3\n", None),
])
def test_partition_dir_names(name, expected):
    assert parse_partition_dir_name(name) == expected


def test_scan_reports_not_live_and_bad_checkpoints(tmp_path):
    (tmp_path / "orders.v2-eu-3").mkdir()
    (tmp_path / "orders.v2-eu-3" / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / "orders.v2-eu-3" / "00000000000000000100.log").write_bytes(b"x" * 10)
    (tmp_path / "orders.v2-eu-3" / "00000000000000000100.index").write_bytes(b"")
    (tmp_path / "orders.v2-eu-3" / "00000000000000000100.snapshot").write_bytes(b"")
    (tmp_path / "orders.v2-eu-3" / "00000000000000000000.log.cleaned").write_bytes(b"")
    (tmp_path / "orders-1.abcdef0123456789abcdef0123456789-delete").mkdir()
    (tmp_path / "orders-2.abcdef0123456789abcdef0123456789-future").mkdir()
    (tmp_path / "lost+found").mkdir()
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n5\norders.v2-eu 3 40\n")
    (tmp_path / "meta.properties").write_text("version=1\nnode.id=3\ncluster.id=abc\n")
    ld = scan_log_dir(tmp_path)
    assert [(p.topic, p.partition) for p in ld.partitions] == [("orders.v2-eu", 3)]
    p = ld.partitions[0]
    assert [s.base_offset for s in p.segments] == [0, 100] and p.size == 10
    assert p.segments[1].has_index and not p.segments[0].has_index
    assert p.snapshots == [100] and [x.name for x in p.leftovers] == ["00000000000000000000.log.cleaned"]
    assert sorted(k for _, k in ld.not_live) == ["delete", "future"]
    assert ld.unrecognised == ["lost+found"]
    assert "cleaner-offset-checkpoint" in ld.checkpoint_errors and "header says 5" in ld.checkpoint_errors["cleaner-offset-checkpoint"]
    assert ld.meta["node.id"] == "3"


def test_scan_real_broker_log_dir(kafka):
    """This test's topic as the broker laid it out: its partition folders and segments (by hand:
    round 0 is offsets 0..9, its roll record 10 starts a segment, round 1 is 11..20 and its roll
    record 21 starts the active one; partition 1 has only its empty first segment)."""
    # segment.ms of 1 s: a round (one batch) lands in its segment long before that, however loaded
    # the machine, and each roll record, 1.2 s after the round, starts a new segment
    t = create_topic(kafka.bootstrap, unique_topic("logdir"), partitions=2, **{"segment.ms": 1000})
    write_rounds(kafka.bootstrap, t, 2, keys=10, roll_wait=1.2)
    ld = scan_log_dir(kafka.log_dir)
    assert ld.meta.get("cluster.id") == kafka.cluster_id and ld.meta.get("node.id") == str(kafka.node_id)
    assert not ld.checkpoint_errors
    p0, p1 = ld.partition(t, 0), ld.partition(t, 1)
    assert [s.base_offset for s in p0.segments] == [0, 10, 21] and all(s.has_index for s in p0.segments)
    assert [(s.base_offset, s.size) for s in p1.segments] == [(0, 0)]
    assert p0.size == sum((partition_dir(kafka.log_dir, t) / f"{b:020d}.log").stat().st_size for b in (0, 10, 21))
    assert not p0.leftovers and not p1.leftovers


def test_leftovers_are_named_with_kind_size_and_change_time(tmp_path):
    """Kafka's three temporary suffixes after any segment file's own (LogFileUtils), each with its size and
    inode change time; a rename keeps the mtime, so the age is the change time, not the mtime."""
    d = tmp_path / "orders-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(b"x" * 7)
    made = {"00000000000000000000.log.cleaned": 11, "00000000000000000000.index.swap": 8,
            "00000000000000000042.log.deleted": 5, "00000000000000000042.snapshot.deleted": 3}
    for name, n in made.items():
        (d / name).write_bytes(b"y" * n)
    old = d / "00000000000000000007.log"
    old.write_bytes(b"z" * 2)
    os.utime(old, (1_000_000, 1_000_000))  # an old segment, renamed as Kafka's async delete does
    old.rename(d / "00000000000000000007.log.deleted")
    p = scan_partition(d)
    got = {x.name: (x.kind, x.size, x.changed_ns) for x in p.leftovers}
    want = {name: (name.rsplit(".", 1)[1], n, (d / name).stat().st_ctime_ns) for name, n in made.items()}
    want["00000000000000000007.log.deleted"] = ("deleted", 2, (d / "00000000000000000007.log.deleted").stat().st_ctime_ns)
    assert got == want
    assert [s.base_offset for s in p.segments] == [0] and not p.unreadable
    renamed = next(x for x in p.leftovers if x.name == "00000000000000000007.log.deleted")
    assert renamed.changed_ns > 1_000_000 * 10**9  # the rename's time, not the kept mtime
    changed_ms = renamed.changed_ns // 1_000_000
    assert not renamed.stale(changed_ms + 60_000, 60_000) and renamed.stale(changed_ms + 60_001, 60_000)


def test_stray_files_are_ignored_with_the_reason_never_read(tmp_path):
    """Files with a segment or snapshot suffix but a name Kafka never writes (``monitor.kafka.kafkanames``):
    ignored and named, neither a crash nor a segment (``5.log`` is not the missing segment 5,
    ``99999999999999999999999.log`` not the active segment)."""
    part = tmp_path / "orders-3"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(b"x" * 10)
    (part / "00000000000000000000.index").write_bytes(b"")
    (part / "00000000000000000006.snapshot").write_bytes(b"")
    for name in ("².log", "².snapshot", "5.log", "99999999999999999999999.log", "5.snapshot", "5.log.swap"):
        (part / name).write_bytes(b"y" * 7)
    (part / "leader-epoch-checkpoint").write_text("0\n0\n")
    p = scan_partition(part)
    assert [(s.base_offset, s.log.name, s.size) for s in p.segments] == [(0, "00000000000000000000.log", 10)]
    assert p.snapshots == [6] and p.leftovers == [] and p.unreadable == []
    assert [n for n, _ in p.stray] == sorted(["².log", "².snapshot", "5.log", "99999999999999999999999.log",
                                              "5.snapshot", "5.log.swap"])
    assert all("20-digit" in why for _, why in p.stray)


def test_two_folders_of_one_partition_are_its_fault_not_two_partitions(tmp_path):
    for name in ("orders-3", "orders-03", "orders-٣", "orders-4", "t-99999999999999999999", "remote-log-index-cache"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "00000000000000000000.log").write_bytes(b"")
    ld = scan_log_dir(tmp_path)
    assert [(p.topic, p.partition) for p in ld.partitions] == [("orders", 4)]
    assert ld.duplicates == {("orders", 3): ["orders-03", "orders-3", "orders-٣"]}
    assert ld.unrecognised == ["remote-log-index-cache", "t-99999999999999999999"]
    assert [(f, "int32" in why) for f, why in ld.ignored] == [("t-99999999999999999999", True)]


def test_a_log_dir_that_is_a_symlink_loop_says_so_and_a_looped_partition_is_that_partitions_fault(tmp_path):
    from monitor.fileio.regularfile import PathError

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(PathError, match="too many levels of symbolic links"):
        scan_log_dir(tmp_path / "a")
    logs = tmp_path / "logs"
    (logs / "orders-0").mkdir(parents=True)
    (logs / "orders-0" / "00000000000000000000.log").write_bytes(b"")
    (logs / "orders-1").symlink_to(logs / "orders-1")
    (logs / "stray-link").symlink_to(logs / "stray-link")  # no partition's name: not one of Kafka's folders
    ld = scan_log_dir(logs)
    by = {p.partition: p for p in ld.partitions}
    assert set(by) == {0, 1} and by[0].segments and not by[0].unreadable
    assert by[1].unreadable == [f"{logs / 'orders-1'}: too many levels of symbolic links"]

"""The log-dir scanner's walk (collectors.logdirs.scanner). Names Kafka would not create or load
(``monitor.kafka.kafkanames``): each is said once while it is there (not on every refresh), the refresh never
fails for it, and two folders of one partition are that partition's fault. The write rate for the
forecast: bytes appended between two refreshes of a log dir, on real segment files
(tests/recordfixtures.py) and a clock the test sets; the expected bytes are the appended batches'
lengths."""

from __future__ import annotations

import logging

import pytest

from collectors.logdirs.scanner import LogDirScanner
from monitor.kafka.checkpoint import format_checkpoint
from monitor.kafka.kafkanames import printable
from monitor.model.topicconfig import effective_config
from recordfixtures import items, three_v2_batches, v2, write


def test_each_name_is_said_once_not_on_every_refresh(tmp_path, caplog):
    three_v2_batches(tmp_path / "orders-3" / "00000000000000000000.log")
    three_v2_batches(tmp_path / "orders-4" / "00000000000000000000.log")
    (tmp_path / "cleaner-offset-checkpoint").write_text(format_checkpoint({("orders", 3): 0, ("orders", 4): 0}))
    (tmp_path / "orders-4" / "².log").write_bytes(b"x")
    said: list[str] = []
    scanner = LogDirScanner([tmp_path], notify=said.append)
    first = scanner.refresh()
    assert [(r.state.topic, r.state.partition) for r in first.partitions] == [("orders", 3), ("orders", 4)]
    assert said == [f"{tmp_path}/orders-4/².log: ignored: not <20-digit offset>.<suffix>, the only name Kafka "
                    "writes (LogFileUtils.filenamePrefixFromOffset)"]
    scanner.refresh()
    assert len(said) == 1  # not again while it is there

    three_v2_batches(tmp_path / "orders-03" / "00000000000000000000.log")
    (tmp_path / "t-99999999999999999999").mkdir()
    snap = scanner.refresh()
    assert [(r.state.topic, r.state.partition) for r in snap.partitions] == [("orders", 4)]
    dup = snap.partition_errors[("orders", 3)]
    assert "duplicate log directories for orders-3: orders-03, orders-3" in dup and not snap.down
    assert said[1:] == [dup, f"{tmp_path}/t-99999999999999999999: ignored: partition '99999999999999999999' is not "
                             "a partition number (0..2147483647, an int32): not a partition folder"]
    scanner.refresh()
    assert len(said) == 3

    (tmp_path / "orders-4" / "².log").unlink()
    scanner.refresh()
    (tmp_path / "orders-4" / "².log").write_bytes(b"x")
    scanner.refresh()
    assert said[3:] == said[:1]  # gone and back: said again

    caplog.set_level(logging.WARNING, logger="compaction_monitor.logdirs")
    LogDirScanner([tmp_path]).refresh()  # the collector's default: the logger, one record per name
    assert sorted(r.getMessage() for r in caplog.records) == sorted(said[:3])


def test_one_partition_in_two_log_dirs_of_one_broker_is_its_fault(tmp_path):
    """Kafka's LogManager refuses to start when two of a broker's log dirs hold one partition: the
    collector's scanner (one broker) makes it that partition's fault, not two sets of series; copies
    of several brokers' dirs given to ``logdir`` stay a row each, unless their meta.properties say one
    broker."""
    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        three_v2_batches(d / "orders-3" / "00000000000000000000.log")
        (d / "cleaner-offset-checkpoint").write_text(format_checkpoint({("orders", 3): 0}))
    said: list[str] = []
    snap = LogDirScanner(dirs, broker_id="1", notify=said.append).refresh()
    why = (f"duplicate log directories for orders-3: {dirs[0]}/orders-3, {dirs[1]}/orders-3 (Kafka's LogManager "
           "refuses to start with both); none read: delete the one that is not this replica")
    # the logged line is cut at printable's limit, as every logged name is: a long temp dir (an xdist
    # worker's popen-gwN) takes this one past it
    assert snap.partitions == () and snap.partition_errors == {("orders", 3): why} and said == [printable(why)]

    assert [r.log_dir for r in LogDirScanner(dirs).refresh().partitions] == [str(d) for d in dirs]
    for i, d in enumerate(dirs):
        (d / "meta.properties").write_text(f"version=1\nnode.id={i}\ncluster.id=abc\n")
    assert len(LogDirScanner(dirs).refresh().partitions) == 2  # two brokers' replicas
    (dirs[1] / "meta.properties").write_text("version=1\nnode.id=0\ncluster.id=abc\n")
    snap = LogDirScanner(dirs).refresh()
    assert snap.partitions == () and snap.partition_errors == {("orders", 3): why}


def test_one_log_dir_named_twice_is_read_once(tmp_path):
    """``explain --log-dir X`` with X in the config's log_dirs too (or a link to X): one log dir, its
    partitions read, not every partition a "duplicate log directory" of itself."""
    from collectors.logdirs.scanner import LogDirScanner

    d = tmp_path / "logs"
    part = d / "orders-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / "link").symlink_to(d)
    said = []
    snap = LogDirScanner([d, str(d), tmp_path / "link"], include_all=True, notify=said.append).refresh()
    assert list(snap.log_dirs) == [str(d)]
    assert [(r.state.topic, r.state.partition) for r in snap.partitions] == [("orders", 0)]
    assert not snap.partition_errors and not said


def test_rate_is_the_bytes_appended_between_refreshes(tmp_path):
    folder = tmp_path / "t-0"
    write(folder / "00000000000000000000.log", [v2(items(range(0, 20)))])
    first = [v2(items(range(20, 30)))]
    write(folder / "00000000000000000020.log", first)
    (tmp_path / "cleaner-offset-checkpoint").write_text(format_checkpoint({("t", 0): 20}))
    now = [1000.0]
    scanner = LogDirScanner([tmp_path], lambda t, c: effective_config(t, compacted=True), clock=lambda: now[0])
    [rep] = scanner.refresh().partitions
    assert rep.write_rate.bytes_per_second is None and "no previous refresh" in rep.write_rate.basis
    grown = [v2(items(range(30, 35)))]
    rolled = [v2(items(range(35, 50)))]
    with open(folder / "00000000000000000020.log", "ab") as fh:  # the active segment grows, then rolls
        fh.write(grown[0].data)
    write(folder / "00000000000000000035.log", rolled)
    now[0] = 1010.0
    [rep] = scanner.refresh().partitions
    appended = len(grown[0].data) + len(rolled[0].data)
    assert rep.write_rate.bytes_per_second == pytest.approx(appended / 10)
    # the cause's forecast uses the measured rate, not the one-shot estimate
    c = rep.cause(now[0])
    assert c.forecast["write_rate_bytes_per_second"] == pytest.approx(appended / 10)
    assert c.forecast["write_rate_basis"].startswith("measured")


def test_a_kraft_log_dir_s_metadata_log_is_no_partition_of_its_and_a_zookeeper_one_reads_the_same(tmp_path):
    """Kafka 4.x keeps its metadata log, ``__cluster_metadata-0``, in a log dir beside the topics (a 3.x broker
    on ZooKeeper has none): it is kept by snapshots, never by the cleaner, so it is no partition of the
    scanner's; the topics of a KRaft log dir (meta.properties version 1) and of a ZooKeeper one (version 0)
    are read alike."""
    kraft, zk = tmp_path / "kraft", tmp_path / "zk"
    for d in (kraft, zk):
        three_v2_batches(d / "orders-0" / "00000000000000000000.log")
        (d / "cleaner-offset-checkpoint").write_text(format_checkpoint({("orders", 0): 0}))
    (kraft / "meta.properties").write_text("node.id=1\ndirectory.id=szo-ppIvTiuL3Zv31NjCfw\nversion=1\ncluster.id=c\n")
    (zk / "meta.properties").write_text("broker.id=1\nversion=0\ncluster.id=c\n")
    three_v2_batches(kraft / "__cluster_metadata-0" / "00000000000000000000.log")
    said: list[str] = []
    snaps = [LogDirScanner([d], notify=said.append).refresh() for d in (kraft, zk)]
    for snap in snaps:
        assert [(r.state.topic, r.state.partition) for r in snap.partitions] == [("orders", 0)]
        assert not snap.partition_errors and not snap.down
    assert said == []


def test_zookeeper_era_and_kraft_era_files_in_one_log_dir_are_said_once_and_the_log_dir_read(tmp_path):
    """A version-0 meta.properties (ZooKeeper mode) beside KRaft's metadata log: files of both eras in one log
    dir. One line naming both and what was expected, once while it lasts; its partitions read as usual."""
    three_v2_batches(tmp_path / "orders-0" / "00000000000000000000.log")
    (tmp_path / "cleaner-offset-checkpoint").write_text(format_checkpoint({("orders", 0): 0}))
    (tmp_path / "meta.properties").write_text("broker.id=1\nversion=0\ncluster.id=c\n")
    three_v2_batches(tmp_path / "__cluster_metadata-0" / "00000000000000000000.log")
    said: list[str] = []
    scanner = LogDirScanner([tmp_path], notify=said.append)
    snap = scanner.refresh()
    assert [(r.state.topic, r.state.partition) for r in snap.partitions] == [("orders", 0)] and not snap.down
    assert said == [f"{tmp_path}/meta.properties: version=0 (ZooKeeper mode) beside __cluster_metadata-0 (KRaft's "
                    "metadata log): two eras' files mixed; expected one era's (KRaft writes version=1); read as "
                    "meta.properties says"]
    scanner.refresh()
    assert len(said) == 1

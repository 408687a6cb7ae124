"""Free space per log dir against the room a clean needs: on real filesystems (tmp log dirs and the
session broker's), the room checked against Kafka's own grouping (a real clean that removes nothing
writes one segment per group), and a filesystem whose free space cannot be read takes down that log
dir's check only."""

from __future__ import annotations

import io
import json
import os
import subprocess

from collecting import make_collector, refresh
from cli.logdir_cmd import run_logdir
from collectors.export.partitions import PartitionCollector
from collectors.logdirs.scanner import LogDirScanner
from collectors.serving.runner import Store
from kafkatools import (compacted, create_topic, partition_dir, produce, roll, set_topic_config, unique_topic,
                        wait_cleaned_up_to_active)
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from monitor.model.diskspace import largest_clean_group

MIB = 1 << 20


def df_avail(path) -> int:
    """Free bytes as df reports them (an independent reader of the same filesystem)."""
    out = subprocess.run(["df", "-B1", "--output=avail", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def close_to_df(free: int, path) -> bool:
    """Other processes write to the shared disk between the two reads: within 256 MiB."""
    return abs(free - df_avail(path)) < 256 * MIB


def sizes(folder) -> list[int]:
    bases = sorted(int(f.name[:-4]) for f in folder.glob("*.log"))
    return [(folder / f"{b:020d}.log").stat().st_size for b in bases]


def test_the_room_a_clean_needs_is_the_largest_group_kafkas_cleaner_writes(kafka):
    """Unique keys, so the clean removes nothing and writes each group as one segment of the group's
    size: the largest segment after the clean is Kafka's largest group."""
    t = create_topic(kafka.bootstrap, unique_topic("room"), **compacted(**{
        "segment.bytes": MIB, "min.compaction.lag.ms": 3_600_000}))
    for r in range(5):  # five rolled segments of ~330 KB: Kafka groups them by segment.bytes (1 MiB)
        produce(kafka.bootstrap, t, [(f"r{r}-k{i}".encode(), bytes([65 + r]) * 1000) for i in range(320)])
        roll(kafka.bootstrap, t, key=f"roll-{r}".encode())
    folder = partition_dir(kafka.log_dir, t)
    before = sizes(folder)[:-1]
    predicted = largest_clean_group(before, MIB)
    assert predicted > max(before)  # groups of several segments: the grouping matters here

    cfg = Config(clusters=(ClusterConfig(name="local", brokers=(BrokerConfig(id="1", log_dirs=(kafka.log_dir,)),),
                                         topics={t: {"cleanup.policy": "compact", "segment.bytes": str(MIB),
                                                     "min.compaction.lag.ms": "3600000"}}),))
    out = io.StringIO()
    run_logdir([kafka.log_dir], config=cfg, fmt="json", out=out, err=io.StringIO())

    row = next(r for r in json.loads(out.getvalue()) if r["topic"] == t)
    assert row["clean_needed_bytes"] == predicted

    set_topic_config(kafka.bootstrap, t, **{"min.compaction.lag.ms": 0})
    wait_cleaned_up_to_active(kafka.log_dir, t)
    after = sizes(folder)[:-1]
    assert sum(after) == sum(before)  # nothing removed: each new segment is one group, copied whole
    assert max(after) == predicted


def test_log_dir_free_bytes_and_need_exported_for_the_broker(kafka):
    col = make_collector(kafka)
    try:
        reg = refresh(col)
        lb = {"cluster": "local", "broker": str(kafka.node_id), "log_dir": kafka.log_dir}
        assert reg.get_sample_value("kafka_compaction_log_dir_free_space_check_up", lb) == 1
        assert close_to_df(reg.get_sample_value("kafka_compaction_log_dir_free_bytes", lb), kafka.log_dir)
        snap = next(s for s in col.store.statuses() if s.kind == "log_dirs").snapshot
        need = snap.space[0].need
        assert reg.get_sample_value("kafka_compaction_log_dir_clean_needed_bytes", lb) == need.bytes
        own = [r.clean_needed_bytes for r in snap.partitions if r.clean_needed_bytes is not None]
        assert need.bytes == max(own)
        folder = partition_dir(kafka.log_dir, need.topic, need.partition)
        assert need.bytes >= max(sizes(folder)[:-1])  # at least its largest segment below the active one
    finally:
        col.close()


def test_an_unreadable_filesystem_downs_that_log_dirs_check_only(tmp_path):
    """statvfs refused on one log dir (the fault injected: a real EACCES cannot be had as root): that
    log dir's check is down and named, the other's free space is read."""
    good, bad = tmp_path / "good", tmp_path / "bad"
    for d in (good, bad):  # two log dirs holding no partition yet, as a broker leaves them
        d.mkdir()
        (d / "cleaner-offset-checkpoint").write_text("0\n0\n")

    def statvfs(path):
        if path == str(bad):
            raise PermissionError(13, "Permission denied", path)
        return os.statvfs(path)

    scanner = LogDirScanner([good, bad], statvfs=statvfs)
    snap = scanner.refresh()
    space = {sp.log_dir: sp for sp in snap.space}
    assert space[str(bad)].free_bytes is None and str(bad) in space[str(bad)].error
    assert "permission denied" in space[str(bad)].error  # errno as os.strerror names it (monitor.fileio.regularfile.os_reason)
    assert space[str(good)].error is None and close_to_df(space[str(good)].free_bytes, good)
    assert snap.log_dir_errors == {f"{bad} (free space)": space[str(bad)].error}
    assert not snap.down  # its partitions are still read: only the free-space check is down

    store = Store()
    store.register("ld", "log_dirs", "c", broker="1")
    store.success("ld", snap, 0.0, 0.0)
    fams = {f.name: f for f in PartitionCollector(store).collect()}
    up = {s.labels["log_dir"]: s.value for s in fams["kafka_compaction_log_dir_free_space_check_up"].samples}
    assert up == {str(good): 1.0, str(bad): 0.0}
    free = {s.labels["log_dir"] for s in fams["kafka_compaction_log_dir_free_bytes"].samples}
    assert free == {str(good)}

    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([good], config=Config(), out=out, err=err) == 0
    assert f"free space: {good}: " in out.getvalue() and "no compacted segment to clean" in out.getvalue()

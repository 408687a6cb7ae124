"""A malformed cleaner-offset-checkpoint takes its log dir down instead of publishing ratios computed as
if there were none; the other log dirs of the broker go on, and a valid checkpoint brings it back.

Two log dirs made from the real broker: a cleaned topic's partition 0 in one, partition 1 in the
other, each with the checkpoint Kafka wrote; then the second one's checkpoint is damaged the ways a
file can be (cut short, a non-number offset, a wrong version, a wrong entry count)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import run_cli
from collectors.app import build
from kafkatools import (compacted, copy_partition, create_topic, partition_dir, unique_topic,
                        wait_cleaned_up_to_active, write_rounds)
from monitor.settings.config import BrokerConfig, ClusterConfig, Config

pytestmark = pytest.mark.kafka

CHECKPOINT = "cleaner-offset-checkpoint"


@pytest.fixture(scope="module")
def two_log_dirs(kafka, tmp_path_factory):
    """(topic, good log dir with partition 0, bad log dir with partition 1, Kafka's checkpoint text,
    {partition: checkpointed offset})."""
    t = create_topic(kafka.bootstrap, unique_topic("ckpt"), partitions=2,
                     **compacted(**{"min.cleanable.dirty.ratio": 0.01}))
    for p in (0, 1):
        write_rounds(kafka.bootstrap, t, 3, partition=p)
    offsets = {p: wait_cleaned_up_to_active(kafka.log_dir, t, p) for p in (0, 1)}
    root = tmp_path_factory.mktemp("ckpt")
    good, bad = root / "good", root / "bad"
    for p, d in ((0, good), (1, bad)):
        copy_partition(partition_dir(kafka.log_dir, t, p), d)
    # the checkpoint as Kafka wrote it, once the cleaner had got both partitions to their active segment
    text = (Path(kafka.log_dir) / CHECKPOINT).read_text()
    for d in (good, bad):
        (d / CHECKPOINT).write_text(text)
    return t, good, bad, text, offsets


def _entry_line(text: str, topic: str, partition: int) -> int:
    return next(i for i, x in enumerate(text.splitlines(), start=1) if x.split()[:2] == [topic, str(partition)])


def _damaged(kind: str, text: str, topic: str) -> tuple[str, int]:
    """The checkpoint damaged as ``kind``, and the 1-based line a reader must name."""
    lines = text.splitlines()
    if kind == "truncated":  # cut inside the last entry: its offset is missing
        return text.rstrip("\n").rsplit(" ", 1)[0], len(lines)
    if kind == "offset":
        i = _entry_line(text, topic, 1)
        lines[i - 1] = f"{topic} 1 12x"
        return "\n".join(lines) + "\n", i
    if kind == "version":
        return "\n".join(["1"] + lines[1:]) + "\n", 1
    assert kind == "count"  # one entry more announced than written: the missing line is named
    return "\n".join([lines[0], str(int(lines[1]) + 1)] + lines[2:]) + "\n", len(lines) + 1


def _collector(good: Path, bad: Path):
    return build(Config(granularity="partition", clusters=(ClusterConfig(
        name="local", brokers=(BrokerConfig(id="1", log_dirs=(str(good), str(bad))),)),)))


def _sample(reg, name, **labels):
    return reg.get_sample_value(name, {"cluster": "local", "broker": "1", **labels})


@pytest.mark.parametrize("kind", ["truncated", "offset", "version", "count"])
def test_malformed_checkpoint_takes_its_log_dir_down(two_log_dirs, kind):
    t, good, bad, text, offsets = two_log_dirs
    damaged, line = _damaged(kind, text, t)
    (bad / CHECKPOINT).write_text(damaged)
    col = _collector(good, bad)
    try:
        assert col.runner.refresh_all()  # the source itself answered: source_up stays 1
        reg = col.registry
        src = {"cluster": "local", "source": "log_dirs:local:1", "kind": "log_dirs"}
        assert reg.get_sample_value("kafka_compaction_source_up", src) == 1.0
        assert reg.get_sample_value("kafka_compaction_source_errors_total", {**src, "error": "checkpoint"}) == 1.0
        assert _sample(reg, "kafka_compaction_log_dir_up", log_dir=str(bad)) == 0.0
        assert _sample(reg, "kafka_compaction_log_dir_up", log_dir=str(good)) == 1.0
        # no series of the bad log dir's partition, not even a guessed ratio; the good one's from Kafka's checkpoint
        for name in ("kafka_compaction_partition_cleanable_ratio", "kafka_compaction_partition_first_dirty_offset",
                     "kafka_compaction_partition_log_bytes"):
            assert _sample(reg, name, topic=t, partition="1") is None, name
        assert _sample(reg, "kafka_compaction_partition_first_dirty_offset", topic=t, partition="0") == offsets[0]
        [status] = col.store.statuses()
        assert f"{bad / CHECKPOINT}: line {line}:" in status.snapshot.down[str(bad)][1]

        # a valid checkpoint back: up again on the next refresh, with the partition's series
        (bad / CHECKPOINT).write_text(text)
        assert col.runner.refresh_all()
        reg = col.registry
        assert _sample(reg, "kafka_compaction_log_dir_up", log_dir=str(bad)) == 1.0
        assert _sample(reg, "kafka_compaction_partition_first_dirty_offset", topic=t, partition="1") == offsets[1]
        assert _sample(reg, "kafka_compaction_partition_cleanable_ratio", topic=t, partition="1") == 0.0
        # the count stays: one refresh met the fault
        assert reg.get_sample_value("kafka_compaction_source_errors_total", {**src, "error": "checkpoint"}) == 1.0
    finally:
        col.close()


def _cli(*args):
    return run_cli(*map(str, args))


def test_logdir_and_collect_once_name_the_malformed_line_and_exit_1(two_log_dirs):
    t, good, bad, text, offsets = two_log_dirs
    damaged, line = _damaged("offset", text, t)
    (bad / CHECKPOINT).write_text(damaged)
    try:
        proc = _cli("logdir", "--format", "json", good, bad)
        assert proc.returncode == 1, proc.stderr
        assert f"{bad / CHECKPOINT}: line {line}:" in proc.stderr
        rows = json.loads(proc.stdout)
        assert [(r["topic"], r["partition"], r["log_dir"]) for r in rows if r["topic"] == t] == [(t, 0, str(good))]
        assert rows[[r["topic"] for r in rows].index(t)]["first_dirty_offset"] == offsets[0]

        proc = _cli("collect", "--once", "--log-dir", good, "--log-dir", bad)
        assert proc.returncode == 1, proc.stderr
        assert f"{bad / CHECKPOINT}: line {line}:" in proc.stderr
        assert f'log_dir="{bad}"' in next(x for x in proc.stdout.splitlines()
                                            if x.startswith("kafka_compaction_log_dir_up{") and x.endswith(" 0.0"))
        assert not [x for x in proc.stdout.splitlines()
                    if x.startswith("kafka_compaction_partition_") and f'topic="{t}"' in x and 'partition="1"' in x]
    finally:
        (bad / CHECKPOINT).write_text(text)
    proc = _cli("logdir", "--format", "json", good, bad)
    assert proc.returncode == 0, proc.stderr
    assert sorted(r["partition"] for r in json.loads(proc.stdout) if r["topic"] == t) == [0, 1]

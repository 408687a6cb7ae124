"""What a log-dir refresh hands on (collectors.logdirs.snapshot) is keyed by ``(topic, partition)`` end to
end: a partition whose figures are unknown in a topic whose name ends like a partition number
(``orders-eu-1``, partition 12: the folder ``orders-eu-1-12``) is that topic and partition in the
snapshot, in the exported series and in ``logdir``'s and ``explain``'s output, never parsed again from a
``topic-p`` text; the snapshot's error kinds count it. Real segment files (tests/recordfixtures.py) with a
checkpoint entry past the log end (an impossible entry: that partition unknown, the others read)."""

from __future__ import annotations

import io
import json

from cli.explain_cmd import run_explain
from cli.logdir_cmd import run_logdir
from collectors.app import build
from collectors.logdirs.snapshot import LogDirSnapshot, offsets_topic_groups
from collectors.logdirs.scanner import LogDirScanner
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from monitor.model.topicconfig import effective_config
from recordfixtures import three_v2_batches

TOPIC = "orders-eu-1"


def log_dir(root):
    d = root / "logs"
    for folder in (f"{TOPIC}-12", f"{TOPIC}-3"):
        three_v2_batches(d / folder / "00000000000000000000.log")  # offsets 0..5
        (d / folder / "00000000000000000006.log").write_bytes(b"")
    (d / "cleaner-offset-checkpoint").write_text(f"0\n2\n{TOPIC} 12 7\n{TOPIC} 3 6\n")  # 7: past the end (6)
    return d


def test_an_unknown_partition_is_its_topic_and_partition_in_the_snapshot(tmp_path):
    d = log_dir(tmp_path)
    snap = LogDirScanner([d], lambda t, c: effective_config(t, compacted=True)).refresh()
    assert [(r.state.topic, r.state.partition) for r in snap.partitions] == [(TOPIC, 3)]
    assert list(snap.partition_errors) == [(TOPIC, 12)]
    assert snap.partition_errors[(TOPIC, 12)].startswith(f"{d}/cleaner-offset-checkpoint: line 3: {TOPIC} 12 7:")
    assert snap.unknown_reasons == {(TOPIC, 12): "checkpoint_entry"}
    assert snap.error_kinds == ["checkpoint_entry"]


def test_the_exporter_and_the_command_line_name_the_same_topic_and_partition(tmp_path):
    d = log_dir(tmp_path)
    cfg = Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", log_dirs=(str(d),)),)),))
    col = build(cfg)
    try:
        assert col.runner.refresh_all()
        lb = {"cluster": "c", "broker": "1", "topic": TOPIC, "partition": "12"}
        assert col.registry.get_sample_value("kafka_compaction_partition_state_unknown",
                                             {**lb, "reason": "checkpoint_entry"}) == 1.0
        assert col.registry.get_sample_value("kafka_compaction_partition_compaction_cause",
                                             {**lb, "cause": "unknown"}) == 1.0
    finally:
        col.close()
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([str(d)], config=Config(), fmt="json", out=out, err=err,
                      topic_overrides={"cleanup.policy": "compact"}) == 1
    rows = json.loads(out.getvalue())
    assert [(r["topic"], r["partition"], bool(r.get("fault"))) for r in rows] == [(TOPIC, 3, False), (TOPIC, 12, True)]
    assert f"logdir: {TOPIC}-12: {d}/cleaner-offset-checkpoint: line 3" in err.getvalue()
    out = io.StringIO()
    run_explain([f"{TOPIC}-12"], config=Config(), log_dirs=[str(d)], fmt="json", out=out, err=io.StringIO(),
                topic_overrides={"cleanup.policy": "compact"})
    [cause] = json.loads(out.getvalue())
    assert (cause["topic"], cause["partition"], cause["cause"]) == (TOPIC, 12, "unknown")


def test_the_groups_of_a_cluster_come_from_the_most_advanced_replica_of_each_offsets_partition():
    ahead = LogDirSnapshot(0.0, offsets_groups={0: (10, frozenset({"a"})), 1: (3, frozenset({"b"}))})
    behind = LogDirSnapshot(0.0, offsets_groups={0: (8, frozenset({"a", "gone"})), 1: (4, frozenset({"c"}))})
    assert offsets_topic_groups([ahead, behind]) == frozenset({"a", "c"})
    assert offsets_topic_groups([LogDirSnapshot(0.0)]) is None

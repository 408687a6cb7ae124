"""The audit over several brokers' log dirs (#22 point 5): a partition found in each is audited once.

Three "replica" log dirs of one partition written and cleaned by the real broker, each a state a
replica really is in: broker-3 copied early (it lags: a lower log end offset and an older cleaner
checkpoint), broker-1 copied after more rounds but before the cleaner took them (same end as the
leader's, older checkpoint, more bytes), broker-2 copied once the cleaner had cleaned up to the
active segment. Each log dir has the cleaner-offset-checkpoint entry and meta.properties node.id a
broker's log dir has (the checkpoint the broker had when the copy was taken).

Expected figures come from the files and the broker: log end offsets from the broker's high watermark
when each copy was taken, sizes and segment counts from the files, log start offsets from the segment
file names, checkpoints from the broker's cleaner-offset-checkpoint; the audit of the three log dirs
against the audit of the chosen one alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kafkatools import (CLI_MODULE, cleaner_checkpoint, copy_partition, create_topic, partition_dir, segment_bases,
                        set_topic_config, unique_topic, wait_cleaned_up_to_active, watermarks, write_rounds)
from monitor.kafka.logdir import read_meta_properties
from monitor.model.topicconfig import TopicConfig
from spark_analysis import replicas as R
from spark_analysis.audit import AuditInputs, run_audit
from spark_analysis.inputs import list_inputs, read_checkpoints, read_log_dirs

pytestmark = pytest.mark.kafka

CFG = {"cleanup.policy": "compact", "segment.ms": 300, "min.cleanable.dirty.ratio": 0.01,
       "delete.retention.ms": 86_400_000, "min.compaction.lag.ms": 0}
TOPIC_FIGURES = ("partitions", "records", "bytes", "reclaimable_bytes", "next_clean_bytes", "distinct_keys",
                 "obsolete_records", "cleanable_bytes", "tombstones")


def take_replica(kafka, topic: str, log_dir: Path, node_id: str) -> dict:
    """A copy of the partition into ``log_dir`` with the broker's cleaner checkpoint entry and a
    meta.properties naming ``node_id``; what the files and the broker say of it."""
    end_before = watermarks(kafka.bootstrap, topic)[1]
    cp = cleaner_checkpoint(kafka.log_dir, topic)
    folder = copy_partition(partition_dir(kafka.log_dir, topic), log_dir)
    assert watermarks(kafka.bootstrap, topic)[1] == end_before and cleaner_checkpoint(kafka.log_dir, topic) == cp
    (log_dir / "cleaner-offset-checkpoint").write_text(f"0\n1\n{topic} 0 {cp}\n")  # Kafka's checkpoint format
    (log_dir / "meta.properties").write_text(f"version=1\nnode.id={node_id}\ncluster.id=test\n")
    logs = sorted(folder.glob("*.log"))
    return {"log_dir": str(log_dir), "broker": node_id, "log_end_offset": end_before,
            "log_start_offset": segment_bases(folder)[0], "bytes": sum(f.stat().st_size for f in logs),
            "segments": len(logs), "cleaner_checkpoint": cp, "first_dirty_offset": cp}


@pytest.fixture(scope="module")
def replicated(kafka, tmp_path_factory):
    root = tmp_path_factory.mktemp("replicas")
    leader = read_meta_properties(Path(kafka.log_dir) / "meta.properties")["node.id"]
    t = create_topic(kafka.bootstrap, unique_topic("replicated"), **CFG)
    write_rounds(kafka.bootstrap, t, rounds=3, keys=300)
    wait_cleaned_up_to_active(kafka.log_dir, t)
    reps = {"broker-3": take_replica(kafka, t, root / "broker-3", f"{leader}3")}  # lags
    # min.cleanable.dirty.ratio 1.0: with a cleaned section, the dirty ratio stays below 1, so the
    # cleaner leaves the next rounds dirty until the ratio goes back down
    set_topic_config(kafka.bootstrap, t, **{"min.cleanable.dirty.ratio": 1.0})
    write_rounds(kafka.bootstrap, t, rounds=2, keys=300)
    reps["broker-1"] = take_replica(kafka, t, root / "broker-1", leader)  # the leader's node.id
    set_topic_config(kafka.bootstrap, t, **{"min.cleanable.dirty.ratio": CFG["min.cleanable.dirty.ratio"]})
    wait_cleaned_up_to_active(kafka.log_dir, t)
    reps["broker-2"] = take_replica(kafka, t, root / "broker-2", f"{leader}2")
    r1, r2, r3 = reps["broker-1"], reps["broker-2"], reps["broker-3"]
    # the states this test needs, as the broker made them
    assert r1["log_end_offset"] == r2["log_end_offset"] > r3["log_end_offset"]
    assert r2["cleaner_checkpoint"] > r1["cleaner_checkpoint"] == r3["cleaner_checkpoint"]
    assert r1["bytes"] > r2["bytes"]
    return {"topic": t, "root": root, "replicas": reps, "leader": leader}


def audit(spark, topic: str, inputs: list, leaders: dict | None = None):
    paths = [str(i) for i in inputs]
    cps, starts = read_checkpoints(paths)
    return run_audit(spark, AuditInputs(kind="segments", files=list_inputs("segments", paths), checkpoints=cps,
                                        log_starts=starts, log_dirs=read_log_dirs(paths), leaders=leaders or {},
                                        topic_configs={topic: TopicConfig.from_strings(CFG)}))


def topic_figures(res) -> dict:
    [row] = [r.asDict() for r in res.topics.collect()]
    return {k: row[k] for k in TOPIC_FIGURES}


def want_rows(replicated, audited: str, chosen_by: str, flags: dict) -> list[dict]:
    reps = replicated["replicas"]
    a = reps[audited]
    return [{**r, "topic": replicated["topic"], "partition": 0, "audited": name == audited, "chosen_by": chosen_by,
             "replicas": 3, "offsets_behind": a["log_end_offset"] - r["log_end_offset"],
             "bytes_difference": r["bytes"] - a["bytes"], "disagreement": flags.get(name, "")}
            for name, r in sorted(reps.items())]


def test_three_log_dirs_audit_one_replica_and_list_every_replica(spark, replicated):
    """Three log dirs: the per-topic figures of the one replica with the highest log end offset (two
    have it: the higher cleaner checkpoint breaks the tie), each replica's own figures, the lagging
    one flagged behind, those with another checkpoint flagged; disk across the three in the summary."""
    t, root = replicated["topic"], replicated["root"]
    res = audit(spark, t, [root / "broker-1", root / "broker-2", root / "broker-3"])
    alone = audit(spark, t, [root / "broker-2"])
    assert topic_figures(res) == topic_figures(alone)
    [part] = [r.asDict() for r in res.partitions.collect()]
    assert part["checkpoint_offset"] == replicated["replicas"]["broker-2"]["cleaner_checkpoint"]  # its own log dir's
    got = sorted((r.asDict() for r in res.replicas.collect()), key=lambda r: r["log_dir"])
    assert got == want_rows(replicated, "broker-2", R.BY_CHECKPOINT,
                            {"broker-1": R.CHECKPOINT_DIFFERS, "broker-3": f"{R.BEHIND},{R.CHECKPOINT_DIFFERS}"})
    assert alone.replicas.count() == 0  # one log dir: no replica table rows
    s = res.summary["replicas"]
    assert (s["partitions_with_replicas"], s["replicas_of_those"], s["disagreeing"]) == (1, 3, 2)
    assert s["bytes_all_replicas"] == sum(r["bytes"] for r in replicated["replicas"].values())
    assert res.summary["bytes"] == replicated["replicas"]["broker-2"]["bytes"]
    assert alone.summary["replicas"]["bytes_all_replicas"] == alone.summary["bytes"]


def test_cli_audits_the_leaders_replica_when_the_admin_api_names_it(spark, kafka, replicated, tmp_path):
    """``python -m cli audit`` over the folder holding the three log dirs, with the broker's admin API:
    the leader's replica (broker-1, by its meta.properties node.id) is audited although its cleaner
    lags; the tables, summary and report say so."""
    t, root = replicated["topic"], replicated["root"]
    out = tmp_path / "audits"
    cmd = [sys.executable, "-m", CLI_MODULE, "audit", "--input", str(root), "--out", str(out), "--master", "local[2]",
           "--bootstrap-servers", kafka.bootstrap]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = out / json.loads((out / "latest.json").read_text())["run"]
    alone = audit(spark, t, [root / "broker-1"])
    [topic] = pq.read_table(run_dir / "topics").to_pylist()
    assert {k: topic[k] for k in TOPIC_FIGURES} == topic_figures(alone)
    got = sorted(pq.read_table(run_dir / "replicas").to_pylist(), key=lambda r: r["log_dir"])
    # broker-3 has the leader's checkpoint (its cleaner has not run since): only behind
    assert got == want_rows(replicated, "broker-1", R.BY_LEADER,
                            {"broker-2": R.CHECKPOINT_DIFFERS, "broker-3": R.BEHIND})
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["replicas"]["totals_count"] == R.COUNTED and "replicas" in summary["tables"]
    html = (run_dir / "report.html").read_text()
    assert "<h2>Replicas</h2>" in html and R.CHECKPOINT_DIFFERS in html and str(root / "broker-3") in html

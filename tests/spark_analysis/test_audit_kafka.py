"""The audit against what the real broker does: the size it leaves after cleaning, the tombstones
kafka-dump-log counts, the time log-cleaner.log reports; the same tables over segments, their dumps
and the live topic (one fold); the public record source."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kafkatools import create_topic, partition_dir, produce, roll, unique_topic, wait_cleaned, wait_for
from monitor.cleanerlog import learned_throughput, parse_cleaner_log
from monitor.dump import DumpParser
from localkafka.broker import dump_log
from monitor.topicconfig import TopicConfig
from spark_analysis.audit import AuditInputs, run_audit
from spark_analysis.job import list_inputs, load_records, read_checkpoints

pytestmark = pytest.mark.kafka

DAY = 86_400_000
KEYS = 24000  # 5 rounds: about 40 MB per topic, a clean long enough to time
CFG = {"cleanup.policy": "compact", "segment.ms": 300, "min.cleanable.dirty.ratio": 1.0,
       "delete.retention.ms": DAY, "min.compaction.lag.ms": 0}


def fill(bootstrap, topic, rounds, keys, value_bytes, hot=0, tombstones=()):
    """Rounds of updates (plus ``hot`` keys updated 10x more), then tombstones, each rolled."""
    pad = b"v" * value_bytes
    for r in range(rounds):
        items = [(f"key-{i}".encode(), pad + f"{r}-{i}".encode()) for i in range(keys)]
        items += [(f"hot-{i % max(hot, 1)}".encode(), pad) for i in range(hot * 10)]
        produce(bootstrap, topic, items, **{"linger.ms": 50, "batch.size": 512_000})
        roll(bootstrap, topic, wait=0.4)
    if tombstones:
        produce(bootstrap, topic, [(f"key-{i}".encode(), None) for i in tombstones])
        roll(bootstrap, topic, wait=0.4)


def copy_partition(src: Path, dst_root: Path) -> Path:
    dst = dst_root / src.name
    dst.mkdir(parents=True)
    for f in sorted(src.glob("*.log")):
        shutil.copy2(f, dst / f.name)
    return dst


def set_ratio(bootstrap, topic, ratio):
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    res = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry("min.cleanable.dirty.ratio", str(ratio), incremental_operation=AlterConfigOpType.SET)])
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive its futures
    for f in admin.incremental_alter_configs([res]).values():
        f.result(30)


def size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.glob("*.log"))


def dump_records(folder: Path):
    text = dump_log(sorted(folder.glob("*.log")), "--print-data-log")
    p = DumpParser(text.splitlines())
    return text, [r for b in p.batches() if not b.is_control for r in b.records()]


@pytest.fixture(scope="module")
def cleaned(kafka, tmp_path_factory):
    """Two topics written alike; copies taken before the broker cleans them; then cleaned."""
    root = tmp_path_factory.mktemp("audit")
    # a first clean warms the broker's JIT up, so the two timed cleans compare like with like
    warm = create_topic(kafka.bootstrap, unique_topic("warmup"), **CFG)
    fill(kafka.bootstrap, warm, rounds=3, keys=KEYS, value_bytes=300)
    set_ratio(kafka.bootstrap, warm, 0.01)
    wait_cleaned(kafka.log_dir, warm, timeout=120)
    calib = create_topic(kafka.bootstrap, unique_topic("calib"), **CFG)
    target = create_topic(kafka.bootstrap, unique_topic("target"), **CFG)
    fill(kafka.bootstrap, calib, rounds=5, keys=KEYS, value_bytes=300, hot=50)
    fill(kafka.bootstrap, target, rounds=5, keys=KEYS, value_bytes=300, hot=50, tombstones=range(0, KEYS, 7))
    snap = root / "before" / "data"
    copy_partition(partition_dir(kafka.log_dir, target), snap)
    before = size(partition_dir(kafka.log_dir, target))
    for t in (calib, target):
        set_ratio(kafka.bootstrap, t, 0.01)
    for t in (calib, target):
        wait_cleaned(kafka.log_dir, t, timeout=120)
    stats = wait_for(lambda: (lambda s: s if {warm, calib, target} <= {x.topic_partition[0] for x in s} else None)(
        parse_cleaner_log(kafka.cleaner_log.read_text().splitlines())), timeout=30, what="the cleaner's stats")
    time.sleep(1)
    return {"calib": calib, "warm": warm, "target": target, "snapshot": snap.parent, "before": before,
            "after": size(partition_dir(kafka.log_dir, target)), "stats": stats}


def audit(spark, kind, inputs, configs, **kw):
    paths = [str(i) for i in inputs]
    bootstrap = kw.pop("bootstrap", None)
    records = None if kind == "segments" else load_records(spark, kind, paths, bootstrap=bootstrap)
    cps, starts = read_checkpoints(paths) if kind == "segments" else ({}, {})
    files = list_inputs("segments", paths) if kind == "segments" else None
    return run_audit(spark, AuditInputs(records=records, kind=kind, files=files, checkpoints=cps,
                                        log_starts=starts, topic_configs=configs, **kw))


def row(result, topic):
    return next(r.asDict() for r in result.partitions.collect() if r["topic"] == topic)


def test_projected_size_tombstones_and_time_match_the_broker(spark, cleaned):
    from monitor.estimate import CleanerParams

    t = cleaned["target"]
    # calibrated on the other topics' cleans (the warm-up and the calibration topic), never the target's
    calib = [s for s in cleaned["stats"] if s.topic_partition[0] in (cleaned["calib"], cleaned["warm"])]
    actual = [s for s in cleaned["stats"] if s.topic_partition[0] == t][0]
    tp = learned_throughput(calib, min_mb=0.1)
    assert tp, calib
    res = audit(spark, "segments", [cleaned["snapshot"]], {t: TopicConfig.from_strings(CFG)},
                cleaner=CleanerParams(throughput=tp, throughput_source="calibrated"))
    r = row(res, t)
    assert r["bytes"] == cleaned["before"]
    # what the broker left (cleaned everything below the active segment once) vs our projection
    assert r["projected_bytes"] == pytest.approx(cleaned["after"], rel=0.05), (r, cleaned["after"])
    # tombstones as kafka-dump-log counts them on the same files
    _, recs = dump_records(cleaned["snapshot"] / "data" / f"{t}-0")
    assert r["tombstones"] == sum(1 for x in recs if x.value_size < 0) == len(range(0, KEYS, 7))
    assert r["keys_last_tombstone"] == len(range(0, KEYS, 7))
    assert r["distinct_keys"] == KEYS + 50 + 1  # plus the "__roll__" key the helper writes
    # the estimated cleaning time, calibrated on the other topic, within a factor 2 of the broker's
    assert actual.duration > 0
    ratio = r["estimated_clean_seconds"] / actual.duration
    print(f"estimated {r['estimated_clean_seconds']:.3f}s vs logged {actual.duration:.3f}s (x{ratio:.2f}); dirty {r['cleanable_bytes']} clean {r['clean_bytes']} tp {tp:.0f} calib {[(c.processed_mb, c.duration) for c in calib]} target {(actual.processed_mb, actual.duration)}")
    assert 0.5 <= ratio <= 2.0
    assert r["cleaner_passes"] == 1 and r["dirty_distinct_keys"] == KEYS + 51


def segments_and_dumps(kafka, tmp_path, prefix: str, **fill_args) -> tuple[str, Path]:
    """A topic of two partitions written by the broker (partition 0 by ``fill``, partition 1 smaller),
    copied to seg/ and dumped by kafka-dump-log, both partitions in one text, to dumps/."""
    t = create_topic(kafka.bootstrap, unique_topic(prefix), partitions=2, **CFG)
    fill(kafka.bootstrap, t, rounds=3, **fill_args)
    for r in range(2):
        produce(kafka.bootstrap, t, [(f"p1-{i % 40}".encode(), f"{r}-{i}".encode()) for i in range(120)], partition=1)
        roll(kafka.bootstrap, t, partition=1, wait=0.4)
    produce(kafka.bootstrap, t, [(f"p1-{i}".encode(), None) for i in range(0, 40, 4)], partition=1)
    roll(kafka.bootstrap, t, partition=1, wait=0.4)
    folder = copy_partition(partition_dir(kafka.log_dir, t), tmp_path / "seg")
    other = copy_partition(partition_dir(kafka.log_dir, t, 1), tmp_path / "seg")
    (tmp_path / "dumps").mkdir()
    text = dump_log(sorted(folder.glob("*.log")) + sorted(other.glob("*.log")), "--print-data-log")
    (tmp_path / "dumps" / f"{t}.txt").write_text(text)
    return t, folder


def tables(res) -> dict:
    """Every output table of a run as plain rows (the summary without what names the input)."""
    out = {name: [r.asDict() for r in getattr(res, name).collect()]
           for name in ("partitions", "topics", "tombstone_buckets", "top_keys", "top_producers", "faults")}
    out["summary"] = [{k: v for k, v in res.summary.items() if k != "input_kind"}]
    return out


def same(a, b, fields=None):
    """Equal rows (floats to 1e-9 relative: sums of byte shares in another order), only ``fields`` if given."""
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for f in fields or x:
            want = pytest.approx(x[f], rel=1e-9) if isinstance(x[f], float) else x[f]
            assert y[f] == want, f


def test_segments_dumps_and_live_topic_give_the_same_tables(spark_kafka, kafka, tmp_path):
    """One fold for every input: the segments path (a task per partition) and the records path (dumps,
    a live topic: records grouped per partition by Spark), with key tables whole or sent in parts,
    give the same tables. A live topic shows a consumer's view: no segments, batch framing or
    producer ids, so its byte figures and Kafka's bounds differ; every count per key is the same."""
    spark = spark_kafka  # the live topic is read through Spark's Kafka source
    t, folder = segments_and_dumps(kafka, tmp_path, "same", keys=500, value_bytes=50, hot=5,
                                   tombstones=range(0, 500, 10))
    cfg = {t: TopicConfig.from_strings(CFG)}
    now = int(time.time() * 1000) + 2 * DAY  # the tombstones are past delete.retention.ms
    seg = tables(audit(spark, "segments", [tmp_path / "seg"], cfg, now_ms=now))
    for run in (audit(spark, "dumps", [tmp_path / "dumps"], cfg, now_ms=now),
                audit(spark, "dumps", [tmp_path / "dumps"], cfg, now_ms=now, max_keys=64, window=300),
                audit(spark, "segments", [tmp_path / "seg"], cfg, now_ms=now, max_keys=64, window=300)):
        other = tables(run)
        for name in seg:
            same(seg[name], other[name])
    p = seg["partitions"][0]
    assert [r["partition"] for r in seg["partitions"]] == [0, 1]
    assert p["bytes"] == size(folder)
    assert p["records"] == 3 * (500 + 50) + 3 + 50 + 1  # updates, rolls, tombstones, last roll
    assert p["tombstones"] == p["tombstones_past_retention"] == p["keys_last_tombstone"] == 50
    assert seg["top_keys"][0]["updates"] == 3 * 10  # a hot key: 10 updates a round
    assert sum(b["tombstones"] for b in seg["tombstone_buckets"]) == 50 + 10
    live = tables(audit(spark, "topic", [t], cfg, now_ms=now, bootstrap=kafka.bootstrap))
    same(seg["partitions"], live["partitions"], ("records", "tombstones", "distinct_keys", "obsolete_records",
                                                 "keys_last_tombstone", "tombstones_past_retention"))
    same(seg["top_keys"], live["top_keys"], ("partition", "key_hash", "key", "updates", "tombstones", "rank"))
    same(seg["tombstone_buckets"], live["tombstone_buckets"])
    assert [r["producer_id"] for r in live["top_producers"]] == [None]  # a consumer does not see producer ids
    assert live["top_producers"][0]["records"] == sum(r["records"] for r in seg["partitions"])  # all keyed


def test_kafka_segments_is_the_records_kafka_dump_log_prints(spark, kafka, tmp_path):
    """The public record source: ``spark.read.format("kafka-segments").load(path)`` gives the records
    of the dump of the same segments, and as many as the audit counts."""
    from pyspark.sql import functions as F

    from spark_analysis.sources import register

    t, _ = segments_and_dumps(kafka, tmp_path, "records", keys=300, value_bytes=80, hot=3, tombstones=range(0, 300, 9))
    register(spark)

    def records(df):
        return (df.filter(F.col("fault_kind").isNull() & ~F.col("control")).groupBy("partition")
                .agg(F.count("*"), F.sum(F.col("tombstone").cast("int")), F.sum("key_size"), F.sum("value_size"),
                     F.countDistinct("key"), F.max("offset"), F.sum("record_bytes")).orderBy("partition").collect())

    seg_records = records(spark.read.format("kafka-segments").load(str(tmp_path / "seg")))
    assert seg_records == records(load_records(spark, "dumps", [str(tmp_path / "dumps")]))
    audited = audit(spark, "segments", [tmp_path / "seg"], {t: TopicConfig.from_strings(CFG)})
    assert [r[1] for r in seg_records] == [r["records"] for r in audited.partitions.collect()]


def test_corrupt_and_truncated_segments_are_listed_and_the_job_finishes(spark, kafka, tmp_path):
    t = create_topic(kafka.bootstrap, unique_topic("corrupt"), **CFG)
    fill(kafka.bootstrap, t, rounds=3, keys=300, value_bytes=100)
    folder = copy_partition(partition_dir(kafka.log_dir, t), tmp_path / "data")
    segs = sorted(folder.glob("*.log"))
    first = bytearray(segs[0].read_bytes())
    first[200] ^= 0xFF
    segs[0].write_bytes(bytes(first))
    second = segs[1].read_bytes()
    segs[1].write_bytes(second[: len(second) - 10])
    res = audit(spark, "segments", [tmp_path / "data"], {t: TopicConfig.from_strings(CFG)})
    faults = res.summary["fault_list"]
    kinds = {(Path(f["file"]).name, f["kind"]) for f in faults}
    assert (segs[0].name, "crc") in kinds and (segs[1].name, "truncated") in kinds
    assert all(f["position"] is not None and f["file"] in f["reason"] for f in faults)
    assert row(res, t)["records"] > 0


def test_cli_runs_writes_every_output_and_never_overwrites(cleaned, kafka, tmp_path):
    out = tmp_path / "audits"
    cmd = [sys.executable, "-m", "cli", "audit", "--input", str(cleaned["snapshot"]), "--out", str(out),
           "--master", "local[2]", "--cleaner-log", str(kafka.cleaner_log), "--bootstrap-servers", kafka.bootstrap]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "[audit] done" in first.stderr and "report:" in first.stderr
    time.sleep(1.1)
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    runs = sorted(p for p in out.iterdir() if p.name.startswith("run-"))
    assert len(runs) == 2
    latest = json.loads((out / "latest.json").read_text())
    assert latest["run"] == runs[-1].name
    for run_dir in runs:
        for table in ("partitions", "topics", "tombstone_buckets", "top_keys", "top_producers", "faults"):
            assert pq.read_table(run_dir / table) is not None
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["cleaner"]["throughput_source"] == "learned from log-cleaner.log"
        html = (run_dir / "report.html").read_text()
        assert "Plotly.newPlot" in html and cleaned["target"] in html and "<script src=" not in html
    topics = pq.read_table(runs[-1] / "partitions").to_pylist()
    assert {r["topic"] for r in topics} == {cleaned["target"]}
    assert topics[0]["min_cleanable_dirty_ratio"] == 0.01  # from the admin API, the live value
    nothing = subprocess.run([sys.executable, "-m", "cli", "audit", "--input", str(tmp_path / "none"),
                              "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert nothing.returncode == 2 and "no such file or directory" in nothing.stderr

"""The audit against what the real broker does and what Kafka's own tools print: every table against
what the test wrote, kafka-dump-log's records and the segment file names; the projected size
against the size the broker leaves after cleaning; the estimate against the throughput calibrated on
log-cleaner.log; the same tables over segments, their dumps and the live topic (one fold); the public
record source. (How close the estimate comes to the broker's clean time is a figure of
``./dev bench estimate``, not a test: it depends on the machine's load.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from clirun import run_cli
from dumpcompare import dump
from kafkatools import (CLI_MODULE, ROLL_KEY, copy_partition, create_topic, partition_dir, produce, roll,
                        segment_bases, set_topic_config, unique_topic, wait_cleaned_up_to_active, wait_for,
                        whole_batches)
from monitor.contract import valuesizes
from monitor.model.estimate import CleanerParams
from monitor.model.topicconfig import TopicConfig
from spark_analysis.arrow_rows import RECORD_OVERHEAD
from spark_analysis.audit import AuditInputs, run_audit
from spark_analysis.inputs import list_inputs, load_records, read_checkpoints

pytestmark = pytest.mark.kafka

DAY = 86_400_000
MINUTE = 60_000
KEYS, ROUNDS, HOT, VALUE_BYTES = 3000, 3, 50, 300  # about 4 MB: a clean log-cleaner.log times (>= 1 MB)
TOMBSTONES = range(0, KEYS, 7)
TOP = 20  # the command line's default --top
CFG = {"cleanup.policy": "compact", "segment.ms": 300, "min.cleanable.dirty.ratio": 1.0,
       "delete.retention.ms": DAY, "min.compaction.lag.ms": 0}
TABLES = ("partitions", "topics", "tombstone_buckets", "top_keys", "top_producers", "faults")


@dataclass
class Written:
    """What a test wrote to a partition through the broker: records per key, tombstoned keys."""

    updates: Counter = field(default_factory=Counter)
    tombstoned: set = field(default_factory=set)

    @property
    def records(self) -> int:
        return sum(self.updates.values())


def hot_updates(j: int) -> int:
    """Updates a round of hot key ``hot-j``: all different, so the order of the top keys is known."""
    return 10 + j


def fill(bootstrap, topic, rounds, keys, value_bytes, hot=0, tombstones=()) -> Written:
    """Rounds of one update to each of ``keys`` keys plus ``hot`` keys updated more often, then
    tombstones, each rolled into segments of their own (``kafkatools.roll``)."""
    written = Written()
    pad = b"v" * value_bytes

    def put(items, **conf):
        produce(bootstrap, topic, items, **conf)
        written.updates.update(k for k, _ in items)
        roll(bootstrap, topic, wait=0.4)
        written.updates[ROLL_KEY] += 1

    for r in range(rounds):
        items = [(f"key-{i}".encode(), pad + f"{r}-{i}".encode()) for i in range(keys)]
        items += [(f"hot-{j}".encode(), pad) for j in range(hot) for _ in range(hot_updates(j))]
        put(items, **{"linger.ms": 50, "batch.size": 512_000})
    if tombstones:
        put([(f"key-{i}".encode(), None) for i in tombstones])
        written.tombstoned = {f"key-{i}".encode() for i in tombstones}
    return written


def size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.glob("*.log"))


def mb_per_sec(block: str) -> float:
    """The throughput a log-cleaner.log stats block prints, "(12.3 MB/sec)", in bytes per second."""
    return float(re.search(r"\(([\d.,]+) MB/sec\)", block)[1].replace(",", "")) * (1 << 20)


def cleaner_block(log: Path, log_name: str) -> str | None:
    """The stats block the cleaner logged for ``log_name`` (topic-partition), once complete, with the
    log4j line it continues (``[time] INFO [kafka-log-cleaner-thread-N]:``: monitor.kafka.cleanerlog reads a
    block only after its header)."""
    lines = log.read_text().splitlines()
    for i, line in enumerate(lines):
        if i > 0 and f"cleaned log {log_name} (" in line:
            block = lines[i - 1:i + 8]
            if len(block) == 9 and "size reduction" in block[-1] and re.search(r"\([\d.,]+ MB/sec\)", block[2]):
                return "\n".join(block) + "\n"
    return None


@pytest.fixture(scope="module")
def cleaned(kafka, tmp_path_factory):
    """A topic written through the broker and copied before the broker cleans it (min.cleanable.dirty
    .ratio 1.0 keeps it dirty), then cleaned by the broker: the copy, what was written, the size the
    broker left, and the stats block of that clean from log-cleaner.log (in a file of its own)."""
    root = tmp_path_factory.mktemp("audit")
    t = create_topic(kafka.bootstrap, unique_topic("target"), **CFG)
    written = fill(kafka.bootstrap, t, ROUNDS, KEYS, VALUE_BYTES, hot=HOT, tombstones=TOMBSTONES)
    folder = partition_dir(kafka.log_dir, t)
    snapshot = copy_partition(folder, root / "before" / "data")
    set_topic_config(kafka.bootstrap, t, **{"min.cleanable.dirty.ratio": 0.01})
    wait_cleaned_up_to_active(kafka.log_dir, t)
    block = wait_for(lambda: cleaner_block(kafka.cleaner_log, f"{t}-0"), 60,
                     f"the cleaner's stats for {t}-0 in log-cleaner.log")
    (root / "log-cleaner.log").write_text(block)
    after = size(copy_partition(folder, root / "after"))
    return {"topic": t, "written": written, "snapshot": snapshot, "input": root / "before", "after": after,
            "cleaner_log": root / "log-cleaner.log", "throughput": mb_per_sec(block)}


def audit(spark, kind, inputs, configs, **kw):
    paths = [str(i) for i in inputs]
    bootstrap = kw.pop("bootstrap", None)
    records = None if kind == "segments" else load_records(spark, kind, paths, bootstrap=bootstrap)
    cps, starts = read_checkpoints(paths) if kind == "segments" else ({}, {})
    files = list_inputs("segments", paths) if kind == "segments" else None
    return run_audit(spark, AuditInputs(records=records, kind=kind, files=files, checkpoints=cps,
                                        log_starts=starts, topic_configs=configs, **kw))


def by_hand(topic: str, folder: Path, written: Written, throughput: float, min_ratio: float, after: int) -> dict:
    """Every audit table for a copy of one partition, computed here: records, keys, timestamps and
    producer ids from kafka-dump-log; Kafka's bounds from the segment file names (the copy has no
    checkpoint: the first dirty offset is the log start, the bound is the active segment's base);
    sizes from the files. A record's bytes are its share of its batch (key + value + RECORD_OVERHEAD,
    the audit's documented split); a clean keeps the latest record of each key below the bound (no
    tombstone is past delete.retention.ms); one pass reads the dirty bytes at ``throughput``. The next clean
    leaves ``after``, the bytes the broker's one clean of the copy's records left (the projection is counted:
    uncompressed batches re-encoded as the broker writes them); every tombstone is unstamped (no clean has
    been over the copy), none a marker. What this test cannot count by hand (``UNCHECKED``) it leaves."""
    files = sorted(folder.glob("*.log"))
    _, batches = dump(files)
    bases, sizes = segment_bases(folder), [f.stat().st_size for f in files]
    upper = bases[-1]
    history = defaultdict(list)  # key -> [(offset, timestamp, tombstone, bytes, producer id)]
    for b in batches:
        recs = b.records()
        shares = [max(r.key_size, 0) + max(r.value_size, 0) + RECORD_OVERHEAD for r in recs]
        for r, s in zip(recs, shares):
            history[r.key].append((r.offset, r.timestamp, r.value_size < 0, s * b.size / sum(shares), b.producer_id))
    assert not any(b.is_control for b in batches)
    assert Counter({k: len(h) for k, h in history.items()}) == written.updates  # the dump holds what was written
    assert [k for k, h in history.items() if h[-1][0] >= upper] == [ROLL_KEY]  # the active segment: the last roll
    records = written.records
    tombstones = [h for hist in history.values() for h in hist if h[2]]
    below = {k: [h for h in hist if h[0] < upper] for k, hist in history.items()}
    cleanable = sum(sizes[:-1])
    timestamps = [h[1] for hist in history.values() for h in hist]
    partition = {
        "topic": topic, "partition": 0, "segments": len(files), "records": records, "control_records": 0,
        "bytes": sum(sizes), "distinct_keys": len(written.updates), "obsolete_records": records - len(written.updates),
        "removable_records": sum(len(hist) - 1 for hist in below.values() if hist),
        "reclaimable_bytes": sum(sizes) - after, "next_clean_bytes": after, "projection_method": "counted",
        "projection_unknown_reason": None, "tombstones_unstamped": len(tombstones), "tombstones_pending": 0,
        "tombstones_passed": 0, "markers_unstamped": 0, "markers_pending": 0, "markers_passed": 0,
        "first_dirty_offset": bases[0], "checkpoint_offset": None, "first_uncleanable_offset": upper,
        "clean_bytes": 0, "cleanable_bytes": cleanable, "cleanable_ratio": 1.0,
        "min_cleanable_dirty_ratio": min_ratio, "eligible": 1.0 > min_ratio,
        "dirty_distinct_keys": sum(1 for hist in below.values() if hist), "cleaner_passes": 1,
        "estimated_clean_seconds": cleanable / throughput,  # monitor/model/estimate.py: (clean + dirty bytes) / rate
        "tombstones": len(tombstones), "tombstones_past_retention": 0, "keys_last_tombstone": len(written.tombstoned),
        "delete_retention_ms": DAY, "first_timestamp": min(timestamps), "last_timestamp": max(timestamps),
        # cleanup.policy=compact: no retention (monitor.model.retention applies to compact,delete only)
        "retention_deleted_segments": None, "retention_deleted_bytes": None, "projected_log_start_offset": None,
        # both callers give the topic's config as the admin API's (the command line asks the broker)
        "config_source": "admin", "config_unknown_reason": None,
        # producer pitfalls: the test writes none (every record keyed, no empty value, one partition)
        "keyless_records": 0, "empty_value_records": 0, "keys_last_empty_value": 0, "keys_in_several_partitions": 0,
        **value_size_columns([r.value_size for b in batches for r in b.records() if r.value_size >= 0])}
    topics = {"topic": topic, "partitions": 1, "max_cleanable_ratio": 1.0, "retention_deleted_bytes": 0, "streams_role": "",
              "next_clean_unknown_partitions": 0,
              "config_source": "admin", "config_unknown_reason": None,
              **{k: partition[k] for k in ("records", "bytes", "distinct_keys", "obsolete_records",
                                           "reclaimable_bytes", "next_clean_bytes", "projection_method",
                                           "tombstones_unstamped", "tombstones_pending", "tombstones_passed",
                                           "markers_unstamped", "markers_pending", "markers_passed", "cleanable_bytes",
                                           "estimated_clean_seconds", "tombstones", "tombstones_past_retention",
                                           "keys_last_tombstone", "keyless_records", "empty_value_records",
                                           "keys_last_empty_value", "keys_in_several_partitions", "value_bytes_p50",
                                           "value_bytes_p90", "value_bytes_p99", "value_bytes_max")}}
    assert max(timestamps) - min(timestamps) < 200 * MINUTE  # so the audit picks minute buckets
    buckets = Counter(h[1] // MINUTE * MINUTE for h in tombstones)
    by_updates = sorted(history, key=lambda k: -len(history[k]))
    assert len(history[by_updates[TOP - 1]]) > len(history[by_updates[TOP]])  # no tie decides the top keys
    producers = defaultdict(lambda: [0, 0.0, 0, 0.0])  # records, bytes, latest records, latest bytes
    for hist in history.values():
        for h in hist:
            producers[h[4]][0] += 1
            producers[h[4]][1] += h[3]
        producers[hist[-1][4]][2] += 1
        producers[hist[-1][4]][3] += hist[-1][3]
    assert len(producers) == 1  # one producer id (-1: not idempotent): no order to check among producers
    return {
        "partitions": [partition], "topics": [topics],
        "tombstone_buckets": [{"topic": topic, "bucket_start_ms": start, "tombstones": n, "past_retention": 0,
                               "bucket_ms": MINUTE} for start, n in sorted(buckets.items())],
        "top_keys": [{"topic": topic, "partition": 0, "key": k, "updates": len(history[k]),
                      "tombstones": sum(h[2] for h in history[k]),
                      "obsolete_bytes": sum(h[3] for h in history[k][:-1]), "rank": i + 1}
                     for i, k in enumerate(by_updates[:TOP])],
        "top_producers": [{"topic": topic, "producer_id": pid, "records": n, "obsolete_bytes": b - lb,
                           "obsolete_records": n - ln, "rank": 1} for pid, (n, b, ln, lb) in producers.items()],
        "faults": [],
    }


def value_size_columns(sizes: list) -> dict:
    """The value-size percentiles numpy gives for the dump's value sizes (nearest rank); the audit's are
    exact below ``valuesizes.EXACT_BELOW`` and within its relative error above (``same`` allows it)."""
    out = {f"value_bytes_{n}": float(np.percentile(sizes, q * 100, method="inverted_cdf"))
           for n, q in valuesizes.PERCENTILES}
    return {**out, "value_bytes_max": max(sizes)}


# the projection's figures this test does not count by hand: what the second clean leaves (settled), the
# batches it drops, rewrites and stamps, and when the next tombstones go (the audit's clock: now + retention)
UNCHECKED = {"settled_bytes", "settled_unknown_partitions", "batches_dropped", "batches_rewritten",
             "batches_stamped", "next_removable_ms"}


def check_table(got: list[dict], want: list[dict], unchecked=UNCHECKED) -> None:
    """Every column of every row, but ``unchecked`` (values this test cannot compute by hand)."""
    assert len(got) == len(want), (got[:3], want[:3])
    for g in got:
        assert set(g) - set(unchecked) == set(want[0])
    same(want, got)


def same(a, b, fields=None):
    """Equal rows (floats to 1e-9 relative: sums of byte shares in another order), only ``fields`` if given."""
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for f in fields or x:
            rel = valuesizes.RELATIVE_ERROR if f.startswith("value_bytes_p") else 1e-9  # see value_size_columns
            want = pytest.approx(x[f], rel=rel) if isinstance(x[f], float) else x[f]
            assert y[f] == want, (f, x, y)


def test_audit_of_a_copy_matches_kafka_dump_log_and_projects_the_size_the_broker_left(spark, cleaned):
    """The partition's row for a copy taken before the broker cleaned it: every figure by hand from
    the dump, the file names and the calibrated throughput; its projected size within 5% of what the
    broker's clean left (the broker rebuilds batches, so their framing differs)."""
    t = cleaned["topic"]
    tp = cleaned["throughput"]
    res = audit(spark, "segments", [cleaned["input"]], {t: TopicConfig.from_strings(CFG)},
                cleaner=CleanerParams(throughput=tp, throughput_source="calibrated"))
    want = by_hand(t, cleaned["snapshot"], cleaned["written"], tp, min_ratio=1.0, after=cleaned["after"])
    [row] = [r.asDict() for r in res.partitions.collect()]
    check_table([row], want["partitions"])
    assert row["next_removable_ms"] == res.summary["generated_at_ms"] + DAY  # the next clean stamps them
    assert res.summary["next_clean_bytes"] == cleaned["after"] and res.summary["next_clean_unknown_partitions"] == 0


def segments_and_dumps(kafka, tmp_path, prefix: str, **fill_args) -> tuple[str, Path, Written]:
    """A topic of two partitions written by the broker (partition 0 by ``fill``, partition 1 smaller),
    copied to seg/ and dumped by kafka-dump-log, both partitions in one text, to dumps/."""
    t = create_topic(kafka.bootstrap, unique_topic(prefix), partitions=2, **CFG)
    written = fill(kafka.bootstrap, t, rounds=3, **fill_args)
    for r in range(2):
        produce(kafka.bootstrap, t, [(f"p1-{i % 40}".encode(), f"{r}-{i}".encode()) for i in range(120)], partition=1)
        roll(kafka.bootstrap, t, partition=1, wait=0.4)
    produce(kafka.bootstrap, t, [(f"p1-{i}".encode(), None) for i in range(0, 40, 4)], partition=1)
    roll(kafka.bootstrap, t, partition=1, wait=0.4)
    folder = copy_partition(partition_dir(kafka.log_dir, t), tmp_path / "seg")
    other = copy_partition(partition_dir(kafka.log_dir, t, 1), tmp_path / "seg")
    (tmp_path / "dumps").mkdir()
    text, _ = dump(sorted(folder.glob("*.log")) + sorted(other.glob("*.log")))
    (tmp_path / "dumps" / f"{t}.txt").write_text(text)
    return t, folder, written


P1_RECORDS = 2 * (120 + 1) + 10 + 1  # partition 1: two rounds and a round of tombstones, each rolled


def tables(res) -> dict:
    """Every output table of a run as plain rows (the summary without what names the input or how it
    was decoded)."""
    out = {name: [r.asDict() for r in getattr(res, name).collect()] for name in TABLES}
    # what names the input: its kind, and which record decoder its tasks ran (only segments are decoded
    # by the audit's tasks: dumps and a live topic arrive as records)
    out["summary"] = [{k: v for k, v in res.summary.items() if k not in ("input_kind", "decoders")}]
    return out


# what differs between a counted projection (segments) and the records path's estimate (dumps, a topic)
PROJECTED = {"reclaimable_bytes", "next_clean_bytes", "settled_bytes", "projection_method", "projection_unknown_reason",
             "removable_records", "batches_dropped", "batches_rewritten", "batches_stamped", "next_removable_ms",
             "next_clean_unknown_partitions", "settled_unknown_partitions", "tombstones_unstamped",
             "tombstones_pending", "tombstones_passed", "markers_unstamped", "markers_pending", "markers_passed",
             # the what-if figures need the segments' timestamps and the counted settled size (spark_analysis.whatif)
             "size_bytes", "peak_bytes", "cleans_per_day", "read_bytes_per_day", "written_bytes_per_day",
             "write_bytes_per_second", "live_bytes", "unknown_reason"}


def test_segments_dumps_and_live_topic_give_the_same_tables(spark_kafka, kafka, tmp_path):
    """One fold for every input: the segments path (a task per partition) and the records path (dumps,
    a live topic: records grouped per partition by Spark), with key tables whole or sent in parts,
    give the same tables. A live topic shows a consumer's view: no segments, batch framing or
    producer ids, so its byte figures and Kafka's bounds differ; every count per key is the same."""
    spark = spark_kafka  # the live topic is read through Spark's Kafka source
    t, folder, written = segments_and_dumps(kafka, tmp_path, "same", keys=500, value_bytes=50, hot=5,
                                            tombstones=range(0, 500, 10))
    cfg = {t: TopicConfig.from_strings(CFG)}
    now = int(time.time() * 1000) + 2 * DAY  # the tombstones are past delete.retention.ms
    seg = tables(audit(spark, "segments", [tmp_path / "seg"], cfg, now_ms=now))
    for run in (audit(spark, "dumps", [tmp_path / "dumps"], cfg, now_ms=now),
                audit(spark, "dumps", [tmp_path / "dumps"], cfg, now_ms=now, max_keys=64, window=300),
                audit(spark, "segments", [tmp_path / "seg"], cfg, now_ms=now, max_keys=64, window=300)):
        other = tables(run)
        counted = run.summary["input_kind"] == "segments"
        for name in seg:  # a dump's projection is the estimate, labelled so (spark_analysis.projection)
            same(seg[name], other[name], None if counted else [f for r in seg[name][:1] for f in r if f not in PROJECTED])
        if not counted:
            for r in other["partitions"]:
                assert (r["projection_method"], r["settled_bytes"]) == ("estimated", None), r
                assert "settled size not counted" in r["projection_unknown_reason"]
                assert r["reclaimable_bytes"] == r["bytes"] - r["next_clean_bytes"] > 0
    assert {r["projection_method"] for r in seg["partitions"]} == {"counted"}
    p = seg["partitions"][0]
    assert [r["partition"] for r in seg["partitions"]] == [0, 1]
    assert p["bytes"] == size(folder)
    assert p["records"] == written.records and seg["partitions"][1]["records"] == P1_RECORDS
    assert p["tombstones"] == p["tombstones_past_retention"] == p["keys_last_tombstone"] == 50
    hottest = max(written.updates, key=written.updates.get)
    assert (seg["top_keys"][0]["key"], seg["top_keys"][0]["updates"]) == (hottest, written.updates[hottest])
    assert sum(b["tombstones"] for b in seg["tombstone_buckets"]) == 50 + 10
    live = tables(audit(spark, "topic", [t], cfg, now_ms=now, bootstrap=kafka.bootstrap))
    same(seg["partitions"], live["partitions"], ("records", "tombstones", "distinct_keys", "obsolete_records",
                                                 "keys_last_tombstone", "tombstones_past_retention"))
    same(seg["top_keys"], live["top_keys"], ("partition", "key_hash", "key", "updates", "tombstones", "rank"))
    same(seg["tombstone_buckets"], live["tombstone_buckets"])
    assert [r["producer_id"] for r in live["top_producers"]] == [None]  # a consumer does not see producer ids
    assert live["top_producers"][0]["records"] == written.records + P1_RECORDS  # all keyed


def test_kafka_segments_source_gives_the_records_kafka_dump_log_prints(spark, kafka, tmp_path):
    """The public record source: ``spark.read.format("kafka-segments").load(path)`` gives the records
    of the dump of the same segments, and as many as the audit counts and the test wrote."""
    from pyspark.sql import functions as F

    from spark_analysis.sources import register

    t, _, written = segments_and_dumps(kafka, tmp_path, "records", keys=300, value_bytes=80, hot=3,
                                       tombstones=range(0, 300, 9))
    register(spark)

    def records(df):
        return (df.filter(F.col("fault_kind").isNull() & ~F.col("control")).groupBy("partition")
                .agg(F.count("*"), F.sum(F.col("tombstone").cast("int")), F.sum("key_size"), F.sum("value_size"),
                     F.countDistinct("key"), F.max("offset"), F.sum("record_bytes")).orderBy("partition").collect())

    seg_records = records(spark.read.format("kafka-segments").load(str(tmp_path / "seg")))
    assert seg_records == records(load_records(spark, "dumps", [str(tmp_path / "dumps")]))
    assert [r[1] for r in seg_records] == [written.records, P1_RECORDS]
    audited = audit(spark, "segments", [tmp_path / "seg"], {t: TopicConfig.from_strings(CFG)})
    assert [r[1] for r in seg_records] == [r["records"] for r in audited.partitions.collect()]


def batch_starts(data: bytes) -> list[int]:
    """The positions of the whole batches in segment bytes (each 12 + its length bytes long)."""
    starts, pos = [], 0
    while pos < len(whole_batches(data)):
        starts.append(pos)
        pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
    return starts


def test_a_corrupt_and_a_truncated_segment_are_listed_with_their_positions_and_the_job_finishes(spark, kafka,
                                                                                                 tmp_path):
    t = create_topic(kafka.bootstrap, unique_topic("corrupt"), **CFG)
    fill(kafka.bootstrap, t, rounds=3, keys=300, value_bytes=100)
    folder = copy_partition(partition_dir(kafka.log_dir, t), tmp_path / "data")
    segs = sorted(folder.glob("*.log"))
    first = bytearray(segs[0].read_bytes())
    crc_at = max(p for p in batch_starts(bytes(first)) if p <= 200)  # the batch holding byte 200
    first[200] ^= 0xFF
    segs[0].write_bytes(bytes(first))
    second = segs[1].read_bytes()
    cut_at = batch_starts(second)[-1]  # the last batch loses its last 10 bytes
    segs[1].write_bytes(second[: len(second) - 10])
    res = audit(spark, "segments", [tmp_path / "data"], {t: TopicConfig.from_strings(CFG)})
    faults = sorted((Path(f["file"]).name, f["kind"], f["position"]) for f in res.summary["fault_list"])
    assert faults == [(segs[0].name, "crc", crc_at), (segs[1].name, "truncated", cut_at)]
    assert all(f["file"] in f["reason"] for f in res.summary["fault_list"])
    assert sorted((Path(r["segment"]).name, r["fault_kind"], r["fault_position"]) for r in res.faults.collect()) == faults
    assert res.partitions.count() == 1


def test_cli_writes_six_tables_that_match_kafka_dump_log_and_never_overwrites_a_run(cleaned, kafka, tmp_path):
    """``python -m cli audit`` twice on the copy: two run folders, each with every table equal to the
    one computed by hand (by_hand), the summary, the report; the live topic config from the admin API
    and the throughput learned from the cleaner's logged clean of the same topic."""
    t, tp = cleaned["topic"], cleaned["throughput"]
    out = tmp_path / "audits"
    cmd = [sys.executable, "-m", CLI_MODULE, "audit", "--input", str(cleaned["input"]), "--out", str(out),
           "--master", "local[2]", "--cleaner-log", str(cleaned["cleaner_log"]), "--bootstrap-servers", kafka.bootstrap,
           "--restore-throughput", "1000000"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "[audit] done" in first.stderr and "report:" in first.stderr
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    runs = sorted(p for p in out.iterdir() if p.name.startswith("run-"))
    assert len(runs) == 2
    assert json.loads((out / "latest.json").read_text())["run"] == runs[-1].name
    # the live config from the admin API (min.cleanable.dirty.ratio 0.01 since the fixture set it)
    want = by_hand(t, cleaned["snapshot"], cleaned["written"], tp, min_ratio=0.01, after=cleaned["after"])
    want["topics"][0]["restore_seconds"] = want["topics"][0]["next_clean_bytes"] / 1_000_000  # monitor.verdicts.restore
    for run_dir in runs:
        for table in TABLES:
            got = pq.read_table(run_dir / table).to_pylist()
            check_table(got, want[table], unchecked=UNCHECKED | ({"key_hash"} if table == "top_keys" else set()))
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["cleaner"]["throughput_source"] == "learned from log-cleaner.log"
        assert summary["cleaner"]["throughput_bytes_per_second"] == pytest.approx(tp, rel=1e-9)
        p = want["partitions"][0]
        assert {k: summary[k] for k in ("partitions", "topics", "records", "bytes", "tombstones", "faults")} == \
            {"partitions": 1, "topics": 1, "records": p["records"], "bytes": p["bytes"],
             "tombstones": p["tombstones"], "faults": 0}
        html = (run_dir / "report.html").read_text()
        assert "Plotly.newPlot" in html and t in html and "<script src=" not in html
    nothing = run_cli("audit", "--input", tmp_path / "none", "--out", out)  # refused before Spark: in-process
    assert nothing.returncode == 2 and "no such file or directory" in nothing.stderr

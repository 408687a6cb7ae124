"""The reader and the dump parser agree with Kafka's own ``kafka-dump-log``, record by record,
on segments the real broker wrote: every codec, tombstones, headers, null keys, LogAppendTime,
transactions with an abort, and segments after the broker compacted them."""

from __future__ import annotations

import io
import json
import shutil
import time

import pytest
from confluent_kafka import Producer

from kafkatools import (compacted, create_topic, partition_dir, produce, roll, unique_topic, wait_cleaned)
from monitor.dump import DumpParser
from cli.inspect_cmd import run_inspect
from localkafka.broker import dump_log

pytestmark = pytest.mark.kafka

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def _items(n: int, prefix: str):
    """Keyed, compressible values; every 7th a tombstone, every 11th with headers, every 13th a null key."""
    for i in range(n):
        key = None if i % 13 == 5 else f"{prefix}-key-{i % 40}".encode()
        value = None if i % 7 == 3 else (f"value {i} " * (5 + i % 20)).encode()
        headers = [("trace", f"t{i}".encode()), ("empty", None)] if i % 11 == 0 else None
        yield key, value, headers


def _produce_with_headers(bootstrap, topic, items, **conf):
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 50, **conf})
    errs = []
    for key, value, headers in items:
        p.produce(topic, key=key, value=value, headers=headers, on_delivery=lambda e, m: e and errs.append(e))
    assert p.flush(30) == 0 and not errs, errs


@pytest.fixture(scope="module")
def written(kafka, tmp_path_factory):
    """Partition folders copied (so the cleaner cannot change them under the comparison)."""
    snap = tmp_path_factory.mktemp("segments")
    topics = {}
    for codec in CODECS:
        t = create_topic(kafka.bootstrap, unique_topic(f"codec-{codec}"))
        _produce_with_headers(kafka.bootstrap, t, _items(400, codec), **{"compression.type": codec})
        topics[f"codec-{codec}"] = t
    t = create_topic(kafka.bootstrap, unique_topic("logappend"), **{"message.timestamp.type": "LogAppendTime"})
    _produce_with_headers(kafka.bootstrap, t, _items(50, "la"), **{"compression.type": "lz4"})
    topics["logappend"] = t

    t = create_topic(kafka.bootstrap, unique_topic("txn"))
    p = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": f"tx-{t}"})
    p.init_transactions(30)
    for outcome in ("commit", "abort", "commit"):
        p.begin_transaction()
        for i in range(20):
            p.produce(t, key=f"{outcome}-{i}".encode(), value=b"v" * 30)
        p.flush(30)
        (p.commit_transaction if outcome == "commit" else p.abort_transaction)(30)
    topics["txn"] = t

    t = create_topic(kafka.bootstrap, unique_topic("cleaned"), **compacted(**{"delete.retention.ms": 3_600_000}))
    for rnd in range(3):
        produce(kafka.bootstrap, t, [(f"k{i}".encode(), f"v{rnd}".encode() * 10) for i in range(100)])
        roll(kafka.bootstrap, t)
    produce(kafka.bootstrap, t, [(f"k{i}".encode(), None) for i in range(0, 100, 5)])
    roll(kafka.bootstrap, t)
    wait_cleaned(kafka.log_dir, t)
    time.sleep(1)
    topics["cleaned"] = t

    out = {}
    for label, topic in topics.items():
        src = partition_dir(kafka.log_dir, topic)
        dst = snap / src.name
        dst.mkdir()
        for f in sorted(src.glob("*.log")):
            shutil.copy2(f, dst / f.name)
        out[label] = dst
    return out


def _inspect_jsonl(paths) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    rc = run_inspect([str(p) for p in paths], fmt="jsonl", out=out, err=err)
    assert rc == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _dump(folder):
    files = sorted(folder.glob("*.log"))
    text = dump_log(files, "--print-data-log")
    parser = DumpParser(text.splitlines(), "kafka-dump-log")
    batches = list(parser.batches())
    assert not parser.problems, parser.problems[:5]
    return text, batches


def _compare(ours: list[dict], batches) -> None:
    theirs = [(b, r) for b in batches for r in b.records()]
    assert len(ours) == len(theirs) > 0
    for o, (b, r) in zip(ours, theirs):
        ctx = f"offset {o['offset']}"
        assert o["offset"] == r.offset, ctx
        if b.magic >= 2:  # a legacy batch line prints only the wrapper's (last) offset
            assert o["batch_base_offset"] == b.base_offset, ctx
        assert o["batch_last_offset"] == b.last_offset, ctx
        assert o["batch_position"] == b.position, ctx
        assert o["timestamp"] == r.timestamp, ctx
        assert o["key_size"] == r.key_size, ctx
        assert o["value_size"] == r.value_size, ctx
        assert o["control"] == b.is_control, ctx
        assert o["transactional"] == b.is_transactional, ctx
        assert o["compression"] == b.compression, ctx
        assert o["producer_id"] == b.producer_id, ctx
        assert o["delete_horizon_ms"] == b.delete_horizon_ms, ctx
        assert o["header_keys"] == r.header_keys, ctx
        assert o["timestamp_type"] == b.timestamp_type, ctx
        if b.is_control:
            assert o["control_type"] == r.control_type, ctx
        if o["key"] is not None and not b.is_control:
            import base64

            assert base64.b64decode(o["key"]) == r.key, ctx


@pytest.mark.parametrize("label", [f"codec-{c}" for c in CODECS] + ["logappend", "txn", "cleaned"])
def test_inspect_matches_kafka_dump_log(written, label):
    folder = written[label]
    ours = _inspect_jsonl([folder])
    text, batches = _dump(folder)
    _compare(ours, batches)
    # batch level: sizes, CRCs and record counts as Kafka prints them
    from monitor.record import SegmentReader

    mine = [b for f in sorted(folder.glob("*.log")) for b in SegmentReader(f).batches()]
    assert [(b.base_offset, b.size, b.crc, b.records_count, b.partition_leader_epoch, b.base_sequence)
            for b in mine] == \
           [(b.base_offset, b.size, b.crc, b.records_count, b.partition_leader_epoch, b.base_sequence)
            for b in batches]
    if label.startswith("codec-") and label != "codec-none":
        assert label.removeprefix("codec-") in {b.compression for b in batches}


def test_dump_text_inspected_equals_segments_inspected(written, tmp_path):
    """Both ways: inspect of the dump text gives the same records as inspect of the segments."""
    for label in ("codec-gzip", "txn", "cleaned"):
        folder = written[label]
        text, _ = _dump(folder)
        dump_file = tmp_path / f"{label}.dump.txt"
        dump_file.write_text(text)
        a = _inspect_jsonl([folder])
        b = _inspect_jsonl([dump_file])
        fields = ["offset", "timestamp", "key_size", "value_size", "tombstone", "control", "control_type",
                  "transactional", "compression", "producer_id", "header_keys", "batch_base_offset",
                  "delete_horizon_ms"]
        assert [[r[f] for f in fields] for r in a] == [[r[f] for f in fields] for r in b]


def test_features_are_really_present(written):
    """Guards the scenario itself: the comparisons above covered what they claim to."""
    from monitor.record import read_segment

    recs = [r for f in sorted(written["codec-zstd"].glob("*.log")) for r in read_segment(f)]
    assert any(r.is_tombstone for r in recs) and any(r.key is None for r in recs)
    assert any(r.header_keys == ["trace", "empty"] for r in recs)
    txn = [r for f in sorted(written["txn"].glob("*.log")) for r in read_segment(f)]
    assert [r.control_type for r in txn if r.batch.is_control] == ["COMMIT", "ABORT", "COMMIT"]
    la = [r for f in sorted(written["logappend"].glob("*.log")) for r in read_segment(f)]
    assert {r.batch.timestamp_type for r in la} == {"log_append"}
    cleaned = [r for f in sorted(written["cleaned"].glob("*.log")) for r in read_segment(f)]
    offsets = [r.offset for r in cleaned]
    assert any(b - a > 1 for a, b in zip(offsets, offsets[1:])), "compaction left no offset gap"
    assert any(r.batch.delete_horizon_ms for r in cleaned if r.is_tombstone), "no delete horizon on tombstones"


def test_corpus_including_legacy_formats_matches_kafka_dump_log(corpus, tmp_path):
    """Magic 0/1/2 bytes written by old and new brokers, read by us and by Kafka 4.3's tool."""
    sources = sorted(p for p in corpus.glob("*/*.bin") if "invalid_crc" not in p.name)
    folders = []
    for i, src in enumerate(sources):
        folder = tmp_path / f"corpus-{i}"
        folder.mkdir()
        shutil.copy(src, folder / "00000000000000000000.log")
        folders.append(folder)
    files = [f / "00000000000000000000.log" for f in folders]
    text = dump_log(files, "--print-data-log")
    parser = DumpParser(text.splitlines(), "kafka-dump-log")
    batches = list(parser.batches())
    assert not parser.problems, parser.problems[:5]
    by_file = {}
    for b in batches:
        by_file.setdefault(b.file, []).append(b)
    legacy_seen = 0
    for f in files:
        theirs = by_file[str(f)]
        _compare(_inspect_jsonl([f]), theirs)
        legacy_seen += sum(b.magic < 2 for b in theirs)
    assert legacy_seen > 50

"""Broker-written partitions for the ``inspect`` output tests (jsonl encoding, ``--stats``): every
codec with tombstones, null keys, binary keys and headers (one with a non-ASCII name, one with a
null value), a transaction committed and one aborted (control batches), LogAppendTime, and optionally
a compacted topic the cleaner has cleaned (delete horizons, tombstones kept). Copied out of the log
dir (``copy_partition``) so the broker cannot change them under a comparison."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka import Producer

from kafkatools import (compacted, copy_partition, create_topic, partition_dir, transactional_producer,
                        unique_topic, wait_cleaned_up_to_active, watermarks, write_rounds)
from waiting import wait_for

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def items(n: int, prefix: str):
    """(key, value, headers): every 7th a tombstone, every 13th a null key, every 17th a binary key
    (not UTF-8, no line break: kafka-dump-log prints keys raw), every 11th with headers."""
    for i in range(n):
        key = None if i % 13 == 5 else bytes([0, 255, 0x80 + i % 100]) if i % 17 == 3 else f"{prefix}-k{i % 40}".encode()
        value = None if i % 7 == 3 else (f"value {i} " * (3 + i % 20)).encode()
        headers = [("trace", f"t{i}".encode()), ("zürich \"q\"", None)] if i % 11 == 0 else None
        yield key, value, headers


def produce_items(bootstrap: str, topic: str, its, **conf) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 50, **conf})
    errs = []
    for key, value, headers in its:
        p.produce(topic, key=key, value=value, headers=headers, on_delivery=lambda e, m: e and errs.append(e))
    assert p.flush(30) == 0 and not errs, errs


def write_partitions(kafka, into: Path, cleaned: bool = False) -> dict[str, Path]:
    """label -> a copy of the partition folder under ``into``."""
    topics = {}
    for codec in CODECS:
        t = create_topic(kafka.bootstrap, unique_topic(f"insp-{codec}"))
        produce_items(kafka.bootstrap, t, items(300, codec), **{"compression.type": codec})
        topics[f"codec-{codec}"] = t
    t = create_topic(kafka.bootstrap, unique_topic("insp-la"), **{"message.timestamp.type": "LogAppendTime"})
    produce_items(kafka.bootstrap, t, items(40, "la"), **{"compression.type": "lz4"})
    topics["logappend"] = t
    t = create_topic(kafka.bootstrap, unique_topic("insp-txn"))
    p = transactional_producer(kafka.bootstrap, f"tx-{t}")
    for outcome in ("commit", "abort", "commit"):
        p.begin_transaction()
        for key, value, headers in items(20, outcome):
            p.produce(t, key=key, value=value, headers=headers)
        p.flush(30)
        (p.commit_transaction if outcome == "commit" else p.abort_transaction)(30)
    # the coordinator writes the markers after the commit returns: wait for the third (60 records + 3)
    wait_for(lambda: watermarks(kafka.bootstrap, t)[1] == 63, 60, f"the third transaction marker in {t}")
    topics["txn"] = t
    if cleaned:
        t = create_topic(kafka.bootstrap, unique_topic("insp-cleaned"), **compacted(**{"delete.retention.ms": 3_600_000}))
        write_rounds(kafka.bootstrap, t, 3, keys=100, tombstones=range(0, 100, 5),
                     value=lambda r, i: f"v{r}".encode() * 10)
        wait_cleaned_up_to_active(kafka.log_dir, t)
        topics["cleaned"] = t
    return {label: copy_partition(partition_dir(kafka.log_dir, topic), into) for label, topic in topics.items()}

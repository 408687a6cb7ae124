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


def items(n: int, prefix: str, binary_keys: bool = True):
    """(key, value, headers): every 7th a tombstone, every 13th a null key, every 17th a binary key
    (not UTF-8, no line break: kafka-dump-log prints keys raw, so a test that compares keys with the
    dump's text asks for none), every 11th with headers."""
    for i in range(n):
        binary = binary_keys and i % 17 == 3
        key = None if i % 13 == 5 else bytes([0, 255, 0x80 + i % 100]) if binary else f"{prefix}-k{i % 40}".encode()
        value = None if i % 7 == 3 else (f"value {i} " * (3 + i % 20)).encode()
        headers = [("trace", f"t{i}".encode()), ("zürich \"q\"", None)] if i % 11 == 0 else None
        yield key, value, headers


def produce_items(bootstrap: str, topic: str, its, batch_messages: int = 50, **conf) -> None:
    """Produce ``(key, value, headers)`` triples and flush (every delivery checked)."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": batch_messages, **conf})
    errs = []
    for key, value, headers in its:
        p.produce(topic, key=key, value=value, headers=headers, on_delivery=lambda e, m: e and errs.append(e))
    assert p.flush(30) == 0 and not errs, errs


def write_transactions(bootstrap: str, topic: str, outcomes, records) -> None:
    """One transaction per outcome ("commit" or "abort"), each of ``records(outcome)`` (key, value,
    headers) triples; returns once every marker is in the log. The coordinator writes the markers
    after commit/abort returns, so a copy taken at once can miss the last one: wait for the high
    watermark to count the records and one marker per transaction."""
    p = transactional_producer(bootstrap, f"tx-{topic}")
    written = 0
    for outcome in outcomes:
        p.begin_transaction()
        for key, value, headers in records(outcome):
            p.produce(topic, key=key, value=value, headers=headers)
            written += 1
        p.flush(30)
        (p.commit_transaction if outcome == "commit" else p.abort_transaction)(30)
    end = written + len(outcomes)
    wait_for(lambda: watermarks(bootstrap, topic)[1] == end, 60, f"the {len(outcomes)} transaction markers in {topic}")


def write_partitions(kafka, into: Path, cleaned: bool = False, binary_keys: bool = True) -> dict[str, Path]:
    """label -> a copy of the partition folder under ``into``: ``codec-<codec>`` for each of
    ``CODECS``, ``logappend``, ``txn`` (commit, abort, commit) and with ``cleaned`` ``cleaned``."""
    topics = {}
    for codec in CODECS:
        # librdkafka sends a batch uncompressed when compressing would make it larger (a lone small
        # record at the end of a linger), so the producer's setting alone leaves a stray "none" batch
        # now and then; the topic's own compression.type makes the broker write every batch in the codec
        t = create_topic(kafka.bootstrap, unique_topic(f"insp-{codec}"),
                         **{"compression.type": "uncompressed" if codec == "none" else codec})
        produce_items(kafka.bootstrap, t, items(300, codec, binary_keys), **{"compression.type": codec})
        topics[f"codec-{codec}"] = t
    t = create_topic(kafka.bootstrap, unique_topic("insp-la"), **{"message.timestamp.type": "LogAppendTime"})
    produce_items(kafka.bootstrap, t, items(40, "la", binary_keys), **{"compression.type": "lz4"})
    topics["logappend"] = t
    t = create_topic(kafka.bootstrap, unique_topic("insp-txn"))
    write_transactions(kafka.bootstrap, t, ("commit", "abort", "commit"), lambda outcome: items(20, outcome, binary_keys))
    topics["txn"] = t
    if cleaned:
        t = create_topic(kafka.bootstrap, unique_topic("insp-cleaned"), **compacted(**{"delete.retention.ms": 3_600_000}))
        write_rounds(kafka.bootstrap, t, 3, keys=100, tombstones=range(0, 100, 5),
                     value=lambda r, i: f"v{r}".encode() * 10)
        wait_cleaned_up_to_active(kafka.log_dir, t)
        topics["cleaned"] = t
    return {label: copy_partition(partition_dir(kafka.log_dir, topic), into) for label, topic in topics.items()}

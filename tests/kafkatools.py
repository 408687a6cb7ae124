"""Helpers the tests use to drive the real broker: topics, producing, waiting for the cleaner."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from monitor.checkpoint import read_checkpoint


def unique_topic(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(bootstrap: str, name: str, partitions: int = 1, **configs) -> str:
    """Create ``name`` with topic ``configs`` (use dots: pass a dict via **{"a.b": v}) and wait for it."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    cfg = {k: str(v) for k, v in configs.items()}
    fut = admin.create_topics([NewTopic(name, partitions, 1, config=cfg)])[name]
    fut.result(timeout=30)
    deadline = time.time() + 30
    while time.time() < deadline:
        md = admin.list_topics(name, timeout=5)
        t = md.topics.get(name)
        if t and not t.error and len(t.partitions) == partitions and all(p.leader >= 0 for p in t.partitions.values()):
            return name
        time.sleep(0.1)
    raise TimeoutError(f"topic {name} has no leader after 30s")


def compacted(**extra) -> dict:
    """Topic configs that let the local broker compact within seconds."""
    cfg = {
        "cleanup.policy": "compact",
        "segment.ms": 200,
        "min.cleanable.dirty.ratio": 0.01,
        "delete.retention.ms": 1000,
        "min.compaction.lag.ms": 0,
    }
    cfg.update(extra)
    return cfg


def producer(bootstrap: str, **conf) -> Producer:
    base = {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"}
    base.update(conf)
    return Producer(base)


def produce(bootstrap: str, topic: str, items, partition: int = 0, **conf) -> int:
    """Produce ``(key, value)`` pairs (bytes/str/None) and flush; returns how many."""
    p = producer(bootstrap, **conf)
    errors = []
    n = 0
    for key, value in items:
        p.produce(topic, key=key, value=value, partition=partition,
                  on_delivery=lambda err, msg: errors.append(err) if err else None)
        n += 1
        if n % 1000 == 0:
            p.poll(0)
    left = p.flush(30)
    if left or errors:
        raise KafkaException(f"produce to {topic}: {left} undelivered, errors {errors[:3]}")
    return n


def roll(bootstrap: str, topic: str, partition: int = 0, wait: float = 0.3, key: bytes = b"__roll__") -> None:
    """Make the broker roll the active segment: wait past segment.ms, then append one record."""
    time.sleep(wait)
    produce(bootstrap, topic, [(key, b"x")], partition=partition)


def consume_all(bootstrap: str, topic: str, partition: int = 0, timeout: float = 20.0) -> list:
    """Every record from the start of the partition to its end offset now."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"t-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "enable.partition.eof": True, "isolation.level": "read_uncommitted"})
    try:
        lo, hi = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
        out = []
        if hi <= lo:
            return out
        c.assign([TopicPartition(topic, partition, lo)])
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    if out and out[-1].offset() >= hi - 1 or m.offset() >= hi:
                        break
                    continue
                raise KafkaException(m.error())
            out.append(m)
            if m.offset() >= hi - 1:
                break
        return out
    finally:
        c.close()


def partition_dir(log_dir: str | Path, topic: str, partition: int = 0) -> Path:
    return Path(log_dir) / f"{topic}-{partition}"


def cleaner_checkpoint(log_dir: str | Path, topic: str, partition: int = 0) -> int | None:
    return read_checkpoint(Path(log_dir) / "cleaner-offset-checkpoint").get((topic, partition))


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.25, what: str = "condition"):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


def wait_cleaned(log_dir, topic: str, partition: int = 0, past: int = 0, timeout: float = 90.0) -> int:
    """Wait until the cleaner's checkpoint for the partition is beyond ``past``; return it."""
    return wait_for(lambda: (lambda v: v if v is not None and v > past else None)(
        cleaner_checkpoint(log_dir, topic, partition)), timeout, what=f"the cleaner to clean {topic}-{partition}")


def write_rounds_min_lag(bootstrap: str, topic: str, rounds: int = 3, keys: int = 100) -> None:
    """Several rolled segments of keyed updates (for topics kept dirty by min.compaction.lag.ms)."""
    for r in range(rounds):
        produce(bootstrap, topic, [(f"k{i}".encode(), f"v{r}".encode() * 20) for i in range(keys)])
        roll(bootstrap, topic)

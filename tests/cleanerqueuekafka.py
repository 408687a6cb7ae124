"""Shared by the real tests of ``monitor.model.cleanerqueue`` (tests/monitor/model/test_cleanerqueue*_kafka.py):
a queue of compacted partitions released to the session broker's cleaner at one known moment, the cleans
``log-cleaner.log`` reports, and the broker's cleaner throttle set and put back.

How the partitions are released at once: their dirty records all carry one timestamp, so
``min.compaction.lag.ms`` holds every dirty segment back until that timestamp + the lag
(LogCleanerManager.cleanableOffsets), a moment the forecast knows (``held_until_ms``). Before it, each
partition's clean section is made by one first round of cleans (records timestamped two hours back, not
held), whose statistics in log-cleaner.log give the throughput the forecast is made with."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource,
                                  ResourceType)

from kafkatools import create_topic, partition_dir, produce_timed, unique_topic, wait_for
from monitor.kafka.checkpoint import read_checkpoint
from monitor.kafka.cleanerlog import read_cleaner_log
from monitor.model.compaction import partition_state
from monitor.model.summary import summarize
from monitor.model.topicconfig import TopicConfig

MB = 1 << 20
VALUE = 1000  # bytes of each record's value (unique keys: a clean removes nothing)
HOLD_MS = 600_000  # min.compaction.lag.ms
IO_MAX = "log.cleaner.io.max.bytes.per.second"


def write(bootstrap, topic, partition, mb, ts, tag, value=VALUE):
    n = int(mb * MB) // (value + 40)
    produce_timed(bootstrap, topic, ((f"{tag}-{i}".encode(), b"v" * value, ts) for i in range(n)), partition,
                  **{"batch.size": 65536, "linger.ms": 20})


def state_of(log_dir, topic, partition, config, now_ms):
    folder = partition_dir(log_dir, topic, partition)
    summaries = [summarize(f, int(f.name[:-4]))[0] for f in sorted(folder.glob("*.log"))]
    cp = read_checkpoint(Path(log_dir) / "cleaner-offset-checkpoint").get((topic, partition))
    return partition_state(topic, partition, summaries, config, now_ms, checkpoint=cp)


def cleans_of(kafka, topic):
    """(partition, start ms, end ms, dirty start) of each clean of ``topic``, and every clean's log name.
    log-cleaner.log stamps a clean's statistics as it ends (``recordStats`` runs after it); its start is
    that minus the clean's seconds."""
    st = read_cleaner_log(Path(kafka.cleaner_log).read_text(errors="replace").splitlines())
    mine = [(c.topic_partition[1], c.timestamp_ms - c.duration * 1000, c.timestamp_ms, c.dirty_start, c)
            for c in st.cleans if c.topic_partition and c.topic_partition[0] == topic]
    return mine, st


@dataclass
class HeldQueue:
    topic: str
    config: TopicConfig
    release_ms: int  # when min.compaction.lag.ms lets every partition's dirty segments go
    dirty_starts: dict  # partition -> the first round's checkpoint: the released clean starts there
    size: int


def held_queue(kafka, prefix: str, shape, release_in_ms: int, value: int = VALUE) -> HeldQueue:
    """A compacted topic with a partition per (clean MB, dirty MB) of ``shape``: the clean sections cleaned
    by a first round, the dirty ones held until ``release_ms`` (``release_in_ms`` from now); each record a
    unique key and ``value`` bytes of value."""
    cfg = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.01, "segment.bytes": MB, "segment.ms": 200,
           "min.compaction.lag.ms": HOLD_MS, "delete.retention.ms": 1000}
    topic = create_topic(kafka.bootstrap, unique_topic(prefix), partitions=len(shape), **cfg)
    config = TopicConfig.from_strings(cfg)
    now = int(time.time() * 1000)
    old, t0 = now - 2 * 3_600_000, now + release_in_ms - HOLD_MS  # t0 + HOLD_MS: the release
    for p, (clean, _) in enumerate(shape):  # the clean sections: not held (two hours old)
        write(kafka.bootstrap, topic, p, clean, old, "c", value)
    for p, (_, dirty) in enumerate(shape):  # its first batch rolls the last old segment; all held
        write(kafka.bootstrap, topic, p, dirty, t0, "d", value)
        produce_timed(kafka.bootstrap, topic, [(b"roll", b"x", t0 + 1000)], p)  # rolls the last dirty segment
    dirty_starts = {}
    for p in range(len(shape)):  # the first round: each clean section cleaned up to the held segments
        dirty_starts[p] = wait_for(lambda: (lambda cp, held: cp if cp == held else None)(
            read_checkpoint(Path(kafka.log_dir) / "cleaner-offset-checkpoint").get((topic, p)),
            state_of(kafka.log_dir, topic, p, config, int(time.time() * 1000)).first_uncleanable_offset),
            60, f"the first clean of {topic}-{p} up to its held segments")
    return HeldQueue(topic, config, t0 + HOLD_MS, dirty_starts, len(shape))


def released_cleans(kafka, q: HeldQueue, timeout: float):
    """The cleans of the released dirty sections, one per partition, as log-cleaner.log reports them:
    (partition, start ms, end ms, dirty start, CleanStats). Fails if another log was cleaned among them
    (the test's premise is a queue of its own)."""
    got = wait_for(lambda: (lambda mine: mine if len(mine) == q.size else None)(
        [c for c in cleans_of(kafka, q.topic)[0] if c[3] == q.dirty_starts[c[0]]]),
        timeout, f"the cleaner to clean the {q.size} released partitions")
    _, everything = cleans_of(kafka, q.topic)
    first_start = min(c[1] for c in got)
    others = [c for c in everything.cleans if c.timestamp_ms and c.timestamp_ms >= first_start
              and not c.log.startswith(q.topic)]
    assert not others, f"another log was cleaned in the queue (this test's premise is a queue of its own): {others}"
    return got


def _broker_value(admin, res_name: str):
    res = ConfigResource(ResourceType.BROKER, res_name)
    entry = admin.describe_configs([res])[res].result(30).get(IO_MAX)
    dynamic = entry is not None and entry.source in (ConfigSource.DYNAMIC_BROKER_CONFIG,
                                                    ConfigSource.DYNAMIC_BROKER_CONFIG.value)  # set on this broker
    return entry.value if entry is not None else None, dynamic


@contextmanager
def cleaner_throttle(kafka, bytes_per_second: int):
    """``log.cleaner.io.max.bytes.per.second`` set on the broker (a dynamic config: LogCleaner.reconfigure
    updates its Throttler and restarts the cleaner threads), and put back as it was when the block ends
    (the session broker is shared)."""
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    name = str(kafka.node_id)
    before, was_dynamic = _broker_value(admin, name)

    def alter(op, value=None):
        entry = ConfigEntry(IO_MAX, value, incremental_operation=op)
        for fut in admin.incremental_alter_configs([ConfigResource(ResourceType.BROKER, name,
                                                                   incremental_configs=[entry])]).values():
            fut.result(30)

    alter(AlterConfigOpType.SET, str(bytes_per_second))
    try:
        wait_for(lambda: float(_broker_value(admin, name)[0]) == bytes_per_second, 30,
                 f"the broker to put {IO_MAX}={bytes_per_second} in force")
        yield
    finally:
        if was_dynamic:
            alter(AlterConfigOpType.SET, before)
        else:
            alter(AlterConfigOpType.DELETE)
        wait_for(lambda: _broker_value(admin, name)[0] == before, 30, f"the broker to put {IO_MAX} back to {before}")

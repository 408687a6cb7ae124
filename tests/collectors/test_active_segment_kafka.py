"""The active segment against its roll settings, on the real broker: a quiet compacted topic with a
large segment.ms keeps its duplicates in the active segment, which the cleaner never touches. The
expected figures come from what the test wrote (keys, values, the first record's timestamp) and from
the segment files (their names and sizes), not from the code under test."""

from __future__ import annotations

import time

import pytest

from collecting import make_collector, pval, refresh
from collectors.app import build
from dashboards import sources, tables
from kafkatools import compacted, create_topic, partition_dir, produce_timed, unique_topic
from monitor.settings.config import BrokerConfig, ClusterConfig, Config, Timeouts
from waiting import wait_for

pytestmark = pytest.mark.kafka

SEGMENT_MS = 3_600_000


def superseded(records) -> tuple[int, int]:
    """Records a later one of the same key supersedes, and their key and value bytes."""
    last = {key: i for i, (key, _, _) in enumerate(records)}
    sup = [(k, v) for i, (k, v, _) in enumerate(records) if last[k] != i]
    return len(sup), sum(len(k) + len(v or b"") for k, v in sup)


def one_scrape(reg, topic: str) -> dict:
    """(name, extra labels) -> value of the topic's partition-0 series, from one collect (one instant)."""
    out = {}
    for fam in reg.collect():
        for smp in fam.samples:
            if smp.labels.get("topic") == topic and smp.labels.get("partition") == "0":
                extra = tuple(sorted((k, v) for k, v in smp.labels.items()
                                     if k not in ("cluster", "broker", "topic", "partition")))
                out[smp.name, extra] = smp.value
    return out


def test_quiet_topic_keeps_its_duplicates_in_the_active_segment(kafka):
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("quiet"), **compacted(**{"segment.ms": SEGMENT_MS}))
    first_ts = int(time.time() * 1000)
    first = [(b"k0", b"first", first_ts)]
    produce_timed(b, t, first)  # alone in its batch: the active segment's first batch's max timestamp is first_ts
    rounds = [(f"k{i}".encode(), f"round {r} value {i} ".encode() * (1 + (i + r) % 3), first_ts + 1 + r)
              for r in range(4) for i in range(40)]
    rounds.append((b"k7", None, first_ts + 10))  # a delete supersedes k7's records too
    produce_timed(b, t, rounds)
    written = first + rounds
    folder = partition_dir(kafka.log_dir, t)
    [log] = sorted(folder.glob("*.log"))  # one segment: nothing rolled it
    size = log.stat().st_size

    col = make_collector(kafka)
    try:
        before = time.time()
        reg = refresh(col)
        val = lambda name, **kw: pval(reg, f"kafka_compaction_partition_{name}", t, **kw)  # noqa: E731
        after = time.time()
        assert val("active_segment_bytes") == size == val("log_bytes")
        assert val("not_yet_cleanable_bytes", held_by="active_segment") == size
        assert val("not_yet_cleanable_bytes", held_by="min_compaction_lag") == 0
        assert val("uncleaned_bytes") == 0 and val("cleanable_bytes") == 0  # nothing the cleaner may touch
        assert val("compaction_cause", cause="active_segment_only") == 1
        assert val("segment_bytes") == 1_073_741_824  # the broker's default segment.bytes, via the admin API
        assert val("max_segment_age_seconds") == SEGMENT_MS / 1000
        assert (val("active_segment_duplicate_records"), val("active_segment_duplicate_bytes")) == superseded(written)
        # the age counts from the first batch's timestamp; the forecast is its time roll (segment.bytes is
        # far off at this rate), so both add up to segment.ms, as they are read at the same instant
        scrape = one_scrape(reg, t)
        age = scrape["kafka_compaction_partition_active_segment_age_seconds", ()]
        roll = scrape["kafka_compaction_partition_active_segment_roll_seconds", (("by", "segment_ms"),)]
        assert before - first_ts / 1000 - 1 <= age <= after - first_ts / 1000 + 1
        assert age + roll == pytest.approx(SEGMENT_MS / 1000)
        assert reg.get_sample_value("kafka_compaction_topic_segment_seconds",
                                    {"cluster": "local", "topic": t}) == SEGMENT_MS / 1000

        # no append since the last refresh: no roll can come (LogSegment.shouldRoll runs on an append)
        reg = refresh(col)
        assert val("active_segment_roll_unknown", reason="no_writes") == 1
        assert val("active_segment_roll_seconds", by="segment_ms") is None
        # an append: the counts read on, and the forecast is back
        more = [(b"k1", b"later", first_ts + 20), (b"k41", b"new", first_ts + 21)]
        produce_timed(b, t, more)
        wait_for(lambda: log.stat().st_size > size, 30, "the broker to append to the active segment")
        reg = refresh(col)
        assert val("active_segment_bytes") == log.stat().st_size
        assert (val("active_segment_duplicate_records"), val("active_segment_duplicate_bytes")) == \
            superseded(written + more)
        assert val("active_segment_roll_seconds", by="segment_ms") is not None
        # the dashboard's table of duplicates stuck in active segments, from the collector's page
        table = tables.partitions_table(sources.samples_from_text(col.exposition().decode(), "collector"))
        [row] = tables.stuck_in_active_segment(table[table["topic"] == t]).to_dict("records")
        assert (row["active_duplicate_records"], row["active_duplicate_bytes"]) == superseded(written + more)
        assert row["active_segment_bytes"] == log.stat().st_size and row["max_segment_age_seconds"] == SEGMENT_MS / 1000
    finally:
        col.close()

    # bounded: a collector allowed fewer distinct keys than the segment holds says unknown, not a partial count
    cfg = Config(clusters=(ClusterConfig(name="local", bootstrap_servers=b, brokers=(
        BrokerConfig(id=str(kafka.node_id), log_dirs=(kafka.log_dir,)),)),),
        timeouts=Timeouts(active_segment_max_keys=10), granularity="partition")  # a healthy partition's detail
    small = build(cfg)
    try:
        reg = refresh(small)
        assert pval(reg, "kafka_compaction_partition_active_segment_duplicates_unknown", t, reason="over_bound") == 1
        assert pval(reg, "kafka_compaction_partition_active_segment_duplicate_records", t) is None
        assert pval(reg, "kafka_compaction_partition_active_segment_bytes", t) == log.stat().st_size
    finally:
        small.close()

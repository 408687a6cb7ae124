"""``cleanup.policy=compact,delete`` (issue 16, point 3): the audit's projection of what retention
deletes against the real broker's own retention check.

The topic's segments are made with record timestamps hours apart (a compacted topic rolls when an
incoming batch's timestamp is ``segment.ms`` past the segment's first: LogSegment.shouldRoll), so
their largest timestamps are known and no wall-clock waiting is needed; ``min.compaction.lag.ms``
of a day keeps the cleaner from merging them first. The copy is audited with the retention.ms the
test then sets on the broker; the broker's log cleaner threads run ``UnifiedLog.deleteOldSegments`` for
compact,delete logs (the session broker's log.cleaner.backoff.ms is 500 ms), and the log start offset
the broker then reports, and the segment files it deleted, are the projected ones."""

from __future__ import annotations

import time
import pytest

from dumpcompare import dump
from kafkatools import (copy_partition, create_topic, partition_dir, produce_aged_segments, segment_bases,
                        set_topic_config, unique_topic, watermarks)
from monitor.model.retention import from_summaries, project_retention
from monitor.model.summary import summarize
from monitor.model.topicconfig import TopicConfig
from spark_analysis.audit import AuditInputs, run_audit
from spark_analysis.inputs import list_inputs, load_records
from waiting import wait_for

pytestmark = pytest.mark.kafka

HOUR = 3_600_000
RETENTION_MS = 2 * HOUR
AGES_H = (5, 4, 3, 0.25, 0)  # the record timestamps of each group, hours before now: one segment each
CFG = {"cleanup.policy": "compact,delete", "segment.ms": 60_000, "min.compaction.lag.ms": 24 * HOUR,
       "min.cleanable.dirty.ratio": 0.5, "retention.ms": -1}


def test_compact_delete_projection_names_the_segments_the_brokers_retention_deletes(spark, kafka, tmp_path):
    now_ms = int(time.time() * 1000)
    t = create_topic(kafka.bootstrap, unique_topic("compact-delete"), **CFG)
    produce_aged_segments(kafka.bootstrap, t, [age * HOUR for age in AGES_H], now_ms)
    folder = partition_dir(kafka.log_dir, t)
    assert len(segment_bases(folder)) == len(AGES_H)  # one segment per group
    copy = copy_partition(folder, tmp_path / "copy")
    files = sorted(copy.glob("*.log"))
    sizes = {int(f.name[:-4]): f.stat().st_size for f in files}
    start, end = watermarks(kafka.bootstrap, t)
    assert start == 0

    # the core's projection of the copy, with the retention.ms the broker is about to get
    summaries = [summarize(f, int(f.name[:-4]))[0] for f in files]
    proj = project_retention(from_summaries(summaries), retention_ms=RETENTION_MS, retention_bytes=-1,
                             now_ms=int(time.time() * 1000), log_start_offset=0, log_end_offset=end)
    old = [b for b, age in zip(sorted(sizes), AGES_H) if age * HOUR > RETENTION_MS]
    assert proj.deleted == tuple(old) and len(old) == 3  # the test's own plan: the three oldest groups
    assert proj.log_start_offset == sorted(sizes)[len(old)]

    # the audit: the same cut, the deleted bytes out of the projected size
    cfg = TopicConfig.from_strings({**CFG, "retention.ms": RETENTION_MS})
    res = run_audit(spark, AuditInputs(kind="segments", files=list_inputs("segments", [str(tmp_path / "copy")]),
                                       topic_configs={t: cfg}, now_ms=int(time.time() * 1000)))
    [row] = [r.asDict() for r in res.partitions.collect()]
    assert row["projected_log_start_offset"] == proj.log_start_offset
    assert row["retention_deleted_segments"] == len(old)
    assert row["retention_deleted_bytes"] == sum(sizes[b] for b in old)
    assert row["next_clean_bytes"] == row["bytes"] - row["retention_deleted_bytes"] - row["reclaimable_bytes"]
    assert res.summary["retention_deleted_bytes"] == row["retention_deleted_bytes"]
    # records retention deletes are no key's record: the keys and their updates are those of the groups left
    kept = len(AGES_H) - len(old)
    assert (row["distinct_keys"], row["obsolete_records"]) == (20, kept * 30 - 20)  # 30 records over 20 keys a group
    # the same cut from kafka-dump-log's text of the copy (the records path: segments from the records)
    (tmp_path / "dumps").mkdir()
    (tmp_path / "dumps" / f"{t}.txt").write_text(dump(files)[0])
    records = load_records(spark, "dumps", [str(tmp_path / "dumps")])
    dumped = run_audit(spark, AuditInputs(kind="dumps", records=records, topic_configs={t: cfg},
                                          now_ms=res.summary["generated_at_ms"]))
    [drow] = [r.asDict() for r in dumped.partitions.collect()]
    for k in ("projected_log_start_offset", "retention_deleted_segments", "retention_deleted_bytes",
              "distinct_keys", "obsolete_records"):
        assert drow[k] == row[k], k
    # its next-clean size is the byte-share estimate, labelled so, retention's bytes left out the same way
    assert drow["projection_method"] == "estimated" and row["projection_method"] == "counted"
    assert drow["next_clean_bytes"] == drow["bytes"] - drow["retention_deleted_bytes"] - drow["reclaimable_bytes"]

    # the broker: its retention check moves the log start to the projected offset, and deletes those files
    set_topic_config(kafka.bootstrap, t, **{"retention.ms": RETENTION_MS})
    got = wait_for(lambda: (lambda s: s if s > 0 else None)(watermarks(kafka.bootstrap, t)[0]), 90,
                   f"the broker's retention check to move the log start of {t}-0")
    assert got == proj.log_start_offset
    # the files go right after the log start moves (renamed to .deleted, removed later)
    wait_for(lambda: set(segment_bases(folder)) == set(sizes) - set(old), 30,
             f"the broker to delete the segments {old} of {t}-0")

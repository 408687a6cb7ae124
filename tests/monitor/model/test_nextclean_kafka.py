"""monitor.model.nextclean against the real broker's cleaner: a compacted topic with overwrites,
tombstones, a committed and an aborted transaction, copied before one clean; the next-clean projection
of the copy is the bytes the clean left, and its tombstones and markers stand as the cleaned files say
(helper tests by codec and for settled live in the real-clean tests)."""

from __future__ import annotations

import time

import pytest

from kafkatools import (copy_partition, create_topic, partition_dir, produce, roll, set_topic_config,
                        transactional_producer, unique_topic, wait_cleaned_up_to_active)
from monitor.kafka.record import SegmentReader
from monitor.model.nextclean import project_partition
from monitor.model.summary import summarize
from monitor.model.transactions import aborted_transactions

pytestmark = pytest.mark.kafka

DAY = 86_400_000
# gzip matched too when tried; zstd and snappy differ by a few bytes in the re-encoding of a batch
# (monitor.kafka.record.encode's framing, the kept records and horizons are the broker's): the codec
# comparisons are the real-clean tests'
CODECS = ("none", "lz4")
CFG = {"cleanup.policy": "compact", "segment.ms": 300, "min.cleanable.dirty.ratio": 1.0,
       "delete.retention.ms": DAY, "min.compaction.lag.ms": 0}


def write(b: str, t: str, codec: str) -> None:
    produce(b, t, [(f"k{i}".encode(), b"first " * (1 + i % 7)) for i in range(60)], **{"compression.type": codec})
    roll(b, t, wait=0.4)
    p = transactional_producer(b, f"{t}-tx", **{"linger.ms": 20, "compression.type": codec})
    p.begin_transaction()
    for i in range(0, 30):
        p.produce(t, key=f"k{i}".encode(), value=b"committed", partition=0)
    p.commit_transaction(30)
    p.begin_transaction()
    for i in range(20, 50):
        p.produce(t, key=f"k{i}".encode(), value=b"aborted", partition=0)
    assert p.flush(30) == 0  # on the broker before the abort (an abort purges what is still queued)
    p.abort_transaction(30)
    produce(b, t, [(f"k{i}".encode(), None) for i in range(40, 60, 2)], **{"compression.type": codec})  # tombstones
    roll(b, t, wait=0.4)


@pytest.mark.parametrize("codec", CODECS)
def test_the_next_clean_leaves_what_the_projection_says(kafka, tmp_path, codec):
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("nextclean"), **CFG)
    write(b, t, codec)
    folder = partition_dir(kafka.log_dir, t)
    before = copy_partition(folder, tmp_path / "before", suffixes=(".log",))
    logs = sorted(before.glob("*.log"))
    sums = [summarize(f, int(f.name[:-4]))[0] for f in logs]
    last = {}
    for f in logs:
        for x in SegmentReader(f).batches(bodies=False):
            if x.producer_id >= 0:
                last[x.producer_id] = (x.last_offset if not x.is_control else last.get(x.producer_id, (None,))[0],
                                       x.producer_epoch)
    now = int(time.time() * 1000)
    set_topic_config(b, t, **{"min.cleanable.dirty.ratio": 0.01})
    wait_cleaned_up_to_active(kafka.log_dir, t)
    after = copy_partition(folder, tmp_path / "after", suffixes=(".log",))
    upper = int(logs[-1].name[:-4])
    p = project_partition([(str(f), f.stat().st_size) for f in logs], lambda u: open(u, "rb"), first_dirty=0,
                          upper=upper, log_start=0, now_ms=now, delete_retention_ms=DAY,
                          aborted=aborted_transactions(sums, 0), last_records=last, name=f"{t}-0")
    assert p.unknown_reason is None
    cleaned = sum(f.stat().st_size for f in after.glob("*.log"))
    assert p.next_clean_bytes == cleaned, (p, cleaned)
    assert p.horizon_counts == {("tombstone", "unstamped"): 10, ("marker", "unstamped"): 2}
    stamped = [x for f in sorted(after.glob("*.log")) for x in SegmentReader(f).batches(bodies=False)
               if x.has_delete_horizon]
    assert len(stamped) == p.batches_stamped
    # the aborted data went but for the producer's last batch, kept as a bare header
    empty = [x for f in sorted(after.glob("*.log")) for x in SegmentReader(f).batches(bodies=False)
             if x.records_count == 0]
    assert [x.size for x in empty] == [61] and p.removable_records >= 30

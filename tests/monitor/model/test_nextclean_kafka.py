"""monitor.model.nextclean against the real broker's cleaner: compacted topics with overwrites,
tombstones, a committed and an aborted transaction, copied before the broker's first clean; the
next-clean projection of the copy is exactly the bytes that clean left (its stamps and the producer's
last batch kept empty as the cleaned files say), and the settled projection what a second clean
after every horizon left of those records. (The real-clean tests compare every codec.)"""

from __future__ import annotations

import time
from pathlib import Path

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


def _project(topic: str, logs, now_ms: int, retention_ms: int):
    """The projection of a copy as the audit makes it: first clean (no checkpoint), the active segment's
    base the bound, every producer active with its last data offset."""
    sums = [summarize(f, int(f.name[:-4]))[0] for f in logs]
    last = {}
    for f in logs:
        for x in SegmentReader(f).batches(bodies=False):
            if x.producer_id >= 0:
                data = last.get(x.producer_id, (None,))[0] if x.is_control else x.last_offset
                last[x.producer_id] = (data, x.producer_epoch)
    return project_partition([(str(f), f.stat().st_size) for f in logs], lambda u: open(u, "rb"), first_dirty=0,
                             upper=int(logs[-1].name[:-4]), log_start=0, now_ms=now_ms,
                             delete_retention_ms=retention_ms, aborted=aborted_transactions(sums, 0),
                             last_records=last, name=f"{topic}-0")


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


SETTLE_RETENTION_MS = 1500


def _logs(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.log"))


@pytest.fixture(scope="module")
def cleaned(kafka, tmp_path_factory):
    """One topic per codec (delete.retention.ms a day) and one whose horizons pass within seconds,
    copied before the broker's first clean (min.cleanable.dirty.ratio 1.0 holds it back), then after
    it; the last one cleaned once more after its horizons passed and new records of other keys came."""
    root = tmp_path_factory.mktemp("nextclean")
    b = kafka.bootstrap
    topics = {codec: create_topic(b, unique_topic(f"nextclean-{codec}"), **CFG) for codec in CODECS}
    topics["settled"] = create_topic(b, unique_topic("settled"), **{**CFG, "delete.retention.ms": SETTLE_RETENTION_MS})
    out = {}
    for name, t in topics.items():
        write(b, t, "none" if name == "settled" else name)
        out[name] = {"topic": t, "before": copy_partition(partition_dir(kafka.log_dir, t), root / name / "before")}
    now = int(time.time() * 1000)
    for t in topics.values():
        set_topic_config(b, t, **{"min.cleanable.dirty.ratio": 0.01})
    for name, t in topics.items():
        wait_cleaned_up_to_active(kafka.log_dir, t)
        out[name].update(now=now, after=copy_partition(partition_dir(kafka.log_dir, t), root / name / "after"))
    t = topics["settled"]
    horizons = [x.delete_horizon_ms for f in _logs(out["settled"]["after"])
                for x in SegmentReader(f).batches(bodies=False) if x.has_delete_horizon]
    assert horizons  # the first clean stamped the tombstones' batch
    time.sleep(max(0.0, (max(horizons) - time.time() * 1000) / 1000) + 0.05)  # until every horizon has passed
    produce(b, t, [(f"fresh-{i}".encode(), b"new") for i in range(5)])
    roll(b, t, wait=0.4, key=b"fresh-roll")
    wait_cleaned_up_to_active(kafka.log_dir, t)
    out["settled"]["second"] = copy_partition(partition_dir(kafka.log_dir, t), root / "settled" / "second")
    return out


@pytest.mark.parametrize("codec", CODECS)
def test_the_next_clean_leaves_what_the_projection_says(cleaned, codec):
    c = cleaned[codec]
    p = _project(c["topic"], _logs(c["before"]), c["now"], DAY)
    assert p.unknown_reason is None
    after = _logs(c["after"])
    left = sum(f.stat().st_size for f in after)
    assert p.next_clean_bytes == left, (p, left)
    assert p.horizon_counts == {("tombstone", "unstamped"): 10, ("marker", "unstamped"): 2}
    stamped = [x for f in after for x in SegmentReader(f).batches(bodies=False) if x.has_delete_horizon]
    assert len(stamped) == p.batches_stamped
    # the aborted data went but for the producer's last batch, kept as a bare header
    empty = [x for f in after for x in SegmentReader(f).batches(bodies=False) if x.records_count == 0]
    assert [x.size for x in empty] == [61] and p.removable_records >= 30


def test_settled_is_what_a_clean_past_every_horizon_leaves(cleaned):
    """The first clean stamps the tombstones; a second one, after their horizon, triggered by new
    records of keys of their own, removes them: what it leaves of the records there before is settled."""
    c = cleaned["settled"]
    logs = _logs(c["before"])
    end = max(x.next_offset for x in SegmentReader(logs[-1]).batches(bodies=False))
    today = sum(x.size for f in _logs(c["second"]) for x in SegmentReader(f).batches(bodies=False)
                if x.base_offset < end)
    p = _project(c["topic"], logs, c["now"], SETTLE_RETENTION_MS)
    assert p.unknown_reason is None and p.horizon_counts[("tombstone", "unstamped")] == 10
    assert p.settled_bytes == today, (p, today)

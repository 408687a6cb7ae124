"""One compacted partition per codec, copied before the broker's cleaner ran and after each of three
cleans: the real-broker data the next-clean and settled projections (``monitor.model.nextclean``) are
checked against.

What each topic holds (``fill``), written by three producers with the topic's codec: overwritten keys
across several rolled segments, headers on some records, tombstones outside transactions and inside a
committed (A) and an aborted (B) transaction, a committed transaction (C) superseded whole and one (D)
kept, and an idempotent producer whose last batch a later producer supersedes whole (Kafka keeps that
batch, emptied: ``Cleaner.cleanInto``'s ``RETAIN_EMPTY`` for a producer's last data offset, KAFKA-17076).
Kafka refuses a keyless record on a compacted topic at produce time (``LogValidator``: "Compacted topic
cannot accept message without key"), so there is none in the log; ``keyless_refused`` shows it.

How the copies are made (``build``): ``min.cleanable.dirty.ratio`` 1.0 holds the cleaner while the
topics are written (concurrently, one thread each) and rolled; the partitions are copied ("before"),
then the ratio is lowered on all of them at once and the checkpoints are awaited (the cleaner's one
thread cleans them one after the other), then copied again ("after-1"). Each clean's start (the
``currentTime`` ``Cleaner.clean`` hands ``doClean``) is read back from what it stamped: a batch it gave a
delete horizon carries ``currentTime + delete.retention.ms`` (``MemoryRecords.filterTo``), so a
projection runs at the clean's own ``now_ms`` (a clean that stamps nothing: log-cleaner.log's time).

A clean only runs on dirty data (``LogCleanerManager.grabFilthiestCompactedLog`` needs a cleanable ratio
above the minimum, or ``max.compaction.lag.ms`` passed; KIP-534 added no trigger for a horizon alone),
so each later clean is started by a few records with fresh keys and a roll, written once every horizon
of the clean before has passed. Those batches supersede nothing and hold no tombstone, so every clean
keeps them whole: ``added_bytes`` gives their sizes, to take off the later copies' bytes exactly. The
second clean removes the tombstones the first stamped and stamps the markers of B and C (the first
still met their data, so it could not); the third removes those markers: the settled log.

Every roll record has a key of its own, so no roll record supersedes an earlier one (a clean would
otherwise remove the roll record the previous clean kept, which the "before" copy cannot foresee).
"""

from __future__ import annotations

import itertools
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import KafkaException

from kafkatools import (cleaner_checkpoint, copy_partition, create_topic, partition_dir, producer, segment_bases,
                        set_topic_config, transactional_producer, unique_topic)
from monitor.kafka.record import SegmentReader
from monitor.model.topicconfig import TopicConfig
from monitor.model.transactions import aborted_transactions
from spark_analysis.partition_audit import bounds_for, scan_headers
from waiting import wait_for

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
DELETE_RETENTION_MS = 3_000
SEGMENT_MS = 100  # a batch arriving later than this after a segment's first batch rolls it
HELD = {"cleanup.policy": "compact", "segment.ms": SEGMENT_MS, "min.cleanable.dirty.ratio": 1.0,
        "delete.retention.ms": DELETE_RETENTION_MS, "min.compaction.lag.ms": 0}
RELEASED = {"min.cleanable.dirty.ratio": 0.001}

_rolls = itertools.count()


def value(phase: int, key: str, n: int = 6) -> bytes:
    """A value that compresses (repeated text) but differs per phase and key."""
    return (f"phase-{phase}-value-of-{key}-" * n).encode()


def headers(i: int) -> list | None:
    return [("trace-id", f"t-{i:04d}".encode()), ("source", b"cleanpairs")] if i % 4 == 0 else None


def _send(p, topic: str, items, timestamp_ms: int = 0) -> None:
    """Produce ``(key, value or None, headers or None)`` and flush; raise on any delivery error.
    ``timestamp_ms``: their CreateTime (0: the producer's clock)."""
    errors = []
    for k, v, h in items:
        p.produce(topic, key=k.encode(), value=v, partition=0, headers=h, timestamp=timestamp_ms,
                  on_delivery=lambda err, msg: errors.append(err) if err else None)
    left = p.flush(30)
    if left or errors:
        raise KafkaException(f"produce to {topic}: {left} undelivered, errors {errors[:3]}")


def roll(bootstrap: str, topic: str) -> None:
    """Roll the active segment: let segment.ms pass (on purpose: Kafka rolls on the incoming batch's
    timestamp against the segment's first), then append one record under a key no other record has."""
    time.sleep(SEGMENT_MS * 1.5 / 1000)  # time itself must pass: Kafka rolls on the batch timestamps' distance
    _send(producer(bootstrap), topic, [(f"roll-{next(_rolls)}", b"x", None)])


def fill(bootstrap: str, topic: str, codec: str) -> None:
    """The topic's data, phase by phase, each phase rolled into segments of its own."""
    conf = {"compression.type": codec, "linger.ms": 50}
    plain = producer(bootstrap, **conf)  # not idempotent: producer id -1
    ks = [f"k{i:02d}" for i in range(40)]
    # 1: every key, some with headers
    _send(plain, topic, [(k, value(1, k), headers(i)) for i, k in enumerate(ks)])
    roll(bootstrap, topic)
    # 2: half the keys overwritten; tombstones outside any transaction
    _send(plain, topic, [(k, value(2, k), None) for k in ks[:20]] + [(k, None, None) for k in ks[36:]])
    roll(bootstrap, topic)
    # 3: transactions of one producer: A committed (updates, tombstones, headers; partly superseded
    # later), B aborted (updates, tombstones, keys only it has), C committed and superseded whole in
    # phase 5, D committed and kept (the producer's last data, so C's batch is not kept for it)
    tx = transactional_producer(bootstrap, f"{topic}-tx", **conf)
    for data, commit in (
            ([(k, value(3, k), headers(i)) for i, k in enumerate(ks[20:28])]
             + [(k, None, None) for k in ks[28:32]], True),
            ([(k, value(4, k), None) for k in ks[:10]] + [(k, None, None) for k in ks[32:34]]
             + [(f"a{i:02d}", value(4, "aborted"), None) for i in range(5)], False),
            ([(k, value(5, k), None) for k in ks[15:20]], True),
            ([("d00", value(5, "d"), headers(0))], True)):
        tx.begin_transaction()
        _send(tx, topic, data)  # flushed: on the broker before the end (an abort purges what is queued)
        if commit:
            tx.commit_transaction(30)
        else:
            tx.abort_transaction(30)
    roll(bootstrap, topic)
    # 4: an idempotent producer's two batches; the later (its last) is superseded whole in phase 5
    idem = producer(bootstrap, **conf, **{"enable.idempotence": True})
    _send(idem, topic, [(f"i{i:02d}", value(5, "kept"), headers(i)) for i in range(5)])
    _send(idem, topic, [(f"j{i:02d}", value(5, "superseded"), None) for i in range(10)])
    roll(bootstrap, topic)
    # 5: another producer supersedes that batch and transaction C, overwrites more keys, deletes one of
    # transaction A's keys and a key that never had a value
    _send(plain, topic, [(f"j{i:02d}", value(6, "j"), headers(i)) for i in range(10)]
          + [(k, value(6, k), None) for k in ks[10:20]] + [(ks[20], None, None), ("never-written", None, None)])
    roll(bootstrap, topic)  # the active segment: the roll record alone


def keyless_refused(bootstrap: str, topic: str):
    """The error (a ``KafkaError``) Kafka gives a keyless record on the compacted ``topic``, None if it
    took it."""
    errors = []
    p = producer(bootstrap, **{"message.send.max.retries": 0})
    p.produce(topic, key=None, value=b"no key", partition=0, on_delivery=lambda err, msg: errors.append(err))
    p.flush(30)
    return errors[0] if errors else None


def fresh(bootstrap: str, topic: str, codec: str, n: int, timestamp_ms: int) -> None:
    """Dirty data for the next clean: records under keys never written before, then a roll. The records
    carry the timestamp of the active segment's first batch, so they join that segment instead of
    rolling one of their own (LogSegment.shouldRoll compares record timestamps): the roll makes all of
    it dirty at once, and the cleaner cannot start between the two and split the clean in two."""
    _send(producer(bootstrap, **{"compression.type": codec, "linger.ms": 50}), topic,
          [(f"fresh-{n}-{i}", value(10 + n, "fresh"), None) for i in range(8)], timestamp_ms=timestamp_ms)
    roll(bootstrap, topic)


def active_first_timestamp(folder: Path) -> int:
    """The first batch's max timestamp in the folder's last segment (what Kafka's time-based roll
    measures from)."""
    last = sorted(folder.glob("*.log"), key=lambda f: int(f.name[:-4]))[-1]
    return next(SegmentReader(last, name=str(last)).batches(bodies=False)).max_timestamp


def log_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.glob("*.log"))


def log_end(folder: Path) -> int:
    last = None
    for f in sorted(folder.glob("*.log")):
        for b in SegmentReader(f, name=str(f)).batches(bodies=False):
            last = b.last_offset
    return 0 if last is None else last + 1


def horizons(folder: Path) -> set[int]:
    """The delete horizons stamped on the folder's batches."""
    return {b.delete_horizon_ms for f in sorted(folder.glob("*.log"))
            for b in SegmentReader(f, name=str(f)).batches(bodies=False) if b.has_delete_horizon}


def added_bytes(folder: Path, from_offset: int) -> int:
    """Bytes of the folder's batches at ``from_offset`` or past it (written after an earlier copy)."""
    return sum(b.size for f in sorted(folder.glob("*.log"))
               for b in SegmentReader(f, name=str(f)).batches(bodies=False) if b.base_offset >= from_offset)


def segment_files(folder: Path) -> list[tuple[str, int]]:
    """The folder's segments as ``project_partition`` takes them: [(path, size)] in offset order."""
    return [(str(f), f.stat().st_size) for f in sorted(folder.glob("*.log"), key=lambda f: int(f.name[:-4]))]


def projection_inputs(folder: Path, now_ms: int, *, checkpoint: int | None = None, upper: int | None = None) -> dict:
    """``project_partition``'s arguments for a copied partition at ``now_ms``, derived as the audit
    derives them (``spark_analysis.partition_audit``: the bounds Kafka's LogCleanerManager computes from
    the batch headers and the cleaner checkpoint, the aborted transactions folded from the segments, the
    producers' last batches as Kafka's ProducerStateManager holds them after reading the copy).
    ``upper``: the clean's upper bound when it is not the copy's active segment (a later clean that
    rolled it)."""
    files = segment_files(folder)
    opener = lambda uri: open(uri, "rb")  # noqa: E731
    scan = scan_headers(files, opener)
    st, active = bounds_for(folder.name, 0, scan.summaries, TopicConfig.from_strings(HELD), now_ms, checkpoint, None)
    return {"files": files, "opener": opener, "first_dirty": st.first_dirty_offset,
            "upper": active if upper is None else upper, "log_start": st.log_start_offset, "now_ms": now_ms,
            "delete_retention_ms": DELETE_RETENTION_MS,
            "aborted": aborted_transactions(scan.summaries, st.first_dirty_offset),
            "last_records": scan.producers.last_records(now_ms), "name": folder.name}


def cleans_begun(cleaner_log: Path, topic: str) -> list[int]:
    """When log-cleaner.log says each clean of ``topic``-0 began (ms, the log's local time): a few ms
    after the clean took its ``currentTime`` (``Cleaner.clean`` takes it, ``doClean`` logs this first)."""
    out = []
    for line in cleaner_log.read_text().splitlines():
        m = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\] .*Beginning cleaning of log (\S+)(?: \(.*)?$", line)
        if m and m.group(3) == f"{topic}-0":
            out.append(int(time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))) * 1000 + int(m.group(2)))
    return out


@dataclass
class Clean:
    """What one clean of the broker left: the copy after it, its checkpoint, its start (``now_ms``: from
    the horizon it stamped, exact; when it stamped nothing, from log-cleaner.log, ``stamped`` False) and
    the end offset before the records that started it were written (None for the first clean)."""

    copy: Path
    checkpoint: int
    now_ms: int
    stamped: bool
    dirty_from: int | None = None

    @property
    def bytes(self) -> int:
        return log_bytes(self.copy)


@dataclass
class Pair:
    """One codec's topic: its copy before any clean and what each clean left."""

    codec: str
    topic: str
    before: Path
    cleans: list[Clean] = field(default_factory=list)
    config: TopicConfig = field(default_factory=lambda: TopicConfig.from_strings(HELD))

    @property
    def before_end(self) -> int:
        return log_end(self.before)

    def added_since_before(self, clean: Clean) -> int:
        """Bytes in ``clean``'s copy of the batches written after the "before" copy (fresh records and
        rolls, kept whole by every clean)."""
        return added_bytes(clean.copy, self.before_end)


def _clean_all(kafka, pairs: dict[str, Pair], root: Path, label: str, past: dict[str, int],
               dirty_from: dict[str, int]) -> None:
    """Wait until the cleaner's checkpoint of every pair's partition moved past ``past`` and reached its
    active segment, then copy each and read the clean's start from the horizon it stamped."""
    def done(p: Pair):
        cp = cleaner_checkpoint(kafka.log_dir, p.topic)
        bases = segment_bases(partition_dir(kafka.log_dir, p.topic))
        return cp if cp is not None and cp > past.get(p.codec, -1) and cp == bases[-1] else None

    for p in pairs.values():
        cp = wait_for(lambda: done(p), 90, f"the cleaner to clean {p.topic} up to its active segment ({label})")
        copy = copy_partition(partition_dir(kafka.log_dir, p.topic), root / label / p.codec)
        known = {c.now_ms + DELETE_RETENTION_MS for c in p.cleans if c.stamped}
        new = horizons(copy) - known
        assert len(new) <= 1, f"{p.topic}: one clean stamped several horizons {sorted(new)}"
        stamped = bool(new)
        now = new.pop() - DELETE_RETENTION_MS if stamped else cleans_begun(kafka.cleaner_log, p.topic)[-1]
        p.cleans.append(Clean(copy, cp, now, stamped, dirty_from.get(p.codec)))


def build(kafka, root: Path, cleans: int = 3, codecs=CODECS, progress=lambda m: None) -> dict[str, Pair]:
    """The topics of ``codecs``, written, copied, cleaned ``cleans`` times (each copied): codec -> Pair."""
    t0 = time.monotonic()
    say = lambda m: progress(f"{time.monotonic() - t0:6.2f}s {m}")  # noqa: E731
    b = kafka.bootstrap
    topics = {c: create_topic(b, unique_topic(f"cleanpairs-{c}"), **HELD) for c in codecs}
    with ThreadPoolExecutor(len(codecs)) as pool:
        list(pool.map(lambda c: fill(b, topics[c], c), codecs))
    say("written")
    pairs = {c: Pair(c, t, copy_partition(partition_dir(kafka.log_dir, t), root / "before" / c))
             for c, t in topics.items()}
    with ThreadPoolExecutor(len(codecs)) as pool:
        list(pool.map(lambda t: set_topic_config(b, t, **RELEASED), topics.values()))
    say("released")
    _clean_all(kafka, pairs, root, "after-1", {}, {})
    say("cleaned once")
    for n in range(2, cleans + 1):
        # every horizon the last clean stamped must have passed when the next clean starts
        last = max(p.cleans[-1].now_ms + DELETE_RETENTION_MS for p in pairs.values())
        time.sleep(max(0.0, last / 1000 - time.time()) + 0.05)  # delete.retention.ms: time passing is the point
        past = {c: p.cleans[-1].checkpoint for c, p in pairs.items()}
        ends = {c: log_end(p.cleans[-1].copy) for c, p in pairs.items()}
        with ThreadPoolExecutor(len(codecs)) as pool:
            list(pool.map(lambda c: fresh(b, topics[c], c, n, active_first_timestamp(pairs[c].cleans[-1].copy)),
                          codecs))
        say(f"written fresh records for clean {n}")
        _clean_all(kafka, pairs, root, f"after-{n}", past, ends)
        say(f"cleaned {n} times")
    return pairs

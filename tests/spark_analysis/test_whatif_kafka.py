"""The what-if model against a real broker, for one setting change: a compacted topic written at a steady
rate over a known key set (round robin over its keys, values of one size) is cleaned under
``min.cleanable.dirty.ratio`` A; the audit's per-partition pass over a copy of its log dir gives the
model's inputs (``spark_analysis.whatif.observed``), and the model predicts the steady clean interval and
mean size under ratio B. Then the topic's ratio is set to B through the admin API, writing goes on, and
the broker's own cleans (``log-cleaner.log``) and the partition folder's size are measured against the
prediction.

Tolerances: the clean interval within 30 % (three intervals; the cleaner looks again every
log.cleaner.backoff.ms, 500 ms here, and shares its thread with other tests' topics on the session
broker: runs measured 1.95-2.27 s against 2.00 s), the mean size within 15 % (segments roll on the first
batch past segment.ms; runs measured 4-6 % above the prediction).
A model that ignored the ratio (A's interval, some 2.8 times B's) fails it."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest

from kafkatools import (cleaner_checkpoint, copy_partition, create_topic, partition_dir, producer, segment_bases,
                        set_topic_config, unique_topic)
from localkafka.broker import FAST_CLEANER
from monitor.kafka.cleanerlog import parse_cleaner_log
from monitor.model.estimate import CleanerParams
from monitor.model.topicconfig import TopicConfig
from monitor.model.whatif import Settings, steady
from spark_analysis.audit.tables import partition_row
from spark_analysis.partition_audit import PartitionTask, audit_partition
from spark_analysis.rows import rows_of
from spark_analysis.whatif import observed
from waiting import wait_for

pytestmark = pytest.mark.kafka

KEYS, VALUE_BYTES = 1_000, 200
RATE, TICK = 200, 0.05  # records per second, written every TICK seconds
RATIO_A, RATIO_B = 0.5, 0.2
CFG = {"cleanup.policy": "compact", "segment.ms": 1_000, "min.cleanable.dirty.ratio": RATIO_A,
       "delete.retention.ms": 60_000, "min.compaction.lag.ms": 0}
BACKOFF_MS = int(FAST_CLEANER["log.cleaner.backoff.ms"])


class SteadyWriter(threading.Thread):
    """Writes RATE records per second, round robin over KEYS keys (each key updated every KEYS / RATE s),
    on a schedule (no drift), until stopped."""

    def __init__(self, bootstrap: str, topic: str):
        super().__init__(daemon=True)
        self.p = producer(bootstrap, **{"linger.ms": 5})
        self.topic, self.stop_event, self.errors, self.i = topic, threading.Event(), [], 0

    def write(self, n: int) -> None:
        for _ in range(n):
            self.p.produce(self.topic, key=b"k%04d" % (self.i % KEYS), value=b"v" * VALUE_BYTES, partition=0,
                           on_delivery=lambda err, msg: self.errors.append(err) if err else None)
            self.i += 1
        self.p.poll(0)

    def run(self) -> None:
        t0, tick = time.monotonic(), 0
        while not self.stop_event.is_set():
            tick += 1
            self.write(int(RATE * TICK))
            delay = t0 + tick * TICK - time.monotonic()
            if delay > 0:
                self.stop_event.wait(delay)
        self.p.flush(30)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(30)


def cleans(kafka, topic: str) -> list:
    """The broker's cleans of ``topic``-0 so far, in order (log-cleaner.log)."""
    text = kafka.cleaner_log.read_text(errors="replace") if kafka.cleaner_log.exists() else ""
    return [s for s in parse_cleaner_log(text.splitlines()) if s.log == f"{topic}-0"]


def log_bytes(folder) -> int:
    """The partition's segment bytes on disk now (a segment renamed away mid-listing counts 0)."""
    total = 0
    for f in folder.glob("*.log"):
        try:
            total += f.stat().st_size
        except FileNotFoundError:
            pass
    return total


class Sampler(threading.Thread):
    """The partition folder's segment bytes every 50 ms, with the wall-clock time (ms), until stopped."""

    def __init__(self, folder):
        super().__init__(daemon=True)
        self.folder, self.samples, self.stop_event = folder, [], threading.Event()

    def run(self) -> None:
        while not self.stop_event.wait(0.05):
            self.samples.append((time.time() * 1000, log_bytes(self.folder)))

    def stop(self) -> None:
        self.stop_event.set()
        self.join(10)


def audited(kafka, topic: str, into) -> tuple[dict, dict]:
    """The audit's facts and row of the partition, from a copy whose cleaner checkpoint is one of its
    segment bases (no clean finished between the checkpoint and the copy)."""
    src = partition_dir(kafka.log_dir, topic)

    def attempt():
        cp = cleaner_checkpoint(kafka.log_dir, topic)
        dst = copy_partition(src, into)
        if cp is None or cp != cleaner_checkpoint(kafka.log_dir, topic) or cp not in segment_bases(dst):
            return None
        return dst, cp

    dst, cp = wait_for(attempt, 30, f"a copy of {topic}-0 consistent with its cleaner checkpoint")
    files = sorted((str(f), f.stat().st_size) for f in dst.glob("*.log"))
    task = PartitionTask(topic, 0, files, TopicConfig.from_strings(CFG), int(time.time() * 1000), checkpoint=cp)
    table = pa.Table.from_batches(list(audit_partition(task, lambda u: open(u, "rb"))))
    facts = rows_of(table, "facts")[0]
    return facts, partition_row(facts, rows_of(table, "key_totals")[0], CleanerParams())


def test_ratio_change_measured_against_the_prediction(kafka, tmp_path):
    topic = create_topic(kafka.bootstrap, unique_topic("whatif"), **CFG)
    folder = partition_dir(kafka.log_dir, topic)
    w = SteadyWriter(kafka.bootstrap, topic)
    w.write(KEYS)  # every key once: the key set is stable from here on
    w.start()
    try:
        # under A: cleaned once, then three segments of steady writes in the uncleaned tail
        wait_for(lambda: cleans(kafka, topic), 60, f"a first clean of {topic}-0 under ratio {RATIO_A}")
        wait_for(lambda: len([b for b in segment_bases(folder)
                              if b >= (cleaner_checkpoint(kafka.log_dir, topic) or 0)]) >= 4, 30,
                 "three closed segments since the clean")
        facts, row = audited(kafka, topic, tmp_path)
        obs = observed(facts, row, backoff_ms=BACKOFF_MS)
        assert obs.write_bytes_per_second is not None, obs.unknown_reason
        cur = Settings(RATIO_A, CFG["segment.ms"], 1 << 30, CFG["delete.retention.ms"])
        at_a, at_b = steady(obs, cur), steady(obs, cur.with_value("min.cleanable.dirty.ratio", RATIO_B))
        assert at_b.clean_interval_seconds < at_a.clean_interval_seconds / 2  # B is a real change

        n0 = len(cleans(kafka, topic))
        set_topic_config(kafka.bootstrap, topic, **{"min.cleanable.dirty.ratio": RATIO_B})
        # the first clean after the change may have begun under A: B's cycles start after the next one
        wait_for(lambda: len(cleans(kafka, topic)) >= n0 + 2, 60, f"a clean under ratio {RATIO_B}")
        start = len(cleans(kafka, topic))
        sampler = Sampler(folder)
        sampler.start()
        try:  # three whole cycles under B
            wait_for(lambda: len(cleans(kafka, topic)) >= start + 3, 60, f"three cleans under ratio {RATIO_B}",
                     interval=0.2)
        finally:
            sampler.stop()
        b_cleans = cleans(kafka, topic)[start - 1:start + 3]
    finally:
        w.stop()
    assert not w.errors
    gaps = [(b.timestamp_ms - a.timestamp_ms) / 1000 for a, b in zip(b_cleans, b_cleans[1:])]
    measured_interval = sum(gaps) / len(gaps)
    sizes = [b for t, b in sampler.samples if b_cleans[0].timestamp_ms <= t <= b_cleans[-1].timestamp_ms]
    measured_size = sum(sizes) / len(sizes)
    report = (f"write {obs.write_bytes_per_second:,.0f} B/s, live {obs.live_bytes:,.0f} B; ratio {RATIO_B}: "
              f"interval predicted {at_b.clean_interval_seconds:.2f} s, measured {measured_interval:.2f} s {gaps}; "
              f"mean size predicted {at_b.size_bytes:,.0f} B, measured {measured_size:,.0f} B")
    print(report)
    assert measured_interval == pytest.approx(at_b.clean_interval_seconds, rel=0.30), report
    assert measured_size == pytest.approx(at_b.size_bytes, rel=0.15), report

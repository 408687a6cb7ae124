"""``monitor.model.nextclean`` against a real broker's cleaner, one compacted topic per codec
(tests/cleanpairs.py): the projection of the copy made before a clean, at that clean's own start,
against the bytes the clean left; the tombstones' and markers' horizon states against
``kafka-dump-log --deep-iteration``'s ``deleteHorizonMs`` of the same files.

Every topic is written, cleaned and copied once for the module (the cleans cost seconds each)."""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import KafkaError

from cleanpairs import CODECS, DELETE_RETENTION_MS, build, keyless_refused
from dumpcompare import dump

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def pairs(kafka, tmp_path_factory):
    return build(kafka, tmp_path_factory.mktemp("cleanpairs"),
                 progress=lambda m: print(f"[cleanpairs] {m}", file=sys.stderr))


@pytest.fixture(scope="module")
def dumps(pairs):
    """kafka-dump-log --deep-iteration of every copy (one JVM for all): folder -> its batches."""
    folders = [p.before for p in pairs.values()] + [c.copy for p in pairs.values() for c in p.cleans]
    files = [f for d in folders for f in sorted(d.glob("*.log"))]
    _, batches = dump(files, "--deep-iteration")
    out: dict[Path, list] = {d: [] for d in folders}
    for b in batches:
        out[Path(b.file).parent].append(b)
    return out


def kinds(batches) -> Counter:
    """(kind, horizon) of each tombstone and marker, as kafka-dump-log prints them."""
    c: Counter = Counter()
    for b in batches:
        for r in b.records():
            if b.is_control:
                c["marker", b.delete_horizon_ms] += 1
            elif r.is_tombstone:
                c["tombstone", b.delete_horizon_ms] += 1
    return c


def cleans_begun(cleaner_log: Path, topic: str) -> list[int]:
    """When log-cleaner.log says each clean of ``topic``-0 began (ms; the log's local time, to the ms)."""
    out = []
    for line in cleaner_log.read_text().splitlines():
        m = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\] .*Beginning cleaning of log (\S+)(?: \(.*)?$", line)
        if m and m.group(3) == f"{topic}-0":
            out.append(int(time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))) * 1000 + int(m.group(2)))
    return out


def test_kafka_refuses_a_keyless_record_on_a_compacted_topic(kafka, pairs):
    """Why the topics hold no keyless record: the broker rejects it at produce time (LogValidator)."""
    t = pairs["none"].topic
    err = keyless_refused(kafka.bootstrap, t)
    assert err is not None and err.code() == KafkaError.INVALID_RECORD, err
    assert f"Compacted topic cannot accept message without key in topic partition {t}-0" in kafka.server_log.read_text()


@pytest.mark.parametrize("codec", CODECS)
def test_the_broker_cleaned_and_stamped_as_kip_534_says(kafka, pairs, dumps, codec):
    """What the broker did, by kafka-dump-log: the first clean shrank the log, kept every surviving
    tombstone stamped with its start + delete.retention.ms and left every marker unstamped (each
    transaction's data was still there to read); the second removed those tombstones and stamped the
    markers of the transactions the first emptied; the third removed those markers. The idempotent
    producer's last batch, superseded whole, is kept empty through every clean (KAFKA-17076)."""
    p = pairs[codec]
    first, second, third = p.cleans
    before = dumps[p.before]
    assert {b.compression for b in before if not b.is_control and b.records_count > 1} == {codec}
    sizes = [sum(b.size for b in dumps[d]) for d in (p.before, first.copy, second.copy, third.copy)]
    assert sizes == [sum(f.stat().st_size for f in d.glob("*.log")) for d in (p.before, first.copy, second.copy,
                                                                                third.copy)]
    assert sizes[1] < sizes[0]
    assert first.now_ms is not None and second.now_ms is not None
    assert second.now_ms >= first.now_ms + DELETE_RETENTION_MS
    # the start read back from the horizon a clean stamped is the one its log line gives (Cleaner.clean
    # takes time.milliseconds() and doClean logs "Beginning cleaning" first)
    begun = cleans_begun(kafka.cleaner_log, p.topic)
    assert len(begun) == 3 and all(0 <= b - c.now_ms < 1000 for b, c in zip(begun, (first, second))), begun
    h1, h2 = first.now_ms + DELETE_RETENTION_MS, second.now_ms + DELETE_RETENTION_MS
    k0, k1, k2, k3 = (kinds(dumps[d]) for d in (p.before, first.copy, second.copy, third.copy))
    tombs = sum(n for (kind, h), n in k0.items() if kind == "tombstone")
    marks = sum(n for (kind, h), n in k0.items() if kind == "marker")
    assert set(k0) == {("tombstone", None), ("marker", None)}
    assert (tombs, marks) == (12, 4)  # tombstones: 4 outside transactions, 4 in A, 2 in B (aborted), 2 in phase 5
    assert k1 == Counter({("tombstone", h1): tombs - 2, ("marker", None): marks}), (tombs, k1)
    assert k2 == Counter({("marker", h2): 2, ("marker", None): marks - 2}), k2
    assert k3 == Counter({("marker", None): marks - 2}), k3
    idem = [b for b in before if not b.is_control and b.producer_id >= 0 and not b.is_transactional]
    last = max(idem, key=lambda b: b.base_offset)
    for d in (first.copy, second.copy, third.copy):
        [kept] = [b for b in dumps[d] if b.base_offset == last.base_offset]
        assert kept.records_count == 0 and kept.last_offset == last.last_offset and kept.size == 61

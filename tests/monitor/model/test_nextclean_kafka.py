"""``monitor.model.nextclean`` against a real broker's cleaner, one compacted topic per codec
(tests/cleanpairs.py: overwrites, tombstones in and out of transactions, a commit and an abort, a
producer's last batch emptied, headers): the projection of the copy made before a clean, at that
clean's own start, against the bytes the clean left; settled against the clean after every horizon;
the tombstones' and markers' horizon states against ``kafka-dump-log --deep-iteration``'s
``deleteHorizonMs`` of the same files.

Every topic is written, cleaned and copied once for the module (the cleans cost seconds each)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import KafkaError

from cleanpairs import (CODECS, DELETE_RETENTION_MS, added_bytes, build, cleans_begun, keyless_refused,
                        log_bytes, log_end, projection_inputs)
from dumpcompare import dump_by_folder
from monitor.model import horizon
from monitor.model.nextclean import project_partition

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def pairs(kafka, tmp_path_factory):
    return build(kafka, tmp_path_factory.mktemp("cleanpairs"),
                 progress=lambda m: print(f"[cleanpairs] {m}", file=sys.stderr))


@pytest.fixture(scope="module")
def dumps(pairs):
    """kafka-dump-log --deep-iteration of every copy (one JVM for all): folder -> its batches."""
    folders = [p.before for p in pairs.values()] + [c.copy for p in pairs.values() for c in p.cleans]
    return dump_by_folder(folders)


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
    assert first.stamped and second.stamped and not third.stamped
    assert second.now_ms >= first.now_ms + DELETE_RETENTION_MS and third.now_ms >= second.now_ms + DELETE_RETENTION_MS
    # the start read back from the horizon a clean stamped is the one its log line gives (Cleaner.clean
    # takes time.milliseconds() and doClean logs "Beginning cleaning" first: a few ms later, unless the
    # cleaner thread is descheduled; another clean's would be delete.retention.ms or more away)
    begun = cleans_begun(kafka.cleaner_log, p.topic)
    assert len(begun) == 3 and all(0 <= b - c.now_ms < 2000 for b, c in zip(begun, (first, second))), begun
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


# ------------------------------------------------------------------ the projections against the broker

# The issue asks for the exact bytes uncompressed and within 0.5% for each codec. gzip, lz4 and zstd come
# out exact (the same zlib, LZ4 HC and zstd at Kafka's levels and framing: monitor.kafka.record.encode),
# so they are held to that; snappy is compressed by another implementation than Kafka's (snappy-java's
# native snappy against cramjam's), which can differ by a byte or two a batch: measured 0 to 2 B of
# about 2,300 to 2,600 (0.09% at most) over five runs.
TOLERANCE = {"none": 0.0, "gzip": 0.0, "snappy": 0.005, "lz4": 0.0, "zstd": 0.0}


def close(projected: int, actual: int, codec: str) -> bool:
    return projected == actual if TOLERANCE[codec] == 0 else abs(projected - actual) <= TOLERANCE[codec] * actual


@pytest.mark.parametrize("codec", CODECS)
def test_next_clean_projection_of_the_copy_before_is_what_the_first_clean_left(pairs, dumps, codec):
    """The copy made before the first clean, projected at that clean's own start: the bytes it left
    (exactly; snappy within 0.5%, see ``TOLERANCE``), up to the offset it checkpointed, and the batches
    and records it dropped, rewrote and stamped, as kafka-dump-log shows the two copies."""
    p = pairs[codec]
    first = p.cleans[0]
    inputs = projection_inputs(p.before, first.now_ms)
    assert inputs["upper"] == first.checkpoint  # the bounds the audit derives are the ones the broker cleaned
    proj = project_partition(**inputs)
    assert proj.unknown_reason is None, proj.unknown_reason
    assert proj.log_bytes == log_bytes(p.before)
    assert close(proj.next_clean_bytes, first.bytes, codec), (proj.next_clean_bytes, first.bytes, proj.as_dict())
    was = {b.base_offset: b for b in dumps[p.before]}
    now = {b.base_offset: b for b in dumps[first.copy]}
    assert set(now) <= set(was)
    assert proj.batches_dropped == len(set(was) - set(now))
    assert proj.batches_rewritten == sum((b.size, b.records_count, b.delete_horizon_ms) != (was[o].size,
                                         was[o].records_count, was[o].delete_horizon_ms) for o, b in now.items())
    assert proj.batches_stamped == sum(b.has_delete_horizon for b in now.values())
    assert proj.removable_records == (sum(b.records_count for b in was.values())
                                      - sum(b.records_count for b in now.values()))


@pytest.mark.parametrize("codec", CODECS)
def test_each_later_clean_is_the_next_clean_projection_of_the_copy_before_it(pairs, codec):
    """Each later clean, projected from the copy the clean before it left, at its own start (the
    horizon it stamped; the last stamps nothing: log-cleaner.log's time, past every horizon, so nothing
    it does depends on the few ms that time may be late). Its dirty section was the copy's active segment
    (rolled by then, so the projection's upper bound is the copy's end) and the records written after
    the copy, which have keys of their own and no tombstone: the clean kept them whole, so their batches'
    bytes, read from the later copy, are taken off what it left."""
    p = pairs[codec]
    for prev, clean in zip(p.cleans, p.cleans[1:]):
        inputs = projection_inputs(prev.copy, clean.now_ms, checkpoint=prev.checkpoint, upper=log_end(prev.copy))
        proj = project_partition(**inputs)
        assert proj.unknown_reason is None, proj.unknown_reason
        left = clean.bytes - added_bytes(clean.copy, clean.dirty_from)
        assert close(proj.next_clean_bytes, left, codec), (clean.copy.parent.name, proj.next_clean_bytes, left)


@pytest.mark.parametrize("codec", CODECS)
def test_settled_projection_of_the_copy_before_is_what_the_cleans_after_every_horizon_left(pairs, codec):
    """Settled, from the copy made before any clean: what the third clean left (the second removed the
    tombstones the first stamped and stamped the markers whose transactions the first emptied; the
    third removed those), less the batches written after the copy to start the later cleans (fresh keys,
    no tombstone: kept whole, their bytes read from the last copy)."""
    p = pairs[codec]
    proj = project_partition(**projection_inputs(p.before, p.cleans[0].now_ms))
    assert proj.unknown_reason is None, proj.unknown_reason
    last = p.cleans[-1]
    left = last.bytes - p.added_since_before(last)
    assert close(proj.settled_bytes, left, codec), (proj.settled_bytes, left, proj.as_dict())


def dump_counts(batches, now_ms: int) -> tuple[dict, int | None]:
    """Tombstones and markers per (kind, state) at ``now_ms`` and the earliest removal, from
    kafka-dump-log's records and each batch's ``deleteHorizonMs`` (monitor.model.horizon's states)."""
    counts: Counter = Counter()
    soonest = None
    for (kind, h), n in kinds(batches).items():
        counts[kind, horizon.state(h, now_ms)] += n
        t = horizon.earliest_removal_ms(h, now_ms, DELETE_RETENTION_MS)
        soonest = t if soonest is None else min(soonest, t)
    return dict(counts), soonest


@pytest.mark.parametrize("codec", CODECS)
def test_horizon_states_agree_with_kafka_dump_log(pairs, dumps, codec):
    """Each tombstone's and marker's state (unstamped, pending, passed) and the earliest removal, on
    every copy, at the clean's start and at its horizon: as kafka-dump-log --deep-iteration's records
    and deleteHorizonMs of the same files say."""
    p = pairs[codec]
    first, second = p.cleans[0], p.cleans[1]
    cases = [(p.before, None, first.now_ms)]
    for clean in p.cleans:
        for now in (first.now_ms, first.now_ms + DELETE_RETENTION_MS, second.now_ms + DELETE_RETENTION_MS):
            cases.append((clean.copy, clean.checkpoint, now))
    seen = set()
    for folder, checkpoint, now in cases:
        proj = project_partition(**projection_inputs(folder, now, checkpoint=checkpoint))
        want, soonest = dump_counts(dumps[folder], now)
        assert proj.horizon_counts == want, (folder.parent.name, now, proj.horizon_counts, want)
        assert proj.next_removable_ms == soonest, (folder.parent.name, now)
        seen.update(want)
    # every state of both kinds came up (the copies are not all alike)
    assert seen == {("tombstone", s) for s in horizon.STATES} | {("marker", s) for s in horizon.STATES}

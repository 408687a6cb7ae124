"""The arrays-only size of a batch a clean rewrites (``nextclean._rewritten_size``: ``cleanarrays``'
``records_size`` uncompressed, ``encode.splice_records`` and the codec once compressed) against the
encoder that rebuilds the batch from decoded ``Record`` objects (``encode.retained_batch_size``, checked
against a real broker's clean in tests/monitor/kafka/record/test_encode_vs_kafka.py): generated batches
with random keep masks, stamps, timestamps (negative deltas, far-apart values), keys, values and headers,
in every codec; and a whole partition's projection built without a single ``Record``."""

from __future__ import annotations

import random

import pytest

import recordfixtures as rf
from monitor.kafka.record import SegmentReader, v2
from monitor.kafka.record.encode import encode_records, records_size, retained_batch, retained_batch_size, splice_records
from monitor.kafka.record.v2 import HEADER_SIZE
from monitor.model import cleanarrays, nextclean
from monitor.model.cleanround import Flow

OPS = [cleanarrays.PureOps] + ([cleanarrays.NumpyOps] if cleanarrays.np is not None else [])
NEEDS_TAILS = pytest.mark.skipif(v2._c_decode_arrays is None, reason="the C decoder was not built here")
HORIZON_BIT = 0x40


def _record(rnd, off, t0):
    spread = rnd.choice([10, 1000, 1 << 20, 1 << 40])  # deltas of one byte to six
    ts = t0 + rnd.randint(-spread, spread)
    key = None if rnd.random() < 0.1 else b"k" * rnd.choice([1, 5, 63, 64, 200])
    value = None if rnd.random() < 0.2 else bytes(rnd.randrange(8) for _ in range(rnd.choice([0, 3, 60, 70, 300])))
    if key is None and value is None:
        value = b"v"
    headers = ()
    if rnd.random() < 0.3:
        headers = tuple((rnd.choice(["h", "hé", "x" * 70]), None if rnd.random() < 0.3 else b"w" * rnd.choice([1, 90]))
                        for _ in range(rnd.randint(1, 3)))
    return rf.Rec(off, ts, key, value, headers)


def _batches(tmp_path, seed, n=60):
    rnd = random.Random(seed)
    out, off = [], rnd.randrange(1 << 40)
    for _ in range(n):
        t0 = rnd.choice([0, rf.T0, 1 << 50])
        recs = [_record(rnd, off + j * rnd.choice([1, 1, 7]), t0) for j in range(rnd.randint(1, 40))]
        recs = [rf.Rec(off + j, r.timestamp, r.key, r.value, r.headers) for j, r in enumerate(recs)]
        codec = rnd.choice(["none", "none", "gzip", "lz4", "snappy", "zstd"])
        try:
            w = rf.v2(recs, codec, log_append_time=rf.T0 if rnd.random() < 0.1 else None)
        except AssertionError:  # the builder stored it uncompressed (incompressible): another batch
            continue
        if rnd.random() < 0.3:  # a batch an earlier clean stamped
            w = _stamped(w, max(r.timestamp for r in w.records) + rnd.choice([5, 1 << 35]))
        out.append(w)
        off += len(recs) + rnd.randint(0, 3)
    path = tmp_path / f"{seed:020d}.log"
    rf.write(path, out)
    return list(SegmentReader(str(path)).batches()), rnd


def _stamped(w, when):
    import struct

    data = bytearray(w.data)
    struct.pack_into(">q", data, rf.V2_FIRST_TS_AT, when)
    w.data = rf._restamp_v2(data, w.records[0].offset, 0, attrs=HORIZON_BIT | (data[rf.V2_ATTRS_AT + 1] & 0x0F))
    return w


class _NoBodies:
    """The batches here were read with their bodies: none is read again."""

    def body(self, b):
        assert b._body is not None
        return b._body

    def batch(self, b):
        raise AssertionError("the batch's body was in memory")


@NEEDS_TAILS
@pytest.mark.parametrize("ops", OPS, ids=lambda o: o.name)
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("spliced_by", ["c", "numpy"])
def test_arrays_size_equals_the_encoders_on_generated_batches(tmp_path, ops, seed, spliced_by, monkeypatch):
    """``spliced_by``: a rewritten compressed batch's records spliced by the C decoder's ``splice`` or by
    numpy vectors (a decoder built before it)."""
    if spliced_by == "numpy":
        monkeypatch.setattr(cleanarrays, "_c_splice", None)
    elif cleanarrays._c_splice is None:
        pytest.skip("no C decoder with splice here")
    batches, rnd = _batches(tmp_path, seed)
    checked = vector_splices = 0
    for b in batches:
        recs = b.records()
        for _ in range(4):
            keep = [rnd.random() < rnd.choice([0.2, 0.8, 1.0]) for _ in recs]
            if not any(keep):
                keep[rnd.randrange(len(keep))] = True
            mask = None if all(keep) else (cleanarrays.np.array(keep) if ops is cleanarrays.NumpyOps else keep)
            horizon = rnd.choice([None, rf.T0 + 86_400_000, -(1 << 45), 1 << 55])
            if mask is None and (horizon is None or b.has_delete_horizon):
                continue  # written as it is (a horizon is never changed): not rewritten
            kept = [r for r, k in zip(recs, keep) if k]
            stamp = None if b.has_delete_horizon else horizon
            want = retained_batch_size(b, kept, delete_horizon_ms=stamp)
            f = Flow(b, 0, ops.columns(b.arrays()), None)
            assert nextclean._rewritten_size(f, mask, ops, _NoBodies(), horizon) == want, (b.position, keep, horizon)
            assert f.records is None  # no Record built
            # field by field: the records section the splice writes is the encoder's, byte for byte
            base_ts = (b.base_timestamp if b.has_delete_horizon else stamp if stamp is not None
                       else kept[0].timestamp)
            cols = f.cols
            spliced = splice_records(f.section if b.codec else bytes(b._body), None if mask is None else keep,
                                     ops.flags(cols.offsets), ops.flags(cols.timestamps), ops.flags(cols.tails),
                                     b.base_offset, base_ts)
            assert spliced == encode_records(kept, b.base_offset, base_ts)
            vectors = ops.splice(f.section if b.codec else bytes(b._body), cols, mask, b.base_offset, base_ts,
                                 b.base_timestamp)
            assert vectors in (None, spliced)
            if ops is cleanarrays.NumpyOps and b.timestamp_type == "create":
                assert vectors == spliced  # the vector splice applies to every CreateTime batch
                vector_splices += 1
            if not b.codec:
                assert ops.records_size(cols, mask, b.base_offset, base_ts) == records_size(kept, b.base_offset, base_ts)
                assert HEADER_SIZE + len(spliced) == len(retained_batch(b, kept, delete_horizon_ms=stamp)) == want
            checked += 1
    assert checked > 100 and (ops is cleanarrays.PureOps or vector_splices > 50)


@NEEDS_TAILS
@pytest.mark.parametrize("ops", OPS, ids=lambda o: o.name)
def test_a_projection_builds_no_record_and_agrees_with_the_records_path(tmp_path, ops, monkeypatch):
    """A partition of generated batches (tombstones, stamps, every codec) projected twice: with
    ``Record`` decoding forbidden (the arrays path), and with the arrays' tail sizes withheld (the
    records path, as with a C decoder built before them): the same figures, batches rewritten."""
    from monitor.model.transactions import AbortedRanges

    rnd = random.Random(9)
    segs, off = [], 0
    for _ in range(6):
        seg = []
        for _ in range(rnd.randint(3, 8)):
            recs = [rf.Rec(off + j, rf.T0 + rnd.randint(-5000, 5000), f"k{rnd.randrange(80)}".encode(),
                           None if rnd.random() < 0.25 else b"value" * rnd.randint(1, 30),
                           (("h", b"x"),) if rnd.random() < 0.2 else ()) for j in range(rnd.randint(1, 15))]
            seg.append(rf.v2(recs, rnd.choice(["none", "none", "gzip", "lz4", "zstd"]) if len(recs) > 4 else "none"))
            off += len(recs)
        segs.append(seg)
    files = []
    for seg in segs:
        path = tmp_path / f"{seg[0].records[0].offset:020d}.log"
        rf.write(path, seg)
        files.append((str(path), path.stat().st_size))
    upper = int(files[-1][0].rsplit("/", 1)[1][:20])

    def run():
        return nextclean.project_partition(
            files, lambda u: open(u, "rb"), first_dirty=0, upper=upper, log_start=0, now_ms=rf.T0 + 10 * 86_400_000,
            delete_retention_ms=86_400_000, aborted=AbortedRanges(()), last_records={}, name="t-0", ops=ops)

    def no_records(self):
        raise AssertionError(f"a Record built for the batch at byte {self.position}")

    with monkeypatch.context() as m:
        m.setattr(v2.BatchV2, "records", no_records)
        by_arrays = run()
    plain = ops.columns

    def without_tails(arr):
        c = plain(arr)
        c.tails = None
        return c

    with monkeypatch.context() as m:
        m.setattr(ops, "columns", staticmethod(without_tails))
        by_records = run()
    assert by_arrays.unknown_reason is None and by_arrays.batches_rewritten > 10
    assert by_arrays == by_records
    assert by_arrays.next_clean_bytes < by_arrays.log_bytes and by_arrays.settled_bytes <= by_arrays.next_clean_bytes



def test_the_c_splice_refuses_what_it_cannot_place():
    """The C splice returns None where the records' sizes do not add up to the section (a LogAppendTime
    batch's own deltas are not in the arrays) or a tail is not a copy, and refuses arrays of different
    lengths; it never reads outside the section."""
    splice = cleanarrays._c_splice
    if splice is None:
        pytest.skip("no C decoder with splice here")
    np = cleanarrays.np
    i64, i32 = (lambda *v: np.array(v, dtype=np.int64)), (lambda *v: np.array(v, dtype=np.int32))
    # two records at offsets 10, 11, timestamps 100, 101 (batch base 100), tails "ab" and "c"
    # (zigzag varints: a length of 5 is 10; attributes 0; the deltas 0 and 1 are 0 and 2)
    section = bytes([10, 0, 0, 0]) + b"ab" + bytes([8, 0, 2, 2]) + b"c"
    keep_second = np.array([False, True]).view(np.uint8)
    assert splice(section, i64(10, 11), i64(100, 101), i32(2, 1), None, 10, 100, 100) == section
    # the second alone, its timestamp the new base: its timestamp delta 0, its offset delta still 1
    assert splice(section, i64(10, 11), i64(100, 101), i32(2, 1), keep_second, 10, 101, 100) == bytes([8, 0, 0, 2]) + b"c"
    assert splice(section + b"x", i64(10, 11), i64(100, 101), i32(2, 1), None, 10, 100, 100) is None
    assert splice(section, i64(10, 11), i64(100, 101), i32(2, -1), None, 10, 100, 100) is None
    assert splice(section[:-1], i64(10, 11), i64(100, 101), i32(2, 1), None, 10, 100, 100) is None
    with pytest.raises(ValueError, match="differ in length"):
        splice(section, i64(10), i64(100, 101), i32(2, 1), None, 10, 100, 100)

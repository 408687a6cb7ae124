"""The largest decompressed record of a compressed batch from the arrays the audit's record pass decodes
(``summary.largest_record_of_arrays``) is the figure the scanner reads from the record data itself
(``summary.largest_record``, what Kafka 4.4 compares with max.decompressed.message.bytes): for CreateTime
batches from the arrays alone (numpy and the pure-Python rule), a LogAppendTime batch decoded again."""

from __future__ import annotations

import pytest

from monitor.kafka.record import SegmentReader
from monitor.model import cleanarrays
from monitor.model.summary import largest_record, largest_record_of_arrays
from recordfixtures import Rec, items, v2, write

T0 = 1_700_000_000_000


def _batches(path):
    with open(path, "rb") as fh:
        return [(b, a, b.columns()) for b, a in SegmentReader(fh, name=str(path)).decoded(arrays=True)]


def _written(tmp_path):
    big = [Rec(10 + i, T0 + i * 90_000_000, f"k{i}".encode(), b"v" * (20 + 300 * i), headers=[("h", b"x" * i)])
           for i in range(5)]  # timestamp deltas past 2^21 ms: varints of 4 bytes and more
    return write(tmp_path / "00000000000000000000.log", [
        v2(items(range(0, 40)), "gzip"), v2(big, "zstd"), v2(items(range(40, 50), tombstone_every=3), "lz4"),
        v2(items(range(50, 60)), "gzip", log_append_time=T0 + 5)])


@pytest.mark.parametrize("ops", [cleanarrays.PureOps] + ([cleanarrays.NumpyOps] if cleanarrays.np is not None else []))
def test_the_arrays_give_the_record_data_s_largest_record(tmp_path, monkeypatch, ops):
    monkeypatch.setattr(cleanarrays, "OPS", ops)
    seg = _written(tmp_path)
    got = _batches(seg.path)
    assert [b.timestamp_type == "create" for b, _, _ in got] == [True, True, True, False]
    for batch, arr, cols in got:
        assert largest_record_of_arrays(batch, arr) == largest_record(cols.buf, len(cols)) > 0
    create = [(b, a) for b, a, _ in got if b.timestamp_type == "create"]
    assert all(ops.largest_record(ops.columns(a), b.base_offset, b.base_timestamp) is not None for b, a in create)
    _, big_arr, big_cols = got[1]
    assert largest_record(big_cols.buf, len(big_cols)) > 1200  # the 5th record: 1,220 bytes of value and more


@pytest.mark.parametrize("ops", [cleanarrays.PureOps] + ([cleanarrays.NumpyOps] if cleanarrays.np is not None else []))
def test_the_largest_record_need_not_have_the_longest_tail(tmp_path, monkeypatch, ops):
    """A record a few bytes shorter in key and value but with a timestamp delta of 9 bytes is the longest
    (numpy looks only at tails within 18 bytes of the longest: the deltas' varints take 2 to 20 bytes)."""
    monkeypatch.setattr(cleanarrays, "OPS", ops)
    recs = [Rec(0, T0, b"k0", b"v" * 100), Rec(1, T0 + (1 << 55), b"k1", b"v" * 95),
            Rec(2, T0 + (1 << 20), b"k2", b"v" * 90), Rec(3, T0, b"k3", b"v" * 40)]
    seg = write(tmp_path / "00000000000000000000.log", [v2(recs, "lz4")])
    [(batch, arr, cols)] = _batches(seg.path)
    want = largest_record(cols.buf, len(cols))
    # attributes, offset delta, timestamp delta (9 bytes), key length and key, value length (2) and value,
    # headers: 112 against the longest tail's record's 109
    assert want == 1 + 1 + 9 + 1 + 2 + 2 + 95 + 1
    assert largest_record_of_arrays(batch, arr) == want

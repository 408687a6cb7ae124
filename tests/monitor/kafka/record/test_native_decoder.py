"""The optional C decode loop and the Python loop give the same columns, and fail alike."""

from __future__ import annotations

import os

import pytest

from monitor.kafka.record import SegmentReader, v2
from recordfixtures import READER_GAPS, items, mangled, write
from recordfixtures import v2 as v2_batch

pytestmark = pytest.mark.skipif(v2._c_decode_columns is None and not os.environ.get("CI"),
                                reason="the C decoder was not built here")


def both(batch):
    py = v2._decode_columns(batch._body if not batch.codec else v2.decompress(batch.codec, batch._body), batch)
    data = batch._body if not batch.codec else v2.decompress(batch.codec, batch._body)
    c = v2._c_decode_columns(data, batch.records_count, batch.base_offset, batch.base_timestamp, batch.max_timestamp,
                             bool(batch.attributes & v2.TIMESTAMP_TYPE_MASK))
    return py, c


def test_the_c_decoder_is_built_on_this_machine():
    """CI's machines have a compiler: the fast path must really be there (it is optional only for slim images)."""
    assert v2._c_decode_columns is not None


def test_same_columns_on_every_codec_and_layout(record_gallery):
    """Every v2 batch of the generated corpus (codecs, headers, tombstones, control, cleaned, empty)."""
    n = expected = 0
    for name, seg in record_gallery.items():
        if name in READER_GAPS:
            continue
        path = seg.path
        expected += sum(len(w.records) for w in seg.batches if w.magic == 2)
        for batch in SegmentReader(path).batches():
            if batch.magic != 2:
                continue
            py, c = both(batch)
            assert (py.offsets, py.timestamps, py.keys, py.value_sizes, py.value_positions) == tuple(c[:5]), path
            assert [list(h) for h in py.headers] == [list(h) for h in c[5]], path
            n += len(py.offsets)
    assert n == expected


def test_same_failures_on_mangled_records(tmp_path, seed):
    src = write(tmp_path / "00000000000000000000.log", [v2_batch(items(range(0, 2)))]).path
    batch = next(iter(SegmentReader(src).batches()))
    disagreements = []
    for trial, data in mangled(bytes(batch._body), seed, 400):
        try:
            py = v2._decode_columns(data, batch)
            py_res = (py.offsets, py.timestamps, py.keys, py.value_sizes, py.value_positions)
        except (v2.RecordDecodeError, IndexError, v2.VarintError):
            py_res = "error"
        try:
            c_res = tuple(v2._c_decode_columns(data, batch.records_count, batch.base_offset, batch.base_timestamp,
                                               batch.max_timestamp, False)[:5])
        except ValueError:
            c_res = "error"
        if py_res != c_res:
            disagreements.append(trial)
    assert not disagreements


def test_a_record_count_the_bytes_cannot_hold_is_refused_before_any_array_is_sized():
    """The arrays are sized by the header's record count, so a count past what the records' bytes can
    hold (the smallest record is 7 bytes) is refused up front: a damaged count never sizes memory."""
    data = v2_batch(items(range(0, 2))).data
    body = data[v2.HEADER_SIZE:]
    count = len(body) // 7 + 1
    with pytest.raises(ValueError, match=f"record count {count} does not fit {len(body)} bytes"):
        v2._c_decode_arrays(body, count, 0, 0, 0, False)
    with pytest.raises(ValueError, match="does not fit"):
        v2._c_decode_arrays(body, 1 << 40, 0, 0, 0, False)  # ~10^12 records: 36 TB of arrays, never asked for


def zigzag(n: int) -> bytes:
    z, out = (n << 1) ^ (n >> 63), bytearray()
    while True:
        b, z = z & 0x7F, z >> 7
        out.append(b | (0x80 if z else 0))
        if not z:
            return bytes(out)


@pytest.mark.parametrize("slack", [2, -1])
def test_a_record_whose_fields_end_before_or_past_its_length_is_named_alike_by_both(slack):
    """A record whose declared length leaves bytes after its last field says so ("end at ..., N byte(s)
    before"), not that its fields ran past the end; one whose fields run past its length says that."""
    fields = bytes([0]) + zigzag(0) + zigzag(0) + zigzag(1) + b"k" + zigzag(1) + b"v" + zigzag(0)
    body = zigzag(len(fields) + slack) + fields + bytes(max(slack, 0))
    start = len(zigzag(len(fields) + slack))
    want = (f"record fields end at {start + len(fields)}, {slack} byte\\(s\\) before its declared end "
            f"{start + len(fields) + slack}" if slack > 0 else
            f"record fields run to {start + len(fields)}, past its declared end {start + len(fields) + slack}")
    batch = type("B", (), {"records_count": 1, "base_offset": 0, "base_timestamp": 0, "max_timestamp": 0,
                           "attributes": 0})()
    with pytest.raises(v2.RecordDecodeError, match=want):
        v2._decode_columns(body, batch)
    with pytest.raises(ValueError, match=want):
        v2._c_decode_columns(body, 1, 0, 0, 0, False)

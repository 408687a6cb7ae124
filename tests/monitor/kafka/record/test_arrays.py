"""The arrays view (``RecordArrays``): the same records as the column view, the C loop and the
Python way to it agree, and the key hash is XXH64 as published (Spark's agreement is checked in the
Spark tests)."""

from __future__ import annotations

import os
import random
from array import array

import pytest
import xxhash

from monitor.kafka.record import SegmentReader, v2
from monitor.kafka.record.arrays import RecordArrays, _xxh64_py, xxh64
from recordfixtures import READER_GAPS, items, mangled, write
from recordfixtures import v2 as v2_batch


def _xxh64_lib(key: bytes) -> int:
    """XXH64 with the audit's seed 42, from the xxhash library (not this project's code), as a signed int64."""
    h = xxhash.xxh64_intdigest(key, seed=42)
    return h - (1 << 64) if h >= 1 << 63 else h


def _unpack(a: RecordArrays):
    keys, pos = [], 0
    for size in array("i", a.key_sizes):
        keys.append(None if size < 0 else a.keys[pos:pos + size])
        pos += max(size, 0)
    return (list(array("q", a.offsets)), list(array("q", a.timestamps)), keys, list(array("i", a.value_sizes)),
            list(array("q", a.key_hashes)))


def test_xxh64_known_values():
    # reference values of XXH64 (seed 0) from the xxHash project's sanity checks
    assert _xxh64_py(b"", 0) == 0xEF46DB3751D8E999 - (1 << 64)
    assert _xxh64_py(b"a", 0) == -3292477735350538661  # 0xd24ec4f1a98c6e5b
    assert xxh64(b"abc", 0) == _xxh64_py(b"abc", 0) == 0x44BC2CF5AD770999


@pytest.mark.skipif(v2._c_decode_arrays is None and not os.environ.get("CI"), reason="the C decoder was not built here")
def test_c_and_python_hash_alike_at_every_length(seed):
    """Both of ours against the xxhash library, at every length through the 32-byte stripes."""
    from monitor.kafka.record._decode import xxh64 as c_xxh64

    rnd = random.Random(seed)
    for n in range(0, 200):
        data = bytes(rnd.randrange(256) for _ in range(n))
        for seed in (0, 42, 2**63 + 5):
            lib = xxhash.xxh64_intdigest(data, seed=seed)
            lib -= (1 << 64) if lib >= 1 << 63 else 0
            assert c_xxh64(data, seed) == _xxh64_py(data, seed) == lib, (n, seed)


def test_arrays_match_columns_on_every_magic_codec_and_layout(record_gallery):
    """Every magic, codec and odd layout of the generated corpus: offsets, timestamps, keys, value
    sizes and hashes; and the columns are the records the builder was given."""
    n = expected = 0
    for name, seg in record_gallery.items():
        if name in READER_GAPS:
            continue
        path = seg.path
        got = []
        for batch, arr in SegmentReader(path).decoded(arrays=True):
            cols = batch.columns()
            offsets, timestamps, keys, vsizes, hashes = _unpack(arr)
            assert offsets == cols.offsets and timestamps == cols.timestamps and keys == cols.keys, path
            assert vsizes == [max(v, -1) for v in cols.value_sizes], path
            assert hashes == [42 if k is None else _xxh64_lib(k) for k in cols.keys], path
            got += list(zip(offsets, timestamps, keys, vsizes))
            n += len(arr)
        assert got == [(r.offset, r.timestamp, r.key, -1 if r.value is None else len(r.value)) for r in seg.records]
        expected += len(seg.records)
    assert n == expected


@pytest.mark.skipif(v2._c_decode_arrays is None and not os.environ.get("CI"), reason="the C decoder was not built here")
def test_c_arrays_fail_where_the_column_loop_fails(tmp_path, seed):
    src = write(tmp_path / "00000000000000000000.log", [v2_batch(items(range(0, 2)))]).path
    batch = next(iter(SegmentReader(src).batches()))
    for _, data in mangled(bytes(batch._body), seed, 300):
        args = (data, batch.records_count, batch.base_offset, batch.base_timestamp, batch.max_timestamp, False)
        try:
            cols = v2._c_decode_columns(*args)
        except ValueError:
            with pytest.raises(ValueError):
                v2._c_decode_arrays(*args)
            continue
        arr = RecordArrays(*v2._c_decode_arrays(*args))
        offsets, timestamps, keys, vsizes, _ = _unpack(arr)
        assert (offsets, timestamps, keys) == (cols[0], cols[1], cols[2])
        assert vsizes == [max(v, -1) for v in cols[3]]


def test_tail_sizes_are_the_bytes_a_clean_copies(record_gallery):
    """Every magic-2 batch of the corpus: each record's tail (key length varint to its end) is the
    record's size less its length varint, attributes and two deltas, read from the bytes with the
    Python varint reader (not the C loop), and the Python way to the arrays gives the same tails."""
    from monitor.kafka.record.codecs import decompress
    from monitor.kafka.record.varint import read_varint

    n = 0
    for name, seg in record_gallery.items():
        if name in READER_GAPS:
            continue
        for batch, arr in SegmentReader(seg.path).decoded(arrays=True):
            if batch.magic < 2:
                continue
            data = decompress(batch.codec, batch._body) if batch.codec else bytes(batch._body)
            want, pos = [], 0
            for _ in range(batch.records_count):
                length, body = read_varint(data, pos)
                _ts, p = read_varint(data, body + 1)
                _off, p = read_varint(data, p)
                want.append(body + length - p)
                pos = body + length
            if v2._c_decode_arrays is not None:
                assert list(array("i", arr.tail_sizes)) == want, seg.path
            assert list(array("i", RecordArrays.from_columns(batch.columns()).tail_sizes)) == want, seg.path
            n += len(want)
    assert n > 100


@pytest.mark.skipif(v2._c_decode_arrays is None and not os.environ.get("CI"), reason="the C decoder was not built here")
def test_a_header_key_that_is_not_utf8_has_no_tail_to_copy():
    """Kafka re-encodes the String it decoded from such a key: the tail is -1 (sized through the records)
    from the C loop and from the Python way alike; a UTF-8 key beyond ASCII keeps its tail."""
    from monitor.kafka.record.encode import encode_record

    for hkey, bad in ((b"\xff\xfe", True), ("é".encode(), False), (b"plain", False)):
        rec = encode_record(0, 0, b"k", b"v", [(hkey, b"x")])
        arr = RecordArrays(*v2._c_decode_arrays(rec, 1, 0, 0, 0, False))
        cols = v2.RecordColumns(rec)
        (cols.offsets, cols.timestamps, cols.keys, cols.value_sizes, cols.value_positions,
         cols.headers) = v2._c_decode_columns(rec, 1, 0, 0, 0, False)
        tail = len(rec) - 4  # length, attributes and the two one-byte deltas
        assert list(array("i", arr.tail_sizes)) == list(array("i", RecordArrays.from_columns(cols).tail_sizes)) \
            == [-1 if bad else tail]

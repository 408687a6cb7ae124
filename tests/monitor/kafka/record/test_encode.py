"""monitor.kafka.record.encode: a kept batch re-encoded the way Kafka's ``MemoryRecords.filterTo`` writes it.

The batches here come from kafka-python's builder (tests/recordfixtures.py), a writer apart from this
project: keeping every record with no new horizon must give its bytes back. What a real broker's
clean writes is compared in test_encode_vs_kafka.py.
"""

from __future__ import annotations

import pytest

import recordfixtures as rf
from monitor.kafka.record import encode
from monitor.kafka.record.reader import SegmentReader
from monitor.kafka.record.varint import encode_varint

HEADERS = (("trace", b"abc"), ("\u00fc-key", None), ("", b""))
HORIZON = rf.T0 + 86_400_000


def batch_of(tmp_path, data):
    path = tmp_path / f"{len(list(tmp_path.iterdir()))}.log"
    path.write_bytes(data)
    [batch] = list(SegmentReader(path).batches())
    return batch


def records_with_headers(offsets, **kw):
    return [rf.Rec(r.offset, r.timestamp, r.key, r.value, HEADERS if r.offset % 2 else ())
            for r in rf.items(offsets, **kw)]


@pytest.mark.parametrize("value", [0, 1, -1, 63, 64, -64, -65, 8191, 8192, 2**31 - 1, -2**31, 2**62, -2**63,
                                   -86_400_000, 1_700_000_000_000])
def test_varint_size_is_the_length_of_the_encoding(value):
    assert encode.varint_size(value) == len(encode_varint(value))


def test_record_size_counts_what_encode_record_writes():
    for args in [(0, 0, None, None, ()), (5, -86_400_000, b"k", b"v" * 300, HEADERS), (200, 1 << 40, b"", b"", ())]:
        assert encode.record_size(*args) == len(encode.encode_record(*args))


@pytest.mark.parametrize("codec", ["none", "snappy"])
def test_a_batch_kept_whole_is_written_back_byte_for_byte(tmp_path, codec):
    """Every record kept, no horizon: the rebuilt batch is the builder's (snappy: xerial framing, one block)."""
    written = rf.v2(records_with_headers(range(40, 60), tombstone_every=4, null_key_every=7), codec,
                    producer_id=7, producer_epoch=2, base_sequence=11, leader_epoch=5)
    batch = batch_of(tmp_path, written.data)
    assert encode.retained_batch(batch, batch.records(), delete_horizon_ms=None) == written.data


@pytest.mark.parametrize("codec", ["gzip", "lz4", "zstd"])
def test_compressed_sections_decompress_to_the_records(tmp_path, codec):
    """Other writers frame these codecs their own way, so the bytes differ; the records must not."""
    written = rf.v2(records_with_headers(range(0, 30), tombstone_every=5), codec)
    batch = batch_of(tmp_path, written.data)
    rebuilt = encode.retained_batch(batch, batch.records()[3:], delete_horizon_ms=HORIZON)
    assert encode.retained_batch_size(batch, batch.records()[3:], delete_horizon_ms=HORIZON) == len(rebuilt)
    again = batch_of(tmp_path, rebuilt)
    assert again.codec == batch.codec and again.delete_horizon_ms == HORIZON
    assert [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in again.records()] == \
        [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch.records()[3:]]


def test_uncompressed_size_is_counted_without_building_the_bytes(tmp_path):
    """The arithmetic path agrees with the bytes: records dropped, a horizon stamped (deltas grow)."""
    batch = batch_of(tmp_path, rf.v2(records_with_headers(range(1000, 1300), tombstone_every=3), "none").data)
    records = batch.records()
    for kept, horizon in [(records[::2], None), (records[5:], HORIZON), (records[-1:], HORIZON), (records, HORIZON)]:
        size = encode.retained_batch_size(batch, kept, delete_horizon_ms=horizon)
        assert size == len(encode.retained_batch(batch, kept, delete_horizon_ms=horizon))
    stamped = encode.retained_batch_size(batch, records, delete_horizon_ms=HORIZON)
    assert stamped > batch.size  # one delete.retention.ms between horizon and records: bigger deltas


def test_a_batch_kept_whole_and_not_stamped_is_its_own_size_without_recompressing(tmp_path):
    batch = batch_of(tmp_path, rf.v2(records_with_headers(range(0, 10)), "zstd").data)
    assert encode.retained_batch_size(batch, batch.records(), delete_horizon_ms=None) == batch.size


def test_an_emptied_batch_kept_for_its_producer_is_a_bare_header(tmp_path):
    """DefaultRecordBatch.writeEmptyHeader: 61 bytes, codec none, base timestamp -1, the offset range kept."""
    batch = batch_of(tmp_path, rf.v2(records_with_headers(range(10, 20)), "lz4", producer_id=9, producer_epoch=0,
                                     base_sequence=0).data)
    assert encode.retained_batch_size(batch, [], delete_horizon_ms=None) == 61
    empty = batch_of(tmp_path, encode.retained_batch(batch, [], delete_horizon_ms=None))
    assert (empty.records_count, empty.codec, empty.base_timestamp, empty.last_offset, empty.producer_id) == \
        (0, 0, -1, 19, 9)


def test_records_copied_from_their_bytes_and_encoded_field_by_field_agree(tmp_path):
    """encode_records copies key, value and headers from the decoded bytes; encode_record writes them from
    the fields (a record with no bytes behind it): the same bytes, stamped or not."""
    batch = batch_of(tmp_path, rf.v2(records_with_headers(range(7, 40), tombstone_every=4, null_key_every=5),
                                     "gzip").data)
    records = batch.records()
    for base_ts in (batch.base_timestamp, HORIZON):
        fields = b"".join(encode.encode_record(r.offset - batch.base_offset, r.timestamp - base_ts, r.key, r.value,
                                               r.headers) for r in records)
        assert encode.encode_records(records, batch.base_offset, base_ts) == fields
        assert encode.records_size(records, batch.base_offset, base_ts) == len(fields)


@pytest.mark.parametrize("codec", [encode.NONE, encode.GZIP, encode.SNAPPY, encode.LZ4, encode.ZSTD])
def test_compressed_size_is_the_length_of_the_framed_bytes(codec):
    """``compressed_size`` (lz4 block by block into one buffer, no framed bytes built) against
    ``compress_like_kafka``'s bytes: sections of no, one, several and a part 64 KiB block, compressible,
    incompressible (stored as it is) and mixed blocks."""
    import os
    import random

    rnd = random.Random(codec)
    noise = os.urandom(200_000)
    words = b"customer order invoice shipment " * 8000
    for size in (0, 1, 100, 65_535, 65_536, 65_537, 200_000):
        for data in (noise[:size], words[:size], bytes(rnd.choice((noise, words))[i] for i in range(size))):
            assert encode.compressed_size(codec, data) == len(encode.compress_like_kafka(codec, data)), size
    assert encode.compressed_size(codec, memoryview(words)[:70_000]) == len(encode.compress_like_kafka(codec, words[:70_000]))

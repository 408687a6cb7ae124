"""The reader against a corpus made at test time (tests/recordfixtures.py): magic 0, 1 and 2, every
codec each allows (snappy with xerial framing), LogAppendTime, compressed wrappers, transactions
and their markers, a cleaned batch with gaps, an emptied batch, magics mixed in one file, and
corrupted CRCs. kafka-python's record builders write the bytes; the expected records are what the
builder was given, so every value is compared exactly."""

from __future__ import annotations

import struct

import pytest

from monitor.kafka.record import CrcMismatchError, SegmentReader, UnsupportedCodecError, read_segment
from monitor.kafka.record.codecs import CodecError
from recordfixtures import GALLERY, READER_GAPS, T0, Rec, items, legacy, v2, write


def _read(rec) -> Rec:
    return Rec(rec.offset, rec.timestamp, rec.key, rec.value, tuple(tuple(h) for h in rec.headers))


def _expected_batch(w, position: int) -> tuple:
    return (position, len(w.data), w.magic, w.compression, w.timestamp_type, w.last_offset,
            len(w.records), w.transactional, w.control is not None, w.producer_id)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(raises=(CodecError, UnsupportedCodecError), strict=True, reason=READER_GAPS[n]))
    if n in READER_GAPS else n for n in GALLERY])
def test_reads_exactly_what_the_builder_wrote(record_gallery, name):
    seg = record_gallery[name]
    reader = SegmentReader(seg.path)
    batches = list(reader.batches())
    assert [(b.position, b.size, b.magic, b.compression, b.timestamp_type, b.last_offset, b.records_count,
             b.is_transactional, b.is_control, b.producer_id) for b in batches] == \
        [_expected_batch(w, pos) for w, pos in zip(seg.batches, seg.positions)]
    assert [_read(r) for b in batches for r in b.records()] == seg.records
    assert not reader.faults
    assert sum(b.size for b in batches) == seg.path.stat().st_size


def test_log_append_time_stamps_every_record_with_the_broker_time(record_gallery):
    """Magic 1 (plain messages and a compressed wrapper) and magic 2: the time the broker stamped,
    not the producer's create time, on every record."""
    legacy_recs = read_segment(record_gallery["magic1-log-append-time"].path)
    assert [(r.offset, r.timestamp) for r in legacy_recs] == \
        [(o, T0 + 3_600_000) for o in range(3)] + [(o, T0 + 3_600_005) for o in range(3, 8)]
    assert [r.batch.timestamp_type for r in legacy_recs] == ["log_append"] * 8
    v2_recs = read_segment(record_gallery["magic2-log-append-time"].path)
    assert [(r.offset, r.timestamp) for r in v2_recs] == \
        [(o, T0 + 3_600_000) for o in range(10)] + [(o, T0 + 3_600_001) for o in (10, 11)]
    assert {r.batch.max_timestamp for r in v2_recs} == {T0 + 3_600_000, T0 + 3_600_001}


def test_mixed_magics_in_one_segment(record_gallery):
    recs = read_segment(record_gallery["mixed-magics"].path)
    assert [(r.offset, r.batch.magic, r.batch.compression) for r in recs] == \
        [(o, 0, "none") for o in range(3)] + [(o, 0, "snappy") for o in range(3, 6)] \
        + [(o, 1, "gzip") for o in range(6, 9)] + [(o, 1, "none") for o in (9, 10)] \
        + [(o, 2, "zstd") for o in range(11, 20)] + [(o, 2, "none") for o in range(20, 23)]
    assert [r.timestamp for r in recs[:6]] == [-1] * 6  # magic 0 has no timestamp


def test_transaction_markers_and_cleaned_layouts(record_gallery):
    txn = SegmentReader(record_gallery["magic2-transactions"].path)
    assert [(b.base_offset, b.last_offset, b.is_transactional, b.is_control, b.producer_id, b.producer_epoch,
             b.base_sequence) for b in txn.batches()] == \
        [(0, 4, True, False, 4000, 2, 0), (5, 5, True, True, 4000, 2, -1), (6, 8, True, False, 4000, 2, 5),
         (9, 9, True, True, 4000, 2, -1)]
    assert [(r.offset, r.control_type) for r in read_segment(record_gallery["magic2-transactions"].path) if r.batch.is_control] == \
        [(5, "COMMIT"), (9, "ABORT")]
    cleaned = list(SegmentReader(record_gallery["magic2-cleaned"].path).batches())
    assert [(b.base_offset, b.last_offset, b.next_offset, b.records_count) for b in cleaned] == \
        [(0, 12, 13, 8), (12, 29, 30, 12), (30, 34, 35, 0)]
    assert [r.offset for r in cleaned[0].records()] == [0, 2, 3, 5, 6, 8, 9, 11]
    assert (cleaned[2].producer_id, cleaned[2].base_sequence, cleaned[2].records()) == (77, 30, [])


def test_tombstones_and_null_keys_of_every_magic(record_gallery):
    for name in ("magic1-gzip", "magic2-zstd"):
        seg = record_gallery[name]
        recs = read_segment(seg.path)
        assert [r.offset for r in recs if r.is_tombstone] == [r.offset for r in seg.records if r.value is None]
        assert [r.offset for r in recs if r.key is None] == [r.offset for r in seg.records if r.key is None]
        assert any(r.is_tombstone for r in recs) and any(r.key is None for r in recs), name


@pytest.mark.parametrize("magic", [0, 1])
def test_corrupted_crc_of_a_legacy_message_is_named_with_file_and_position(tmp_path, magic):
    batches = legacy(magic, items(range(0, 3)))
    seg = write(tmp_path / "00000000000000000000.log", batches)
    data = bytearray(seg.path.read_bytes())
    second = seg.positions[1]
    data[second + len(batches[1].data) - 1] ^= 0x01  # the last byte of the second message's value
    seg.path.write_bytes(bytes(data))
    with pytest.raises(CrcMismatchError) as exc:
        read_segment(seg.path)
    assert exc.value.file == str(seg.path) and exc.value.position == second
    assert str(seg.path) in str(exc.value) and f"byte {second}" in str(exc.value)
    reader = SegmentReader(seg.path, skip_corrupt=True)
    assert [r.offset for r in reader.records()] == [0, 2]
    assert [(type(f), f.position) for f in reader.faults] == [(CrcMismatchError, second)]


def test_corrupted_crc_of_a_compressed_v2_batch(tmp_path):
    batches = [v2(items(range(0, 4)), "lz4"), v2(items(range(4, 9)), "zstd"), v2(items(range(9, 12)), "snappy")]
    seg = write(tmp_path / "00000000000000000000.log", batches)
    data = bytearray(seg.path.read_bytes())
    second = seg.positions[1]
    (stored,) = struct.unpack_from(">I", data, second + 17)
    struct.pack_into(">I", data, second + 17, stored ^ 0x80000000)  # the stored CRC-32C itself
    seg.path.write_bytes(bytes(data))
    with pytest.raises(CrcMismatchError) as exc:
        read_segment(seg.path)
    assert exc.value.position == second and f"byte {second}" in str(exc.value)
    reader = SegmentReader(seg.path, skip_corrupt=True)
    assert [r.offset for r in reader.records()] == [0, 1, 2, 3, 9, 10, 11]
    assert reader.batches_skipped == 1


def test_the_generated_corpus_has_the_framings_it_names():
    """Guards the fixtures themselves, on their bytes: Java-style xerial snappy in the wrappers and
    batches, raw snappy where named, and every compressed file really compressed."""
    from recordfixtures import gallery_batches

    xerial = b"\x82SNAPPY\x00"
    g = gallery_batches()
    # a legacy wrapper's value starts after offset, size, crc, magic, attributes, [timestamp], null key, length
    assert [w.data[26:34] for w in g["magic0-snappy"]] == [xerial] * 2
    assert [w.data[34:42] for w in g["magic1-snappy"]] == [xerial] * 2
    assert [w.data[61:69] for w in g["magic2-snappy"]] == [xerial] * 2  # a v2 batch's records follow its 61-byte header
    assert g["magic2-snappy-raw"][0].data[61:69] != xerial
    codec_ids = {"gzip": 1, "snappy": 2, "snappy-raw": 2, "lz4": 3, "zstd": 4}  # Kafka's CompressionType ids
    for name, batches in g.items():
        codec = name.split("-", 1)[1]
        if codec in codec_ids:  # the attributes' low 3 bits: byte 22 of a v2 batch, 17 of a legacy message
            assert [(w.data[22] if w.magic == 2 else w.data[17]) & 0x07 for w in batches] == \
                [codec_ids[codec]] * len(batches), name

"""Bad input the delete horizon (KIP-534) and transaction markers bring: a read fault naming file and
byte position, of its own kind, and the reader goes on with the next batch.

Batches come from kafka-python's builders (tests/recordfixtures.py), then one header field is set by
hand and the CRC recomputed, as a writer that is not Kafka would leave them: a CRC that holds, so only
the new checks can catch them. An empty control batch is Kafka's own doing and must read cleanly.
"""

from __future__ import annotations

import struct
import zlib

import pytest

import recordfixtures as rf
from monitor.kafka.record import ControlRecordError, CorruptBatchError, HorizonError, SegmentReader
from monitor.kafka.record.horizon import TIMESTAMP_AFTER_MAX_MS
from kafka.record.default_records import DefaultRecordBatchBuilder

HOUR = 3_600_000


def restamped(data: bytes, *, attrs: int = 0, base_ts: int | None = None, count: int | None = None) -> bytes:
    """A v2 batch with attribute bits added, its base timestamp or record count set, CRC-32C recomputed."""
    data = bytearray(data)
    if base_ts is not None:
        struct.pack_into(">q", data, rf.V2_FIRST_TS_AT, base_ts)
    if count is not None:
        struct.pack_into(">i", data, 57, count)
    return rf._restamp_v2(data, struct.unpack_from(">q", data, 0)[0], 0, attrs=attrs)


def segment(tmp_path, *pieces: bytes):
    """A segment of a good batch, the piece(s) under test, and a good batch after them."""
    before = rf.v2(rf.items(range(0, 3))).data
    after = rf.v2(rf.items(range(100, 103))).data
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(before + b"".join(pieces) + after)
    return path, len(before)


def one_fault(path, position, kind, error, bodies=True):
    """The fault, with and without skipping: typed, named, and the batches either side still read."""
    reader = SegmentReader(path, skip_corrupt=True)
    offsets = [b.base_offset for b in reader.batches(bodies=bodies)]
    assert offsets == [0, 100]
    [fault] = reader.faults
    assert (type(fault), fault.kind, fault.file, fault.position) == (error, kind, str(path), position)
    assert f"{path}: byte {position}: " in str(fault)
    with pytest.raises(error):
        list(SegmentReader(path).batches(bodies=bodies))
    return fault


def legacy_with_horizon_flag(magic: int) -> bytes:
    [w] = rf.legacy(magic, rf.items([50]))
    data = bytearray(w.data)
    data[rf.LEGACY_ATTRS_AT] |= 0x40
    struct.pack_into(">I", data, rf.LEGACY_CRC_AT, zlib.crc32(bytes(data[16:])))
    return bytes(data)


@pytest.mark.parametrize("magic", [0, 1])
def test_a_legacy_message_with_the_horizon_flag_is_a_read_fault(tmp_path, magic):
    path, pos = segment(tmp_path, legacy_with_horizon_flag(magic))
    fault = one_fault(path, pos, "horizon", HorizonError)
    assert f"magic-{magic} message" in fault.reason and "offset 50" in fault.reason


def test_a_horizon_before_the_batch_records_is_a_read_fault_in_full_and_header_reads(tmp_path):
    w = rf.v2(rf.items(range(10, 14)))
    max_ts = rf.T0 + 13 * 7
    bad = restamped(w.data, attrs=0x40, base_ts=max_ts - TIMESTAMP_AFTER_MAX_MS - 1)
    path, pos = segment(tmp_path, bad)
    fault = one_fault(path, pos, "horizon", HorizonError)
    assert "lies before the batch's records" in fault.reason and "offset 10" in fault.reason
    one_fault(path, pos, "horizon", HorizonError, bodies=False)


@pytest.mark.parametrize("horizon", [rf.T0 + 86_400_000, rf.T0 - HOUR // 2, rf.T0 + 13 * 7])
def test_a_horizon_a_clean_could_have_set_reads_cleanly(tmp_path, horizon):
    """A day past the records, or up to the CreateTime skew Kafka accepts before them."""
    path, _ = segment(tmp_path, restamped(rf.v2(rf.items(range(10, 14))).data, attrs=0x40, base_ts=horizon))
    reader = SegmentReader(path, skip_corrupt=True)
    assert [b.delete_horizon_ms for b in reader.batches()] == [None, horizon, None] and not reader.faults


def control_batch(key: bytes | None, offset: int = 20) -> bytes:
    b = DefaultRecordBatchBuilder(2, 0, True, 7, 0, -1, 1 << 30)
    b.append(0, rf.T0, key, struct.pack(">hi", 0, 0), [])
    return restamped(rf._restamp_v2(bytearray(b.build()), offset, 0), attrs=rf.CONTROL_BIT)


@pytest.mark.parametrize("key, said", [(None, "a null key"), (b"\x00\x01", "a key of 2 bytes"),
                                       (struct.pack(">hh", -1, 1), "version -1 is negative")])
def test_a_control_record_kafka_cannot_read_is_a_read_fault(tmp_path, key, said):
    """ControlRecordType.parseTypeId: at least 4 bytes, a version >= 0; also in the header walk that
    reads control bodies (what the summary and the cleaner model use)."""
    path, pos = segment(tmp_path, control_batch(key))
    fault = one_fault(path, pos, "control", ControlRecordError)
    assert said in fault.reason and "control batch at offset 20" in fault.reason
    one_fault(path, pos, "control", ControlRecordError, bodies="control")


def two_record_control_batch() -> bytes:
    b = DefaultRecordBatchBuilder(2, 0, True, 7, 0, -1, 1 << 30)
    for i in range(2):
        b.append(i, rf.T0, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 0), [])
    return restamped(rf._restamp_v2(bytearray(b.build()), 20, 0), attrs=rf.CONTROL_BIT)


@pytest.mark.parametrize("batch, claims", [(lambda: restamped(control_batch(struct.pack(">hh", 0, 1)), count=2), 2),
                                           (lambda: restamped(two_record_control_batch(), count=1), 1)])
def test_a_control_batch_whose_records_do_not_decode_is_a_read_fault(tmp_path, batch, claims):
    """It claims two records and holds one, or one and holds two."""
    path, pos = segment(tmp_path, batch())
    fault = one_fault(path, pos, "corrupt", CorruptBatchError, bodies="control")
    assert f"claiming {claims} record(s): its records do not decode" in fault.reason


def test_an_empty_control_batch_is_kafkas_own_and_reads_cleanly(tmp_path):
    """What a clean leaves of a producer's last marker (RETAIN_EMPTY): no record, no fault."""
    empty = rf.empty_v2(30, 30, 7, 0, -1, rf.T0).data
    path, _ = segment(tmp_path, restamped(empty, attrs=rf.CONTROL_BIT | rf.TRANSACTIONAL_BIT))
    for bodies in (True, "control", False):
        reader = SegmentReader(path, skip_corrupt=True)
        got = [(b.base_offset, b.is_control, b.records_count) for b in reader.batches(bodies=bodies)]
        assert got == [(0, False, 3), (30, True, 0), (100, False, 3)] and not reader.faults
    assert [r.offset for r in SegmentReader(path).records()] == [0, 1, 2, 100, 101, 102]


def test_a_good_marker_reads_cleanly(tmp_path):
    path, _ = segment(tmp_path, rf.control(40, "COMMIT", 7, 0, rf.T0).data)
    reader = SegmentReader(path, skip_corrupt=True)
    assert [r.control_type for r in reader.records()].count("COMMIT") == 1 and not reader.faults

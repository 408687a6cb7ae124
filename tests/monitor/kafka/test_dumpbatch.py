"""Batches and records assembled from dump lines (monitor.kafka.dumpbatch), one line at a time."""

from monitor.kafka.dumpbatch import batch_from_line, batch_from_record, belongs, record_from_fields
from monitor.kafka.dumplines import record_fields

BATCH_4X = ("baseOffset: 10 lastOffset: 11 count: 2 baseSequence: 0 lastSequence: 1 producerId: 7 "
            "producerEpoch: 0 partitionLeaderEpoch: 3 isTransactional: true isControl: false "
            "deleteHorizonMs: OptionalLong.empty position: 4096 CreateTime: 1700000000000 size: 80 magic: 2 "
            "compresscodec: gzip crc: 123 isvalid: true")


def test_a_batch_line_gives_the_v2_header():
    b = batch_from_line("x.log", 5, BATCH_4X)
    assert (b.base_offset, b.last_offset, b.records_count, b.position, b.size) == (10, 11, 2, 4096, 80)
    assert (b.producer_id, b.is_transactional, b.is_control, b.compression) == (7, True, False, "gzip")
    assert (b.timestamp_type, b.max_timestamp, b.delete_horizon_ms, b.from_records) == ("create", 1700000000000,
                                                                                        None, False)
    assert b.next_offset == 12 and b.last_offset_delta == 1


def test_a_legacy_batch_line():
    b = batch_from_line("x.log", 1, "offset: 5 position: 0 CreateTime: 1 isvalid: true size: 70 magic: 1 "
                                    "compresscodec: NONE crc: 9")
    assert (b.base_offset, b.last_offset, b.records_count, b.magic, b.compression, b.is_control) == (
        5, 5, 1, 1, "none", False)


def test_a_record_whose_payload_continues_on_later_lines():
    b = batch_from_line("x.log", 1, BATCH_4X)
    f, content = record_fields("offset: 10 CreateTime: 1 keySize: 1 valueSize: 9 sequence: 0 headerKeys: [h] "
                               "key: k payload: abc")
    rec, pending = record_from_fields(b, f, content)
    assert (rec.offset, rec.key, rec.key_size, rec.sequence) == (10, b"k", 1, 0)
    assert pending == 6  # valueSize 9, 3 bytes on this line


def test_the_key_is_cut_by_its_printed_size_when_it_holds_the_marker():
    b = batch_from_line("x.log", 1, BATCH_4X)
    f, content = record_fields("offset: 10 CreateTime: 1 keySize: 12 valueSize: 1 sequence: 0 headerKeys: [] "
                               "key: a payload: b payload: c")
    rec, _ = record_from_fields(b, f, content)
    assert rec.key == b"a payload: b" and rec.key_size == 12


def test_records_without_a_batch_line_share_one_made_of_what_they_say():
    f, content = record_fields("offset: 3 CreateTime: 1 keySize: 1 valueSize: 1 sequence: 0 headerKeys: [] "
                               "key: a payload: b")
    b = batch_from_record("x.log", 9, f, content)
    assert b.from_records and b.magic == 2 and b.size is None and b.base_offset is None and b.is_control is False
    g, content2 = record_fields("offset: 4 CreateTime: 1 keySize: 1 valueSize: 1 sequence: 1 headerKeys: [] "
                                "key: c payload: d")
    assert belongs(b, "x.log", g, content2)
    assert not belongs(b, "y.log", g, content2)
    marker, ctl = record_fields("offset: 5 CreateTime: 1 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
                                "endTxnMarker: COMMIT coordinatorEpoch: 0")
    assert not belongs(b, "x.log", marker, ctl)  # a control record is another batch

"""The dump's line grammar (monitor.kafka.dumplines) on single lines: what kind each is, its fields, its values."""

import pytest

from monitor.kafka.dumplines import (bool_field, classify, clean_line, codec_name, horizon_field, int_field,
                                     is_dump_line, looks_structural, record_fields, timestamp_label)

BATCH_4X = ("baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 "
            "producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false "
            "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000000 size: 80 magic: 2 "
            "compresscodec: none crc: 123 isvalid: true")
RECORD_4X = ("| offset: 0 CreateTime: 1700000000000 keySize: 1 valueSize: 2 sequence: -1 headerKeys: [a,b] "
             "key: k payload: vv")


@pytest.mark.parametrize("line, kind", [
    ("Dumping 00000000000000000000.log", "section"),
    ("Log starting offset: 0", "start"),
    ("Starting offset: 0", "start"),
    (BATCH_4X, "batch"),
    ("offset: 5 position: 0 CreateTime: 1 isvalid: true size: 70 magic: 1 compresscodec: NONE crc: 9", "legacy_batch"),
    (RECORD_4X, "record"),
    ("offset: 3 position: 0 CreateTime: 1 isvalid: true keysize: 1 valuesize: 1 magic: 2 key: a", "record"),
    ("key: a payload: b", "bare_record"),
    ("Found 3 invalid bytes at the end of 00000000000000000000.log", "invalid_bytes"),
    ("SLF4J: Class path contains multiple SLF4J bindings.", "set_aside"),
    ("12 is followed by 14", "set_aside"),
    ("hello world", "other"),
])
def test_each_line_kind(line, kind):
    assert classify(line) == kind


@pytest.mark.parametrize("raw, expected", [
    ("", ("blank", "")),
    ("   ", ("blank", "")),
    ("$ bin/kafka-dump-log.sh --files x.log", ("prompt", "$ bin/kafka-dump-log.sh --files x.log")),
    ("# what the broker had", ("comment", "# what the broker had")),
    ("```text", ("comment", "```text")),
    ("   " + RECORD_4X, ("text", RECORD_4X)),
    ("> " + RECORD_4X, ("text", RECORD_4X)),
    ("dump.txt:3:" + RECORD_4X, ("text", RECORD_4X)),
])
def test_clean_line_removes_what_pasting_adds(raw, expected):
    assert clean_line(raw) == expected


def test_record_fields_cut_metadata_from_content():
    f, content = record_fields(RECORD_4X[2:])
    assert f == {"offset": "0", "CreateTime": "1700000000000", "keySize": "1", "valueSize": "2", "sequence": "-1",
                 "headerKeys": "[a,b]"}
    assert content == "key: k payload: vv"
    # the 2.x spelling (not the fast pattern): fields by name, in any order
    f, content = record_fields("offset: 3 LogAppendTime: 5 keysize: 1 valuesize: 1 key: a payload: b")
    assert f == {"offset": "3", "LogAppendTime": "5", "keysize": "1", "valuesize": "1"}
    assert content == "key: a payload: b"


def test_field_values_as_kafka_prints_them():
    assert int_field("123}") == 123 and int_field("null") is None and int_field(None) is None
    assert bool_field("True") is True and bool_field("false") is False and bool_field(None) is None
    assert horizon_field("OptionalLong.empty") is None and horizon_field("OptionalLong[42]") == 42
    assert codec_name("GZIP") == "gzip" and codec_name("producer") == "none" and codec_name(None) is None
    assert timestamp_label({"LogAppendTime": "1"}) == "LogAppendTime" and timestamp_label({}) is None


def test_dump_lines_and_structure():
    assert is_dump_line(BATCH_4X) and is_dump_line("  " + RECORD_4X)
    assert not is_dump_line("key: a payload: b") and not is_dump_line("$ ls")
    assert looks_structural(RECORD_4X) and looks_structural("Dumping x.log")
    assert not looks_structural("more of a payload")

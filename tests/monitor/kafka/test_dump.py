"""The dump parser on the line shapes of Kafka 2.x, 3.x and 4.x, and on lines it does not know."""

from __future__ import annotations

import pytest

from monitor.kafka.dump import DumpFormatError, parse_dump_text

DUMP_4X = """\
Dumping /data/kafka/orders-3/00000000000000001200.log
Log starting offset: 1200
baseOffset: 1200 lastOffset: 1204 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 4 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1763805600001 size: 86 magic: 2 compresscodec: none crc: 2807553961 isvalid: true
| offset: 1200 CreateTime: 1763805600000 keySize: 3 valueSize: 5 sequence: -1 headerKeys: [] key: k17 payload: hello
| offset: 1203 CreateTime: 1763805600001 keySize: 3 valueSize: -1 sequence: -1 headerKeys: [h1,h2] key: k18
baseOffset: 1205 lastOffset: 1205 count: 1 baseSequence: -1 lastSequence: -1 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 4 isTransactional: true isControl: true deleteHorizonMs: OptionalLong[1763892000000] position: 86 CreateTime: 1763805600002 size: 78 magic: 2 compresscodec: none crc: 1188329551 isvalid: true
| offset: 1205 CreateTime: 1763805600002 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 0
"""

DUMP_2X = """\
Dumping 00000000000000000000.log
Starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 1563805600001 size: 80 magic: 2 compresscodec: GZIP crc: 1 isvalid: true
| offset: 0 CreateTime: 1563805600000 keysize: 1 valuesize: 3 sequence: -1 headerKeys: [] key: a payload: one
| offset: 1 CreateTime: 1563805600001 keysize: -1 valuesize: 3 sequence: -1 headerKeys: [] payload: two
offset: 2 position: 80 CreateTime: 1563805600005 size: 39 magic: 1 compresscodec: NONE crc: 99 isvalid: true
| offset: 2 CreateTime: 1563805600005 keysize: 1 valuesize: 4 isValid: true crc: 99 key: b payload: four
"""


def test_4x_shape():
    batches, parser = parse_dump_text(DUMP_4X)
    assert not parser.problems
    assert [b.base_offset for b in batches] == [1200, 1205]
    b0, b1 = batches
    assert b0.file == "/data/kafka/orders-3/00000000000000001200.log" and b0.size == 86 and b0.crc == 2807553961
    assert b0.delete_horizon_ms is None and b1.delete_horizon_ms == 1763892000000
    r = b0.records()
    assert [x.offset for x in r] == [1200, 1203]
    assert r[0].key == b"k17" and r[0].value == b"hello" and r[0].key_size == 3 and r[0].value_size == 5
    assert r[1].is_tombstone and r[1].header_keys == ["h1", "h2"]
    assert b1.is_control and b1.records()[0].control_type == "COMMIT" and not b1.records()[0].is_tombstone


def test_2x_shape_and_legacy_batches():
    batches, parser = parse_dump_text(DUMP_2X)
    assert not parser.problems, parser.problems
    assert [b.compression for b in batches] == ["gzip", "none"]
    assert batches[0].records()[1].key is None and batches[0].records()[1].key_size == -1
    legacy = batches[1]
    assert legacy.magic == 1 and legacy.base_offset == legacy.last_offset == 2 and legacy.position == 80
    rec = legacy.records()[0]
    assert rec.key == b"b" and rec.value == b"four" and rec.value_size == 4


def test_payload_with_newlines_and_markers_in_text():
    text = ("baseOffset: 0 lastOffset: 0 count: 1 position: 0 CreateTime: 5 size: 90 magic: 2 "
            "compresscodec: none crc: 1 isvalid: true\n"
            "| offset: 0 CreateTime: 5 keySize: 12 valueSize: 28 sequence: -1 headerKeys: [] "
            "key: a payload: b payload: c payload: line one\nline two\n")
    batches, parser = parse_dump_text(text)
    assert not parser.problems
    rec = batches[0].records()[0]
    assert rec.key == b"a payload: b" and rec.value == b"c payload: line one\nline two"


def test_a_key_holding_line_breaks_is_joined_back_by_its_size():
    """kafka-dump-log prints a key raw: its line breaks cut the record line (seen on Kafka 4.3's tool,
    tests/monitor/kafka/record/test_reader_vs_kafka.py); a record with no value ends with its key."""
    text = ("baseOffset: 0 lastOffset: 2 count: 3 position: 0 CreateTime: 5 size: 90 magic: 2 "
            "compresscodec: none crc: 1 isvalid: true\n"
            "| offset: 0 CreateTime: 5 keySize: 9 valueSize: 2 sequence: -1 headerKeys: [] key: two\n"
            "lines payload: v0\n"
            "| offset: 1 CreateTime: 5 keySize: 5 valueSize: -1 sequence: -1 headerKeys: [] key: tail\n"
            "\n"
            "| offset: 2 CreateTime: 5 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [] key: k payload: v\n")
    batches, parser = parse_dump_text(text)
    assert not parser.problems, parser.problems
    assert [(r.key, r.value) for r in batches[0].records()] == [(b"two\nlines", b"v0"), (b"tail\n", None),
                                                              (b"k", b"v")]


def test_a_key_shorter_than_its_size_never_takes_the_next_record_line():
    """A key text shorter than keySize with no line after it (a pasted excerpt cut there): the next
    record line is a record of its own, the short key kept with the size the dump printed."""
    text = ("| offset: 0 CreateTime: 5 keySize: 9 valueSize: 2 sequence: -1 headerKeys: [] key: two\n"
            "| offset: 1 CreateTime: 5 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [] key: k payload: v\n")
    batches, parser = parse_dump_text(text)
    recs = [r for b in batches for r in b.records()]
    assert [(r.offset, r.key, r.key_size) for r in recs] == [(0, b"two", 9), (1, b"k", 1)] and not parser.problems


def test_unknown_lines_are_reported_with_line_numbers():
    text = DUMP_4X.replace("| offset: 1203", "something odd\n| offset: 1203")
    batches, parser = parse_dump_text(text)
    assert [(p.line, p.reason) for p in parser.problems] == [(5, "unrecognised line")]
    assert sum(len(b.records()) for b in batches) == 3
    with pytest.raises(DumpFormatError, match="line 5"):
        parse_dump_text(text, "x.txt", strict=True)


def test_stderr_lines_and_index_dumps_are_set_aside():
    text = DUMP_4X + ("Found 12 invalid bytes at the end of 00000000000000001200.log\n"
                      "Non-consecutive offsets in /data/kafka/orders-3/00000000000000001200.log\n"
                      "  1200 is followed by 1203\n"
                      "offset: 1300 position: 4096\n"
                      "timestamp: 1763805600001 offset: 1300\n")
    batches, parser = parse_dump_text(text)
    assert not parser.problems and parser.set_aside == 5
    assert parser.invalid_bytes == {"00000000000000001200.log": 12}


def test_a_record_line_before_any_batch_line_gets_a_batch_of_unknowns():
    batches, parser = parse_dump_text("| offset: 1 CreateTime: 1 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [] key: a payload: b\n")
    assert not parser.problems and parser.batchless_records == 1
    (b,) = batches
    assert b.from_records and b.magic == 2 and b.size is None and b.base_offset is None and b.is_control is False
    assert b.records()[0].key == b"a"


def test_skip_record_metadata_shape():
    text = DUMP_4X.splitlines()[2] + "\n| key: k17 payload: hello\n"
    batches, parser = parse_dump_text(text)
    assert not parser.problems and batches[0].records()[0].value == b"hello"


LEGACY_BATCH = "offset: 2 position: 80 CreateTime: 5 size: 39 magic: 1 compresscodec: NONE crc: 99 isvalid: true"


@pytest.mark.parametrize("record", [
    # 2.2.0 .. 2.7.0 DumpLogSegments.scala: print(s" crc: ${record.checksumOrNull} isvalid: ${record.isValid}")
    "| offset: 2 CreateTime: 5 keysize: 1 valuesize: 4 crc: 99 isvalid: true key: b payload: four",
    # 3.0.0 .. 3.8.0: print(s" isValid: ${r.isValid} crc: ${r.checksum}}") -- the brace is Kafka's
    "| offset: 2 CreateTime: 5 keySize: 1 valueSize: 4 isValid: true crc: 99} key: b payload: four",
    # 4.x DumpLogSegments.java: " isValid: %s crc: %s" (no brace)
    "| offset: 2 CreateTime: 5 keySize: 1 valueSize: 4 isValid: true crc: 99 key: b payload: four",
])
def test_legacy_record_lines_of_each_version(record):
    batches, parser = parse_dump_text(LEGACY_BATCH + "\n" + record + "\n")
    assert not parser.problems
    (rec,) = batches[0].records()
    assert (rec.offset, rec.key, rec.value, rec.value_size, batches[0].magic) == (2, b"b", b"four", 4, 1)


def test_0_11_deep_line_of_a_legacy_batch():
    """0.11.0.0 DumpLogSegments.scala 381-391: magic < 2 prints `` crc: ..`` instead of producer fields."""
    line = ("offset: 3 position: 200 CreateTime: 5 isvalid: true keysize: 1 valuesize: 2 magic: 1 "
            "compresscodec: SNAPPY crc: 123 key: a payload: bb")
    (b,), parser = parse_dump_text(line + "\n")
    assert not parser.problems and b.from_records
    assert (b.position, b.magic, b.compression, b.size) == (200, 1, "snappy", None)
    assert b.records()[0].value == b"bb"


def test_control_record_texts():
    batch = DUMP_4X.splitlines()[5]  # the control batch line
    text = (batch + "\n| offset: 1205 CreateTime: 5 keySize: 4 valueSize: 10 sequence: -1 headerKeys: [] "
            "controlType: LEADER_CHANGE(2)\n")
    (b,), parser = parse_dump_text(text)
    assert not parser.problems and b.is_control and b.records()[0].control_text == "controlType: LEADER_CHANGE(2)"
    grepped = DUMP_4X.splitlines()[6] + "\n"  # a marker without its batch line
    (b,), parser = parse_dump_text(grepped)
    assert b.from_records and b.is_control and b.is_transactional
    assert b.records()[0].control_type == "COMMIT" and not b.records()[0].is_tombstone


@pytest.mark.parametrize("prompt", [
    "$ bin/kafka-dump-log.sh --files 00000000000000001200.log --print-data-log",
    "[ops@broker-2 kafka_2.13-3.7.0]$ bin/kafka-dump-log.sh --files 00000000000000001200.log \\",
    "> --print-data-log",
    "bash-5.1# kafka-dump-log --files 00000000000000001200.log --print-data-log",
    "(venv) ops@laptop:~/tickets$ cat dump.txt",
    "root@broker-2:/opt/kafka# bin/kafka-dump-log.sh --files x.log --print-data-log | grep offset",
    "% kafka-dump-log --files x.log",
    "#comment without a space",
    "ops@mac ~ % kafka-dump-log --files x.log --print-data-log",
    "```text",
])
def test_prompt_and_comment_lines_are_skipped(prompt):
    batches, parser = parse_dump_text(prompt + "\n" + DUMP_4X + prompt + "\n")
    assert not parser.problems and parser.skipped_lines == 2
    assert [r.offset for b in batches for r in b.records()] == [1200, 1203, 1205]


def test_a_payload_line_that_looks_like_a_prompt_stays_payload():
    text = ("baseOffset: 0 lastOffset: 0 count: 1 position: 0 CreateTime: 5 size: 90 magic: 2 "
            "compresscodec: none crc: 1 isvalid: true\n"
            "| offset: 0 CreateTime: 5 keySize: 1 valueSize: 15 sequence: -1 headerKeys: [] key: a payload: run:\n"
            "$ ls -l /tmp\n")
    (b,), parser = parse_dump_text(text)
    assert not parser.problems and b.records()[0].value == b"run:\n$ ls -l /tmp"


def test_an_e_mail_quoted_dump_keeps_its_lines():
    quoted = "".join(f"> {line}\n" for line in DUMP_4X.splitlines())
    quoted = "> > $ bin/kafka-dump-log.sh --files x.log --print-data-log\n" + quoted
    batches, parser = parse_dump_text(quoted)
    assert not parser.problems and parser.skipped_lines == 1
    assert [r.offset for b in batches for r in b.records()] == [1200, 1203, 1205]


def test_grep_prefixes_are_removed():
    lines = DUMP_4X.splitlines()
    text = "\n".join([f"dump.txt:3:{lines[2]}", f"4:{lines[3]}", f"dump.txt:{lines[4]}", f"dump.txt-5-{lines[4]}"])
    batches, parser = parse_dump_text(text + "\n")
    assert [p.line for p in parser.problems] == [4]  # grep -C's "file-N-" context prefix is not taken: reported
    assert [r.offset for b in batches for r in b.records()] == [1200, 1203]


def test_the_jvms_stderr_pasted_with_the_dump_is_set_aside():
    noise = ('SLF4J: Failed to load class "org.slf4j.impl.StaticLoggerBinder".\n'
             "SLF4J: Defaulting to no-operation (NOP) logger implementation\n"
             "log4j:WARN No appenders could be found for logger (kafka.utils.Log4jControllerRegistration$).\n"
             "OpenJDK 64-Bit Server VM warning: Option UseConcMarkSweepGC was deprecated in version 9.0\n"
             "Picked up JAVA_TOOL_OPTIONS: -Dfile.encoding=UTF-8\n")
    batches, parser = parse_dump_text(noise + DUMP_4X)
    assert not parser.problems and parser.set_aside == 5
    assert sum(len(b.records()) for b in batches) == 3

"""Text against segment by content: the first bytes of a pasted dump are a prompt, a comment,
indentation or a grepped record line; a segment's are an offset. A file that is neither says so.

The segment bytes come from kafka-python's builders (tests/recordfixtures.py), apart from this
project's reader."""

from __future__ import annotations

import os
import struct

import pytest

from monitor.kafka.sniff import NOT_KAFKA, SNIFF_BYTES, looks_like_segment, sniff
from recordfixtures import three_v2_batches

RECORD = "| offset: 1200 CreateTime: 1763805600000 keySize: 3 valueSize: 5 sequence: -1 headerKeys: [] key: k17 payload: hello\n"
BATCH = ("baseOffset: 1200 lastOffset: 1204 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 "
         "producerEpoch: -1 partitionLeaderEpoch: 4 isTransactional: false isControl: false deleteHorizonMs: "
         "OptionalLong.empty position: 0 CreateTime: 1763805600001 size: 86 magic: 2 compresscodec: none crc: 1 "
         "isvalid: true\n")


@pytest.mark.parametrize("text", [
    "Dumping 00000000000000001200.log\nLog starting offset: 1200\n" + BATCH + RECORD,
    "$ bin/kafka-dump-log.sh --files 00000000000000001200.log --print-data-log\nDumping x.log\n" + BATCH,
    "ops@broker-2:~/kafka$ bin/kafka-dump-log.sh --files x.log --print-data-log\n" + BATCH,
    "# pasted from the ticket\n" + BATCH + RECORD,
    "    " + BATCH + "    " + RECORD,
    RECORD * 3,  # grep '| offset:'
    "Starting offset: 0\noffset: 0 position: 0 CreateTime: 1 isvalid: true keysize: 1 valuesize: 1 magic: 2 "
    "compresscodec: NONE producerId: -1 sequence: -1 isTransactional: false headerKeys: [] key: a payload: b\n",
    "Dumping 00000000000000000000.index\noffset: 12 position: 4096\n",
])
def test_dump_texts_are_text_whatever_their_first_bytes(text):
    assert sniff(text.encode(), "pasted.txt") == "dump"
    assert not looks_like_segment(text.encode())


def test_a_segment_by_its_first_batch_header(tmp_path):
    seg = tmp_path / "00000000000000000000.log"
    three_v2_batches(seg)
    data = seg.read_bytes()
    assert sniff(data[:SNIFF_BYTES], "renamed.bin") == "segment"
    # a later batch's damage is the reader's to report, not the sniffer's
    assert sniff(data[:17], "x") == "segment"
    assert sniff(b"", "00000000000000000000.log") == "segment"  # a freshly rolled segment


@pytest.mark.parametrize("head, name", [
    (b"hello, this is a README\nnothing Kafka here\n", "notes.txt"),
    (b"[2026-11-23 07:00:00,000] INFO [LogCleaner] Starting (kafka.log.LogCleaner)\n", "server.log"),
    (b"{\"offset\": 3}\n", "records.json"),
    (b"key: orders\npayload: none\n", "settings.yaml"),
    (b"\x7fELF\x02\x01\x01" + b"\x00" * 60, "a.out"),
    (b"PK\x03\x04" + bytes(range(3, 200)), "jar.zip"),
])
def test_neither(head, name):
    assert sniff(head, name) is None


def test_a_binary_log_whose_first_header_is_damaged_stays_a_segment():
    """For the reader to report the corruption with its byte position (``unknown magic byte``)."""
    head = struct.pack(">qiib", 0, 100, 0, 9) + os.urandom(100)
    assert not looks_like_segment(head)
    assert sniff(head, "00000000000000000000.log") == "segment"
    assert sniff(head, "x.bin") is None


def test_a_multibyte_character_cut_by_the_sample_is_still_text():
    text = ("é" * (SNIFF_BYTES // 2) + "\n").encode()
    head = (RECORD.encode() + text)[:SNIFF_BYTES]
    assert len(head) == SNIFF_BYTES and sniff(head, "x.txt") == "dump"


def test_a_dump_of_binary_records_is_still_a_dump():
    """kafka-dump-log prints keys and payloads raw: a dump of Avro or non-UTF-8 keys holds bytes that
    are not UTF-8, and NULs, and is still told by its lines."""
    head = (b"Dumping 00000000000000000000.log\n" + RECORD.encode().replace(b"payload:", b"key: \xff\x00\x9c payload:")
            + b"\n")
    assert sniff(head, "dump.txt") == "dump" and sniff(head, "x.log") == "dump"


def test_a_text_log_that_is_no_dump_is_neither():
    """``server.log`` given by mistake is not taken for a segment."""
    assert sniff(b"[2026-11-23 07:00:00,000] INFO Kafka version: 4.3.0\n", "server.log") is None


def test_the_message():
    assert NOT_KAFKA == "this is not a Kafka segment or kafka-dump-log output"

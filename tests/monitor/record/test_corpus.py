"""The reader against record bytes written by real brokers (magic 0, 1, 2; gzip, snappy)."""

from __future__ import annotations

import json

import pytest

from monitor.record import CrcMismatchError, SegmentReader, read_segment

KAFKA_GO_VALUES = {"a": "alpha", "b": "beta", "c": "gamma", "d": "delta", "e": "epsilon", "f": "zeta",
                   "g": "eta", "h": "theta"}
KAFKA_GO = {  # file stem -> key sequence, from kafka-go's message_test.go (see SOURCE.md)
    "v2b-v1__test-feisty-0": "abab",
    "v2bc-v1c__test-karmic-0": "abab",
    "v2bc-v1__test-hardy-0": "abcd",
    "v2bc-v1-v1c__test-hardy-0": "abcdef",
    "v1-v1__test-edgy-0": "abcd",
    "v1c-v1c__test-gutsy-0": "abcd",
    "v1c-v1-v1c__test-breezy-0": "abcdef",
    "v2-v2__test-lucid-0": "abcd",
    "v2c-v2c__test-oneiric-0": "abcd",
    "v2c-v2-v2c__test-natty-0": "abcdef",
    "v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc__test-88-0": "ababcdcdefefghghghgh",
}


@pytest.mark.parametrize("stem", sorted(KAFKA_GO))
def test_kafka_go_fixtures_keys_values_and_offsets(corpus, stem):
    recs = read_segment(corpus / "kafka-go-fetch-fixtures" / f"{stem}.records.bin")
    keys = "".join(r.key.decode() for r in recs)
    expected = "".join(KAFKA_GO_VALUES[c] for c in KAFKA_GO[stem])
    assert keys == expected
    assert [r.offset for r in recs] == list(range(len(recs)))
    for r in recs:
        body = json.loads(r.value)
        assert body["count"] >= 0 and set(body["filler"]) <= set("abcdefgh")
    magics = {r.batch.magic for r in recs}
    name = stem.split("__")[0]
    assert magics == {int(tok[1]) for tok in name.split("-")}
    if "c" in name.replace("v1", "").replace("v2", "").replace("b", ""):
        assert "gzip" in {r.batch.compression for r in recs}


def test_kafka_rust_legacy_magic0_codecs_agree(corpus):
    d = corpus / "kafka-rust-fetch-0.8-0.9"
    plain = read_segment(d / "fetch1.mytopic.1p.nocompression.kafka.0821__my-topic-0.messageset.bin")
    assert len(plain) == 42 and {r.batch.magic for r in plain} == {0}
    for codec in ("gzip.kafka.0821", "snappy.kafka.0821", "snappy.kafka.0822"):
        recs = read_segment(d / f"fetch1.mytopic.1p.{codec}__my-topic-0.messageset.bin")
        assert [r.value for r in recs] == [r.value for r in plain]
        assert [r.offset for r in recs] == [r.offset for r in plain]
        assert {r.batch.compression for r in recs} == {codec.split(".")[0]}


def test_corrupted_crc_is_named_with_file_and_position(corpus):
    path = corpus / "kafka-rust-fetch-0.8-0.9" / "fetch2.mytopic.nocompression.invalid_crc.kafka.0900__my-topic-0.messageset.bin"
    with pytest.raises(CrcMismatchError) as exc:
        read_segment(path)
    assert exc.value.file == str(path) and exc.value.position == 0
    assert str(path) in str(exc.value) and "byte 0" in str(exc.value)


def test_kafkajs_mixed_formats_and_snappy(corpus):
    d = corpus / "kafkajs-fetch-fixtures"
    mixed = read_segment(d / "v4_response_mixed_formats__test-mixed-message-formats-0.records.bin")
    assert len(mixed) == 2425
    assert sum(r.batch.magic == 1 for r in mixed) == 1611
    assert [r.offset for r in mixed] == sorted(r.offset for r in mixed)
    snappy = read_segment(d / "v4_response_snappy__topic-test-3.records.bin")
    assert snappy and {r.batch.compression for r in snappy} == {"snappy"}
    assert all(r.key.startswith(b"key-") for r in snappy)


def test_log_append_time_batch(corpus):
    recs = read_segment(corpus / "kafkajs-fetch-fixtures" / "v0_recordbatch.bin")
    b = recs[0].batch
    assert b.timestamp_type == "log_append"
    assert all(r.timestamp == b.max_timestamp for r in recs)


def test_kraft_metadata_logs_read_without_fault(corpus):
    for folder in ("kafka-gleam", "codecrafters-kafka-go"):
        reader = SegmentReader(corpus / folder / "00000000000000000000.log")
        recs = list(reader.records())
        assert recs and not reader.faults
        assert all(r.batch.magic == 2 for r in recs)

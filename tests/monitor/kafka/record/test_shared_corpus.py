"""Optional: the reader against record bytes other projects captured from real brokers
(``../shared/corpus/segments``, see its README.md and each folder's SOURCE.md). That folder is never
part of this repository; where it is absent (a plain clone) this module is skipped with the reason,
and the generated corpus (test_corpus.py) covers the same formats. The expected values are what
the sources publish: kafka-go's message_test.go, kafka-rust's and kafkajs' fixture descriptions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import monitor

# The one place the suite knows of ../shared: other projects' record bytes beside the checkout, never in it
# (the checkout's parent: found from the package, wherever this test file sits).
SHARED_CORPUS = Path(monitor.__file__).resolve().parents[2] / "shared" / "corpus" / "segments"
if not SHARED_CORPUS.is_dir():
    pytest.skip(f"optional check over the shared record corpus: {SHARED_CORPUS} is absent (a plain clone has no "
                f"../shared); every other record test uses segments made at test time", allow_module_level=True)

from dumpcompare import compare, dump, inspect_jsonl  # noqa: E402
from monitor.kafka.record import CrcMismatchError, SegmentReader, read_segment  # noqa: E402
from monitor.kafka.record.codecs import XERIAL_MAGIC  # noqa: E402


@pytest.fixture(scope="module")
def corpus() -> Path:
    return SHARED_CORPUS


# kafka-go's message_test.go (SOURCE.md): letter -> key; the value is {"count":0,"filler":<letter x 10>}
KAFKA_GO_KEYS = {"a": "alpha", "b": "beta", "c": "gamma", "d": "delta", "e": "epsilon", "f": "zeta",
                 "g": "eta", "h": "theta"}
KAFKA_GO = {  # file stem -> message sequence; each name token (v<magic>[b][c]) holds two messages
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
def test_kafka_go_fixtures_keys_values_offsets_magics_and_codecs(corpus, stem):
    recs = read_segment(corpus / "kafka-go-fetch-fixtures" / f"{stem}.records.bin")
    seq = KAFKA_GO[stem]
    assert [(r.key, r.value) for r in recs] == \
        [(KAFKA_GO_KEYS[c].encode(), json.dumps({"count": 0, "filler": c * 10}, separators=(",", ":")).encode())
         for c in seq]
    assert [r.offset for r in recs] == list(range(len(seq)))
    tokens = stem.split("__")[0].split("-")
    assert [r.batch.magic for r in recs] == [int(tok[1]) for tok in tokens for _ in range(2)]
    if "b-" not in stem:  # the long file's name does not spell its codecs token by token (dump-log checks them)
        assert [r.batch.compression for r in recs] == \
            ["gzip" if tok.endswith("c") else "none" for tok in tokens for _ in range(2)]


def test_kafka_rust_magic0_codecs_hold_the_same_messages_xerial_snappy(corpus):
    d = corpus / "kafka-rust-fetch-0.8-0.9"
    plain = read_segment(d / "fetch1.mytopic.1p.nocompression.kafka.0821__my-topic-0.messageset.bin")
    assert len(plain) == 42 and [r.batch.magic for r in plain] == [0] * 42
    assert [r.timestamp for r in plain] == [-1] * 42
    for codec in ("gzip.kafka.0821", "snappy.kafka.0821", "snappy.kafka.0822"):
        recs = read_segment(d / f"fetch1.mytopic.1p.{codec}__my-topic-0.messageset.bin")
        assert [(r.offset, r.key, r.value) for r in recs] == [(r.offset, r.key, r.value) for r in plain]
        assert [r.batch.compression for r in recs] == [codec.split(".")[0]] * 42
        if codec.startswith("snappy"):  # the 0.8 brokers' Java client framed snappy as xerial does
            assert {r.batch.value[:8] for r in recs} == {XERIAL_MAGIC}


def test_kafka_rust_corrupted_crc_is_named_with_file_and_position(corpus):
    path = corpus / "kafka-rust-fetch-0.8-0.9" / "fetch2.mytopic.nocompression.invalid_crc.kafka.0900__my-topic-0.messageset.bin"
    with pytest.raises(CrcMismatchError) as exc:
        read_segment(path)
    assert exc.value.file == str(path) and exc.value.position == 0
    assert str(path) in str(exc.value) and "byte 0" in str(exc.value)


def test_kafkajs_mixed_formats_and_raw_snappy(corpus):
    d = corpus / "kafkajs-fetch-fixtures"
    mixed = read_segment(d / "v4_response_mixed_formats__test-mixed-message-formats-0.records.bin")
    # README: 1,611 magic-1 messages followed by 3 magic-2 batches, 2,425 keyed records
    assert [r.batch.magic for r in mixed] == [1] * 1611 + [2] * (2425 - 1611)
    assert len({id(r.batch) for r in mixed[1611:]}) == 3
    assert all(r.key is not None for r in mixed)
    snappy = SegmentReader(d / "v4_response_snappy__topic-test-3.records.bin")
    batches = list(snappy.batches())
    assert [b.compression for b in batches] == ["snappy"] * len(batches) and batches
    # kafkajs compresses with raw snappy blocks, not the xerial framing Java writes (the corpus README
    # puts xerial here; it is in kafka-rust's files)
    assert [bytes(b._body[:8]) == XERIAL_MAGIC for b in batches] == [False] * len(batches)
    recs = [r for b in batches for r in b.records()]
    assert len(recs) == sum(b.records_count for b in batches)
    assert all(r.key.startswith(b"key-") and r.value.startswith(b"value-" + r.key[4:] + b"-") for r in recs)


def test_kafkajs_log_append_time_batch(corpus):
    recs = read_segment(corpus / "kafkajs-fetch-fixtures" / "v0_recordbatch.bin")
    b = recs[0].batch
    assert b.timestamp_type == "log_append"
    assert [r.timestamp for r in recs] == [b.max_timestamp] * len(recs)


@pytest.mark.parametrize("folder", ["kafka-gleam", "codecrafters-kafka-go"])
def test_kraft_metadata_logs_read_without_fault(corpus, folder):
    reader = SegmentReader(corpus / folder / "00000000000000000000.log")
    recs = list(reader.records())
    assert recs and not reader.faults
    assert {r.batch.magic for r in recs} == {2}
    assert [r.offset for r in recs] == list(range(recs[0].offset, recs[0].offset + len(recs)))


@pytest.mark.slow  # runs kafka-dump-log (a JVM)
def test_whole_corpus_matches_kafka_dump_log(corpus, tmp_path):
    """Every file but the corrupted one, read by us and by Kafka's tool (one run for all), record by
    record; the KRaft metadata logs included."""
    sources = sorted(p for p in corpus.glob("*/*") if p.suffix in (".bin", ".log") and "invalid_crc" not in p.name)
    files = []
    for i, src in enumerate(sources):
        (tmp_path / str(i)).mkdir()
        files.append(tmp_path / str(i) / "00000000000000000000.log")
        shutil.copy(src, files[-1])
    _, batches = dump(files)
    by_file = {}
    for b in batches:
        by_file.setdefault(b.file, []).append(b)
    for src, f in zip(sources, files):
        compare(inspect_jsonl([f]), by_file[str(f)])
    legacy = sum(b.magic < 2 for bs in by_file.values() for b in bs)
    assert legacy >= 1611  # the kafkajs mixed file alone holds 1,611 magic-1 messages (README)

"""Dump texts as people paste them, and as older Kafka versions printed them, parse to the records
of the segments they came from.

The segments are written by the real broker (the session ``kafka`` fixture); the texts are what
Kafka's own ``kafka-dump-log`` (4.3, from the cached jars) prints for them, then transformed the way
a terminal session or a ticket changes them: a shell prompt and the command before the output,
``#`` comments, indentation (tabs too, CRLF line ends), only the ``| offset:`` lines someone grepped
out, one run per file pasted one after another, ``.index``/``.timeindex`` sections between the
``.log`` sections, and ``--deep-iteration`` output. The shapes of Kafka before 4.x are rendered from
the same segments' batches line by line as each version's ``DumpLogSegments.scala`` prints them (the
tag and lines are cited at each renderer), never copied from the web.

Expected values come from two independent sources: this project's binary reader of the same
segments (``SegmentReader``) and Kafka's own unmodified dump of them.
"""

from __future__ import annotations

import io
import struct
import time

import pytest

from cli.inspect_cmd import run_inspect
from inspectsegments import produce_items, write_transactions
from kafkatools import copy_partition, create_topic, localtools, partition_dir, roll_at, unique_topic
from monitor.kafka.dump import parse_dump_text
from monitor.kafka.record import SegmentReader

pytestmark = [pytest.mark.kafka, pytest.mark.slow]  # kafka-dump-log runs (a JVM)

TS_LABEL = {"create": "CreateTime", "log_append": "LogAppendTime", "none": "NoTimestampType"}


def _items(n: int, prefix: str):
    """Keys, a null key every 13th, a tombstone every 7th, headers every 11th; some values hold the
    text " payload: " (the parser cuts key from payload by keySize)."""
    for i in range(n):
        key = None if i % 13 == 5 else f"{prefix}-k{i % 30}".encode()
        value = None if i % 7 == 3 else (f"v{i} payload: x " * (1 + i % 4) if i % 9 == 0 else f"value {i} " * 5).encode()
        headers = [("trace", f"t{i}".encode()), ("empty", None)] if i % 11 == 0 else None
        yield key, value, headers


@pytest.fixture(scope="module")
def written(kafka, tmp_path_factory):
    """Two segments of a topic (gzip, then lz4; index entries every 256 bytes) and a transactional
    topic with a commit and an abort, copied with their indexes; and Kafka's own dumps of them."""
    snap = tmp_path_factory.mktemp("shapes")
    data = create_topic(kafka.bootstrap, unique_topic("shapes"),
                        **{"segment.ms": 60_000, "index.interval.bytes": 256})
    produce_items(kafka.bootstrap, data, _items(300, "a"), 40, **{"compression.type": "gzip"})
    roll_at(kafka.bootstrap, data, int(time.time() * 1000) + 120_000)  # the next batch starts a segment
    produce_items(kafka.bootstrap, data, _items(150, "b"), 40, **{"compression.type": "lz4"})
    txn = create_topic(kafka.bootstrap, unique_topic("shapes-txn"))
    write_transactions(kafka.bootstrap, txn, ("commit", "abort"),
                       lambda outcome: ((f"{outcome}-{i}".encode(), b"v" * 30, None) for i in range(15)))
    suffixes = (".log", ".index", ".timeindex")
    folders = [copy_partition(partition_dir(kafka.log_dir, t), snap, suffixes=suffixes) for t in (data, txn)]
    logs = [f for folder in folders for f in sorted(folder.glob("*.log"))]
    assert len(logs) == 3, logs
    seg0 = logs[0]
    with_index = [seg0, seg0.with_suffix(".index"), seg0.with_suffix(".timeindex"), *logs[1:]]
    w = {
        "logs": logs,
        "plain": localtools.dump_log(logs, "--print-data-log"),
        "with_index": localtools.dump_log(with_index, "--print-data-log"),
        "deep": localtools.dump_log(logs, "--deep-iteration"),
        "no_metadata": localtools.dump_log(logs, "--print-data-log", "--skip-record-metadata"),
        "runs": [(f, localtools.dump_log([f], "--print-data-log")) for f in logs],
        "batches": [b for f in logs for b in SegmentReader(f).batches()],
    }
    # guards the scenario: index sections with entries, records and batch lines in every dump
    assert "timestamp: " in w["with_index"] and f"Dumping {seg0.with_suffix('.index')}" in w["with_index"]
    assert any(line.startswith("offset: ") and "position: " in line for line in w["with_index"].split("\n"))
    return w


# ---------------------------------------------------------------- what is compared


def reader_records(batches, payloads: bool = True) -> list[tuple]:
    """(offset, timestamp, key size, value size, header keys, control type, key, value) from the bytes."""
    out = []
    for b in batches:
        for r in b.records():
            control = r.control_type if b.is_control else None
            key = value = None
            if payloads and not b.is_control:
                key, value = r.key, r.value
            out.append((r.offset, r.timestamp, r.key_size, r.value_size, r.header_keys, control, key, value))
    return out


def parsed(text: str, name: str = "pasted.txt", payloads: bool = True):
    batches, parser = parse_dump_text(text, name)
    assert not parser.problems, parser.problems[:5]
    return batches, parser, reader_records(batches, payloads)


def batch_facts(batches) -> list[tuple]:
    return [(b.base_offset, b.last_offset, b.position, b.size, b.crc, b.records_count, b.compression,
             b.is_control, b.is_transactional, b.producer_id, b.producer_epoch, b.partition_leader_epoch,
             b.delete_horizon_ms) for b in batches]


# ---------------------------------------------------------------- shapes of pasted 4.x output

PROMPT = "ops@broker-2:/opt/kafka_2.13-3.7.0$ "


def prompted(w) -> str:
    files = ",".join(str(f) for f in w["logs"])
    return (f"$ cd /opt/kafka_2.13-3.7.0\n{PROMPT}bin/kafka-dump-log.sh --files {files} --print-data-log\n"
            + w["plain"] + PROMPT + "\n")


def commented(w) -> str:
    text = w["plain"].replace("Dumping ", "# the next segment, as asked in the ticket\nDumping ")
    return "# kafka-dump-log of the partition, broker 2\n#no space after the hash either\n" + text


def indented(w) -> str:
    return "\n".join("    " + line if line else line for line in w["plain"].split("\n"))


def tabs_and_crlf(w) -> str:
    return "\r\n".join("\t" + line if line else line for line in w["plain"].split("\n"))


def fenced_in_a_ticket(w) -> str:
    """The dump inside a Markdown fence (prose around it is not a dump line: it would be reported)."""
    return "```text\n" + w["plain"] + "```\n"


def quoted_in_an_e_mail(w) -> str:
    return "".join(f"> {line}\n" for line in w["plain"].split("\n")[:-1])


def grepped(w) -> str:
    return "\n".join(line for line in w["plain"].split("\n") if "| offset:" in line) + "\n"


def grepped_with_names_and_numbers(w) -> str:
    """``grep -n '| offset:' dump-*.txt``: each line after its file's name and line number."""
    out = []
    for i, (_, text) in enumerate(w["runs"]):
        out += [f"dump-{i}.txt:{n}:{line}" for n, line in enumerate(text.split("\n"), 1) if "| offset:" in line]
    return "\n".join(out) + "\n"


def runs_one_after_another(w) -> str:
    return "".join(f"[ops@broker-2 kafka]$ bin/kafka-dump-log.sh --print-data-log --files {f}\n{text}"
                   for f, text in w["runs"])


def with_index_sections(w) -> str:
    return w["with_index"]


def everything(w) -> str:
    body = "\n".join("  " + line if line else line for line in w["with_index"].split("\n"))
    return f"# from OPS-1234\n{PROMPT}bin/kafka-dump-log.sh --files ... --print-data-log\n{body}{PROMPT}\n"


SHAPES = [prompted, commented, indented, tabs_and_crlf, fenced_in_a_ticket, quoted_in_an_e_mail, runs_one_after_another,
          with_index_sections, everything]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.__name__)
def test_pasted_shapes_parse_to_the_segments_records(written, shape):
    batches, parser, ours = parsed(shape(written))
    assert ours == reader_records(written["batches"]) and len(ours) > 400
    assert batch_facts(batches) == batch_facts(written["batches"])
    _, _, kafkas = parsed(written["plain"], "kafka-dump-log")  # Kafka's own dump, as printed
    assert ours == kafkas
    assert parser.batchless_records == 0
    if "index" in shape.__name__ or shape is everything:
        seg0 = written["logs"][0]
        assert [f for f, _ in parser.skipped_sections] == [str(seg0.with_suffix(".index")),
                                                            str(seg0.with_suffix(".timeindex"))]
    else:
        assert parser.skipped_sections == []


@pytest.mark.parametrize("shape", [grepped, grepped_with_names_and_numbers], ids=lambda s: s.__name__)
def test_grepped_record_lines_parse_to_the_same_records(written, shape):
    batches, parser, ours = parsed(shape(written))
    assert ours == reader_records(written["batches"])
    assert parser.batchless_records == len(ours)
    assert all(b.from_records and b.size is None and b.base_offset is None and b.delete_horizon_ms is None
               for b in batches)
    # what each record line says about its batch: control or not, the marker's transaction
    controls = [b for b in batches if b.is_control]
    assert [r.control_type for b in controls for r in b.records()] == ["COMMIT", "ABORT"]
    assert all(b.is_transactional for b in controls)


def test_deep_iteration_output(written):
    """``--deep-iteration`` without ``--print-data-log``: records without key or payload text."""
    batches, _, ours = parsed(written["deep"], payloads=False)
    assert ours == reader_records(written["batches"], payloads=False)
    assert all(r.key is None for b in batches for r in b.records())
    assert batch_facts(batches) == batch_facts(written["batches"])


def test_skip_record_metadata_output(written):
    """``--skip-record-metadata``: ``| key: K payload: V``, `` payload: V`` for a null key, nothing for a
    record with neither or a control record (4.x DumpLogSegments.java prints the "| " only with a key)."""
    batches, _, _ = parsed(written["no_metadata"])
    ours = [(r.key, r.value) for b in batches for r in b.records()]
    want = [(r.key, r.value) for b in written["batches"] if not b.is_control for r in b.records()
            if r.key is not None or r.value is not None]
    assert ours == want and any(k is None for k, _ in ours) and any(v is None for _, v in ours)


def _inspect(path) -> tuple[int, list, str]:
    import json

    out, err = io.StringIO(), io.StringIO()
    rc = run_inspect([str(path)], fmt="json", out=out, err=err)
    return rc, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


def test_inspect_takes_every_shape_for_text_and_says_what_it_skipped(written, tmp_path):
    """The issue's report: pasted dumps were taken for segments ("unknown magic byte 115")."""
    rc, seg_rows, _ = _inspect(written["logs"][0].parent)
    assert rc == 0
    for shape in [*SHAPES, grepped, grepped_with_names_and_numbers]:
        f = tmp_path / f"{shape.__name__}.txt"
        f.write_bytes(shape(written).encode())
        rc, rows, err = _inspect(f)
        assert rc == 0, err
        assert "magic" not in err
        mine = [r for r in rows if r["file"] == str(f)]
        assert len(mine) == len(rows) == sum(len(b.records()) for b in written["batches"])
        first = [(r["offset"], r["key"], r["value_size"], r["header_keys"]) for r in rows[:len(seg_rows)]]
        assert first == [(r["offset"], r["key"], r["value_size"], r["header_keys"]) for r in seg_rows]
        if shape in (with_index_sections, everything):
            assert f"{f}: line " in err and "skipped the section of" in err and ".timeindex" in err
        if shape in (grepped, grepped_with_names_and_numbers):
            assert "without their batch line" in err and rows[0]["batch_base_offset"] is None


# ---------------------------------------------------------------- shapes of Kafka before 4.x, from its source

CODEC_ENUM = {"none": "NONE", "gzip": "GZIP", "snappy": "SNAPPY", "lz4": "LZ4", "zstd": "ZSTD"}  # enum toString


def _seq(b, r) -> int:
    return -1 if b.base_sequence < 0 else b.base_sequence + (r.offset - b.base_offset)


def _content(b, r) -> str:
    """The control record's text or `` key: K payload: V`` (printed only when not null)."""
    if b.is_control:
        _, epoch = struct.unpack(">hi", r.value[:6])
        return f" endTxnMarker: {r.control_type} coordinatorEpoch: {epoch}"
    s = "" if r.key is None else f" key: {r.key.decode()}"
    return s + ("" if r.value is None else f" payload: {r.value.decode()}")


def _hk(r) -> str:
    return "[" + ",".join(r.header_keys) + "]"


def _render(batches, starting: str | None, batch_line=None, record_line=None) -> str:
    """The walk every version's dump has: ``Starting offset`` (unless None), then per batch its line
    (where the version prints one) and its records' lines."""
    lines = [] if starting is None else [f"Starting offset: {starting}"]
    for b in batches:
        if batch_line is not None:
            lines.append(batch_line(b))
        if record_line is not None:
            lines += [record_line(b, r) for r in b.records()]
    return "\n".join(lines) + "\n"


def _deep_record_line(b, r, epoch: bool) -> str:
    """0.11.0.0 DumpLogSegments.scala 364-408; ``producerEpoch`` after ``producerId`` from 1.0.0 (line 393)."""
    return (f"offset: {r.offset} position: {b.position} {TS_LABEL[b.timestamp_type]}: {r.timestamp} "
            f"isvalid: true keysize: {r.key_size} valuesize: {r.value_size} magic: {b.magic} "
            f"compresscodec: {CODEC_ENUM[b.compression]} producerId: {b.producer_id} "
            + (f"producerEpoch: {b.producer_epoch} " if epoch else "")
            + f"sequence: {_seq(b, r)} isTransactional: {str(b.is_transactional).lower()} "
            f"headerKeys: {_hk(r)}" + _content(b, r))


def render_0_11(batches, starting: str) -> str:
    """0.11.0.0 DumpLogSegments.scala 364-408 (--print-data-log implies deep iteration): no batch
    lines; each record ``offset: .. position: <batch's> <type>: .. isvalid: .. keysize: .. valuesize: ..
    magic: .. compresscodec: <enum> producerId: .. sequence: .. isTransactional: .. headerKeys: [..]``."""
    return _render(batches, starting, record_line=lambda b, r: _deep_record_line(b, r, epoch=False))


def render_2_0(batches, starting: str) -> str:
    """2.0.0 DumpLogSegments.scala 376-420: as 0.11 with ``producerEpoch`` after ``producerId`` (1.0.0
    line 393)."""
    return _render(batches, starting, record_line=lambda b, r: _deep_record_line(b, r, epoch=True))


def render_2_0_shallow(batches, starting: str) -> str:
    """2.0.0 DumpLogSegments.scala 423-433 (no deep iteration): batch lines only, ``count`` new in 2.0,
    no ``isControl`` yet, ``isvalid`` before ``size``."""
    return _render(batches, starting, batch_line=lambda b: (
        f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.records_count} "
        f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} producerId: {b.producer_id} "
        f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.partition_leader_epoch} "
        f"isTransactional: {str(b.is_transactional).lower()} position: {b.position} "
        f"{TS_LABEL[b.timestamp_type]}: {b.max_timestamp} isvalid: true size: {b.size} magic: {b.magic} "
        f"compresscodec: {CODEC_ENUM[b.compression]} crc: {b.crc}"))


def _batch_line_2_3(b, codec: str, horizon: bool) -> str:
    """2.3.0 printBatchLevel (the same from 2.2.0); ``deleteHorizonMs`` from 3.2.0 (OptionalLong's toString)."""
    h = ""
    if horizon:
        h = " deleteHorizonMs: " + ("OptionalLong.empty" if b.delete_horizon_ms is None
                                    else f"OptionalLong[{b.delete_horizon_ms}]")
    return (f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.records_count} "
            f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} producerId: {b.producer_id} "
            f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.partition_leader_epoch} "
            f"isTransactional: {str(b.is_transactional).lower()} isControl: {str(b.is_control).lower()}{h} "
            f"position: {b.position} {TS_LABEL[b.timestamp_type]}: {b.max_timestamp} size: {b.size} "
            f"magic: {b.magic} compresscodec: {codec} crc: {b.crc} isvalid: true")


def render_2_3(batches, starting: str) -> str:
    """2.3.0 DumpLogSegments.scala 337-365: a batch line, then ``| offset: .. keysize: .. valuesize: ..
    sequence: .. headerKeys: [..]`` per record (the same from 2.2.0 through 2.7.0)."""
    return _render(batches, starting, lambda b: _batch_line_2_3(b, CODEC_ENUM[b.compression], False), lambda b, r: (
        f"| offset: {r.offset} {TS_LABEL[b.timestamp_type]}: {r.timestamp} keysize: {r.key_size} "
        f"valuesize: {r.value_size} sequence: {_seq(b, r)} headerKeys: {_hk(r)}" + _content(b, r)))


def render_2_8(batches, starting: str, records_only: bool = False) -> str:
    """2.8.0 DumpLogSegments.scala 271-300: every record line repeats its batch's fields
    (``isValid: .. crc: null`` for v2, ``batchSize``, ``compressType``, ``position``)."""
    batch_line = None if records_only else lambda b: _batch_line_2_3(b, CODEC_ENUM[b.compression], False)
    return _render(batches, None if records_only else starting, batch_line, lambda b, r: (
        f"| offset: {r.offset} isValid: true crc: null keySize: {r.key_size} valueSize: {r.value_size} "
        f"{TS_LABEL[b.timestamp_type]}: {r.timestamp} baseOffset: {b.base_offset} "
        f"lastOffset: {b.last_offset} baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} "
        f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.partition_leader_epoch} "
        f"batchSize: {b.size} magic: {b.magic} compressType: {CODEC_ENUM[b.compression]} "
        f"position: {b.position} sequence: {_seq(b, r)} headerKeys: {_hk(r)}" + _content(b, r)))


def render_3_0(batches, starting: str) -> str:
    """3.0.0 DumpLogSegments.scala 273-300: ``keySize``/``valueSize``, codec by ``CompressionType.name``
    (lower case); no ``deleteHorizonMs`` until 3.2.0, ``Starting offset`` until 3.3.0."""
    return _render(batches, starting, lambda b: _batch_line_2_3(b, b.compression, False), lambda b, r: (
        f"| offset: {r.offset} {TS_LABEL[b.timestamp_type]}: {r.timestamp} keySize: {r.key_size} "
        f"valueSize: {r.value_size} sequence: {_seq(b, r)} headerKeys: {_hk(r)}" + _content(b, r)))


def _rendered(written, render) -> str:
    return "".join(f"Dumping {f}\n" + render(list(SegmentReader(f).batches()), str(int(f.stem)))
                   for f in written["logs"])


@pytest.mark.parametrize("render", [render_0_11, render_2_0, render_2_3, render_2_8, render_3_0],
                         ids=lambda r: r.__name__)
def test_older_kafka_shapes_parse_to_the_segments_records(written, render):
    text = _rendered(written, render)
    batches, parser, ours = parsed(text)
    assert ours == reader_records(written["batches"])
    assert [r.offset for b in batches for r in b.records()] == [r.offset for b in written["batches"] for r in b.records()]
    if render in (render_2_3, render_2_8, render_3_0):
        want = [f[:12] + (None,) for f in batch_facts(written["batches"])]  # no delete horizon printed yet
        assert [f[:12] + (None,) for f in batch_facts(batches)] == want
    else:  # records without batch lines: one batch per position, with what the lines say
        assert [(b.position, b.magic, b.compression, b.producer_id, b.is_transactional, b.is_control)
                for b in batches] == [(b.position, b.magic, b.compression, b.producer_id, b.is_transactional,
                                       b.is_control) for b in written["batches"]]
        assert all(b.from_records and b.size is None for b in batches)


def test_grepped_2_8_record_lines_rebuild_their_batches(written):
    """2.8's record lines carry their batch's offsets, size and position: grep output loses nothing."""
    text = "".join(render_2_8(list(SegmentReader(f).batches()), "", records_only=True) for f in written["logs"])
    batches, _, ours = parsed(text)
    assert ours == reader_records(written["batches"])
    assert [(b.base_offset, b.last_offset, b.position, b.size, b.partition_leader_epoch) for b in batches] == \
        [(b.base_offset, b.last_offset, b.position, b.size, b.partition_leader_epoch) for b in written["batches"]]


def test_2_0_shallow_batch_lines(written):
    text = _rendered(written, render_2_0_shallow)
    batches, _, ours = parsed(text)
    assert ours == []
    want = batch_facts(written["batches"])
    # before 2.1 a batch line does not say whether the batch is a control batch: unknown
    assert batch_facts(batches) == [f[:7] + (None,) + f[8:12] + (None,) for f in want]

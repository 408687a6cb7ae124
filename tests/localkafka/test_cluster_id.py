"""Cluster ids and arguments that Kafka's tools always accept (issue: one broker start in 64 failed
because a generated id began with ``-`` and ``kafka-storage format -t -Xyz`` read it as an option)."""

from __future__ import annotations

import base64
import random
import shutil
from pathlib import Path

import pytest

from kafkatools import cli_main as main
from kafkatools import copy_partition, partition_dir
from kafkatools import localbroker as broker
from kafkatools import localtools as tools
from localkafka.jars import fetch_jars

# The first base64 character comes from the first byte's top six bits: 62 is "-", 63 is "_".
DASH = bytes([0xF8]) + bytes(range(1, 16))
UNDERSCORE = bytes([0xFC]) + bytes(range(1, 16))


def _text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_ten_thousand_ids_none_starts_with_a_dash(seed):
    """Ten thousand ids from seeded draws: exactly the draws whose text does not start with "-" come
    out, in order (about one draw in 64 starts with "-" and is drawn again)."""
    rnd = random.Random(seed)
    draws = []

    def draw():
        draws.append(rnd.randbytes(16))
        return draws[-1]

    ids = [broker.kafka_uuid(draw=draw) for _ in range(10_000)]
    assert ids == [t for t in map(_text, draws) if not t.startswith("-")]
    assert len(draws) - len(ids) == sum(d[0] >> 2 == 62 for d in draws) > 0  # the top six bits 62 spell "-"
    assert all(len(i) == 22 and len(base64.urlsafe_b64decode(i + "==")) == 16 for i in ids)
    assert len(set(ids)) == len(ids)
    assert not [i for i in (broker.kafka_uuid() for _ in range(1000)) if i.startswith("-")]  # the real draw


def test_a_dash_or_reserved_draw_is_drawn_again():
    """Kafka's Uuid.randomUuid rule: draw again while the id is reserved or starts with "-";
    an id that starts with "_" is fine."""
    draws = iter([DASH, bytes(16), (1).to_bytes(16, "big"), UNDERSCORE])
    assert _text(DASH).startswith("-") and _text(UNDERSCORE).startswith("_")
    assert broker.kafka_uuid(draw=lambda: next(draws)) == _text(UNDERSCORE)


@pytest.mark.slow  # runs Kafka's storage tool (a JVM)
@pytest.mark.parametrize("raw", [UNDERSCORE, DASH], ids=["underscore", "dash"])
def test_real_kafka_storage_format_accepts_the_id(tmp_path, raw):
    """The real ``kafka-storage format`` takes an id starting with "_" (one we hand out) and, passed
    as ``--cluster-id=ID``, even one starting with "-" (one we never hand out)."""
    libs = fetch_jars(progress=lambda *_: None)
    (tmp_path / "logs").mkdir()
    props = tmp_path / "server.properties"
    props.write_text(broker.server_properties(1, 1, 2, tmp_path / "data", None))
    proc = tools.format_storage(libs, props, _text(raw), tmp_path / "logs")
    assert proc.returncode == 0, proc.stderr[-2000:]
    meta = broker._read_properties(tmp_path / "data" / "meta.properties")
    assert meta["cluster.id"] == _text(raw)
    # what localkafka.broker writes in its place for every broker after a process's first (one format
    # per process): the same files, the same keys, the same feature records (bytes but for timestamps, CRCs)
    broker._format(libs, tmp_path / "ours", 1, _text(raw), tmp_path / "logs", None)
    ours = broker._read_properties(tmp_path / "ours" / "meta.properties")
    assert sorted(p.name for p in (tmp_path / "ours").iterdir()) == sorted(p.name for p in (tmp_path / "data").iterdir())
    assert ours.keys() == meta.keys() and ours["cluster.id"] == _text(raw) and ours["node.id"] == meta["node.id"]
    assert ours["directory.id"] != meta["directory.id"]
    # the feature levels: bootstrap.checkpoint up to 4.3, a snapshot in __cluster_metadata-0 from 4.4
    [levels] = [name for name in broker.FORMAT_WRITES if (tmp_path / "data" / name).exists()]
    def files(d):
        return {p.relative_to(d): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()} if d.is_dir() \
            else {Path(): d.read_bytes()}
    kafkas, theirs = (files(d / levels) for d in (tmp_path / "data", tmp_path / "ours"))
    assert {k: len(v) for k, v in theirs.items()} == {k: len(v) for k, v in kafkas.items()}
    assert any(b"metadata.version" in v for v in theirs.values())


@pytest.mark.slow  # runs Kafka's storage tool (a JVM)
def test_the_split_form_is_what_failed(tmp_path):
    """Why ``option()`` exists: the same dash id as a separate argument is refused by the tool."""
    libs = fetch_jars(progress=lambda *_: None)
    props = tmp_path / "server.properties"
    props.write_text(broker.server_properties(1, 1, 2, tmp_path / "data", None))
    proc = tools.run_java(libs, "kafka.tools.StorageTool", ["format", "-t", _text(DASH), "-c", str(props)])
    assert proc.returncode != 0
    assert "--cluster-id" in proc.stderr and "expected one argument" in proc.stderr


@pytest.fixture()
def metadata_segment(kafka, tmp_path) -> Path:
    """A copy of a segment the broker wrote (the metadata log always has one; the broker appends to
    it all along, so the copy keeps whole batches only)."""
    folder = copy_partition(partition_dir(kafka.log_dir, "__cluster_metadata"), tmp_path / "copy")
    dst = tmp_path / "00000000000000000000.log"
    (folder / dst.name).rename(dst)
    return dst


@pytest.mark.parametrize("order", ["options-first", "file-first"])
def test_dump_log_takes_files_anywhere(metadata_segment, tmp_path, capsys, order):
    d = str(tmp_path / "broker")
    argv = (["broker", "dump-log", "--dir", d, "--dump-arg=--print-data-log", str(metadata_segment)]
            if order == "options-first" else
            ["broker", "dump-log", str(metadata_segment), "--dir", d, "--dump-arg=--print-data-log"])
    assert main(argv) == 0
    out = capsys.readouterr().out
    # the tool's own output, run directly: the file and --print-data-log reached it, whatever the order
    assert out.rstrip("\n") == tools.dump_log([str(metadata_segment)], "--print-data-log").rstrip("\n")
    assert f"Dumping {metadata_segment}" in out and "baseOffset: 0" in out and "payload:" in out


def test_dump_log_of_a_relative_path_that_starts_with_a_dash(metadata_segment, monkeypatch):
    weird = metadata_segment.parent / "-segments"
    weird.mkdir()
    shutil.copyfile(metadata_segment, weird / metadata_segment.name)
    monkeypatch.chdir(metadata_segment.parent)
    out = tools.dump_log([f"-segments/{metadata_segment.name}"])
    assert "Dumping -segments/00000000000000000000.log" in out and "baseOffset: 0" in out

"""``inspect --format jsonl`` writes, through its fixed-field encoder (cli/inspect_jsonl.py), the very
text the general encoder wrote before it (``json.dumps`` of a 19-key dict per record): on segments a
real broker wrote (every codec, tombstones, null and binary keys, headers with non-ASCII names,
committed and aborted transactions with their markers, LogAppendTime), on the legacy and odd layouts
of the record gallery, with the pure-Python decoder, and for a path that JSON must escape."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys

import pytest

from cli.inspect_cmd import run_inspect
from cli.inspect_jsonl import record_json
from inspectsegments import write_partitions
from monitor.kafka.record import SegmentReader
from recordfixtures import READER_GAPS

BROKER = [pytest.mark.kafka, pytest.mark.slow]


def old_record_json(path, batch, rec) -> dict:
    """The encoding before issue 15, verbatim (cli/inspect_cmd.py at 5f36283): the oracle."""
    key = rec.key
    return {
        "file": str(path),
        "batch_base_offset": batch.base_offset,
        "batch_last_offset": batch.last_offset,
        "batch_position": batch.position,
        "magic": batch.magic,
        "offset": rec.offset,
        "timestamp": rec.timestamp,
        "timestamp_type": batch.timestamp_type,
        "key": None if key is None else base64.b64encode(key).decode(),
        "key_size": rec.key_size,
        "value_size": rec.value_size,
        "tombstone": rec.is_tombstone,
        "control": batch.is_control,
        "control_type": rec.control_type,
        "transactional": batch.is_transactional,
        "compression": batch.compression,
        "producer_id": batch.producer_id,
        "delete_horizon_ms": batch.delete_horizon_ms,
        "header_keys": rec.header_keys,
    }


def old_path(files) -> str:
    """What ``inspect --format jsonl`` printed before: one ``json.dumps`` per record."""
    lines = []
    for f in files:
        for rec in SegmentReader(f, skip_corrupt=True).records():
            lines.append(json.dumps(old_record_json(f, rec.batch, rec)) + "\n")
    return "".join(lines)


def new_path(paths) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert run_inspect([str(p) for p in paths], fmt="json", out=out, err=err) == 0, err.getvalue()
    return out.getvalue()


def same(paths, files) -> list[dict]:
    """The new text equals the old, byte for byte, and so do the parsed objects; returns them."""
    new, old = new_path(paths), old_path(files)
    assert new == old
    objs = [json.loads(line) for line in new.splitlines()]
    assert objs == [json.loads(line) for line in old.splitlines()] and objs
    return objs


@pytest.fixture(scope="module")
def written(kafka, tmp_path_factory):
    return write_partitions(kafka, tmp_path_factory.mktemp("inspect-jsonl"))


@pytest.mark.parametrize("label", ["codec-none", "codec-gzip", "codec-snappy", "codec-lz4", "codec-zstd",
                                   "logappend", "txn"])
@pytest.mark.kafka
@pytest.mark.slow
def test_broker_written_segments_encode_as_before(written, label):
    folder = written[label]
    objs = same([folder], sorted(folder.glob("*.log")))
    # the scenario holds what it claims to
    if label.startswith("codec-"):
        assert {o["compression"] for o in objs} == {label.removeprefix("codec-")}
        assert any(o["tombstone"] for o in objs) and any(o["key"] is None for o in objs)
        assert any(o["header_keys"] == ["trace", "zürich \"q\""] for o in objs)
        assert any(o["key"] and base64.b64decode(o["key"])[:2] == b"\x00\xff" for o in objs)
    if label == "txn":
        assert [o["control_type"] for o in objs if o["control"]] == ["COMMIT", "ABORT", "COMMIT"]
        assert all(o["transactional"] for o in objs)
    if label == "logappend":
        assert {o["timestamp_type"] for o in objs} == {"log_append"}


@pytest.mark.kafka
@pytest.mark.slow
def test_a_path_json_must_escape(written, tmp_path):
    folder = tmp_path / 'we"ird\\ü\tname-0'
    folder.mkdir()
    for f in written["txn"].glob("*.log"):
        shutil.copy2(f, folder / f.name)
    objs = same([folder], sorted(folder.glob("*.log")))
    assert {o["file"] for o in objs} == {str(f) for f in folder.glob("*.log")}


@pytest.mark.kafka
@pytest.mark.slow
def test_the_pure_python_decoder_encodes_the_same(written):
    """Without the C decoder (headers come as lists, keys as slices of the batch) the text is the same."""
    folder = written["codec-zstd"]
    env = {**os.environ, "COMPACTION_MONITOR_PURE_PYTHON": "1"}
    # a child, not tests/clirun.py: the decoder is chosen once, when monitor.kafka.record.v2 is imported
    r = subprocess.run([sys.executable, "-m", "cli", "inspect", "--format", "jsonl", str(folder)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == old_path(sorted(folder.glob("*.log")))


def test_every_gallery_layout_encodes_as_before(record_gallery):
    """Legacy magic 0/1 in every codec, compressed wrappers, markers, cleaned and emptied batches."""
    for name, seg in record_gallery.items():
        if name not in READER_GAPS:
            same([seg.path], [seg.path])


def test_the_reference_encoding_is_the_old_one(record_gallery):
    """``record_json`` (what control batches, legacy sets and dump text still go through) is the old dict."""
    for name, seg in record_gallery.items():
        if name not in READER_GAPS:
            for rec in SegmentReader(seg.path).records():
                assert record_json(str(seg.path), rec.batch, rec) == old_record_json(seg.path, rec.batch, rec)


def test_a_batch_written_in_chunks_encodes_the_same(record_gallery, monkeypatch):
    """A batch longer than ``CHUNK`` lines is written a chunk at a time (here 7 lines): same text."""
    import cli.inspect_jsonl

    monkeypatch.setattr(cli.inspect_jsonl, "CHUNK", 7)
    for name in ("magic2-none", "magic2-zstd", "magic2-cleaned", "mixed-magics"):
        path = record_gallery[name].path
        same([path], [path])

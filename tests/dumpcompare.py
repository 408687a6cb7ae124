"""Compare what this project reads from segment files with what Kafka's own ``kafka-dump-log``
prints for them, record by record: the independent source for bytes a real broker wrote."""

from __future__ import annotations

import base64
import io
import json

from monitor.kafka.dump import DumpParser
from cli.inspect_cmd import run_inspect
from kafkatools import copy_partition, localtools


def inspect_jsonl(paths) -> list[dict]:
    """``compaction-monitor inspect --format jsonl`` on ``paths``: one dict per record."""
    out, err = io.StringIO(), io.StringIO()
    rc = run_inspect([str(p) for p in paths], fmt="json", out=out, err=err)
    assert rc == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def dump(files, *args: str, kafka_version: str = localtools.KAFKA_VERSION) -> tuple[str, list]:
    """kafka-dump-log's text for ``files`` (``--print-data-log`` unless other ``args`` are given; the tool of
    ``kafka_version``) and its batches as ``DumpParser`` reads them."""
    text = localtools.dump_log(list(files), *(args or ("--print-data-log",)), kafka_version=kafka_version)
    # the tool ends lines with "\n" only; str.splitlines would also cut printed payloads at \r, \x1c..\x1e
    parser = DumpParser(text.split("\n"), "kafka-dump-log")
    batches = list(parser.batches())
    assert not parser.problems, parser.problems[:5]
    return text, batches


def dump_by_folder(folders) -> dict:
    """kafka-dump-log --deep-iteration of every segment in ``folders`` (one JVM for all): folder -> its
    batches, in file order."""
    from pathlib import Path

    files = [f for d in folders for f in sorted(Path(d).glob("*.log"))]
    _, batches = dump(files, "--deep-iteration")
    out: dict = {d: [] for d in folders}
    for b in batches:
        out[Path(b.file).parent].append(b)
    return out


def dump_partition(folder, tmp_root, *args: str) -> tuple[str, list]:
    """``dump`` of a live partition's segments, taken from a copy that no segment swap by the cleaner
    cut through (``kafkatools.copy_partition``)."""
    return dump(sorted(copy_partition(folder, tmp_root).glob("*.log")), *args)


def compare(ours: list[dict], batches) -> None:
    """Every field ``inspect`` prints equals kafka-dump-log's, record by record."""
    theirs = [(b, r) for b in batches for r in b.records()]
    assert len(ours) == len(theirs) > 0
    for o, (b, r) in zip(ours, theirs):
        ctx = f"offset {o['offset']}"
        assert o["offset"] == r.offset, ctx
        if b.magic >= 2:  # a legacy batch line prints only the wrapper's (last) offset
            assert o["batch_base_offset"] == b.base_offset, ctx
        assert o["batch_last_offset"] == b.last_offset, ctx
        assert o["batch_position"] == b.position, ctx
        assert o["timestamp"] == r.timestamp, ctx
        assert o["key_size"] == r.key_size, ctx
        assert o["value_size"] == r.value_size, ctx
        assert o["control"] == b.is_control, ctx
        assert o["transactional"] == b.is_transactional, ctx
        assert o["compression"] == b.compression, ctx
        assert o["producer_id"] == b.producer_id, ctx
        assert o["delete_horizon_ms"] == b.delete_horizon_ms, ctx
        assert o["header_keys"] == r.header_keys, ctx
        assert o["timestamp_type"] == b.timestamp_type, ctx
        if b.is_control:
            assert o["control_type"] == r.control_type, ctx
        if o["key"] is not None and not b.is_control:
            assert base64.b64decode(o["key"]) == r.key, ctx


def batch_facts(batches) -> list[tuple]:
    """Batch-level facts both sides print: base offset, size, CRC, count, leader epoch, sequence."""
    return [(b.base_offset, b.size, b.crc, b.records_count, b.partition_leader_epoch, b.base_sequence)
            for b in batches]

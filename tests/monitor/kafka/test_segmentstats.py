"""``inspect --stats`` totals (monitor/kafka/segmentstats.py, cli/inspect_stats.py) equal what Kafka's own
``kafka-dump-log --print-data-log`` prints for the same segments, counted here from its text: per
file, per partition (several segments of a cleaned topic folded into one row) and in all; on
broker-written segments (every codec, tombstones, null keys, headers, markers, LogAppendTime, a
cleaned topic with delete horizons) and on the record gallery's legacy and odd layouts. The dump
text fed to ``--stats`` gives the same totals as the segments (the records path against the arrays
path). A corrupt and an empty segment are reported as such."""

from __future__ import annotations

import io
import json
import shutil
from collections import Counter

import pytest

from cli.inspect_cmd import run_inspect
from dumpcompare import dump
from inspectsegments import write_partitions
from recordfixtures import READER_GAPS


def expected(batches) -> dict:
    """The totals of ``batches`` as kafka-dump-log printed them (``dumpcompare.dump``)."""
    recs = [(b, r) for b in batches for r in b.records()]
    data = [r for b, r in recs if not b.is_control]
    times = [r.timestamp for _, r in recs if r.timestamp >= 0]
    return {
        "batches": len(batches),
        "records": len(recs),
        "tombstones": sum(r.value_size < 0 for r in data),
        "keyless_records": sum(r.key_size < 0 for r in data),
        "control_batches": sum(b.is_control for b in batches),
        "control_records": len(recs) - len(data),
        "transactional_batches": sum(b.is_transactional for b in batches),
        "delete_horizon_batches": sum(b.delete_horizon_ms is not None for b in batches),
        "empty_batches": sum(not b.records() for b in batches),
        "bytes": sum(b.size for b in batches),
        "key_bytes": sum(max(r.key_size, 0) for _, r in recs),
        "value_bytes": sum(max(r.value_size, 0) for _, r in recs),
        "first_offset": min((r.offset for _, r in recs), default=None),
        "last_offset": max((r.offset for _, r in recs), default=None),
        "next_offset": max(b.last_offset for b in batches) + 1,
        "min_timestamp": min(times, default=None),
        "max_timestamp": max(times, default=None),
        "compression": dict(Counter(b.compression for b in batches)),
        "magic": dict(Counter(str(b.magic) for b in batches)),
        "timestamp_type": dict(Counter(b.timestamp_type for b in batches)),
        "control_types": dict(Counter(r.control_type for b, r in recs if b.is_control)),
        "producers": len({b.producer_id for b in batches if b.producer_id >= 0}),
    }


def stats(paths, expect_status: int = 0) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    assert run_inspect([str(p) for p in paths], fmt="json", stats=True, out=out, err=err) == expect_status, \
        err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def totals(row: dict) -> dict:
    return {k: row[k] for k in EXPECTED_KEYS}


EXPECTED_KEYS = ("batches", "records", "tombstones", "keyless_records", "control_batches", "control_records",
                 "transactional_batches", "delete_horizon_batches", "empty_batches", "bytes", "key_bytes",
                 "value_bytes", "first_offset", "last_offset", "next_offset", "min_timestamp", "max_timestamp",
                 "compression", "magic", "timestamp_type", "control_types", "producers")


def check(rows, batches_by_file) -> None:
    """Every file row, the partition rows and the total against kafka-dump-log's batches."""
    files = [r for r in rows if r["scope"] == "file"]
    assert [r["file"] for r in files] == list(batches_by_file)
    for r in files:
        assert totals(r) == expected(batches_by_file[r["file"]]), r["file"]
        assert r["batches_skipped"] == 0 and r["files"] == 1
    by_partition: dict = {}
    for r in files:
        if r["topic"] is not None:
            by_partition.setdefault((r["topic"], r["partition"]), []).extend(batches_by_file[r["file"]])
    parts = [r for r in rows if r["scope"] == "partition"]
    assert [(r["topic"], r["partition"]) for r in parts] == list(by_partition)
    for r in parts:
        assert totals(r) == expected(by_partition[r["topic"], r["partition"]])
    (total,) = [r for r in rows if r["scope"] == "total"]
    every = [b for bs in batches_by_file.values() for b in bs]
    want = expected(every)
    assert total["files"] == len(files)
    assert not {"first_offset", "last_offset", "next_offset"} & set(total)  # offsets are per partition
    assert {k: total[k] for k in EXPECTED_KEYS if not k.endswith("_offset")} == \
        {k: v for k, v in want.items() if not k.endswith("_offset")}


def by_file(batches) -> dict:
    out: dict = {}
    for b in batches:
        out.setdefault(b.file, []).append(b)
    return out


@pytest.fixture(scope="module")
def written(kafka, tmp_path_factory):
    return write_partitions(kafka, tmp_path_factory.mktemp("segment-stats"), cleaned=True)


@pytest.mark.kafka
@pytest.mark.slow
def test_broker_written_totals_match_kafka_dump_log(written, tmp_path):
    folders = list(written.values())
    files = [f for folder in folders for f in sorted(folder.glob("*.log"))]
    text, batches = dump(files)
    theirs = by_file(batches)
    rows = stats(folders)
    check(rows, theirs)
    # the scenario holds what it claims to
    parts = {r["topic"]: r for r in rows if r["scope"] == "partition"}
    assert len(parts) == len(written)
    cleaned = next(r for t, r in parts.items() if t.startswith("insp-cleaned"))
    assert cleaned["files"] > 1 and cleaned["delete_horizon_batches"] > 0 and cleaned["tombstones"] == 20
    txn = next(r for t, r in parts.items() if t.startswith("insp-txn"))
    assert txn["control_types"] == {"ABORT": 1, "COMMIT": 2} and txn["producers"] == 1
    total = rows[-1]
    assert set(total["compression"]) == {"none", "gzip", "snappy", "lz4", "zstd"}
    assert total["tombstones"] > 0 and total["keyless_records"] > 0
    assert set(total["timestamp_type"]) == {"create", "log_append"}

    # the same totals from the dump text itself (records parsed from text, not arrays decoded)
    dump_file = tmp_path / "all.dump.txt"
    dump_file.write_text(text)
    from_text = stats([dump_file])
    assert [r for r in from_text] == rows


def test_gallery_totals_match_kafka_dump_log(record_gallery):
    """Magic 0/1 in every codec (no timestamps in magic 0), compressed wrappers, markers, a cleaned
    batch with offset gaps, an emptied batch, mixed magics; one segment per folder, not a partition."""
    files = [s.path for n, s in record_gallery.items() if n not in READER_GAPS]
    _, batches = dump(files)
    rows = stats(files)
    check(rows, by_file(batches))
    assert not [r for r in rows if r["scope"] == "partition"]  # gallery folders are not named topic-N
    magic0 = next(r for r in rows if r["scope"] == "file" and "magic0-none" in r["file"])
    assert magic0["min_timestamp"] is None and magic0["records"] == 9
    assert rows[-1]["empty_batches"] == 1


def test_a_corrupt_and_an_empty_segment(record_gallery, tmp_path):
    """A segment cut mid-batch: its whole batches counted, the cut one skipped, exit status 1; an
    empty segment has a row of zeros whose offsets and times are unknown; the text says both."""
    folder = tmp_path / "cut-0"
    folder.mkdir()
    src = record_gallery["magic2-gzip"].path
    data = src.read_bytes()
    (folder / "00000000000000000000.log").write_bytes(data[:-5])
    (folder / "00000000000000000040.log").write_bytes(b"")
    rows = stats([folder], expect_status=1)
    cut, empty = [r for r in rows if r["scope"] == "file"]
    assert cut["batches"] == 1 and cut["batches_skipped"] == 1 and cut["records"] == 25
    assert empty["batches"] == 0 and empty["first_offset"] is None and empty["min_timestamp"] is None
    (part,) = [r for r in rows if r["scope"] == "partition"]
    assert (part["topic"], part["partition"], part["files"], part["batches_skipped"]) == ("cut", 0, 2, 1)
    out, err = io.StringIO(), io.StringIO()
    assert run_inspect([str(folder)], stats=True, out=out, err=err) == 1
    text = out.getvalue()
    assert "partition cut-0: 2 file(s)" in text and "skipped as corrupt 1" in text
    assert "offsets         unknown (no record)" in text
    assert "inspect: met corruption: skipped 1 batch(es)" in err.getvalue()
    shutil.rmtree(folder)


@pytest.mark.parametrize("values", [[], [-1], [-1, -1, -1], [5], [7, 3, 9, 3], [-1, 12, -1, 4],
                                    [2**63 - 1, 0, -2**63], [1795418185878, 1795418185877, -1]])
@pytest.mark.parametrize("floor", [0, -2**63])
def test_the_value_range_in_c_and_in_python(values, floor):
    """The C range (``_decode.int64_range``) and the Python one agree: all values (offsets), or those
    >= 0 (timestamps, NO_TIMESTAMP -1 left out)."""
    from array import array

    from monitor.kafka import segmentstats

    data = array("q", values).tobytes()
    kept = [v for v in values if v >= floor]
    want = (min(kept), max(kept)) if kept else None
    assert segmentstats._py_value_range(data, floor) == want
    if segmentstats._c_int64_range is not None:
        assert segmentstats._c_int64_range(data, floor) == want

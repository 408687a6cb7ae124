"""``./dev bench logdir --broker-size``'s log dir, made small: its batches are what a reader accepts (no
fault, offsets running on from segment to segment), only the active segment's indexes are sparse, the rolled
ones are Kafka's (the index-first read trusts them), and the page parsing finds every partition's series. No timing: that is the bench's."""

from __future__ import annotations

import pytest

from bench.bench_logdir_broker import INDEX_BYTES, make_log_dir, partitions_with, sample_value
from collectors.logdirs.scanner import LogDirScanner


def test_the_broker_size_log_dir_reads_without_a_fault(tmp_path):
    d, total, active = make_log_dir(tmp_path, 0.004, 4, 3)
    snap = LogDirScanner([d]).refresh()
    assert len(snap.partitions) == 4 and snap.partition_errors == {} and snap.bytes_read == total
    assert all(r.state.faults == 0 and r.state.cleanable_bytes > 0 for r in snap.partitions)
    part = d / "orders-000-0"
    logs = sorted(part.glob("*.log"))
    assert len(logs) == 4 and active == 4 * logs[-1].stat().st_size
    idx = logs[-1].with_suffix(".index")
    assert idx.stat().st_size == INDEX_BYTES and idx.stat().st_blocks == 0  # sparse: no data written
    # a rolled segment's indexes as Kafka writes them: the index-first read trusts every one
    assert all(f.with_suffix(".index").stat().st_size % 8 == 0 < f.with_suffix(".timeindex").stat().st_size
               for f in logs[:-1])
    said = []
    first = LogDirScanner([d], headers_first=True, notify=said.append).refresh()
    assert first.io.index_untrusted_segments == 0 and said == []
    assert first.io.header_bytes < total / 10
    assert [r.state.cleanable_ratio for r in first.partitions] == [r.state.cleanable_ratio for r in snap.partitions]
    end = max(r.state.log_end_offset for r in snap.partitions)
    assert end == int(logs[-1].stem) + 60


def test_the_page_is_read_per_partition_whatever_the_label_order():
    page = ('kafka_compaction_partition_cleanable_ratio{broker="1",cluster="c",partition="3",topic="a"} 0.5\n'
            'kafka_compaction_partition_cleanable_ratio{topic="b",partition="0"} 0.1\n'
            'kafka_compaction_x_pending_partitions{broker="1"} 2.0\n'
            'kafka_compaction_x_pending_partitions{broker="2"} 1.0\n')
    assert partitions_with(page, "partition_cleanable_ratio") == {("a", "3"), ("b", "0")}
    assert sample_value(page, r"\w*pending\w*") == ("kafka_compaction_x_pending_partitions", 3.0)
    assert sample_value(page, r"\w*io_budget_bytes_per_second") is None


@pytest.mark.parametrize("make", [None, "file"])
def test_a_dir_that_is_not_there_is_a_usage_error_naming_it(tmp_path, capsys, make):
    """``--dir D`` with D missing (or a file) is said before anything is written, not a traceback."""
    from bench.bench_logdir import main

    d = tmp_path / "kept"
    if make == "file":
        d.write_text("")
    with pytest.raises(SystemExit) as exc:
        main(["--broker-size", "--dir", str(d)])
    assert exc.value.code == 2
    assert f"--dir {d}: {'not a directory' if make else 'no such directory'}" in capsys.readouterr().err

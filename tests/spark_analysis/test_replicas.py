"""Which replica the audit reads and what it flags (``spark_analysis.replicas``), no Spark: the choice's
order (leader, log end offset, cleaner checkpoint, log dir name) on replicas that differ in one rule
each, every flag on a replica that differs in that one figure, and the log end offset read from
segment files written here (three batches ending at offset 5; an empty active segment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitor.kafka.record import SegmentReader
from recordfixtures import three_v2_batches
from spark_analysis import replicas as R
from spark_analysis.arrow_rows import segment_base, topic_partition
from spark_analysis.fs import open_input


def rep(log_dir, end=100, start=0, checkpoint=50, size=1000, broker=None) -> R.Replica:
    return R.Replica("t", 0, log_dir, [(f"{log_dir}/t-0/00000000000000000000.log", size)], end, start, checkpoint,
                     broker)


@pytest.mark.parametrize("reps, leader, want, rule", [
    # the leader's replica wins even when behind
    ([rep("/a", end=90, broker="1"), rep("/b", end=100, broker="2")], "1", "/a", R.BY_LEADER),
    # a leader the log dirs do not hold: the log end offset decides
    ([rep("/a", end=90, broker="1"), rep("/b", end=100, broker="2")], "3", "/b", R.BY_END),
    ([rep("/b", end=100), rep("/a", end=100, checkpoint=60)], None, "/a", R.BY_CHECKPOINT),
    ([rep("/b", end=100, checkpoint=60), rep("/a", end=100, checkpoint=None)], None, "/b", R.BY_CHECKPOINT),
    # the same in every rule: the first log dir in name order, whatever the order listed
    ([rep("/c"), rep("/a"), rep("/b")], None, "/a", R.BY_NAME),
    ([rep("/b"), rep("/c"), rep("/a")], None, "/a", R.BY_NAME),
])
def test_the_audited_replica_and_the_rule_that_chose_it(reps, leader, want, rule):
    chosen, by = R.choose(reps, leader)
    assert (chosen.log_dir, by) == (want, rule)


@pytest.mark.parametrize("other, flags", [
    (rep("/b"), []),
    (rep("/b", end=80), [R.BEHIND]),
    (rep("/b", end=120), [R.AHEAD]),
    (rep("/b", start=10), [R.LOG_START_DIFFERS]),
    (rep("/b", checkpoint=40, size=1500), [R.CHECKPOINT_DIFFERS]),  # the size difference is the cleaner's
    (rep("/b", checkpoint=None), [R.CHECKPOINT_DIFFERS]),
    (rep("/b", end=80, checkpoint=40), [R.BEHIND, R.CHECKPOINT_DIFFERS]),
    (rep("/b", size=999), [R.SIZE_DIFFERS]),  # same end, start and checkpoint: nothing explains it
    (rep("/b", end=80, size=900), [R.BEHIND]),  # lag explains the bytes
])
def test_what_a_replica_that_differs_in_one_figure_is_flagged(other, flags):
    audited = rep("/a")
    assert R.disagreement(other, audited) == flags
    rows = R.rows([other, audited], audited, R.BY_NAME)
    assert [r["log_dir"] for r in rows] == ["/a", "/b"]
    assert rows[0]["audited"] and not rows[0]["disagreement"]
    assert rows[1]["disagreement"] == ",".join(flags)
    assert rows[1]["offsets_behind"] == 100 - other.log_end_offset
    assert rows[1]["bytes_difference"] == other.bytes - 1000


def test_first_dirty_offset_is_kafkas_checkpoint_reset_to_the_log_start():
    assert rep("/a", checkpoint=50).first_dirty_offset == 50
    assert rep("/a", checkpoint=None, start=7).first_dirty_offset == 7
    assert rep("/a", checkpoint=3, start=7).first_dirty_offset == 7  # below the log start
    assert rep("/a", checkpoint=101).first_dirty_offset == 0  # past the log end


def test_log_end_offset_from_the_last_batch_and_from_an_empty_active_segment(tmp_path):
    part = tmp_path / "logdir" / "t-0"
    three_v2_batches(part / "00000000000000000000.log")  # offsets 0..5
    files = [(str(f), f.stat().st_size) for f in sorted(part.glob("*.log"))]
    end = R.log_end_offset(files, open_input, SegmentReader, segment_base)
    last = [b.last_offset for b in SegmentReader(open(files[0][0], "rb"), name=files[0][0]).batches()][-1]
    assert end == last + 1 == 6
    (part / "00000000000000000006.log").write_bytes(b"")  # a rolled, empty active segment
    files = [(str(f), f.stat().st_size) for f in sorted(part.glob("*.log"))]
    assert R.log_end_offset(files, open_input, SegmentReader, segment_base) == 6
    assert R.end_of((("t", 0, "x"), files)) == (("t", 0, "x"), 6)


def test_group_lists_each_replica_once_by_its_log_dir(tmp_path):
    files = [("/d1/t-0/00000000000000000000.log", 10), ("/d2/t-0/00000000000000000000.log", 12),
             ("/d1/t-0/00000000000000000000.log", 10),  # the same file listed twice (an input named twice)
             ("/d1/u-3/00000000000000000000.log", 5)]
    g = R.group(files, topic_partition)
    assert g == {("t", 0): {"/d1": [("/d1/t-0/00000000000000000000.log", 10)],
                            "/d2": [("/d2/t-0/00000000000000000000.log", 12)]},
                 ("u", 3): {"/d1": [("/d1/u-3/00000000000000000000.log", 5)]}}
    assert R.log_dir_of(str(Path("/x/y/t-0/00000000000000000000.log"))) == "/x/y"

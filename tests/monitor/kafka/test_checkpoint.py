"""Checkpoint files are parsed strictly: a wrong dirty offset would make every ratio wrong."""

from pathlib import Path

import pytest

from kafkatools import (compacted, create_topic, partition_dir, segment_bases, unique_topic, wait_cleaned_up_to_active,
                        wait_for, watermarks, write_rounds)
from monitor.kafka.checkpoint import CheckpointError, format_checkpoint, parse_checkpoint, read_checkpoint


def test_round_trip_and_topic_names_with_dots_and_dashes():
    entries = {("orders.v2-eu", 3): 1523, ("__consumer_offsets", 7): 88122, ("a_b", 0): 0}
    assert parse_checkpoint(format_checkpoint(entries)) == entries


def test_empty_file_and_missing_file(tmp_path):
    assert parse_checkpoint("") == {}
    assert read_checkpoint(tmp_path / "nope") == {}


@pytest.mark.parametrize("text, line, reason", [
    ("1\n0\n", 1, "unsupported version 1"),
    ("x\n", 1, "not a number"),
    ("0\n", 2, "missing entry count"),
    ("0\n2\nt 0 5\n", 4, "header says 2 entries, found 1"),  # the missing line
    ("0\n1\nt 0 5\nt 1 6\n", 2, "header says 1 entries, found 2"),
    ("0\n1\nt 0\n", 3, "expected '<topic> <partition> <offset>'"),
    ("0\n1\nt zero 5\n", 3, "not a number"),
])
def test_malformed(text, line, reason):
    with pytest.raises(CheckpointError) as exc:
        parse_checkpoint(text, "cleaner-offset-checkpoint")
    assert exc.value.line == line and reason in exc.value.reason
    assert str(exc.value).startswith(f"cleaner-offset-checkpoint: line {line}:")


CHECKPOINTS = ("cleaner-offset-checkpoint", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
               "replication-offset-checkpoint")


def test_real_broker_checkpoints_hold_what_the_broker_reports(kafka):
    """The broker's own checkpoint files parse, and for a topic of this test hold what the broker shows
    by other means: the cleaner's offset is the base offset of the active segment (from the segment
    file names) once everything below it is cleaned; the replication checkpoint is the high watermark."""
    t = create_topic(kafka.bootstrap, unique_topic("checkpoint"), partitions=2, **compacted())
    # by hand: round 0 is offsets 0..49 and a roll record at 50, round 1 is 51..100 and a roll
    # record at 101, which starts the active segment; partition 1 stays empty
    write_rounds(kafka.bootstrap, t, 2, keys=50)
    assert watermarks(kafka.bootstrap, t) == (0, 102)
    assert wait_cleaned_up_to_active(kafka.log_dir, t) == 101
    assert segment_bases(partition_dir(kafka.log_dir, t))[-1] == 101

    log_dir = Path(kafka.log_dir)
    assert read_checkpoint(log_dir / "cleaner-offset-checkpoint")[(t, 0)] == 101
    assert (t, 1) not in read_checkpoint(log_dir / "cleaner-offset-checkpoint")  # never cleaned: nothing to clean
    # the broker writes the high watermarks every replica.high.watermark.checkpoint.interval.ms (5 s)
    replication = wait_for(
        lambda: (lambda c: c if c.get((t, 0)) == 102 else None)(read_checkpoint(log_dir / "replication-offset-checkpoint")),
        30, f"the replication checkpoint to hold {t}-0 at its high watermark 102")
    assert replication[(t, 1)] == 0
    # recovery points and log start offsets are written at start and every 60 s (too late to wait
    # for this topic): all four files are there and parse strictly (read_checkpoint raises on a bad line)
    for name in CHECKPOINTS:
        assert (log_dir / name).is_file(), name
        read_checkpoint(log_dir / name)


def test_entry_lines_are_kept_and_impossible_entries_named():
    from monitor.kafka.checkpoint import describe_entry_problem, entry_problem

    lines = {}
    got = parse_checkpoint("0\n3\na 0 5\nb -1 0\nc 2 -7\n", "cp", lines)
    assert got == {("a", 0): 5, ("b", -1): 0, ("c", 2): -7}  # well formed: Kafka's parser takes these too
    assert lines == {("a", 0): 3, ("b", -1): 4, ("c", 2): 5}
    assert entry_problem(0, 5) is None and entry_problem(0, 5, log_end_offset=5) is None
    assert entry_problem(0, 6, log_end_offset=5) == "offset 6 is past the log end offset 5"
    assert entry_problem(-1, 0) == "negative partition -1"
    assert entry_problem(2, -7) == "negative offset -7"
    assert describe_entry_problem("cp", 5, "c", 2, -7, "negative offset -7") == \
        "cp: line 5: c 2 -7: negative offset -7; the partition's compaction figures are unknown"


@pytest.mark.parametrize("text, line, reason", [
    ("0\n1\nt 0 99999999999999999999\n", 3, "not a number in 't 0 99999999999999999999'"),  # past a Java long
    ("0\n1\nt 2147483648 5\n", 3, "not a number"),  # past a Java int
    ("0\n2\nt 0 5\n\nt 1 6\n", 4, "got a blank line"),
    ("\x00" * 100 + "\n", 1, "version '" + "\\x00" * 15 + "...' (100 characters) is not a number"),
])
def test_what_kafka_would_not_read_is_named_with_an_excerpt(text, line, reason):
    with pytest.raises(CheckpointError) as exc:
        parse_checkpoint(text, "cp")
    assert exc.value.line == line and reason in exc.value.reason, exc.value.reason


def test_trailing_blank_lines_and_crlf_are_fine():
    assert parse_checkpoint("0\r\n1\r\nt 0 5\r\n\n\n") == {("t", 0): 5}


def test_a_damaged_file_is_read_in_bounded_pieces_and_stops_at_the_first_bad_line(tmp_path):
    """A 64 MiB file of NULs (a power loss): the read stops after one piece, the message is short."""
    import resource

    cp = tmp_path / "cleaner-offset-checkpoint"
    with open(cp, "wb") as fh:
        fh.truncate(64 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(CheckpointError) as exc:
        read_checkpoint(cp)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert exc.value.line == 1 and len(str(exc.value)) < 200 + len(str(cp)), str(exc.value)
    assert grown_kib < 16 * 1024, grown_kib
    # a long file of good lines then one bad line: everything before it read, the bad one named
    good = "".join(f"t {p} {p}\n" for p in range(100_000))
    cp.write_text(f"0\n100001\n{good}t x\x00 5\n")
    with pytest.raises(CheckpointError) as exc:
        read_checkpoint(cp)
    assert exc.value.line == 100_003 and "'t x\\x00 5'" in exc.value.reason


def test_a_checkpoint_that_is_a_directory_names_the_file_and_no_line(tmp_path):
    """No line of it was read: the message says the file cannot be read, never "line 0"."""
    cp = tmp_path / "cleaner-offset-checkpoint"
    cp.mkdir()
    with pytest.raises(CheckpointError) as exc:
        read_checkpoint(cp)
    assert exc.value.line is None and str(exc.value).startswith(f"{cp}: cannot read: not a regular file")
    assert "line" not in str(exc.value), str(exc.value)

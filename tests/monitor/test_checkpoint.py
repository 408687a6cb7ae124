"""Checkpoint files are parsed strictly: a wrong dirty offset would make every ratio wrong."""

import pytest

from monitor.checkpoint import CheckpointError, format_checkpoint, parse_checkpoint, read_checkpoint


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


def test_real_broker_checkpoint(kafka):
    """The broker's own files parse (version 0, counts consistent)."""
    from pathlib import Path

    for name in ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint", "replication-offset-checkpoint"):
        path = Path(kafka.log_dir) / name
        if path.exists():
            read_checkpoint(path)

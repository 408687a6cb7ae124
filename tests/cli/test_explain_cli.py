"""``compaction-monitor explain``'s command line on a log dir of real segment files: selectors, the text
form, and the bad inputs (a selector matching nothing, no log dir), each named in the message."""

from __future__ import annotations

import json

from clirun import run_cli
from monitor.kafka.checkpoint import format_checkpoint
from recordfixtures import items, v2, write


def run(*args):
    return run_cli("explain", *args)


def log_dir(tmp_path):
    for topic in ("orders", "orders-eu"):  # a topic whose name ends like a partition of another
        for p in (0, 1):
            write(tmp_path / f"{topic}-{p}" / "00000000000000000000.log", [v2(items(range(0, 20)))])
            write(tmp_path / f"{topic}-{p}" / "00000000000000000020.log", [v2(items(range(20, 21)))])
    (tmp_path / "cleaner-offset-checkpoint").write_text(format_checkpoint(
        {(t, p): 20 for t in ("orders", "orders-eu") for p in (0, 1)}))
    return str(tmp_path)


def test_selectors_pick_topics_and_partitions(tmp_path):
    d = log_dir(tmp_path)
    got = run("orders-1", "orders-eu", "--log-dir", d, "--format", "json")
    assert got.returncode == 0, got.stderr
    picked = [(c["topic"], c["partition"]) for c in json.loads(got.stdout)]
    assert picked == [("orders", 1), ("orders-eu", 0), ("orders-eu", 1)]
    assert {c["cause"] for c in json.loads(got.stdout)} == {"active_segment_only"}  # cleaned up to the active one
    text = run("orders-0", "--log-dir", d)
    assert text.returncode == 0 and "cause:     active_segment_only" in text.stdout
    # its time roll is long due (the records are years old): only an append rolls it, no config is sooner
    assert "fix:       nothing to change: the roll is due and happens on the next append" in text.stdout


def test_bad_input_is_named(tmp_path):
    d = log_dir(tmp_path)
    got = run("payments", "--log-dir", d)
    assert got.returncode == 2 and f"payments: no such compacted topic or partition in {d}" in got.stderr
    got = run("orders")
    assert got.returncode == 2 and "no log dir" in got.stderr

"""Names Kafka would not create or load, met by every command that walks log dirs (issue #35, point 4):
a stray ``².log``, ``².snapshot``, ``5.log`` or ``99999999999999999999999.log`` in a partition folder,
partition folders ``orders-3``, ``orders-03`` and ``orders-٣`` (Kafka loads all three as partition 3 and
refuses to start), and ``t-99999999999999999999`` (no int32: no partition). Each ends in one short line
naming it, the right exit status and no traceback; the page of ``collect --once`` has no duplicate
series and its log-dir source stays up. The command line in-process (tests/clirun.py), on files made here."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from clirun import Ran, run_cli
from monitor.kafka.checkpoint import format_checkpoint
from recordfixtures import three_v2_batches

STRAYS = ["².log", "².snapshot", "5.log", "99999999999999999999999.log"]
MAX_LINE = 400


run = run_cli


def lines_of(r: Ran, status: int) -> list[str]:
    assert r.returncode == status, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "ValueError" not in r.stderr, r.stderr[-2000:]
    lines = r.stderr.splitlines()
    assert all(len(x) <= MAX_LINE for x in lines), [len(x) for x in lines]
    return lines


def log_dir(tmp_path, case: str):
    """A log dir of the compacted topics ``orders`` (partition 3, or its duplicates) and ``keep``
    (partition 0), each a segment of offsets 0..5, with ``case`` added."""
    logs = tmp_path / "logs"
    three_v2_batches(logs / "keep-0" / "00000000000000000000.log")
    folders = ["orders-3", "orders-03", "orders-٣"] if case == "duplicates" else ["orders-3"]
    for f in folders:
        three_v2_batches(logs / f / "00000000000000000000.log")
    if case == "beyond-int32":
        three_v2_batches(logs / "t-99999999999999999999" / "00000000000000000000.log")
    elif case in STRAYS:
        (logs / "keep-0" / case).write_bytes(b"\x00" * 64)
    (logs / "cleaner-offset-checkpoint").write_text(format_checkpoint({("orders", 3): 0, ("keep", 0): 0}))
    return logs


def named(case: str) -> str:
    return {"duplicates": "duplicate log directories for orders-3: orders-03, orders-3, orders-٣",
            "beyond-int32": "t-99999999999999999999: ignored: partition '99999999999999999999' is not a partition"
            }.get(case, f"keep-0/{case}: ignored: ")


CASES = STRAYS + ["duplicates", "beyond-int32"]


@pytest.mark.parametrize("case", CASES)
def test_logdir(case, tmp_path):
    logs = log_dir(tmp_path, case)
    r = run("logdir", logs, "--format", "json")
    lines = lines_of(r, 1 if case == "duplicates" else 0)
    assert len([x for x in lines if named(case) in x]) == 1 and len(lines) == 1, lines
    rows = json.loads(r.stdout)
    assert Counter((x["topic"], x["partition"]) for x in rows) == {("keep", 0): 1, ("orders", 3): 1}
    keep = next(x for x in rows if x["topic"] == "keep")
    assert keep["fault"] is None and keep["log_end_offset"] == 6 and keep["active_segment_base_offset"] == 0
    orders = next(x for x in rows if x["topic"] == "orders")
    if case == "duplicates":  # a fault on the partition, its figures unknown
        assert named(case) in orders["fault"] and orders["cause"]["cause"] == "unknown"
        assert orders.get("log_end_offset") is None
    else:
        assert orders["fault"] is None and orders["log_end_offset"] == 6


@pytest.mark.parametrize("case", CASES)
def test_explain(case, tmp_path):
    logs = log_dir(tmp_path, case)
    r = run("explain", "--log-dir", logs, "--format", "json")
    lines = lines_of(r, 1 if case == "duplicates" else 0)
    assert len([x for x in lines if named(case) in x]) == 1 and len(lines) == 1, lines
    causes = json.loads(r.stdout)
    assert Counter((x["topic"], x["partition"]) for x in causes) == {("keep", 0): 1, ("orders", 3): 1}


@pytest.mark.parametrize("case", STRAYS)
def test_inspect_of_a_partition_folder_with_a_stray_file(case, tmp_path):
    logs = log_dir(tmp_path, case)
    r = run("inspect", logs / "keep-0", "--format", "jsonl")
    lines = lines_of(r, 0)
    assert [x for x in lines if "ignored" in x] == [f"inspect: {logs}/{named(case)}" + x.split(named(case), 1)[1]
                                                    for x in lines if "ignored" in x]
    assert len([x for x in lines if "ignored" in x]) == 1, lines
    records = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["offset"] for x in records] == list(range(6))  # the segment's, nothing from the stray file


@pytest.mark.parametrize("folder", ["orders-03", "orders-٣", "t-99999999999999999999"])
def test_inspect_of_a_folder_kafka_would_not_write_reads_its_segments(folder, tmp_path):
    """``inspect`` reads what it is given: a folder's segments are its ``<20 digits>.log`` files
    whatever the folder is called."""
    logs = log_dir(tmp_path, "duplicates" if folder != "t-99999999999999999999" else "beyond-int32")
    r = run("inspect", logs / folder, "--format", "jsonl", "--stats")
    lines_of(r, 0)
    assert '"records": 6' in r.stdout or '"records":6' in r.stdout, r.stdout[-1000:]


@pytest.mark.parametrize("case", CASES)
def test_collect_once(case, tmp_path):
    logs = log_dir(tmp_path, case)
    r = run("collect", "--once", "--log-dir", logs)
    lines = lines_of(r, 1 if case == "duplicates" else 0)  # logdir's exit code (test_logdir): a partition's fault
    assert len([x for x in lines if named(case) in x]) == 1 and len(lines) == 1, lines
    samples = [x for x in r.stdout.splitlines() if x and not x.startswith("#")]
    series = Counter(x.rsplit(" ", 1)[0] for x in samples)
    assert [s for s, n in series.items() if n > 1] == []  # no duplicate series
    assert any(x.startswith("kafka_compaction_source_up{") and 'kind="log_dirs"' in x and x.endswith(" 1.0")
               for x in samples), r.stdout[-2000:]
    assert not [x for x in samples if 'partition="99999999999999999999"' in x or 'partition="03"' in x]
    causes = [x for x in samples if x.startswith("kafka_compaction_partition_compaction_cause{")]
    assert len([x for x in causes if 'topic="orders"' in x]) == 1 and len([x for x in causes if 'topic="keep"' in x]) == 1
    if case == "duplicates":
        assert 'cause="unknown"' in next(x for x in causes if 'topic="orders"' in x)
        assert not [x for x in samples if 'topic="orders"' in x and x.startswith("kafka_compaction_partition_log_bytes")]
    else:  # keep-0's bytes are its segment's, none of the stray file's
        size = (logs / "keep-0" / "00000000000000000000.log").stat().st_size
        assert [x.rsplit(" ", 1)[1] for x in samples
                if x.startswith("kafka_compaction_topic_log_bytes{") and 'topic="keep"' in x] == [f"{size:.1f}"]


@pytest.mark.parametrize("selector, status", [("orders-²", 2), ("orders-99999999999999999999", 2), ("orders-03", 0)])
def test_explain_selectors_by_the_same_rule(selector, status, tmp_path):
    """A selector names a partition as Kafka reads a folder name (``orders-03`` is partition 3); one
    that names none (``orders-²``: was a ValueError) is one line and exit 2."""
    logs = log_dir(tmp_path, "none")
    r = run("explain", selector, "--log-dir", logs, "--format", "json")
    lines = lines_of(r, status)
    if status == 2:
        assert lines == [f"explain: {selector}: no such compacted topic or partition in {logs}"]
    else:
        assert [(x["topic"], x["partition"]) for x in json.loads(r.stdout)] == [("orders", 3)]

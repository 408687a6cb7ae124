"""The text forms of ``logdir`` and ``explain`` (cli/logdir_cmd.py, cli/explain_cmd.py; the goldens hold
their JSON) made from the one-shot scan's facts: a partition read and one whose segments kept changing
(a swap in progress) both listed, the second with its fault and its unknown cause in either command, and
the same cause in the table as in ``explain``. The log dir's segments come from kafka-python's builders."""

from __future__ import annotations

import io
import json

from cli.explain_cmd import run_explain
from cli.logdir_cmd import COLUMNS, run_logdir
from monitor.settings.config import Config
from recordfixtures import items, v2, write


def columns(line: str) -> list[str]:
    """A row of logdir's table cut at its columns (a figure for people may hold a space: "1.5 KiB")."""
    out, at = [], 0
    for _, width in COLUMNS:
        out.append(line[at:at + width].strip())
        at += width + 2
    return out


def _log_dir(root):
    write(root / "orders-0" / f"{0:020d}.log", [v2(items(range(0, 30), "o", distinct=10))])
    write(root / "orders-0" / f"{30:020d}.log", [v2(items(range(30, 40), "o", distinct=10))])
    write(root / "orders-1" / f"{0:020d}.log", [v2(items(range(0, 6), "x"))])
    (root / "orders-1" / f"{0:020d}.index.swap").write_bytes(b"\0" * 16)
    (root / "cleaner-offset-checkpoint").write_text("0\n2\norders 0 0\norders 1 0\n")
    return root


def test_logdir_and_explain_say_the_same_causes_and_the_unreadable_partitions_fault(tmp_path):
    d = _log_dir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    # the partition a swap kept changing is said and unknown, but no fault: exit 0 (cli.oneshot.NOT_A_FAULT)
    assert run_logdir([d], config=Config(), out=out, err=err) == 0
    table = out.getvalue().splitlines()
    rows = {f"{r[0]}-{r[1]}": r for r in (columns(ln) for ln in table[1:] if ln.startswith("orders "))}
    assert rows["orders-1"][2:9] == ["-"] * 7 and rows["orders-1"][9] == "unknown"
    [fault] = [ln for ln in table if ln.startswith("fault: orders-1: ")]
    assert "a segment swap in progress" in fault
    assert f"logdir: orders-1: {d}/orders-1: its segments kept changing" in err.getvalue()

    out, err = io.StringIO(), io.StringIO()
    assert run_explain([], config=Config(), log_dirs=[d], out=out, err=err) == 0
    text = out.getvalue()
    assert text.index("orders-0  (") < text.index("orders-1\n")  # sorted; the unreadable one has no log dir
    assert f"  cause:     {rows['orders-0'][9]}" in text and "  cause:     unknown" in text
    assert "  reason:    " + fault.removeprefix("fault: orders-1: ") in text

    out = io.StringIO()
    assert run_explain(["orders-1"], config=Config(), log_dirs=[d], fmt="json", out=out, err=io.StringIO()) == 0
    [one] = json.loads(out.getvalue())
    assert (one["cause"], one["log_dir"], one["evidence"]["reason"]) == (
        "unknown", None, fault.removeprefix("fault: orders-1: "))

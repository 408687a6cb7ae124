"""The text forms of ``logdir`` and ``explain`` read in people's units (issue #33, point 5): no raw
``oldest tomb s 95706255`` or ``82709794816 B free``, no Python ``True``/``False``/``None``, no forecast
"at 0 B/s", the causes that could not be checked said once. The JSON keeps its base units (the goldens).
A log dir of real segment files (kafka-python's builders, tests/recordfixtures.py), records years old."""

from __future__ import annotations

import io
import re

from cli.explain_cmd import run_explain
from cli.logdir_cmd import run_logdir
from monitor.settings.config import Config
from recordfixtures import items, v2, write

COMPACTED = {"cleanup.policy": "compact"}
RAW_BYTES = re.compile(r"\b\d{4,} B\b")  # a size of 1 KiB or more printed in bytes


def _log_dir(root):
    """orders-0: cleaned up to a big clean section, a small dirty one (below the ratio) and tombstones;
    fresh-0: never cleaned (no checkpoint entry), given as compacted."""
    write(root / "orders-0" / f"{0:020d}.log", [v2(items(range(0, 400), "o", tombstone_every=7))])
    write(root / "orders-0" / f"{400:020d}.log", [v2(items(range(400, 405), "o"))])
    write(root / "orders-0" / f"{405:020d}.log", [v2(items(range(405, 406), "o"))])
    write(root / "fresh-0" / f"{0:020d}.log", [v2(items(range(0, 30), "f"))])
    write(root / "fresh-0" / f"{30:020d}.log", [v2(items(range(30, 31), "f"))])
    (root / "cleaner-offset-checkpoint").write_text("0\n1\norders 0 400\n")
    return root


def _run(cmd, d, **kw):
    out, err = io.StringIO(), io.StringIO()
    overrides = {"orders": COMPACTED, "fresh": COMPACTED}
    if cmd == "logdir":
        code = run_logdir([d], config=Config(), out=out, err=err, topic_overrides=overrides, **kw)
    else:
        code = run_explain([], config=Config(), log_dirs=[d], out=out, err=err, topic_overrides=overrides, **kw)
    assert code == 0, err.getvalue()
    return out.getvalue()


def test_logdir_prints_sizes_ages_and_yes_no_for_people(tmp_path):
    d = _log_dir(tmp_path)
    text = _run("logdir", d)
    head = text.splitlines()[0]
    assert "oldest tomb" in head and "oldest tomb s" not in head and " B " not in head + " "
    assert not re.search(r"\b(True|False|None)\b", text), text
    assert not RAW_BYTES.search(text), text
    [free] = [ln for ln in text.splitlines() if ln.startswith("free space: ")]
    assert re.search(r": \d+(\.\d)? (B|KiB|MiB|GiB|TiB|PiB) free; ", free), free
    orders = next(ln for ln in text.splitlines() if ln.startswith("orders "))
    assert re.search(r"\b\d+\.\d KiB\b", orders) and re.search(r"\b\d+(\.\d)? d\b", orders), orders  # clean, age
    assert re.search(r"\b(yes|no)\b", orders)  # the JSON keeps the base units: tests/golden/logdir.json


def test_explain_never_prints_none_nor_a_rate_of_0_and_says_the_unchecked_causes_once(tmp_path):
    d = _log_dir(tmp_path)
    text = _run("explain", d)
    assert not re.search(r"\bNone\b|\bTrue\b|\bFalse\b", text), text
    # fresh-0 has no checkpoint entry: said in words, not "checkpoint None"
    fresh = text[text.index("fresh-0"):text.index("orders-0")]
    assert "no cleaner checkpoint yet: the cleaner has not cleaned this partition" in fresh
    # the one-shot write rate of records years old is tiny, not 0: no forecast "at 0 B/s ... in 5.6 d"
    assert "0 B/s" not in text and "< 0.01 B/s" in text
    assert not RAW_BYTES.search(text), text
    # each cause that could not be checked: one line after the partitions, not one per partition
    assert text.count("log-cleaner.log was not read") == 1
    assert text.index("not checked (an input was not given):") > text.index("orders-0")
    assert "unchecked:" not in text


def test_a_forecast_from_a_write_rate_of_0_is_unknown_with_the_reason(tmp_path):
    from monitor.verdicts.causes import explain
    from monitor.verdicts.facts import WriteRate
    from cli.explain_cmd import format_cause
    from causefixtures import T0, build, plain

    state, cfg, _ = build(tmp_path, [plain(0, 40), plain(40, 45), plain(45, 46)], checkpoint=40)
    c = explain(state, cfg, now_ms=T0 + 10_000, write_rate=WriteRate(0.0, "measured between refreshes"))
    assert c.cause == "below_threshold"
    text = format_cause(c, None)
    line = next(ln for ln in text.splitlines() if "ratio above min.cleanable.dirty.ratio" in ln)
    assert "unknown (no writes" in line and " in " not in line.split(":", 2)[2].split("(")[0]
    assert "rate:      0 B/s (measured between refreshes)" in text


def test_inspect_stats_text_gives_sizes_for_people_beside_the_exact_bytes(tmp_path):
    from cli.inspect_cmd import run_inspect

    seg = write(tmp_path / "orders-0" / f"{0:020d}.log", [v2(items(range(0, 400), "o"))])
    out, err = io.StringIO(), io.StringIO()
    assert run_inspect([str(seg.path)], stats=True, out=out, err=err) == 0, err.getvalue()
    size = seg.path.stat().st_size
    line = next(ln for ln in out.getvalue().splitlines() if ln.strip().startswith("bytes "))
    assert re.search(r"bytes +\d+\.\d KiB  \(\d+ B; keys \d+(\.\d)? (B|KiB), values \d+(\.\d)? (B|KiB)\)", line), line
    assert int(line.split("(")[1].split(" B;")[0]) <= size


def test_an_unchecked_cause_of_some_partitions_names_them_and_never_lists_thousands():
    from types import SimpleNamespace as Cause

    from cli.explain_cmd import format_unchecked

    causes = [Cause(topic="t", partition=i, unchecked={"cleaner_dead": "no gauge"} | (
        {"uncleanable": "no cleaner log"} if i < 2000 else {})) for i in range(3000)]
    causes.append(Cause(topic="gone", partition=0, unchecked={}))  # not judged (unknown): checks nothing
    lines = format_unchecked(causes).splitlines()
    assert lines[1] == "  cleaner_dead: no gauge"  # every judged partition: no names
    assert lines[2].startswith("  uncleanable: no cleaner log [t-0, t-1, t-2, t-3, t-4, ... (2000 of 3001 ")
    assert len(lines) == 3

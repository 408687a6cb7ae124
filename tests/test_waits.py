"""Tests that cannot lie about time (tests/waiting.py's rule, checked over the whole tests/ tree):

- no ``sleep`` as synchronisation: a test waits for the condition it means (``waiting.wait_for``);
  a sleep is kept only where time itself must pass (a segment rolls on timestamps' distance, a
  retention horizon must go by, a writer paces itself), and a comment on its line says why;
- no wall-clock assertion: ``assert took < ...`` passes or fails with the machine's load, not with
  the code. Assert what happened instead (how many calls were made, which error came back).

Checked by reading the code (``ast``), never by running it."""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CLOCKS = {"monotonic", "time", "perf_counter", "monotonic_ns", "time_ns", "perf_counter_ns"}


def _is_clock_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CLOCKS
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "time")


def _is_sleep_call(node: ast.AST) -> bool:
    f = node.func if isinstance(node, ast.Call) else None
    return (isinstance(f, ast.Attribute) and f.attr == "sleep" and isinstance(f.value, ast.Name)
            and f.value.id in {"time", "asyncio"}) or (isinstance(f, ast.Name) and f.id == "sleep")


def problems(source: str, name: str) -> list[str]:
    """What breaks the rule in one file's ``source``: ``name:line: why``."""
    if "sleep" not in source and "time" not in source:
        return []
    tree = ast.parse(source)
    commented = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                 if tok.type == tokenize.COMMENT}
    out = []  # (line, why)
    elapsed = set()  # names bound to a clock difference: ``took = time.monotonic() - started``
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp) \
                and isinstance(node.value.op, ast.Sub) and _is_clock_call(node.value.left):
            elapsed.update(t.id for t in node.targets if isinstance(t, ast.Name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_sleep_call(node) and node.lineno not in commented:
            out.append((node.lineno, "a sleep with no comment on its line saying why time must pass "
                        "(wait for the condition instead: waiting.wait_for)"))
        if isinstance(node, ast.Assert):
            inner = list(ast.walk(node.test))
            if any(_is_clock_call(n) for n in inner) or any(isinstance(n, ast.Name) and n.id in elapsed
                                                            for n in inner):
                out.append((node.lineno, "an assertion on the wall clock (assert what happened instead)"))
    return [f"{name}:{line}: {why}" for line, why in sorted(out)]


SAMPLE = textwrap.dedent('''
    import time

    def test_waits_badly():
        time.sleep(3)
        time.sleep(0.1)  # pacing: a few hundred a second
        started = time.monotonic()
        took = time.monotonic() - started
        assert took < 5
        assert time.time() > 0
        assert started  # a clock reading itself, not a duration asserted
''')


def test_the_rule_finds_an_uncommented_sleep_and_a_wall_clock_assertion():
    found = problems(SAMPLE, "sample.py")
    assert [p.split(": ", 1)[0] for p in found] == ["sample.py:5", "sample.py:9", "sample.py:10"], found
    assert "sleep" in found[0] and "wall clock" in found[1]


def test_no_test_sleeps_to_synchronise_or_asserts_on_the_wall_clock():
    found = [p for path in sorted(TESTS.rglob("*.py"))
             for p in problems(path.read_text(), str(path.relative_to(TESTS.parent)))]
    assert found == [], "\n".join(found)

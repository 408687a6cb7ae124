"""The test tiers keep matching their names (tests/tiers.py, applied by tests/conftest.py), checked without
timing anything: the rule finds a process however far behind our helpers it is started, leaves pure code
in the fast tier, names only what exists, and the fast tier's guard sees a process the rule could not.
The sample code is compiled from text in the tests (``SAMPLES``) so that these tests, which only read
it, are not themselves judged by what it would start."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

import tiers

TESTS = Path(__file__).resolve().parent

SAMPLES = textwrap.dedent('''
    import functools
    import os
    import subprocess

    def runs_a_child():
        return subprocess.run(["true"])

    def calls_a_helper_that_runs_one():
        return [runs_a_child() for _ in range(2)]

    run_later = functools.partial(runs_a_child)

    def calls_a_partial():
        return run_later()

    def imports_it_inside():
        from subprocess import check_output
        return check_output(["true"])

    def spawns():
        return os.posix_spawn("/bin/true", ["true"], os.environ)

    class Spawner:
        def start(self):
            return spawns()

    def builds_a_spawner():
        return Spawner()

    def serves(httpd):
        httpd.serve_forever()

    def pure(values):
        return sorted(os.path.basename(v) for v in values)

    def uses_pure():
        return pure(["a/b"]), len(subprocess.list2cmdline(["x"]))
''')


@pytest.fixture(scope="module")
def samples():
    """SAMPLES as if they were functions of this module (the rule follows only code of this repository)."""
    namespace = {"__name__": __name__}
    exec(compile(SAMPLES, __file__, "exec"), namespace)  # noqa: S102 - our own text, read and never run
    return namespace


@pytest.mark.parametrize("name, why", [pytest.param(name, why, id=name) for name, why in [
    ("runs_a_child", "subprocess.run"),
    ("calls_a_helper_that_runs_one", "runs_a_child -> starts a process (subprocess.run)"),
    ("calls_a_partial", "runs_a_child -> starts a process (subprocess.run)"),
    ("imports_it_inside", "subprocess.check_output"),
    ("builds_a_spawner", "Spawner.start -> test_tiers.spawns -> starts a process (os.posix_spawn)"),
    ("serves", "serve_forever"),
]])
def test_the_rule_finds_what_is_slow_behind_our_own_code(samples, name, why):
    found = tiers.Rule().of_function(samples[name])
    assert found is not None and why in found, found


def test_pure_code_stays_in_the_fast_tier(samples):
    """Naming the subprocess module for a string helper (list2cmdline) starts nothing."""
    rule = tiers.Rule()
    assert rule.of_function(samples["pure"]) is None
    assert rule.of_function(samples["uses_pure"]) is None


def test_the_cli_in_process_is_fast_and_as_a_child_slow():
    """The parser names every subcommand's function (demo starts a broker): the rule does not follow it, so a
    test that runs the CLI in-process is judged by what it runs; `python -m cli` as a child is slow."""
    from cli.main import main

    rule = tiers.Rule()
    assert rule.of_function(main) is None
    assert rule.of_function(importlib.import_module("clirun").run_cli) is None  # tests' in-process runs
    assert rule.of_function(importlib.import_module("collecting").collect_once) is None
    assert "subprocess.Popen" in rule.of_function(importlib.import_module("procs").run_measured)


def test_every_entry_of_the_rule_names_what_exists():
    for module in tiers.SLOW_MODULES:
        assert (TESTS / module).is_file(), f"tiers.SLOW_MODULES names {module}: no such file under tests/"
    for dotted in tiers.NOT_FOLLOWED:
        module, _, name = dotted.rpartition(".")
        assert callable(getattr(importlib.import_module(module), name, None)), f"tiers.NOT_FOLLOWED: {dotted}"
    defined = set()
    for conftest in TESTS.rglob("conftest.py"):
        defined |= set(re.findall(r"^def (\w+)\(", conftest.read_text(), re.M))
    assert tiers.SLOW_FIXTURES <= defined, tiers.SLOW_FIXTURES - defined


def test_this_run_marks_what_the_rule_finds(request):
    """Whatever this run collected: every test that uses a slow fixture or that the rule finds slow carries
    the mark (so `-m "not slow"` leaves it out), and every test that carries it names why, by hand or by rule."""
    rule = tiers.Rule()
    for item in request.session.items:
        why = tiers.why_slow(item, rule)
        if why:
            assert item.get_closest_marker("slow") is not None, f"{item.nodeid}: {why}, not marked slow"


def test_the_guard_sees_a_process_started_in_any_way():
    """What the fast tier's guard (conftest._no_process_in_the_fast_tier) fails a test for. This test starts
    processes, so the rule puts it in the slow tier by itself."""
    with tiers.processes_started() as started:
        subprocess.run(["true", "1"], check=True)
        os.waitpid(os.posix_spawn("/bin/true", ["true", "2"], {}), 0)
    assert started[0] == "true 1" and started[-1] == "true 2", started
    assert "recording" not in repr(os.posix_spawn) and "recording" not in repr(subprocess.Popen._execute_child)


def test_the_guard_itself_is_in_the_slow_tier_and_the_rest_of_this_module_is_not(request):
    """The rule puts a test in its tier by what it runs: this module's one test that starts processes is
    slow, the ones that only read code are fast (whichever of them this run collected)."""
    guard = "test_the_guard_sees_a_process_started_in_any_way"  # by name: naming the function would make this
    # test reach what it runs, and the rule would rightly call this one slow too
    marks = {item.originalname: item.get_closest_marker("slow") for item in request.session.items
             if item.path == Path(__file__)}
    assert marks.get(guard, "slow") is not None
    assert all(mark is None for name, mark in marks.items() if name != guard), marks

"""cli/extras.py: the modules it expects of each extra are those pyproject.toml's extras install, and a
subcommand whose extra is missing says which extra to install, in one line, exit 2.

Here the extras' modules are made unimportable the way Python itself provides (``sys.modules[name] =
None``, import then raises ModuleNotFoundError): fast, and the same process tree as a user's. The real
thing, a fresh venv from a plain ``pip install .``, is tests/test_install.py (slow)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pyproject_deps import distributions, modules

from cli import extras

HEAVY = sorted(set(extras.EXTRAS["all"]))


@pytest.mark.slow  # reads the metadata of every installed distribution
def test_extras_name_the_modules_pyproject_installs():
    for extra in ("audit", "dashboard", "all"):
        assert set(extras.EXTRAS[extra]) == modules(distributions(extra)), extra


def test_every_subcommand_needing_an_extra_is_one_of_the_parsers():
    from cli.main import build_parser

    choices = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert set(extras.SUBCOMMANDS) <= set(choices)
    assert set(extras.SUBCOMMANDS.values()) <= set(extras.EXTRAS)


def without(blocked: list[str], *args: str) -> subprocess.CompletedProcess:
    """``compaction-monitor ARGS`` in a process where the ``blocked`` modules cannot be imported."""
    code = ("import sys; sys.modules.update(dict.fromkeys(sys.argv[1].split(','), None)); "
            "from cli.main import main; sys.exit(main(sys.argv[2:]))")
    return subprocess.run([sys.executable, "-c", code, ",".join(blocked), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("argv, extra, blocked", [
    (["audit", "--input", "x", "--out", "y"], "audit", ["pyspark"]),
    (["audit", "--help"], "audit", HEAVY),
    (["dashboard", "--port", "0"], "dashboard", ["streamlit"]),
    (["demo", "--duration", "1"], "all", ["pandas"]),
])
def test_a_subcommand_without_its_extra_says_which_to_install(argv, extra, blocked):
    r = without(blocked, *argv)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and r.stdout == "", r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert f"pip install 'kafka-compaction-monitor[{extra}]'" in lines[0], lines[0]
    assert all(m in lines[0] for m in blocked if m in extras.EXTRAS[extra]), lines[0]


def test_the_core_subcommands_run_without_any_extra(tmp_path):
    """The slim subcommands' whole import graph loads with every extra's module missing."""
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - name: c1\n    bootstrap_servers: 127.0.0.1:1\n")
    r = without(HEAVY, "config", "check", str(cfg))
    assert r.returncode == 0, r.stderr
    assert "c1" in r.stdout
    r = without(HEAVY, "rules", "render")
    assert r.returncode == 0, r.stderr
    assert "groups:" in r.stdout
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n0\n")  # a broker's log dir, holding no partition yet
    r = without(HEAVY, "logdir", str(tmp_path), "--format", "json")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    code = ("import sys; sys.modules.update(dict.fromkeys(sys.argv[1].split(','), None)); "
            "import collectors.app, collectors.admin, collectors.exporter, collectors.cleaner_metrics, "
            "collectors.cleaner_log, cli.main, cli.inspect_cmd, cli.demo, alerts.render, alerts.promtool_tests, "
            "localkafka.broker; print('ok')")
    r = subprocess.run([sys.executable, "-c", code, ",".join(HEAVY)], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "ok", r.stderr

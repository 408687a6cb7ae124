"""cli/extras.py: the modules it expects of each extra are those pyproject.toml's extras install, and a
subcommand whose extra is missing says which extra to install, in one line, exit 2.

Here the extras' modules are made unimportable the way Python itself provides (``sys.modules[name] =
None``, import then raises ModuleNotFoundError): fast, and the same process tree as a user's. The real
thing, a fresh venv from a plain ``pip install .``, is tests/test_install.py (slow)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

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
    # run from a clone (this checkout): the command names it, and that folder declares the extra
    m = re.search(r"pip install -e '(.+)\[(\w+)\]'$", lines[0])
    assert m and m.group(2) == extra, lines[0]
    assert Path(m.group(1), "pyproject.toml").is_file() and extra in distributions_of(Path(m.group(1))), lines[0]
    assert all(m in lines[0] for m in blocked if m in extras.EXTRAS[extra]), lines[0]


def distributions_of(clone: Path) -> set[str]:
    """The extras the pyproject.toml of ``clone`` declares."""
    text = (clone / "pyproject.toml").read_text()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^(\w+)\s*=", section, re.M))


def test_without_a_clone_the_answer_is_a_command_a_user_can_run(tmp_path):
    """Installed from a wheel (no pyproject.toml beside the packages): the published name would be a
    dead end (nothing is on PyPI), so the line says how to install from a clone or from its wheel."""
    line = extras.install_command("dashboard", source=tmp_path)
    assert "pip install '.[dashboard]'" in line and "pip wheel --no-deps ." in line, line
    assert "kafka-compaction-monitor" not in line


PUBLISHED = re.compile(r"pip install ['\"]?kafka-compaction-monitor\b")


def test_nothing_in_the_repository_tells_users_to_install_a_package_that_is_not_published():
    root = Path(__file__).resolve().parents[2]
    found = []
    for folder, dirs, names in os.walk(root):  # the tracked tree: no hidden folders, venvs or built site
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("site", "build", "dist", "node_modules")]
        for name in names:
            f = Path(folder, name)
            if f.suffix in (".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg") or name in ("dev", "Dockerfile"):
                found += [f"{f.relative_to(root)}:{n}" for n, ln in enumerate(f.read_text(errors="replace").splitlines(), 1)
                          if PUBLISHED.search(ln)]
    assert found == [], found


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
            "import collectors.app, collectors.admin.source, collectors.export.exporter, collectors.jmx.gauges, "
            "collectors.logdirs.cleaner_log, cli.main, cli.inspect_cmd, cli.demo, alerts.render, alerts.promtool_tests, "
            "localkafka.broker; print('ok')")
    r = subprocess.run([sys.executable, "-c", code, ",".join(HEAVY)], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "ok", r.stderr

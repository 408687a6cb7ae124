"""A ``--config`` that is a folder or a symlink loop, or a path flag left empty (issue #35, point 5): one
line naming the path and what the system says, lowercase as every other errno line ("too many levels of
symbolic links"), exit 2, for every subcommand that reads one. The CLI as a user runs it, on paths made here."""

from __future__ import annotations

import os

import pytest

from clirun import run_cli


@pytest.mark.parametrize("case, says", [("folder", "not a regular file (a directory)"),
                                        ("loop", "cannot read: too many levels of symbolic links")])
@pytest.mark.parametrize("command", [["collect", "--once"], ["logdir", "."], ["rules", "render"]])
def test_a_config_that_is_no_file_is_one_line_exit_2(case, says, command, tmp_path):
    path = tmp_path / "monitor.yaml"
    if case == "folder":
        path.mkdir()
    else:
        os.symlink(path, path)
    r = run_cli(*command, "--config", str(path), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [f"compaction-monitor: config error: {path}: (file): {says}"], r.stderr


@pytest.mark.parametrize("args, flag", [
    (["collect", "--once", "--log-dir", ""], "--log-dir"),
    (["collect", "--once", "--log-dir", ".", "--cleaner-log", ""], "--cleaner-log"),
    (["collect", "--once", "--config", " "], "--config"),
    (["logdir", ""], "PATH"),
    (["inspect", ""], "PATH"),
    (["explain", "--log-dir", ""], "--log-dir"),
    (["check-config", "--log-dir", ""], "--log-dir"),
])
def test_an_empty_path_is_refused_before_any_work(args, flag, tmp_path):
    """``--log-dir "$UNSET"`` read the current folder as a log dir (a line per folder in it) and
    ``--cleaner-log ""`` was dropped without a word: now one line naming the flag, exit 2."""
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    (line,) = r.stderr.splitlines()
    assert f"error: argument {flag}: expected a path, got " in line and "(empty: an unset variable?)" in line, line

"""``rules render --out/--tests``: every destination checked before anything is written; each file
written whole (a temporary name beside it, then a rename), readable by others as a rule file must be."""

from __future__ import annotations

import os
import stat

import pytest

from cli.main import main
from cli.outputs import OutputError, write_all


def test_render_writes_what_stdout_shows(tmp_path, capsys):
    assert main(["rules", "render"]) == 0
    shown = capsys.readouterr().out
    out, tests = tmp_path / "r.yml", tmp_path / "t.yml"
    assert main(["rules", "render", "--out", str(out), "--tests", str(tests)]) == 0
    assert out.read_text() == shown and "rule_files:" in tests.read_text()
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask  # as open() makes it (not mkstemp's 0600)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.yml", "t.yml"]  # no temporary left


def test_nothing_is_written_when_one_destination_is_bad(tmp_path, capsys):
    out = tmp_path / "r.yml"
    out.write_text("the previous rules\n")
    assert main(["rules", "render", "--out", str(out), "--tests", str(tmp_path / "no" / "t.yml")]) == 2
    err = capsys.readouterr().err
    assert err == f"compaction-monitor: rules: --tests {tmp_path}/no/t.yml: the folder {tmp_path}/no does not exist\n"
    assert out.read_text() == "the previous rules\n" and sorted(p.name for p in tmp_path.iterdir()) == ["r.yml"]


def test_an_existing_file_keeps_its_mode(tmp_path):
    out = tmp_path / "r.yml"
    out.write_text("old")
    out.chmod(0o640)
    write_all([("--out", out, "new")])
    assert out.read_text() == "new" and stat.S_IMODE(out.stat().st_mode) == 0o640


@pytest.mark.parametrize("where, says", [
    ("{tmp}", "is a folder; expected a file name"),
    ("{tmp}/missing/r.yml", "the folder {tmp}/missing does not exist"),
    ("{tmp}/file/r.yml", "{tmp}/file is not a folder"),
    ("/dev/null", "exists and is not a regular file"),
    ("/sys/r.yml", "cannot write (permission denied)"),
])
def test_bad_destinations(tmp_path, where, says):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError) as exc:
        write_all([("--out", where.replace("{tmp}", str(tmp_path)), "text")])
    assert str(exc.value) == f"--out {where}: {says}".replace("{tmp}", str(tmp_path))

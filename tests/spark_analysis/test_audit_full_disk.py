"""An audit on a full disk says so in one line (issue #35): before Spark starts when --out has less than
the stated minimum free, and as ``no space left on device`` at the run's path when Spark meets a full
disk mid-run (was: 30 s, 483 lines of Java stack traces, ``An error occurred while calling o267.parquet``).
A real full filesystem: a 1 MiB tmpfs, filled, mounted here and unmounted at teardown (root only)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clirun import run_cli
from recordfixtures import three_v2_batches


@pytest.fixture
def full_disk(tmp_path):
    mnt = tmp_path / "full"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
    try:
        with open(mnt / "filler", "wb") as fh:  # fill it: the first write that finds no room ends the loop
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError:
                pass
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def audit(tmp_path: Path, out: Path, *extra) -> subprocess.CompletedProcess:
    three_v2_batches(tmp_path / "logs" / "orders-0" / "00000000000000000000.log")
    return subprocess.run([sys.executable, "-m", "cli", "audit", "--input", str(tmp_path / "logs"), "--out", str(out),
                           *extra], capture_output=True, text=True, timeout=600)


def test_a_full_disk_is_named_before_spark_starts(tmp_path, full_disk):
    out = full_disk / "audits"
    r = audit(tmp_path, out)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"compaction-monitor: audit: --out {out}: no space left on device; an audit needs at least 64.0 MiB there "
        "for its tables and report (--min-free-bytes sets it)"]


def test_too_little_room_is_named_with_what_is_free(tmp_path):
    """statvfs of --out's filesystem against the stated minimum: asking for more than any disk has."""
    r = audit(tmp_path, tmp_path / "audits", "--min-free-bytes", str(1 << 62))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"compaction-monitor: audit: --out {tmp_path / 'audits'}: ") and " MiB free; an audit " \
        "needs at least 4398046511104.0 MiB there" in line, line


def test_a_disk_that_fills_under_spark_is_one_line_naming_it(tmp_path, full_disk):
    """The pre-check off (--min-free-bytes 0): Spark writes the Parquet tables into a full filesystem."""
    out = full_disk / "audits"
    r = audit(tmp_path, out, "--min-free-bytes", "0")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "\tat " not in r.stderr and "Py4J" not in r.stderr, r.stderr[-3000:]
    assert "An error occurred while calling" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"compaction-monitor: audit: --out {out}: writing run run-") and \
        f": no space left on device (IOException) at {out}/.tmp-run-" in last and last.endswith("; nothing was kept")
    assert len(last) < 400
    # Spark's log4j is off: what is left is the audit's own progress lines and the JVM's start-up notices
    assert len(r.stderr.strip().splitlines()) < 30, r.stderr
    assert sorted(p.name for p in out.iterdir()) == []  # nothing that looks like a run


def test_a_full_scratch_space_is_named_before_spark_starts(tmp_path, full_disk):
    """--out has room; Spark's local scratch (SPARK_LOCAL_DIRS, shuffle and spill) has none."""
    three_v2_batches(tmp_path / "logs" / "orders-0" / "00000000000000000000.log")
    r = run_cli("audit", "--input", tmp_path / "logs", "--out", tmp_path / "audits",  # refused before Spark
                env={"SPARK_LOCAL_DIRS": str(full_disk)})
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"compaction-monitor: audit: Spark's scratch space {full_disk} (SPARK_LOCAL_DIRS: shuffle and spill): no "
        "space left on device; an audit needs at least 64.0 MiB there (--min-free-bytes sets it)"]

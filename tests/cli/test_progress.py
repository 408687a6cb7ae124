"""Progress on long one-shot work (issue 33 point 6): ``logdir``, ``explain`` and ``inspect`` draw one line on
stderr when it is a terminal, redrawn in place at most five times a second and cleared at the end; piped,
stderr carries no progress at all (``cli.progress``). The reporter's throttle and text are tested with an
injected clock (no sleep); the commands as a user runs them, stderr on a pseudo-terminal (``pty``) or a pipe."""

from __future__ import annotations

import io
import logging
import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

from cli.progress import FileBytes, Progress, wanted
from collectors.logdirs.scanner import ScanProgress
from kafkatools import CLI_MODULE
from recordfixtures import three_v2_batches


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def draws(text: str) -> list[str]:
    """The lines drawn, in order (each starts with a carriage return; a clear is spaces only)."""
    return [d for d in text.split("\r") if d.strip()]


def test_redrawn_at_most_once_per_interval_and_cleared_at_the_end():
    clock, out = Clock(), io.StringIO()
    p = Progress(out, "logdir", clock=clock, enabled=True, columns=200)
    at = ScanProgress(log_dirs=1, log_dirs_listed=1, partitions_listed=5000)
    for step in range(50):  # a callback every 10 ms for half a second: drawn at 0, 0.2 and 0.4 s
        at.partitions_done, at.bytes_read = step, step * 1024
        p.scan(at)
        clock.now += 0.01
    lines = draws(out.getvalue())
    assert [re.match(r"logdir: partitions (\d+)/5,000", x).group(1) for x in lines] == ["0", "20", "40"], lines
    assert lines[1].endswith("20.0 KiB read")  # no time taken below a second (milliseconds would flicker)
    clock.now += 65
    p.scan(at)
    assert draws(out.getvalue())[-1] == f"logdir: partitions 49/5,000{p.sep}49.0 KiB read{p.sep}1 min 5 s"
    p.close()
    assert out.getvalue().endswith("\r" + " " * len(draws(out.getvalue())[-1]) + "\r")  # taken away, the cursor at its start
    before = out.getvalue()
    clock.now += 10
    p.scan(at)
    assert out.getvalue() == before  # nothing after close


def test_a_shorter_line_covers_the_longer_one_and_a_line_never_wraps():
    clock, out = Clock(), io.StringIO()
    p = Progress(out, "inspect", clock=clock, enabled=True, columns=30)
    p.draw("x" * 100)
    assert out.getvalue() == "\r" + ("inspect: " + "x" * 100)[:29]  # cut to the width less one
    p.draw("short")
    assert out.getvalue().endswith("\rinspect: short" + " " * (29 - len("inspect: short")))


def test_the_total_says_plus_while_log_dirs_remain_to_be_listed():
    out = io.StringIO()
    p = Progress(out, "explain", clock=Clock(), enabled=True, columns=200)
    p.scan(ScanProgress(log_dirs=3, log_dirs_listed=1, partitions_listed=1234, partitions_done=7))
    assert "explain: partitions 7/1,234+" in out.getvalue() and "log dir 1/3" in out.getvalue()


def test_the_messages_of_the_command_take_the_line_away_first():
    out = io.StringIO()
    p = Progress(out, "inspect", clock=Clock(), enabled=True, columns=200)
    p.draw("1.0 KiB of 2.0 KiB read")
    print("inspect: x: cannot read", file=p.writer())
    assert out.getvalue().endswith("\r" + " " * len("inspect: 1.0 KiB of 2.0 KiB read") + "\rinspect: x: cannot read\n")


def test_inspect_counts_a_file_whole_never_more_once_the_next_starts(tmp_path):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(b"\0" * 1000)
    b.write_bytes(b"\0" * 3000)
    clock, out = Clock(), io.StringIO()
    p = FileBytes(out, "inspect", [str(a), str(b), str(tmp_path / "gone.log")], lambda path: ([path], [], []),
                  clock=clock, enabled=True, columns=200)
    assert (p.files, p.total) == (2, 4000)  # a path that cannot be read counts nothing
    p.file(a, 0)
    p.at(1500)  # (a dump's batch sizes may exceed its text's: capped at the file's size)
    clock.now += 1
    p.at(1500)
    p.file(b, 1500)
    clock.now += 1
    p.at(2500)
    assert [re.match(r"inspect: (.*) read", x).group(1) for x in draws(out.getvalue())] == \
        ["0 B of 3.9 KiB", "1000 B of 3.9 KiB", "2.0 KiB of 3.9 KiB"]
    assert "(50%)" in draws(out.getvalue())[-1] and "file 2/2" in draws(out.getvalue())[-1]


def test_wanted_only_on_a_terminal_without_debug_records_and_not_among_a_terminals_records():
    master, slave = pty.openpty()
    with open(master, "rb") as _, open(slave, "w") as tty, open(os.devnull, "w") as null:
        assert wanted(tty) and not wanted(io.StringIO()) and not wanted(null)
        assert not wanted(tty, beside=tty) and wanted(tty, beside=null)  # inspect's records on the same terminal
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.DEBUG)  # --log-level debug: its records would tear the line
        try:
            assert not wanted(tty)
        finally:
            root.setLevel(level)


# ---------------------------------------------------------------- the commands, as a user runs them

def run(args, *, on_terminal: str) -> tuple[int, str, str]:
    """``python -m cli ARGS``: (exit code, stdout, stderr); ``on_terminal`` "stderr": stderr on a pseudo-terminal
    and stdout piped, "both": both on it (stdout's text then comes with stderr's), "none": both piped."""
    if on_terminal == "none":
        r = subprocess.run([sys.executable, "-m", CLI_MODULE, *map(str, args)], capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        return r.returncode, r.stdout, r.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", CLI_MODULE, *map(str, args)], stdin=subprocess.DEVNULL, stderr=slave,
                         stdout=slave if on_terminal == "both" else subprocess.PIPE)
    os.close(slave)
    got, deadline = b"", time.monotonic() + 120
    try:
        while time.monotonic() < deadline:  # the terminal's side until the child closed it (EIO)
            if select.select([master], [], [], 1)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                got += chunk
        out = p.stdout.read().decode() if p.stdout else ""
        return p.wait(30), out, got.decode()
    finally:
        os.close(master)
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.fixture
def logs(tmp_path):
    """A log dir of 40 compacted partitions (three batches each, cleaned to offset 3)."""
    d = tmp_path / "logs"
    for i in range(40):
        three_v2_batches(d / f"orders-{i}" / "00000000000000000000.log")
    (d / "cleaner-offset-checkpoint").write_text("0\n40\n" + "".join(f"orders {i} 3\n" for i in range(40)))
    return d


@pytest.mark.slow  # processes
def test_logdir_shows_progress_on_a_terminal_and_none_when_piped(logs):
    code, out, err = run(["logdir", logs], on_terminal="stderr")
    assert code == 0, err
    assert re.search(r"\rlogdir: partitions \d+/40 · [\d.]+ \S?i?B read", err), repr(err)
    assert err.endswith("\r"), repr(err)  # cleared: the line gone, the cursor at its start
    assert out.count("orders ") == 40  # the table itself, on stdout, untouched
    code, out_piped, err_piped = run(["logdir", logs], on_terminal="none")
    assert code == 0 and err_piped == ""  # piped: no progress
    assert out_piped.splitlines()[:41] == out.splitlines()[:41]  # and the table the same (free space may differ)


@pytest.mark.slow  # processes
def test_explain_shows_progress_on_a_terminal(logs):
    code, out, err = run(["explain", "--log-dir", logs, "orders-0"], on_terminal="stderr")
    assert code == 0, err
    assert re.search(r"\rexplain: partitions \d+/40", err) and err.endswith("\r"), repr(err)
    assert out.startswith("orders-0")


@pytest.mark.slow  # processes
def test_inspect_shows_bytes_read_of_the_total_on_a_terminal_and_none_when_piped(logs):
    parts = [logs / f"orders-{i}" for i in range(3)]  # 502 bytes each
    code, out, err = run(["inspect", "--stats", *parts], on_terminal="stderr")
    assert code == 0, err
    assert re.search(r"\rinspect: [\d.]+ \S?i?B of 1.5 KiB read \(\d+%\) · file [123]/3", err), repr(err)
    summary = "inspect: 3 file(s), 9 batches, 18 records (0 tombstones, 0 control), 1.5 KiB"
    assert err.endswith(f"\r{summary}\r\n"), repr(err)  # cleared before the summary
    code, _, err = run(["inspect", "--stats", *parts], on_terminal="none")
    assert code == 0 and err == summary + "\n"
    code, out, err = run(["inspect", *parts], on_terminal="both")  # records scroll on the terminal: no line
    assert code == 0 and "inspect: 3 file(s)" in err and " read (" not in err

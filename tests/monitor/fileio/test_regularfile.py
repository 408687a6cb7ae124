"""Only regular files are read: a FIFO with no writer, /dev/zero and a socket are refused with a message
naming the path, by every reader (segments, checkpoints, partition folders, inspect, the collector's
log-dir scan, the cleaner-log follower, the audit's file listing), and none of them waits on the FIFO.
A sparse file is read with bounded memory."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from monitor.kafka.checkpoint import CheckpointError, read_checkpoint
from monitor.kafka.logdir import scan_partition
from monitor.kafka.record import RecordFormatError, SegmentReader
from monitor.fileio.regularfile import NotRegularFile, open_regular


def ends(fn):
    """fn() on a thread joined with a generous bound (a hang guard, not a timing): its error or result."""
    out = {}

    def run():
        try:
            out["result"] = fn()
        except BaseException as exc:  # noqa: BLE001
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "the read waited on a file that is not a regular file"
    return out


@pytest.fixture
def specials(tmp_path):
    """A FIFO nobody writes, /dev/zero, a bound unix socket: (path, what) each."""
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock.log"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock_path))
    yield [(fifo, "a FIFO"), ("/dev/zero", "a character device"), (sock_path, "a socket")]
    s.close()


def test_open_regular_refuses_each_without_waiting(specials):
    for path, what in specials:
        got = ends(lambda: open_regular(path))
        assert isinstance(got.get("error"), NotRegularFile), got
        assert str(got["error"]) == f"{path}: not a regular file ({what}); only regular files are read"


def test_segment_reader_and_checkpoint_refuse_them(specials):
    for path, what in specials:
        got = ends(lambda: list(SegmentReader(path).batches()))
        assert isinstance(got.get("error"), RecordFormatError) and what in str(got["error"])
        got = ends(lambda: read_checkpoint(path))
        assert isinstance(got.get("error"), CheckpointError) and str(path) in str(got["error"])


def test_a_fifo_segment_in_a_partition_folder_is_unreadable_not_a_segment(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    os.mkfifo(part / "00000000000000000000.log")
    got = scan_partition(part)
    assert not got.segments
    assert got.unreadable == [f"{part / '00000000000000000000.log'}: not a regular file (a FIFO); "
                              "only regular files are read"]


def test_collector_log_dir_scan_marks_the_partition_and_a_fifo_checkpoint_marks_the_log_dir(tmp_path):
    from collectors.logdirs.scanner import LogDirScanner
    from recordfixtures import three_v2_batches

    d = tmp_path / "logs"
    three_v2_batches(d / "good-0" / "00000000000000000000.log")
    (d / "good-0" / "00000000000000000006.log").write_bytes(b"")
    (d / "bad-0").mkdir()
    os.mkfifo(d / "bad-0" / "00000000000000000000.log")
    (d / "cleaner-offset-checkpoint").write_text("0\n2\ngood 0 0\nbad 0 0\n")  # both compacted
    snap = ends(LogDirScanner([d]).refresh)["result"]
    assert [r.state.topic for r in snap.partitions] == ["good"] and "FIFO" in snap.partition_errors[("bad", 0)]
    os.mkfifo(d / "log-start-offset-checkpoint")
    snap = ends(LogDirScanner([d]).refresh)["result"]
    assert snap.down[str(d)][0] == "checkpoint" and not snap.partitions


def test_cleaner_log_follower_refuses_a_fifo(tmp_path):
    from collectors.logdirs.cleaner_log import CleanerLogFollower

    fifo = tmp_path / "log-cleaner.log"
    os.mkfifo(fifo)
    follower = CleanerLogFollower(str(fifo))
    try:
        got = ends(follower.refresh)
        assert isinstance(got.get("error"), NotRegularFile) and str(fifo) in str(got["error"])
    finally:
        follower.close()


def test_the_audit_listing_refuses_them(tmp_path, specials):
    from spark_analysis.fs import list_files

    fifo = specials[0][0]
    with pytest.raises(NotRegularFile):
        list_files(str(fifo), (".log",))
    refused = []
    assert list_files(str(tmp_path), (".log",), refused) == []
    assert sorted(refused) == sorted(f"{p}: not a regular file ({w}); only regular files are read"
                                     for p, w in specials if str(p).startswith(str(tmp_path)))


@pytest.mark.parametrize("which", ["fifo", "zero", "socket", "folder"])
def test_inspect_refuses_with_exit_2(tmp_path, specials, which):
    if which == "folder":
        part = tmp_path / "t-0"
        part.mkdir()
        os.mkfifo(part / "00000000000000000000.log")
        path, expected = part, f"{part / '00000000000000000000.log'}: not a regular file (a FIFO)"
    else:
        path, what = specials[["fifo", "zero", "socket"].index(which)]
        expected = f"{path}: not a regular file ({what})"
    # a child, not tests/clirun.py: a read that blocks on the FIFO is cut by the timeout, not the suite
    proc = subprocess.run([sys.executable, "-m", "cli", "inspect", str(path)], capture_output=True, text=True,
                          timeout=60)  # a hang guard
    assert proc.returncode == 2 and expected in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


MEASURE = r"""
import json, resource, subprocess, sys
from cli.inspect_cmd import run_inspect
import io
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rc = run_inspect([sys.argv[1]], fmt="json", skip_corrupt=False, out=io.StringIO(), err=io.StringIO())
print(json.dumps({"rc": rc, "growth_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before}))
"""


def test_a_sparse_gigabyte_is_read_with_bounded_memory(tmp_path):
    """A 1 GiB sparse file (zeros: not a batch) is a read fault (exit 1) with the process's peak RSS
    growing by far less than the file (a generous 256 MiB, a quarter of it). 1 GiB, not 4: inspect reads
    every byte (17 s of CPU for 4 GiB), and a quarter of the file tells a bounded read from a whole one."""
    sparse = tmp_path / "00000000000000000000.log"
    with open(sparse, "wb") as fh:
        fh.truncate(1 << 30)
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(sparse)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["rc"] == 1 and got["growth_kib"] < 256 * 1024, got


def test_errno_is_named_as_the_system_names_it(tmp_path):
    """A symlink loop is ``too many levels of symbolic links``, never "no such file"; a link to nothing
    is a dangling symlink; a full disk ``no space left on device`` (os.strerror, first letter lowercase)."""
    import errno

    from monitor.fileio.regularfile import PathError, os_reason, path_problem

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "gone").symlink_to(tmp_path / "nothing")
    assert path_problem(tmp_path / "a") == f"{tmp_path / 'a'}: too many levels of symbolic links"
    assert path_problem(tmp_path / "gone") == f"{tmp_path / 'gone'}: dangling symlink (its target does not exist)"
    assert path_problem(tmp_path / "none") == f"{tmp_path / 'none'}: no such file or directory"
    assert path_problem(tmp_path) is None
    assert os_reason(OSError(errno.ENOSPC, "whatever")) == "no space left on device"
    assert os_reason(PermissionError(errno.EACCES, "x")) == "permission denied"
    try:
        os.stat(tmp_path / "a")
    except OSError as exc:
        err = PathError(tmp_path / "a", exc)
    assert str(err) == f"{tmp_path / 'a'}: too many levels of symbolic links" and err.errno == errno.ELOOP
    with pytest.raises(OSError) as exc:
        open_regular(tmp_path / "a")
    assert os_reason(exc.value) == "too many levels of symbolic links"

"""The command line run in the test's own process: ``run_cli("inspect", path)`` is ``python -m cli inspect
PATH`` without the child. A child costs 0.3-1.5 s of CPU before it does anything (an interpreter that
imports the CLI and its edges), and ~100 tests ran one where the child itself was not what they test.

What a child gave for free is put back around the call and restored after it: stdout and stderr (text,
with a ``.buffer`` for bytes; what a C library writes to file descriptors 1 and 2 is caught too and added
after the Python-level text, so "nothing secret on stderr" still sees librdkafka's lines), stdin, the environment (``env``: variables set, or removed when None),
the working directory, the root logger (``cli.logsetup`` configures it per run), SIGINT/SIGTERM's
handlers; argparse's ``SystemExit`` becomes the exit code. A thread the run started and left running
fails the call: a later test would inherit it.

Keep a child where the process is the point: its exit on a signal, its peak RSS (``procs.run_measured``),
an install without the extras, Spark's driver (spark-submit, a JVM per audit), a long-running ``collect``
whose stop is tested, a deadline that must cut a hung call (in-process there is nothing to kill).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Ran:
    """What ``subprocess.run(..., capture_output=True, text=True)`` returns, by the same names, so a test
    reads a run in-process as it read the child's."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


class _Capture(io.TextIOWrapper):
    """A text stream over bytes kept in memory, not a terminal (as a child's pipe is not)."""

    def __init__(self):
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", "backslashreplace")


@contextlib.contextmanager
def _environment(env: dict[str, str | None] | None):
    saved = dict(os.environ)
    try:
        for key, value in (env or {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = str(value)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _cwd(path):
    before = os.getcwd()
    if path is not None:
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _root_logger():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


@contextlib.contextmanager
def _descriptor(fd: int, got: list[str]):
    """File descriptor ``fd`` onto a temporary file while inside; what was written there appended to ``got``."""
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(fd)
        os.dup2(tmp.fileno(), fd)
        try:
            yield
        finally:
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            got.append(tmp.read().decode("utf-8", "backslashreplace"))


@contextlib.contextmanager
def _signals():
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def run_cli(*args, env: dict[str, str | None] | None = None, stdin: str = "", cwd=None) -> Ran:
    """``compaction-monitor ARGS`` in this process: its exit code, stdout and stderr."""
    from cli.main import main

    argv = tuple(os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args)
    out, err = _Capture(), _Capture()
    before = set(threading.enumerate())
    streams = (sys.stdin, sys.stdout, sys.stderr)
    raw_out: list[str] = []
    raw_err: list[str] = []
    for stream in streams[1:]:
        stream.flush()  # what the test printed before stays its own
    with _environment(env), _cwd(cwd), _root_logger(), _signals(), _descriptor(1, raw_out), \
            _descriptor(2, raw_err):
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's usage error or --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, (int, type(None))):
                print(exc.code, file=sys.stderr)
        finally:
            sys.stdin, sys.stdout, sys.stderr = streams
    left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    for thread in left:
        thread.join(5)  # one ending as the run returned (a pool's worker) gets a moment, not a wait
    left = [t.name for t in left if t.is_alive()]
    assert not left, f"compaction-monitor {' '.join(argv)} left threads running: {left}"
    return Ran(argv, code, out.text() + "".join(raw_out), err.text() + "".join(raw_err))

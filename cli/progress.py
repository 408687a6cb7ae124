"""A progress line on stderr for the long one-shot commands: ``logdir`` and ``explain`` over thousands of
partitions ("partitions 1,234/5,000 · 2.1 GiB read · 42 s"), ``inspect`` of large files ("1.2 GiB of
4.0 GiB read (30%) · file 3/10 · 12 s").

When it is drawn: only when stderr is a terminal. Piped or redirected, stderr carries the commands'
messages and nothing else (a script, ``2>file`` or a log shipper never gets ``\\r`` lines), and stdout is
never touched. Not with ``--log-level debug`` either (the root logger passing DEBUG records): debug lines
would tear the line at every record, and whoever reads them wants the records, not a bar.

How: one line, redrawn in place with ``\\r`` at most once per ``INTERVAL`` (a callback per partition or per
batch costs a clock read, not a write), padded with spaces over a longer previous line (no terminal
escape codes: a dumb terminal draws it too), cut to the terminal's width (a wrapped line cannot be redrawn
with ``\\r``), and cleared when the work ends, also when it ends by an exception or Ctrl-C (``atexit``).
What the command itself writes to stderr meanwhile goes through ``writer()``, which clears the line first.

The counting lives where the loops are (``collectors.logdirs.scanner.ScanProgress``, the inspect loop); they take
a callback and print nothing themselves. No third-party dependency (tqdm is a test extra, not a runtime
one)."""

from __future__ import annotations

import atexit
import logging
import os
import time
from pathlib import Path

from monitor.contract.units import bytes_iec, duration_ms

INTERVAL = 0.2  # seconds between redraws: five a second moves visibly and costs nothing


def wanted(stream, beside=None) -> bool:
    """Whether a progress line belongs on ``stream``: a terminal, and no DEBUG records on their way; not
    when ``beside`` (what the command prints as it goes: inspect's records) is a terminal too, where the
    line would land among its lines (the records scrolling by are the progress there)."""
    return _isatty(stream) and not _isatty(beside) and not logging.getLogger().isEnabledFor(logging.DEBUG)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # None, no isatty, or closed
        return False


class Progress:
    """One progress line on ``stream`` for the command ``prog``; a no-op unless ``wanted`` (or ``enabled``).
    ``clock`` (monotonic seconds) and ``columns`` are injectable for tests. Use as a context manager, or
    call ``close``; ``scan`` is the log-dir scanner's callback."""

    def __init__(self, stream, prog: str, *, clock=time.monotonic, interval: float = INTERVAL,
                 enabled: bool | None = None, columns: int | None = None, beside=None):
        self.stream, self.prog, self.clock, self.interval = stream, prog, clock, interval
        self.enabled = wanted(stream, beside) if enabled is None else enabled
        self.columns = columns
        self.started = clock() if self.enabled else 0.0
        self._next = self.started  # the first update draws at once; then one per interval
        self._shown = 0  # characters of the line now on the terminal
        self.sep = " · " if _encodes(stream, "·") else ", "

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def due(self) -> bool:
        """Whether to redraw now (at most once per ``interval``); False when not enabled."""
        if not self.enabled:
            return False
        now = self.clock()
        if now < self._next:
            return False
        self._next = now + self.interval
        return True

    def elapsed(self) -> list[str]:
        """The time taken, in whole seconds once there is one (milliseconds would flicker)."""
        s = int(self.clock() - self.started)
        return [duration_ms(s * 1000)] if s else []

    def draw(self, text: str) -> None:
        """``prog: text`` over the line drawn before, cut to the terminal's width."""
        line = f"{self.prog}: {text}"[:max(self._width() - 1, 10)]
        if not self._shown:
            atexit.register(self.clear)  # an exception or Ctrl-C leaves no half line before the prompt
        self._write("\r" + line + " " * max(self._shown - len(line), 0))
        self._shown = len(line)

    def clear(self) -> None:
        """Takes the line away (the cursor back at its start); nothing when none is drawn."""
        if self._shown:
            self._write("\r" + " " * self._shown + "\r")
            self._shown = 0
            atexit.unregister(self.clear)

    def close(self) -> None:
        self.clear()
        self.enabled = False

    def writer(self) -> "_ClearFirst":
        """A stream like ``stream`` whose writes take the progress line away first (redrawn at the next
        update): the command's own messages while the work goes on, never glued to the line."""
        return _ClearFirst(self)

    def scan(self, at) -> None:
        """The log-dir scanner's callback (``collectors.logdirs.scanner.ScanProgress``): partitions done of those
        listed ("+" while log dirs remain to list), which log dir, bytes read, time taken."""
        if not self.due():
            return
        more = "+" if at.log_dirs_listed < at.log_dirs else ""
        parts = [f"partitions {at.partitions_done:,}/{at.partitions_listed:,}{more}"]
        if at.log_dirs > 1:
            parts.append(f"log dir {at.log_dirs_listed}/{at.log_dirs}")
        self.draw(self.sep.join(parts + [f"{bytes_iec(at.bytes_read)} read"] + self.elapsed()))

    def _width(self) -> int:
        if self.columns:
            return self.columns
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (AttributeError, OSError, ValueError):
            return 80

    def _write(self, s: str) -> None:
        try:
            self.stream.write(s)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: no more progress, the work goes on
            self.enabled, self._shown = False, 0


class FileBytes(Progress):
    """``inspect``'s line: bytes read of the input files' total, which file, time taken. ``expand`` is
    inspect's (a path -> its segment files, ...); the total is counted only when the line is drawn. Call
    ``file`` as each file starts and ``at`` as its batches are read, with the bytes counted so far (batch
    sizes: a dump's differ from its text's, so a file counts whole, never more, once the next starts)."""

    def __init__(self, stream, prog: str, paths, expand, **kw):
        super().__init__(stream, prog, **kw)
        self.files, self.total = input_size(paths, expand) if self.enabled else (0, 0)
        self.file_no, self._finished, self._size, self._base = 0, 0, 0, 0

    def file(self, path, counted: int) -> None:
        if not self.enabled:
            return
        self._finished += self._size
        try:
            self._size = os.stat(path).st_size
        except OSError:
            self._size = 0
        self.file_no, self._base = self.file_no + 1, counted
        self.at(counted)

    def at(self, counted: int) -> None:
        if not self.due():
            return
        done = self._finished + min(counted - self._base, self._size)
        share = f" ({100 * done // self.total}%)" if self.total else ""
        parts = [f"{bytes_iec(done)} of {bytes_iec(self.total)} read{share}"]
        if self.files > 1:
            parts.append(f"file {self.file_no:,}/{self.files:,}")
        self.draw(self.sep.join(parts + self.elapsed()))


def input_size(paths, expand) -> tuple[int, int]:
    """The files ``paths`` name (a folder: its segment files, by ``expand``) and their bytes; a path that
    cannot be read counts nothing (the command says why when its turn comes)."""
    files = size = 0
    for raw in paths:
        try:
            for f in expand(Path(raw))[0]:
                files, size = files + 1, size + os.stat(f).st_size
        except OSError:
            continue
    return files, size


class _ClearFirst:
    """``Progress.writer``: writes to the progress line's stream, the line taken away first."""

    def __init__(self, progress: Progress):
        self._progress = progress

    def write(self, s: str) -> int:
        self._progress.clear()
        return self._progress.stream.write(s)

    def __getattr__(self, name):
        return getattr(self._progress.stream, name)


def _encodes(stream, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True

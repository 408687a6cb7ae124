"""Only regular files are read as segments, dumps, checkpoints or the cleaner's log.

A FIFO blocks ``open`` until a writer comes (forever, for one nobody writes), ``/dev/zero`` never
ends, a socket cannot be opened at all: none of them is a file Kafka wrote, so each is refused with a
message naming the path and what it is. The path is stat'ed first (the message), then opened
without blocking and checked again on the open descriptor (a path swapped in between is refused
too), so ``open`` itself never waits on a FIFO.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def os_reason(exc: OSError) -> str:
    """What went wrong, as the system names its errno (``os.strerror``), first letter lowercase: "too
    many levels of symbolic links" (ELOOP), "no space left on device" (ENOSPC), "permission denied"
    (EACCES), never Python's ``[Errno 40] ...: 'path'``; an error without an errno by its own text."""
    if exc.errno:
        text = os.strerror(exc.errno)
    else:
        text = str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


class PathError(OSError):
    """A path that cannot be used, named with what the system says (``os_reason``): ``str()`` is
    ``<path>: <reason>``; ``errno`` is the cause's."""

    def __init__(self, path: str | os.PathLike, cause: OSError):
        self.path, self.reason = str(path), os_reason(cause)
        super().__init__(f"{path}: {self.reason}")
        self.errno = cause.errno


def path_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` cannot be used at all, or None when it stats (symlinks followed): a symlink loop is
    "too many levels of symbolic links", a link to nothing a dangling symlink, never both "no such file"."""
    try:
        os.stat(path)
        return None
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) and os.path.islink(path):
            return f"{path}: dangling symlink (its target does not exist)"
        return f"{path}: {os_reason(exc)}"


class NotRegularFile(OSError):
    """The path exists but is not a regular file (an OSError: callers that name unreadable files
    already catch it)."""

    def __init__(self, path: str | os.PathLike, what: str):
        self.path, self.what = str(path), what
        super().__init__(f"{path}: not a regular file ({what}); only regular files are read")


def what_is(mode: int) -> str | None:
    """None for a regular file, else what it is ("a FIFO", "a character device", ...)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in KINDS if test(mode)), "not a regular file")


def check_regular(path: str | os.PathLike, st: os.stat_result | None = None) -> os.stat_result:
    """``path``'s stat (symlinks followed) when it is a regular file; else NotRegularFile."""
    st = st if st is not None else os.stat(path)
    what = what_is(st.st_mode)
    if what:
        raise NotRegularFile(path, what)
    return st


def open_regular(path: str | os.PathLike, buffering: int = -1) -> BinaryIO:
    """``open(path, "rb")`` for a regular file; NotRegularFile (never a wait) for anything else."""
    check_regular(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        check_regular(path, os.fstat(fd))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering)
    except BaseException:
        os.close(fd)
        raise


def read_text_regular(path: str | os.PathLike, encoding: str = "utf-8") -> str:
    """``Path(path).read_text()`` for a regular file only."""
    with open_regular(Path(path)) as fh:
        return fh.read().decode(encoding)

"""Files the command line writes (``rules render --out/--tests``): every destination checked before
anything is written, and each written whole or not at all.

A destination must be a file path whose folder exists and takes a new file; each is opened as a
temporary file beside it first (the check is that open: it holds for root, read-only mounts and
full disks alike, where permission bits would not), then all are renamed over their targets.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from monitor.fileio.regularfile import os_reason


class OutputError(ValueError):
    """A destination that cannot be written; the message names it and says why."""


def _check(flag: str, path: Path) -> None:
    if path.is_dir():
        raise OutputError(f"{flag} {path}: is a folder; expected a file name")
    if not path.parent.exists():
        raise OutputError(f"{flag} {path}: the folder {path.parent} does not exist")
    if not path.parent.is_dir():
        raise OutputError(f"{flag} {path}: {path.parent} is not a folder")
    if path.exists() and not path.is_file():
        raise OutputError(f"{flag} {path}: exists and is not a regular file")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_all(outputs: list[tuple[str, str | Path, str]]) -> None:
    """``(flag, path, text)`` each: all checked and staged, then all renamed into place; on any error
    nothing is written and OutputError names the destination."""
    staged: list[tuple[str, Path]] = []
    try:
        for flag, path, text in outputs:
            path = Path(path)
            _check(flag, path)
            try:
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                staged.append((tmp, path))
                os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                raise OutputError(f"{flag} {path}: cannot write ({os_reason(exc)})") from None
        for tmp, path in staged:
            os.replace(tmp, path)
        staged = []
    finally:
        for tmp, _ in staged:
            try:
                os.unlink(tmp)
            except OSError:
                pass

"""Files on ``file:``, ``hdfs:`` or ``s3a:`` paths, through pyarrow's filesystems.

Listing happens on the driver (names and sizes only), opening on the executors. ``s3a://``
(Hadoop's name) maps to pyarrow's S3 filesystem, with the endpoint of ``spark_analysis.s3``; ``hdfs://`` needs libhdfs (a Hadoop client) where
the executors run, as any Spark HDFS job does."""

from __future__ import annotations

from urllib.parse import urlparse

import pyarrow.fs as pafs

from monitor.fileio.regularfile import NotRegularFile, check_regular, path_problem


def filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    scheme = urlparse(uri).scheme
    if scheme in ("", "file"):
        path = urlparse(uri).path if scheme == "file" else uri
        return pafs.LocalFileSystem(), path
    if scheme in ("s3", "s3a"):  # one endpoint and credentials for pyarrow and Hadoop's S3A (spark_analysis.s3)
        from spark_analysis import s3

        u = urlparse(uri)
        return s3.filesystem(), f"{u.netloc}{u.path}".rstrip("/") or u.netloc
    return pafs.FileSystem.from_uri(uri)


def qualify(uri: str, path: str) -> str:
    """A path listed from ``uri``'s filesystem, written back with ``uri``'s scheme and authority."""
    u = urlparse(uri)
    if u.scheme in ("", "file"):
        return path
    if u.scheme in ("s3", "s3a"):
        return f"{u.scheme}://{path}"
    return f"{u.scheme}://{u.netloc}{path}"


def list_files(uri: str, suffix: str | tuple[str, ...], refused: list | None = None) -> list[tuple[str, int]]:
    """(uri, size) of every regular file under ``uri`` (or ``uri`` itself) whose name ends with ``suffix``.

    pyarrow's local filesystem calls a FIFO, a device or a socket neither File nor Directory
    (``FileType.Unknown``), so local paths are checked with ``monitor.fileio.regularfile``: ``uri`` itself
    not a regular file raises NotRegularFile (an OSError naming it and what it is); one found in a
    folder is left out and its message appended to ``refused``."""
    fs, path = filesystem(uri)
    info = fs.get_file_info(path)
    local = isinstance(fs, pafs.LocalFileSystem)
    if info.type == pafs.FileType.NotFound:  # locally, what the system says (a symlink loop is one)
        raise FileNotFoundError((local and path_problem(path)) or f"{uri}: no such file or directory")
    if info.type != pafs.FileType.Directory:
        _check(path, info, local)
        return [(uri, info.size)]
    out = []
    for f in fs.get_file_info(pafs.FileSelector(path, recursive=True)):
        if f.type == pafs.FileType.Directory or not f.base_name.endswith(suffix):
            continue
        try:
            _check(f.path, f, local)
        except OSError as exc:
            if refused is not None:
                refused.append(str(exc) if isinstance(exc, NotRegularFile) else f"{f.path}: {exc}")
            continue
        out.append((qualify(uri, f.path), f.size))
    return sorted(out)


def _check(path: str, info, local: bool) -> None:
    """NotRegularFile unless ``path`` is a regular file (stat'ed when local, else as listed)."""
    if local:
        check_regular(path)
    elif info.type != pafs.FileType.File:
        raise NotRegularFile(path, "not a file")


def open_input(uri: str):
    fs, path = filesystem(uri)
    return fs.open_input_file(path)


def read_text(uri: str) -> str | None:
    fs, path = filesystem(uri)
    try:
        with fs.open_input_stream(path) as fh:
            return fh.read().decode("utf-8", "replace")
    except (FileNotFoundError, OSError):
        return None


def move_dir(fs: pafs.FileSystem, src: str, dst: str, last: str | None = None) -> None:
    """``src`` renamed to ``dst``. Object stores have no folder rename (pyarrow's S3 ``move`` copies one
    key): there each file is copied, ``last`` (the run's completion marker) after every other, then
    ``src`` is deleted, so a reader never sees ``dst`` with its marker before its files."""
    if not isinstance(fs, pafs.S3FileSystem):
        fs.move(src, dst)
        return
    files = [f.path for f in fs.get_file_info(pafs.FileSelector(src, recursive=True)) if f.type == pafs.FileType.File]
    files.sort(key=lambda p: (last is not None and p.rsplit("/", 1)[-1] == last, p))
    for f in files:
        fs.copy_file(f, dst + f[len(src):])
    fs.delete_dir(src)


def local_problem(uri: str, missing_ok: bool = False) -> str | None:
    """``path_problem`` of a local path (a symlink loop, a dangling link, a missing file: as the system
    names it); None for a path that stats, one that does not exist when ``missing_ok``, and a path on
    another filesystem (``hdfs:``, ``s3a:``)."""
    import os

    scheme = urlparse(uri).scheme
    if scheme not in ("", "file"):
        return None
    path = urlparse(uri).path if scheme == "file" else uri
    if missing_ok and not os.path.lexists(path):
        return None
    return path_problem(path)

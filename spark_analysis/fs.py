"""Files on ``file:``, ``hdfs:`` or ``s3a:`` paths, through pyarrow's filesystems.

Listing happens on the driver (names and sizes only), opening on the executors. ``s3a://``
(Hadoop's name) maps to pyarrow's S3 filesystem; ``hdfs://`` needs libhdfs (a Hadoop client) where
the executors run, as any Spark HDFS job does."""

from __future__ import annotations

from urllib.parse import urlparse

import pyarrow.fs as pafs


def filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    scheme = urlparse(uri).scheme
    if scheme in ("", "file"):
        path = urlparse(uri).path if scheme == "file" else uri
        return pafs.LocalFileSystem(), path
    if scheme == "s3a":
        uri = "s3" + uri[3:]
    return pafs.FileSystem.from_uri(uri)


def qualify(uri: str, path: str) -> str:
    """A path listed from ``uri``'s filesystem, written back with ``uri``'s scheme and authority."""
    u = urlparse(uri)
    if u.scheme in ("", "file"):
        return path
    if u.scheme in ("s3", "s3a"):
        return f"{u.scheme}://{path}"
    return f"{u.scheme}://{u.netloc}{path}"


def list_files(uri: str, suffix: str | tuple[str, ...]) -> list[tuple[str, int]]:
    """(uri, size) of every file under ``uri`` (or ``uri`` itself) whose name ends with ``suffix``."""
    fs, path = filesystem(uri)
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"{uri}: no such file or directory")
    if info.type == pafs.FileType.File:
        return [(uri, info.size)]
    out = []
    for f in fs.get_file_info(pafs.FileSelector(path, recursive=True)):
        if f.type == pafs.FileType.File and f.base_name.endswith(suffix):
            out.append((qualify(uri, f.path), f.size))
    return sorted(out)


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

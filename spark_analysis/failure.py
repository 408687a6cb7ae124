"""A Spark job's failure in one line, and the free space an audit needs before it starts.

When a Spark job fails, PySpark raises a ``Py4JJavaError`` whose text is the whole Java stack trace
of the driver, with the executors' causes nested in it (``Caused by: ...``), and log4j prints every
failed task's trace again: hundreds of lines that end in ``An error occurred while calling
o267.parquet``, the one thing the user cannot act on. What they can act on is the root cause: the
last ``Caused by`` (``monitor.kafka.cleanerlog.root_exception``, the rule that reads the cleaner's stack
traces), and above all an operating system error named in the chain, which Java writes as the C
library's ``strerror`` text ("No space left on device"): that is named as ``os_reason`` names it
(``no space left on device``), with where it happened.
"""

from __future__ import annotations

import errno
import os

from monitor.kafka.cleanerlog import root_exception
from monitor.fileio.excerpt import shortened

# Errors of the operating system a Java stack trace names by their strerror text, most telling first:
# a full disk or quota, then what else makes a write fail.
OS_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO, errno.ELOOP)

# The least free space an audit's --out must have before Spark starts. Not an estimate from the input:
# a run writes one row per partition, per topic and per tombstone bucket, --top keys and producers per
# topic and a report (``spark_analysis.report``), which grow with the number of partitions and topics,
# not with the records read; 100,000 partitions come to some tens of MiB of Parquet. 64 MiB covers that
# with room for Parquet's and Hadoop's temporary files (the ``_temporary`` folders and ``.crc`` files
# of each table's write). Spark's own scratch space (spark.local.dir, shuffle and spill) is not estimated
# (the audit's shuffles are per-partition folds, far smaller than its input, but Spark decides), only
# checked before a local session starts: a folder that is there, a folder, and as free as --out must be
# (``scratch_problem``); a full disk there later is still named when Spark meets it (``describe``).
MIN_FREE_BYTES = 64 * 1024 * 1024


def os_error_in(text: str) -> str | None:
    """The first of ``OS_ERRORS`` whose strerror text appears in ``text`` (a Java stack trace), as
    ``os_reason`` names it (``no space left on device``); None when none does."""
    for code in OS_ERRORS:
        said = os.strerror(code)
        if said in text:
            return said[:1].lower() + said[1:]
    return None


def describe(exc: BaseException) -> str:
    """One line for a failed Spark call: the operating system error in its cause chain when there is
    one (``no space left on device (java.io.IOException)``), else the root cause's class and the first
    line of its message, as an excerpt; else the exception's first line."""
    text = str(exc)
    lines = text.splitlines()
    root = root_exception([ln.lstrip(": ") for ln in lines])
    said = os_error_in(text)
    if said:
        return f"{said} ({root[0]})" if root else said
    if root:  # its message already shortened (root_exception)
        return f"{root[0]}: {root[1]}" if root[1] else root[0]
    return shortened(lines[0] if lines else type(exc).__name__)


def is_spark_failure(exc: BaseException) -> bool:
    """A failure of the JVM side (``py4j.protocol.Py4JError`` and its kin, PySpark's own errors that
    wrap one): told in one line by ``describe``, never as a traceback."""
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"Py4JError", "Py4JJavaError", "PySparkException", "CapturedException"})


def free_bytes(path: str) -> int | None:
    """Bytes free to this user on the filesystem of ``path`` (its nearest existing parent: ``--out`` may
    not exist yet) for a local path; None elsewhere (``hdfs:``, ``s3a:``: no such figure to ask for)."""
    from urllib.parse import urlparse

    u = urlparse(path)
    if u.scheme not in ("", "file"):
        return None
    p = os.path.abspath(u.path if u.scheme == "file" else path)
    while not os.path.exists(p) and os.path.dirname(p) != p:
        p = os.path.dirname(p)
    try:
        st = os.statvfs(p)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def space_problem(out: str, minimum: int = MIN_FREE_BYTES) -> str | None:
    """Why ``out`` has too little free space for a run, or None (enough, or not a local path)."""
    free = free_bytes(out)
    if free is None or free >= minimum:
        return None
    state = "no space left on device" if free == 0 else f"{_mib(free)} free"
    return (f"--out {out}: {state}; an audit needs at least {_mib(minimum)} there for its tables and report "
            "(--min-free-bytes sets it)")


def scratch_dir(env=os.environ) -> tuple[str, str]:
    """Spark's scratch folder in local mode and where that comes from: SPARK_LOCAL_DIRS' first folder
    (Spark's own precedence over spark.local.dir), else the JVM's java.io.tmpdir (Spark's default: TMPDIR
    is not read by the JVM, /tmp on Linux)."""
    first = (env.get("SPARK_LOCAL_DIRS") or "").split(",")[0].strip()
    return (first, "SPARK_LOCAL_DIRS") if first else ("/tmp", "java.io.tmpdir")


def scratch_problem(minimum: int = MIN_FREE_BYTES, env=os.environ) -> str | None:
    """Why Spark's local scratch space (``scratch_dir``) cannot take a run, or None: missing, not a
    folder, not writable, or with less free space than ``minimum``; said before Spark starts, not as
    a stack trace from its block manager."""
    where, source = scratch_dir(env)
    head = f"Spark's scratch space {where} ({source}: shuffle and spill)"
    if not os.path.exists(where):
        return f"{head}: no such folder; create it or set SPARK_LOCAL_DIRS"
    if not os.path.isdir(where):
        return f"{head}: not a folder; set SPARK_LOCAL_DIRS to one"
    if not os.access(where, os.W_OK | os.X_OK):
        return f"{head}: not writable by this user; set SPARK_LOCAL_DIRS to a folder it can write"
    free = free_bytes(where)
    if free is not None and free < minimum:
        state = "no space left on device" if free == 0 else f"{_mib(free)} free"
        return f"{head}: {state}; an audit needs at least {_mib(minimum)} there (--min-free-bytes sets it)"
    return None


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def first_line(exc: BaseException) -> str:
    """An exception's first line (its class name when it has no text): one line for an error message."""
    text = str(exc).strip() or exc.__class__.__name__
    return text.splitlines()[0]

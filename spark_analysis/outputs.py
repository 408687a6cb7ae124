"""The audit's outputs: ``--out`` checked before Spark starts, then each run written whole under a new
folder (``monitor.contract.auditrun``'s layout: tables, ``summary.json``, ``report.html``, the marker written
last under a hidden name and renamed), and ``latest.json`` pointed at it. Why apart from the job: a
run's folder is the contract the dashboard reads, and nothing here depends on how the tables were made."""

from __future__ import annotations

import datetime as dt
import os

from monitor.fileio import strictjson
from monitor.contract.auditrun import LATEST, MARKER, REPORT, RUN_PREFIX, SUMMARY, TABLES, TEMP_PREFIX, marker_text
from spark_analysis import failure
from spark_analysis.failure import first_line


class OutputError(ValueError):
    """The output folder cannot take a run: named, with why (before Spark starts, or when a write fails)."""


def check_output(out: str) -> None:
    """``--out`` is a folder (or can be made one) that this process can write: made if missing, then a
    probe file written and removed. Done before Spark starts, so a bad ``--out`` costs no Spark work."""
    import pyarrow.fs as pafs

    from spark_analysis.fs import filesystem, local_problem

    if (why := local_problem(out, missing_ok=True)) is not None:  # a symlink loop or a dangling link, named so
        raise OutputError(f"--out {why}")
    try:
        fs, path = filesystem(out)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.File:
            raise OutputError(f"--out {out}: is a file; expected a folder (each run adds run-<time>/ under it)")
        if info.type == pafs.FileType.NotFound:
            fs.create_dir(path, recursive=True)
        probe = f"{path.rstrip('/')}/{TEMP_PREFIX}probe-{os.getpid()}"
        with fs.open_output_stream(probe) as fh:
            fh.write(b"")
        fs.delete_file(probe)
    except OutputError:
        raise
    except (OSError, ValueError) as exc:  # pyarrow's errors are OSError subclasses (ArrowIOError)
        raise OutputError(f"--out {out}: cannot write there ({first_line(exc)})") from None


def _new_run_name(out: str, name: str) -> str:
    """``name``, or ``name-2``, ``-3``... when a run of the same second exists: a run never fails on,
    nor writes into, an earlier one (the suffixes sort after the plain name, so runs stay in order)."""
    import pyarrow.fs as pafs

    from spark_analysis.fs import filesystem

    fs, path = filesystem(out.rstrip("/"))
    candidate, n = name, 1
    while (fs.get_file_info(f"{path}/{candidate}").type != pafs.FileType.NotFound
           or fs.get_file_info(f"{path}/{TEMP_PREFIX}{candidate}").type != pafs.FileType.NotFound):
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def _write_atomically(fs, path: str, data: bytes) -> None:
    """A file under a temporary name, then renamed: a reader sees the old content or the new, whole."""
    tmp = path.rsplit("/", 1)
    tmp = f"{tmp[0]}/{TEMP_PREFIX}{tmp[1]}-{os.getpid()}"
    with fs.open_output_stream(tmp) as fh:
        fh.write(data)
    fs.move(tmp, path)


def write_outputs(spark, result, out: str, run_name: str | None = None) -> str:
    """The run's tables, ``summary.json``, ``report.html`` and marker under ``<out>/.tmp-<run>``, renamed
    to ``<out>/<run>`` once whole; then ``latest.json``. On failure the temporary folder is removed
    (best effort) and OutputError names what failed: nothing left looks like a finished run."""
    import pyarrow.fs as pafs

    from spark_analysis.earlier import earlier_run
    from spark_analysis.fs import filesystem, move_dir
    from spark_analysis.report import render_report

    run = run_name or _new_run_name(out, RUN_PREFIX + dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ"))
    root = out.rstrip("/")
    fs, root_path = filesystem(root)
    tmp_uri, tmp_path = f"{root}/{TEMP_PREFIX}{run}", f"{root_path}/{TEMP_PREFIX}{run}"
    final_path = f"{root_path}/{run}"
    tables = dict(zip(TABLES, (result.partitions, result.topics, result.tombstone_buckets, result.top_keys,
                               result.top_producers, result.faults, result.replicas, result.whatif)))
    try:
        for name, df in tables.items():
            df.coalesce(1).write.mode("errorifexists").parquet(f"{tmp_uri}/{name}")
        topics = [r.asDict() for r in result.topics.collect()]
        parts = [r.asDict() for r in result.partitions.collect()]
        buckets = [r.asDict() for r in result.tombstone_buckets.collect()]
        keys = [r.asDict() for r in result.top_keys.collect()]
        replica_rows = [r.asDict() for r in result.replicas.collect()]
        whatif_rows = [r.asDict() for r in result.whatif.collect()]
        summary = {**result.summary, "run": run, "tables": list(tables)}
        with fs.open_output_stream(f"{tmp_path}/{SUMMARY}") as fh:
            fh.write(strictjson.dumps(summary, indent=2, default=str).encode())
        with fs.open_output_stream(f"{tmp_path}/{REPORT}") as fh:
            fh.write(render_report(summary, topics, parts, buckets, keys, replica_rows,
                                   earlier=earlier_run(fs, root_path, run), whatif=whatif_rows).encode())
        files = {f.path[len(tmp_path) + 1:]: f.size
                 for f in fs.get_file_info(pafs.FileSelector(tmp_path, recursive=True)) if f.type == pafs.FileType.File}
        with fs.open_output_stream(f"{tmp_path}/{MARKER}") as fh:  # last: the run is whole
            fh.write(marker_text(run, summary["generated_at_ms"], files).encode())
        move_dir(fs, tmp_path, final_path, last=MARKER)
    except BaseException as exc:  # Ctrl-C too: the temporary folder goes either way
        try:
            fs.delete_dir(tmp_path)
        except OSError:
            pass
        if not isinstance(exc, Exception):
            raise
        raise OutputError(f"--out {out}: writing run {run} failed: {failure.describe(exc)} at {tmp_uri}; "
                          "nothing was kept") from exc
    base = f"{root}/{run}"
    try:
        _write_atomically(fs, f"{root_path}/{LATEST}", strictjson.dumps(
            {"run": run, "path": base, "generated_at_ms": summary["generated_at_ms"]}).encode())
    except OSError as exc:
        raise OutputError(f"--out {out}: run {run} is complete, but {LATEST} could not be updated "
                          f"({first_line(exc)})") from None
    return base

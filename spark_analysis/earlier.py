"""The earlier complete run in an audit's output location, for the HTML report's prediction against what
the broker reclaimed (``monitor.verdicts.accuracy``): the report of a run taken after the cleaner ran compares
itself with the run before it, as the Audit page does by default.

Which runs are whole is ``monitor.contract.auditrun``'s rule (the ``_SUCCESS`` marker and the sizes it lists),
read through pyarrow's filesystems so an ``s3a://`` output location works as a local one; the earlier
run is ``monitor.verdicts.accuracy.baseline``'s choice among the complete ones."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow.fs as pafs

from monitor.verdicts.accuracy import baseline
from monitor.contract.auditrun import COMPLETE, MARKER, RUN_PREFIX, run_status


@dataclass(frozen=True)
class EarlierRun:
    run: str
    partitions: list[dict] | None  # its partition table's rows; None when it could not be read (``error``)
    error: str | None = None


def _status(fs: pafs.FileSystem, path: str) -> str:
    if fs.get_file_info(f"{path}/{MARKER}").type != pafs.FileType.File:
        return run_status(None, {})[0]
    with fs.open_input_stream(f"{path}/{MARKER}") as fh:
        marker = fh.read(64 << 20)
    sizes = {f.path[len(path) + 1:]: f.size for f in fs.get_file_info(pafs.FileSelector(path, recursive=True))
             if f.type == pafs.FileType.File}
    sizes.pop(MARKER, None)
    return run_status(marker, sizes)[0]


def earlier_run(fs: pafs.FileSystem, root: str, run: str) -> EarlierRun | None:
    """The newest complete run under ``root`` (a path on ``fs``) before ``run``, with its partitions; None
    when there is none. Runs in progress or damaged are passed over; one that cannot be read is
    returned with the reason rather than failing the audit that is writing its own run."""
    import pyarrow.parquet as pq

    try:
        listed = fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
    except OSError as exc:
        return EarlierRun("", None, f"{root}: cannot list the earlier runs ({str(exc).splitlines()[0]})")
    names = [f.base_name for f in listed if f.type == pafs.FileType.Directory and f.base_name.startswith(RUN_PREFIX)
             and f.base_name < run]
    complete = []
    for name in names:
        try:
            if _status(fs, f"{root}/{name}") == COMPLETE:
                complete.append(name)
        except OSError:  # unreadable: not a run to compare with
            continue
    pick = baseline(complete, run)
    if pick is None:
        return None
    try:
        rows = pq.read_table(f"{root}/{pick}/partitions", filesystem=fs).to_pylist()
    except Exception as exc:  # noqa: BLE001 - pyarrow's many errors for an unreadable table
        return EarlierRun(pick, None, f"{pick}/partitions: cannot read the Parquet table "
                                      f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
    return EarlierRun(pick, rows)

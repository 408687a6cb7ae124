"""The audit runs under the configured ``audit_dir`` as the Audit pages read them: which runs there
are, each one's status from its marker alone (complete, in progress, damaged: ``monitor.contract.auditrun``), a
complete run's summary and tables, and two runs' partition tables paired (``monitor.verdicts.accuracy``).

Why apart from the live sources: a run is files written by the Spark audit, read with its own checks
(sizes against the marker, a size cap on the small files); nothing here reaches the network.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from monitor.contract.auditrun import (COMPLETE, DAMAGED, MARKER, RUN_PREFIX, SUMMARY, TABLES, RunDamaged, read_summary,
                              run_status)

def audit_runs(audit_dir: str | None) -> list[str]:
    """Run folders under the audit output dir, newest first: complete, in progress and damaged alike
    (``audit_run`` tells which)."""
    if not audit_dir or not Path(audit_dir).is_dir():
        return []
    return sorted((p.name for p in Path(audit_dir).iterdir() if p.name.startswith(RUN_PREFIX) and p.is_dir()),
                  reverse=True)


def _sizes(base: Path) -> dict[str, int]:
    sizes = {str(f.relative_to(base)): f.stat().st_size for f in base.rglob("*") if f.is_file()}
    sizes.pop(MARKER, None)  # the run's own marker (each table's Spark _SUCCESS is a file of the run)
    return sizes


def _read_bytes(path: Path, limit: int = 64 << 20) -> bytes:
    """A run's small file (the marker, the summary), refused past ``limit``: a summary is kilobytes."""
    with path.open("rb") as fh:
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        raise RunDamaged(path.name, f"larger than {limit} bytes")
    return raw


def audit_status(audit_dir: str, run: str) -> tuple[str, list[str]]:
    """A run's status from its marker alone (cheap: no table is read): complete, in progress (no
    marker) or damaged (a file missing or of another size than the marker says), with the problems
    (``monitor.contract.auditrun.run_status``)."""
    base = Path(audit_dir) / run
    try:
        if not (base / MARKER).is_file():
            return run_status(None, {})
        return run_status(_read_bytes(base / MARKER), _sizes(base))
    except RunDamaged as exc:
        return DAMAGED, [str(exc)]
    except OSError as exc:
        return DAMAGED, [f"{exc.filename or run}: cannot read ({exc.strerror or exc})"]


def audit_run(audit_dir: str, run: str) -> dict:
    """One run: ``status`` (complete, in progress, damaged), ``problems`` (``file: why``, each naming the
    run's file), and when complete its ``summary`` and tables. Never raises for what is in the folder."""
    import pyarrow.parquet as pq

    base = Path(audit_dir) / run
    out = {"status": COMPLETE, "problems": [], "summary": None, **{t: pd.DataFrame() for t in TABLES}}
    status, problems = audit_status(audit_dir, run)
    if status != COMPLETE:
        return {**out, "status": status, "problems": problems}
    try:
        out["summary"] = read_summary(_read_bytes(base / SUMMARY))
        for table in TABLES:
            p = base / table
            if p.exists():
                try:
                    out[table] = pq.read_table(p).to_pandas()
                except Exception as exc:  # noqa: BLE001 - pyarrow's many errors for a damaged file
                    raise RunDamaged(table, f"cannot read the Parquet table ({str(exc).splitlines()[0]})") from None
    except RunDamaged as exc:
        return {**out, "status": DAMAGED, "summary": None, "problems": [str(exc)]}
    except OSError as exc:
        return {**out, "status": DAMAGED, "summary": None,
                "problems": [f"{exc.filename or run}: cannot read ({exc.strerror or exc})"]}
    return out


def records(df: pd.DataFrame) -> list[dict]:
    """A run's table as plain rows, a missing value (NaN in pandas) as None."""
    return [{k: (None if (v is not None and not isinstance(v, (str, bytes)) and pd.isna(v)) else v)
             for k, v in r.items()} for r in df.to_dict("records")]


def audit_accuracy(before: pd.DataFrame, after: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Two runs' partition tables paired (``monitor.verdicts.accuracy``): one row per partition of the earlier
    run, and the totals over the partitions the cleaner has been over."""
    from monitor.verdicts.accuracy import compare_runs, totals

    rows = compare_runs(records(before), records(after))
    return pd.DataFrame([r.as_dict() for r in rows]), totals(rows).as_dict()

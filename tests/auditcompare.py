"""Two audit runs of the same input compared table by table (the standalone cluster against
``local[2]``, S3 against a local folder): every Parquet table read back with pyarrow (not Spark, so
the reader is not the writer), rows sorted, integers and strings equal, doubles equal up to the last
bits (sums over executors add in another order), the summaries equal but for the run's name.

``log_dir`` writes their input: two topics, five partitions of three segments, four codecs,
tombstones, keys updated many times, null keys and a cleaner-offset-checkpoint, so that every report
table has rows; with kafka-python's record builders (tests/recordfixtures.py), the same bytes every run."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pathlib import Path

from monitor.contract.auditrun import SUMMARY, TABLES
from recordfixtures import T0, items, v2, write


def read_run(fs: pafs.FileSystem, base: str) -> tuple[dict, dict]:
    """{table: sorted rows} and the summary of the run folder ``base`` (a path of ``fs``)."""
    tables = {}
    for name in TABLES:
        files = [f.path for f in fs.get_file_info(pafs.FileSelector(f"{base}/{name}", recursive=True))
                 if f.type == pafs.FileType.File and f.path.endswith(".parquet")]
        rows = [r for f in files for r in pq.read_table(f, filesystem=fs).to_pylist()]
        tables[name] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=repr))
    with fs.open_input_stream(f"{base}/{SUMMARY}") as fh:
        summary = json.loads(fh.read())
    return tables, summary


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a == b or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def differences(one: tuple[dict, dict], other: tuple[dict, dict]) -> list[str]:
    """What differs between two ``read_run`` results (empty: the same tables and summary)."""
    out = []
    for name in TABLES:
        a, b = one[0][name], other[0][name]
        if len(a) != len(b):
            out.append(f"{name}: {len(a)} rows against {len(b)}")
            continue
        for i, (x, y) in enumerate(zip(a, b)):
            if not _same(x, y):
                out.append(f"{name} row {i}: {x} != {y}")
                break
    s1 = {k: v for k, v in one[1].items() if k != "run"}
    s2 = {k: v for k, v in other[1].items() if k != "run"}
    for k in sorted(s1.keys() | s2.keys()):
        if not _same(s1.get(k), s2.get(k)):
            out.append(f"summary {k}: {s1.get(k)!r} != {s2.get(k)!r}")
    return out


# ------------------------------------------------------------------ the input

NOW_MS = T0 + 7 * 86_400_000  # past delete.retention.ms (1 day) for the oldest tombstones


def log_dir(root: Path) -> Path:
    codecs = ["none", "lz4", "gzip", "zstd"]
    for t, (topic, parts) in enumerate((("orders", 3), ("users", 2))):
        for p in range(parts):
            base = 0
            for s in range(3):  # three segments of four batches of 50 records
                batches = []
                for b in range(4):
                    offs = range(base, base + 50)
                    batches.append(v2(items(offs, prefix=f"{topic}{p}", tombstone_every=7 + p, distinct=60 + 10 * t,
                                            null_key_every=97), codecs[(s + b + p) % len(codecs)]))
                    base += 50
                write(root / f"{topic}-{p}" / f"{base - 200:020d}.log", batches)
    (root / "cleaner-offset-checkpoint").write_text("0\n2\norders 0 200\nusers 1 400\n")
    return root


CONFIG = ("clusters:\n  - name: test\n    topics:\n"
          "      orders: {cleanup.policy: compact, min.cleanable.dirty.ratio: 0.1}\n"
          "      users: {cleanup.policy: compact}\n")


ROOT = Path(__file__).resolve().parent.parent


def audit(master: str, inputs: str, out: str, cfg: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``compaction-monitor audit --master MASTER`` in its own process, as a user runs it (its own
    driver JVM), on the executors' Python of this venv; ``env``: more variables (S3's)."""
    full = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1",
            "AUDIT_SHUFFLE_PARTITIONS": "4", **(env or {})}  # the same for every run: fewer tasks on 2 cores
    full.pop("AUDIT_SHIP_CODE", None)
    return subprocess.run([sys.executable, "-m", "cli", "audit", "--master", master, "--input", inputs, "--out", out,
                           "--now-ms", str(NOW_MS), "--config", str(cfg)],
                          capture_output=True, text=True, timeout=900, env=full, cwd=ROOT)

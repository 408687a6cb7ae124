"""Spark audit speed: ``local[2]`` against one process of the ``monitor`` reader over the same files.

Writes at least ``--gb`` GB of segments through the real broker (compacted topics, 4 partitions,
uncompressed and lz4), stops it, then times in the same run (best of ``--repeat`` each):
  * reference: one Python process reading every record with its key (``SegmentReader.records()``);
  * also: one process reading the arrays view (the reader's fastest path) and one process running
    the very same per-partition audit code as the Spark tasks, without Spark;
  * Spark audit: the whole audit (bounds, per-key fold, estimates, top keys, producers, tombstone
    buckets, faults: every report table computed), outputs not written.
Prints MB/s and the ratios. Target (issue 5): the Spark job >= 1.6x the single process on 2 cores.
``--dir`` keeps the data: a second run with the same ``--dir`` reuses it.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from bench.bench_reader import read_all
from bench.common import OUT, Timer, broker, log, produce_bulk
from monitor.fileio import strictjson


def write_data(root: Path, gb: float) -> Path:
    with broker(root / "kafka") as st:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": st.bootstrap})
        for codec in ("none", "lz4"):
            t = f"audit-{codec}"
            admin.create_topics([NewTopic(t, 4, 1, config={
                "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "1.0",
                "segment.bytes": str(128 << 20)})])[t].result(30)
            produce_bulk(st.bootstrap, t, int(gb * 1e9 / 2), codec, partitions=4, on_disk=Path(st.log_dir))
        del admin
        return Path(st.log_dir)


def data_dir(root: Path, gb: float) -> Path:
    """The log dir of ``write_data`` under ``root``: the segments an earlier run left there (``--dir``),
    else ``gb`` GB written now."""
    log_dir = root / "kafka" / "data"
    if list(log_dir.glob("audit-*/*.log")):
        log(f"reusing the segments under {log_dir}")
        return log_dir
    return write_data(root, gb)


def read_arrays(files) -> int:
    from monitor.kafka.record import SegmentReader

    n = 0
    for f in files:
        for _, arr in SegmentReader(f).decoded(arrays=True):
            n += len(arr)
    return n


def audit_one_process(tasks) -> int:
    from spark_analysis.partition_audit import audit_partition

    rows = 0
    for t in tasks:
        for b in audit_partition(t, lambda u: open(u, "rb")):
            rows += b.num_rows
    return rows


def best(fn, repeat: int):
    walls, out = [], None
    for _ in range(repeat):
        with Timer() as t:
            out = fn()
        walls.append(t.wall)
    return min(walls), out


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench audit")
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dir", help="keep the broker dir here (default: a temp dir, removed after)")
    args = ap.parse_args(argv)
    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-audit-"))
    try:
        log_dir = data_dir(tmp, args.gb)
        files = sorted(f for f in log_dir.glob("audit-*/*.log"))
        total = sum(f.stat().st_size for f in files)
        log(f"{len(files)} segment files, {total / 1e6:.0f} MB")

        from spark_analysis.audit import AuditInputs, run_audit
        from spark_analysis.audit.segments import partition_tasks
        from spark_analysis.inputs import list_inputs
        from spark_analysis.session import session

        now = int(time.time() * 1000)

        def inputs():
            return AuditInputs(kind="segments", files=list_inputs("segments", [str(log_dir)]), now_ms=now)

        ref, (n, _) = best(lambda: read_all(files), args.repeat)
        log(f"reference, records(): {total / 1e6 / ref:.1f} MB/s ({n} records)")
        arr, _ = best(lambda: read_arrays(files), args.repeat)
        log(f"arrays view: {total / 1e6 / arr:.1f} MB/s")
        one, _ = best(lambda: audit_one_process(partition_tasks(inputs())), args.repeat)
        log(f"the audit in one process: {total / 1e6 / one:.1f} MB/s")

        spark = session(args.master, app="bench-audit", conf={"spark.ui.showConsoleProgress": "false"})
        try:
            with Timer() as warm:  # JVM, Python workers and Spark's planning code warmed up: not measured
                run_audit(spark, AuditInputs(kind="segments", files=[(str(files[0]), files[0].stat().st_size)],
                                             now_ms=now)).partitions.collect()

            def full():
                res = run_audit(spark, inputs())
                res.partitions.collect()
                return res

            spark_wall, res = best(full, args.repeat)
        finally:
            spark.stop()
        assert res.summary["records"] >= n
        r = {
            "bytes": total, "records": n, "master": args.master, "repeat": args.repeat,
            "reader_mb_s": total / 1e6 / ref, "arrays_mb_s": total / 1e6 / arr,
            "one_process_audit_mb_s": total / 1e6 / one, "spark_audit_mb_s": total / 1e6 / spark_wall,
            "audit_vs_reader": ref / spark_wall, "audit_vs_arrays": arr / spark_wall,
            "audit_vs_one_process_audit": one / spark_wall, "spark_startup_s": warm.wall,
            "reclaimable_bytes": res.summary["reclaimable_bytes"],
        }
        OUT.mkdir(exist_ok=True)
        (OUT / "audit.json").write_text(strictjson.dumps(r, indent=2))
        print(f"{total / 1e6:.0f} MB in {len(files)} segments, {n} records; Spark master {args.master}; "
              f"best of {args.repeat}")
        print(f"reference: one process, reader records()   {r['reader_mb_s']:8.1f} MB/s")
        print(f"one process, reader arrays view            {r['arrays_mb_s']:8.1f} MB/s")
        print(f"one process, the same audit without Spark  {r['one_process_audit_mb_s']:8.1f} MB/s")
        print(f"Spark audit (every table but written)      {r['spark_audit_mb_s']:8.1f} MB/s  = "
              f"{r['audit_vs_reader']:.2f}x the reference, {r['audit_vs_arrays']:.2f}x the arrays read, "
              f"{r['audit_vs_one_process_audit']:.2f}x the one-process audit")
        print("target: the Spark job >= 1.6x the single process on 2 cores")
        return 0
    finally:
        if not args.dir:
            shutil.rmtree(tmp, ignore_errors=True)

"""The audit on a Spark standalone cluster against ``local[2]``, same machine, same input, same run.

Writes ``--gb`` GB of segments through the real broker (``bench_audit.write_data``: two compacted
topics of 4 partitions, uncompressed and lz4), then starts a standalone master and two workers of one
core each (``spark_analysis.standalone``: PySpark's own spark-class, loopback) and times, best of
``--repeat`` each after a warm-up run, the whole audit (every report table computed, outputs not
written) on ``local[2]`` and on ``spark://`` with the same 2 cores. Prints MB/s and the ratio.

What the ratio tells: the price of the cluster shape itself on the same cores (executor JVMs apart
from the driver, task results sent over the network stack, the scheduler's round trips). What it does
not tell: how the audit scales with cores: both runs have 2. See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_audit import best, data_dir
from bench.common import OUT, Timer, log
from monitor.fileio import strictjson


def time_audit(master: str, log_dir: Path, repeat: int) -> tuple[float, float, dict]:
    """(best wall seconds, warm-up seconds, summary) of the audit on ``master``."""
    from spark_analysis.audit import AuditInputs, run_audit
    from spark_analysis.inputs import list_inputs
    from spark_analysis.session import check_executors, session

    now = int(time.time() * 1000)
    files = list_inputs("segments", [str(log_dir)])
    spark = session(master, app=f"bench-audit-{master.split(':')[0]}",
                    conf={"spark.ui.showConsoleProgress": "false"})
    try:
        with Timer() as warm:  # JVMs, Python workers and Spark's planning code warmed up: not measured
            check_executors(spark, progress=log)
            run_audit(spark, AuditInputs(kind="segments", files=files[:1], now_ms=now)).partitions.collect()

        def full():
            res = run_audit(spark, AuditInputs(kind="segments", files=files, now_ms=now))
            res.partitions.collect()
            return res

        wall, res = best(full, repeat)
    finally:
        spark.stop()
    return wall, warm.wall, res.summary


def main(argv) -> int:
    from spark_analysis import standalone

    ap = argparse.ArgumentParser(prog="bench audit-cluster")
    ap.add_argument("--gb", type=float, default=0.5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dir", help="keep the broker dir here (default: a temp dir, removed after)")
    args = ap.parse_args(argv)
    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-audit-cluster-"))
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors' Python: this venv, the package installed
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    try:
        log_dir = data_dir(tmp, args.gb)
        total = sum(f.stat().st_size for f in log_dir.glob("audit-*/*.log"))
        local_wall, local_warm, local_sum = time_audit("local[2]", log_dir, args.repeat)
        cluster = standalone.start(tmp / "spark", workers=2, cores=1, memory="2g", progress=log)
        try:
            cl_wall, cl_warm, cl_sum = time_audit(cluster.master_url, log_dir, args.repeat)
        finally:
            cluster.stop()
        assert cl_sum["records"] == local_sum["records"] and cl_sum["bytes"] == local_sum["bytes"]
        r = {"bytes": total, "records": local_sum["records"], "partitions": local_sum["partitions"],
             "repeat": args.repeat, "cores": 2,
             "local_mb_s": total / 1e6 / local_wall, "standalone_mb_s": total / 1e6 / cl_wall,
             "standalone_vs_local": local_wall / cl_wall, "local_warmup_s": local_warm,
             "standalone_warmup_s": cl_warm, "standalone_decoders": cl_sum.get("decoders")}
        OUT.mkdir(exist_ok=True)
        (OUT / "audit_cluster.json").write_text(strictjson.dumps(r, indent=2))
        print(f"{total / 1e6:.0f} MB, {r['partitions']} partitions, {r['records']} records; best of {args.repeat}")
        print(f"local[2]                               {r['local_mb_s']:8.1f} MB/s")
        print(f"standalone, 2 workers x 1 core         {r['standalone_mb_s']:8.1f} MB/s  = "
              f"{r['standalone_vs_local']:.2f}x local[2] (executors' decoder: {r['standalone_decoders']})")
        print("same 2 cores: the ratio is the cost of the cluster shape, not a scaling figure")
        return 0
    finally:
        if not args.dir:
            shutil.rmtree(tmp, ignore_errors=True)

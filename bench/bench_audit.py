"""Spark audit speed: ``local[2]`` against one process of the ``monitor`` reader over the same files.

Writes at least ``--gb`` GB of segments through the real broker (compacted topics, 4 partitions,
uncompressed and lz4), stops it, then times in the same run:
  * reference: one Python process reading every record with its key (the reader alone);
  * Spark scan: the kafka-segments data source read to a count (all records through Arrow);
  * Spark audit: the whole audit (windows, aggregations, estimates), outputs not written.
Prints MB/s and the ratios. Target (issue 5): the Spark job >= 1.6x the single process on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from bench.common import OUT, Timer, broker, log, produce_bulk
from bench.bench_reader import read_all


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench audit")
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--dir", help="keep the broker dir here (default: a temp dir, removed after)")
    args = ap.parse_args(argv)
    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-audit-"))
    try:
        with broker(tmp / "kafka") as st:
            from confluent_kafka.admin import AdminClient, NewTopic

            admin = AdminClient({"bootstrap.servers": st.bootstrap})
            for codec in ("none", "lz4"):
                t = f"audit-{codec}"
                admin.create_topics([NewTopic(t, 4, 1, config={
                    "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "1.0",
                    "segment.bytes": str(128 << 20)})])[t].result(30)
                produce_bulk(st.bootstrap, t, int(args.gb * 1e9 / 2), codec, partitions=4, on_disk=Path(st.log_dir))
            del admin
            log_dir = Path(st.log_dir)
        files = sorted(f for f in log_dir.glob("audit-*/*.log"))
        total = sum(f.stat().st_size for f in files)
        log(f"{len(files)} segment files, {total / 1e6:.0f} MB")

        with Timer() as ref:
            n, _ = read_all(files)
        log(f"reference reader: {total / 1e6 / ref.wall:.1f} MB/s ({n} records)")

        from spark_analysis.audit import AuditInputs, run_audit
        from spark_analysis.job import load_batches, load_records, session

        spark = session(args.master, app="bench-audit")
        try:
            with Timer() as warm:  # JVM and Python workers up: not what we measure
                load_records(spark, "segments", [str(files[0])]).count()
            with Timer() as scan:
                count = load_records(spark, "segments", [str(log_dir)]).count()
            with Timer() as full:
                res = run_audit(spark, AuditInputs(records=load_records(spark, "segments", [str(log_dir)]),
                                                   batches=load_batches(spark, [str(log_dir)]), kind="segments"))
                res.partitions.collect()
        finally:
            spark.stop()
        assert count >= n
        r = {
            "bytes": total, "records": n, "master": args.master,
            "reader_mb_s": total / 1e6 / ref.wall, "spark_scan_mb_s": total / 1e6 / scan.wall,
            "spark_audit_mb_s": total / 1e6 / full.wall, "scan_vs_reader": ref.wall / scan.wall,
            "audit_vs_reader": ref.wall / full.wall, "spark_startup_s": warm.wall,
            "reclaimable_bytes": res.summary["reclaimable_bytes"],
        }
        OUT.mkdir(exist_ok=True)
        (OUT / "audit.json").write_text(json.dumps(r, indent=2))
        print(f"{total / 1e6:.0f} MB in {len(files)} segments, {n} records; Spark master {args.master}")
        print(f"reference: one process, monitor reader  {r['reader_mb_s']:8.1f} MB/s")
        print(f"Spark scan (kafka-segments -> count)    {r['spark_scan_mb_s']:8.1f} MB/s  = {r['scan_vs_reader']:.2f}x")
        print(f"Spark audit (everything but writing)    {r['spark_audit_mb_s']:8.1f} MB/s  = {r['audit_vs_reader']:.2f}x")
        print("target: the Spark job >= 1.6x the single process on 2 cores")
        return 0
    finally:
        if not args.dir:
            shutil.rmtree(tmp, ignore_errors=True)

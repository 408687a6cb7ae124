"""The audit's cleaning-time estimate against the clean time the real broker logs.

Why a benchmark and not a test: the estimate is bytes / a throughput calibrated on log-cleaner.log
(``monitor.model.estimate``, checked exactly by tests/spark_analysis), but how close it comes to the time
of another clean depends on the machine's load (on a loaded 2-core machine it drifted past 2x). So
the figure is printed and kept (``bench/out/estimate.json``), not asserted.

Compacted topics are written alike through the local broker (warm-ups, a calibration topic,
the target; rounds of updates, then tombstones for every 7th key), the target copied before any
clean, then all cleaned once. The throughput is learned from the last warm-up's and the calibration
topic's logged cleans (never the target's), the target's copy audited in one process (the Spark
tasks' code), and its estimate divided by the target's logged clean time.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.common import OUT, broker, log
from monitor.fileio import strictjson

CFG = {"cleanup.policy": "compact", "segment.ms": 300, "min.cleanable.dirty.ratio": 1.0,
       "delete.retention.ms": 86_400_000, "min.compaction.lag.ms": 0}


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench estimate")
    ap.add_argument("--keys", type=int, default=24_000, help="keys per round (24,000: about 40 MB a topic)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--value-bytes", type=int, default=300)
    ap.add_argument("--warmups", type=int, default=2,
                    help="warm-up topics cleaned first (a fresh broker's first cleans run before its JIT has compiled the cleaner)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import pyarrow as pa

    from kafkatools import (copy_partition, create_topic, partition_dir, set_topic_config, wait_cleaned_up_to_active,
                            wait_for, write_rounds)
    from monitor.kafka.cleanerlog import learned_throughput, parse_cleaner_log
    from monitor.model.estimate import CleanerParams
    from monitor.model.topicconfig import TopicConfig
    from spark_analysis.audit.tables import partition_row
    from spark_analysis.partition_audit import PartitionTask, audit_partition
    from spark_analysis.rows import rows_of

    pad = b"v" * args.value_bytes
    root = Path(tempfile.mkdtemp(prefix="bench-estimate-"))
    try:
        with broker(root / "kafka") as st:
            def write_and_clean(*topics, before_clean=lambda: None):
                for t in topics:
                    create_topic(st.bootstrap, t, **CFG)
                    log(f"writing {t}: {args.rounds} rounds of {args.keys} keys ...")
                    write_rounds(st.bootstrap, t, args.rounds, args.keys, tombstones=range(0, args.keys, 7),
                                 value=lambda r, i: pad + f"{r}-{i}".encode(), roll_wait=0.4,
                                 **{"linger.ms": 50, "batch.size": 512_000})
                before_clean()
                for t in topics:
                    set_topic_config(st.bootstrap, t, **{"min.cleanable.dirty.ratio": 0.01})
                for t in topics:
                    wait_cleaned_up_to_active(st.log_dir, t, timeout=600)

            # a first clean warms the broker's JIT up, so the calibration and the target compare like with like
            warmups = [f"warmup{i}" for i in range(args.warmups)]
            for w in warmups:
                write_and_clean(w)
            write_and_clean("calib", "target",
                            before_clean=lambda: copy_partition(partition_dir(st.log_dir, "target"), root / "copy"))
            names = {*warmups, "calib", "target"}
            stats = wait_for(lambda: (lambda s: s if names <= {x.topic_partition[0] for x in s} else None)(
                parse_cleaner_log(st.cleaner_log.read_text().splitlines())), 60,
                "the cleaner's stats of every topic in log-cleaner.log")
        calib = [s for s in stats if s.topic_partition[0] in ("calib", *warmups[-1:])]  # the warmed-up cleans
        actual = [s for s in stats if s.topic_partition[0] == "target"][0]
        tp = learned_throughput(calib, min_mb=0.1)
        files = sorted((str(f), f.stat().st_size) for f in (root / "copy" / "target-0").glob("*.log"))
        task = PartitionTask("target", 0, files, TopicConfig.from_strings(CFG), int(time.time() * 1000))
        table = pa.Table.from_batches(list(audit_partition(task, lambda u: open(u, "rb"))))
        row = partition_row(rows_of(table, "facts")[0], rows_of(table, "key_totals")[0],
                            CleanerParams(throughput=tp, throughput_source="calibrated"))
        ratio = row["estimated_clean_seconds"] / actual.duration
        res = {"keys": args.keys, "rounds": args.rounds, "value_bytes": args.value_bytes, "warmups": args.warmups,
               "cleanable_bytes": row["cleanable_bytes"], "clean_bytes": row["clean_bytes"],
               "calibrated_throughput_bytes_per_second": tp,
               "calibration_cleans": [{"log": s.log, "processed_mb": s.processed_mb, "seconds": s.duration}
                                      for s in calib],
               "warmup_cleans": [{"log": s.log, "processed_mb": s.processed_mb, "seconds": s.duration}
                                 for s in stats if s.topic_partition[0] in warmups],
               "estimated_clean_seconds": row["estimated_clean_seconds"],
               "logged_clean_seconds": actual.duration, "logged_processed_mb": actual.processed_mb,
               "estimate_vs_logged": ratio}
        OUT.mkdir(exist_ok=True)
        (OUT / "estimate.json").write_text(strictjson.dumps(res, indent=2))
        print(f"target: {row['cleanable_bytes'] / 1e6:.1f} MB cleanable; throughput calibrated on "
              f"{', '.join(s.log for s in calib)}: {tp / (1 << 20):.1f} MiB/s "
              f"(warm-up cleans: {', '.join(f'{s.duration:.2f}' for s in stats if s.topic_partition[0] in warmups)} s)")
        print(f"estimated clean {row['estimated_clean_seconds']:.3f} s vs logged {actual.duration:.3f} s "
              f"({actual.processed_mb:.1f} MB processed) = x{ratio:.2f}")
        print("the tests once asserted 0.5x..2x here; a loaded machine gave x2.02 and x2.19")
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)

"""Reader speed: ``monitor.kafka.record`` against Kafka's own ``kafka-dump-log --print-data-log``.

Writes at least ``--gb`` GB of segments (bytes on disk) through the real local broker
(half uncompressed, half lz4), then times, on the same files in the same run:
  * our reader iterating every record with its key extracted and CRCs checked (one process),
  * ``kafka-dump-log --print-data-log`` (output discarded),
and prints MB/s of segment bytes for both and their ratio. Targets (issue 3):
ratio >= 10, and >= 50 MB/s per core on uncompressed data.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import OUT, Timer, broker, log, produce_bulk
from monitor.fileio import strictjson


def read_all(files) -> tuple[int, int]:
    """Every record as an object (``SegmentReader.records()``), its key read."""
    from monitor.kafka.record import SegmentReader

    records = key_bytes = 0
    for f in files:
        for rec in SegmentReader(f).records():
            records += 1
            k = rec.key
            if k is not None:
                key_bytes += len(k)
    return records, key_bytes


def read_columns(files) -> tuple[int, int]:
    """Every record through the bulk view (``batch.columns()``), its key read: what scans use."""
    from monitor.kafka.record import SegmentReader

    records = key_bytes = 0
    for f in files:
        for batch in SegmentReader(f).batches():
            c = batch.columns()
            records += len(c)
            key_bytes += sum(len(k) for k in c.keys if k is not None)
    return records, key_bytes


def time_reader(files, total, fn=read_all):
    with Timer() as t:
        n, _ = fn(files)
    return {"records": n, "wall_s": t.wall, "cpu_s": t.cpu, "mb_s": total / 1e6 / t.wall,
            "mb_s_per_cpu_s": total / 1e6 / t.cpu}


def time_dump_log(files, total):
    from localkafka.kafkatools import dump_log_command

    cmd = dump_log_command([str(f) for f in files], "--print-data-log")
    with Timer() as t:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if proc.returncode:
        raise RuntimeError(proc.stderr.decode()[-2000:])
    return {"wall_s": t.wall, "mb_s": total / 1e6 / t.wall}


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench reader")
    ap.add_argument("--gb", type=float, default=1.0, help="GB of segments to write in all (default 1)")
    ap.add_argument("--dir", help="broker dir (default: a temp dir, removed after)")
    ap.add_argument("--profile", action="store_true", help="also print where the reader's time goes")
    args = ap.parse_args(argv)

    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-reader-"))
    half = int(args.gb * 1e9 / 2)
    files = {}
    with broker(tmp / "kafka") as st:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": st.bootstrap})
        for codec in ("none", "lz4"):
            topic = f"bench-{codec}"
            admin.create_topics([NewTopic(topic, 1, 1, config={"segment.bytes": str(128 << 20)})])[topic].result(30)
            produce_bulk(st.bootstrap, topic, half, codec, on_disk=Path(st.log_dir))
            files[codec] = sorted((Path(st.log_dir) / f"{topic}-0").glob("*.log"))
        del admin  # no client may outlive the broker (it would keep reconnecting)
    # broker stopped: the files no longer change and the machine is quiet
    results = {"gb_requested": args.gb}
    for codec, fl in files.items():
        total = sum(f.stat().st_size for f in fl)
        log(f"[{codec}] {len(fl)} segment files, {total / 1e6:.0f} MB on disk")
        log(f"[{codec}] timing monitor.kafka.record reader ...")
        ours = time_reader(fl, total)
        bulk = time_reader(fl, total, read_columns)
        log(f"[{codec}] timing kafka-dump-log --print-data-log ...")
        theirs = time_dump_log(fl, total)
        results[codec] = {"bytes": total, "files": len(fl), "reader": ours, "columns": bulk, "kafka_dump_log": theirs,
                          "ratio_vs_dump_log": ours["mb_s"] / theirs["mb_s"],
                          "columns_ratio_vs_dump_log": bulk["mb_s"] / theirs["mb_s"]}
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        read_columns(files["none"][:1])
        prof.disable()
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(12)

    OUT.mkdir(exist_ok=True)
    (OUT / "reader.json").write_text(strictjson.dumps(results, indent=2))
    from monitor.kafka.record import v2

    print(f"record decoder: {'C (monitor/kafka/record/_decode.c)' if v2._c_decode_columns else 'pure Python'}")
    print(f"{'codec':6} {'MB':>7} {'records':>10} {'records() MB/s':>15} {'ratio':>7} {'columns() MB/s':>15} "
          f"{'ratio':>7} {'dump-log MB/s':>14}")
    for codec in files:
        r = results[codec]
        print(f"{codec:6} {r['bytes'] / 1e6:7.0f} {r['reader']['records']:10d} {r['reader']['mb_s']:15.1f} "
              f"{r['ratio_vs_dump_log']:6.1f}x {r['columns']['mb_s']:15.1f} {r['columns_ratio_vs_dump_log']:6.1f}x "
              f"{r['kafka_dump_log']['mb_s']:14.1f}")
    print("targets: ratio >= 10x vs kafka-dump-log; >= 50 MB/s per core uncompressed (keys extracted, CRCs checked)")
    if not args.dir:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return 0

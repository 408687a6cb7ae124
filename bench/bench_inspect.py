"""``inspect`` speed: ``inspect --format jsonl`` and ``inspect --stats`` against Kafka's own
``kafka-dump-log --print-data-log``, on the same broker-written segment, in the same run.

Writes one segment of ``--mb`` MB through the real local broker (small values, 20..160 bytes, a
tombstone every 20th record: about the 450k records in 50 MB the issue measured), stops the broker,
then runs each command as a whole process (start-up included, output discarded) ``--repeat`` times:
  * ``compaction-monitor inspect --format jsonl FILE``,
  * ``compaction-monitor inspect --stats FILE``,
  * ``kafka-dump-log --print-data-log --files FILE`` (the cached jars, one JVM per run),
and prints, for the fastest run of each, MB/s of segment bytes and the ratios against kafka-dump-log
in wall time, and also in CPU time (user + system of the process and its threads: steadier than
wall time on a busy machine; the JVM's JIT and GC threads count in its CPU time).
Targets (issue 15): jsonl >= 3x, --stats >= 20x.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import OUT, broker, log, produce_bulk
from monitor.fileio import strictjson

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"jsonl": 3.0, "stats": 20.0}


def _run(cmd: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RuntimeError(f"{cmd[:6]}... exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(cmd: list[str], repeat: int) -> dict:
    runs = [_run(cmd) for _ in range(repeat)]
    return {"wall_s": min(w for w, _ in runs), "cpu_s": min(c for _, c in runs)}


def commands(f: Path) -> dict[str, list[str]]:
    from localkafka.kafkatools import dump_log_command

    ours = [sys.executable, "-m", "cli", "inspect"]
    return {"jsonl": [*ours, "--format", "jsonl", str(f)],
            "stats": [*ours, "--stats", str(f)],
            "kafka_dump_log": dump_log_command([str(f)], "--print-data-log")}


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench inspect")
    ap.add_argument("--mb", type=float, default=50, help="MB of the segment (default 50)")
    ap.add_argument("--codec", default="none", choices=["none", "gzip", "snappy", "lz4", "zstd"],
                    help="the producer's compression (default none)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each command; the fastest counts (default 2)")
    ap.add_argument("--dir", help="broker dir (default: a temp dir, removed after)")
    args = ap.parse_args(argv)

    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-inspect-"))
    with broker(tmp / "kafka") as st:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": st.bootstrap})
        topic = f"inspect-{args.codec}"
        admin.create_topics([NewTopic(topic, 1, 1, config={"segment.bytes": str(1 << 30)})])[topic].result(30)
        n = produce_bulk(st.bootstrap, topic, int(args.mb * 1e6), args.codec, on_disk=Path(st.log_dir),
                         value_sizes=(20, 160), tombstone_every=20)
        f = sorted((Path(st.log_dir) / f"{topic}-0").glob("*.log"))[0]
        del admin  # no client may outlive the broker
    # broker stopped: the file no longer changes
    size = f.stat().st_size
    log(f"{size / 1e6:.0f} MB segment, {n} records ({args.codec}); timing inspect --format jsonl, "
        f"inspect --stats, kafka-dump-log --print-data-log, {args.repeat} run(s) each ...")
    times = {name: best(cmd, args.repeat) for name, cmd in commands(f).items()}
    theirs = times["kafka_dump_log"]
    result = {"bytes": size, "records": n, "codec": args.codec, "repeat": args.repeat, "times": times,
              "ratio_wall": {k: theirs["wall_s"] / times[k]["wall_s"] for k in TARGETS},
              "ratio_cpu": {k: theirs["cpu_s"] / times[k]["cpu_s"] for k in TARGETS}}
    OUT.mkdir(exist_ok=True)
    (OUT / "inspect.json").write_text(strictjson.dumps(result, indent=2))
    print(f"segment: {size / 1e6:.1f} MB, {n} records, codec {args.codec}; fastest of {args.repeat} run(s), "
          f"whole processes")
    print(f"{'command':34} {'wall s':>7} {'MB/s':>7} {'cpu s':>7}   {'ratio wall':>10} {'ratio cpu':>9} {'target':>7}")
    labels = {"jsonl": "inspect --format jsonl", "stats": "inspect --stats",
              "kafka_dump_log": "kafka-dump-log --print-data-log"}
    for name, t in times.items():
        ratios = (f"{result['ratio_wall'][name]:9.1f}x {result['ratio_cpu'][name]:8.1f}x {TARGETS[name]:6.0f}x"
                  if name in TARGETS else "")
        print(f"{labels[name]:34} {t['wall_s']:7.2f} {size / 1e6 / t['wall_s']:7.1f} {t['cpu_s']:7.2f}   {ratios}")
    if not args.dir:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return 0

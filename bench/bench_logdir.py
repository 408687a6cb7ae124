"""Log-dir refresh for many partitions, cold and warm (issue 4's target: warm < 1 s for 5,000
partitions with unchanged segments; cold bounded by the reader's MB/s).

Segments are written once by the real broker (a compacted topic, rolled a few times), then
copied into ``--partitions`` partition folders with a cleaner checkpoint naming each, so the
scanner sees a log dir of that size. The reference measured in the same run is the plain
reader over the same bytes (what a cold refresh cannot beat)."""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import tracemalloc
from pathlib import Path

from bench.common import OUT, Timer, broker, log
from monitor.fileio import strictjson


def make_log_dir(root: Path, partitions: int, rounds: int) -> tuple[Path, int]:
    from confluent_kafka.admin import AdminClient, NewTopic

    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from kafkatools import produce, roll

    with broker(root / "kafka") as st:
        admin = AdminClient({"bootstrap.servers": st.bootstrap})
        admin.create_topics([NewTopic("src", 1, 1, config={"cleanup.policy": "compact", "segment.ms": "200",
                                                            "min.cleanable.dirty.ratio": "1.0"})])["src"].result(30)
        del admin
        for r in range(rounds):
            produce(st.bootstrap, "src", [(f"k{i}".encode(), f"value {r} {i} ".encode() * 8) for i in range(400)]
                    + [(f"k{i}".encode(), None) for i in range(r, 400, 37)])
            roll(st.bootstrap, "src")
        src = Path(st.log_dir) / "src-0"
        segs = sorted(src.glob("*.log"))
        saved = root / "segments"
        saved.mkdir()
        for s in segs:
            shutil.copy(s, saved / s.name)
    out = root / "logdir"
    out.mkdir()
    lines = []
    total = 0
    for p in range(partitions):
        d = out / f"orders.v2-eu-{p}"
        d.mkdir()
        for s in sorted(saved.glob("*.log")):
            shutil.copy(s, d / s.name)
            total += s.stat().st_size
        lines.append(f"orders.v2-eu {p} {segs[1].name.split('.')[0].lstrip('0') or 0}")
    (out / "cleaner-offset-checkpoint").write_text(f"0\n{len(lines)}\n" + "\n".join(lines) + "\n")
    return out, total


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 1e6


def _counts(text: str) -> list[int]:
    """``--partitions``: one count or several, comma-separated (``4000,20000``)."""
    try:
        counts = [int(x.replace("_", "")) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: partition counts, comma-separated (e.g. 4000,20000)") from None
    if any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError(f"{text!r}: each count must be at least 1")
    return counts


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench logdir")
    ap.add_argument("--partitions", type=_counts, metavar="N[,N...]",
                    help="default 5,000; with --broker-size a list run in turn, default 4000,20000")
    ap.add_argument("--rounds", type=int, default=3, help="segments per partition (plus the active one)")
    ap.add_argument("--broker-size", action="store_true",
                    help="a broker's size (bench/bench_logdir_broker.py): cold start, restart with the cache, "
                         "first complete page, peak RSS, each against a plain full read")
    ap.add_argument("--gb", type=float, default=20.0, help="--broker-size: GB of log at each partition count (default 20)")
    ap.add_argument("--segments", type=int, default=4, help="--broker-size: rolled segments per partition")
    ap.add_argument("--timeout", type=float, default=7200, help="--broker-size: seconds a collect may take")
    ap.add_argument("--budget-seconds", type=float, default=60, help="--broker-size: the I/O budget's window")
    ap.add_argument("--dir", help="--broker-size: where the log dir is made (default: the temp dir)")
    ap.add_argument("--detail-wait", type=float, default=float("inf"), metavar="SECONDS",
                    help="--broker-size: seconds from the collector's start to wait for its record pass (default: until done); past it "
                         "the records still pending are reported")
    ap.add_argument("--io-budget", type=float, default=None, metavar="BYTES_PER_SECOND",
                    help="--broker-size: collect's --io-budget (default: the collector's own default)")
    ap.add_argument("--steady", action="store_true",
                    help="the CPU of a steady refresh and render with --changed of the partitions written "
                         "(bench/bench_logdir_steady.py), at --partitions (default 4,000 and 20,000)")
    ap.add_argument("--changed", type=float, default=0.01, help="--steady: fraction of partitions written")
    ap.add_argument("--unhealthy", action="store_true",
                    help="--steady: leave every partition eligible (unhealthy: all its series exported); default: "
                         "the cleaner's checkpoint at the last rolled segment, the partitions below the threshold")
    args = ap.parse_args(argv)
    if args.dir is not None and not Path(args.dir).is_dir():  # said before any work, not a traceback after
        ap.error(f"--dir {args.dir}: {'not a directory' if Path(args.dir).exists() else 'no such directory'}")
    if args.steady:
        from bench.bench_logdir_steady import main as steady

        args.partitions_list = args.partitions or [4000, 20000]  # (_counts: a list)
        args.gb = args.gb if args.gb != 20.0 else None
        args.segments = args.segments if args.segments != 4 else 3
        return steady(args)
    if args.broker_size:
        from bench.bench_logdir_broker import main as broker_size

        args.partitions = args.partitions or [4000, 20_000]
        return broker_size(args)
    if args.partitions is not None and len(args.partitions) > 1:
        ap.error("--partitions: one count without --broker-size")
    args.partitions = args.partitions[0] if args.partitions else 5000
    from collectors.logdirs.scanner import LogDirScanner
    from monitor.kafka.record import SegmentReader

    root = Path(tempfile.mkdtemp(prefix="bench-logdir-"))
    try:
        log(f"writing segments through the broker and copying them into {args.partitions} partitions ...")
        d, total = make_log_dir(root, args.partitions, args.rounds)
        files = sorted(d.glob("*/*.log"))
        log(f"{len(files)} segment files, {total / 1e6:.0f} MB")

        with Timer() as ref:
            n = sum(1 for f in files for _ in SegmentReader(f).records())
        scanner = LogDirScanner([d])
        rss0 = _rss_mb()
        with Timer() as cold:
            snap = scanner.refresh()
        cold_peak = (_rss_mb() - rss0) * 1e6  # resident growth: the summaries kept for warm refreshes
        warm_times = []
        for _ in range(3):
            with Timer() as warm:
                snap2 = scanner.refresh()
            warm_times.append((warm.wall, warm.cpu))
        # allocation peak of one warm refresh (tracemalloc slows Python down: timed runs are above)
        tracemalloc.start()
        scanner.refresh()
        warm_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert len(snap.partitions) == args.partitions and snap2.segments_read == 0
        warm_wall = min(w for w, _ in warm_times)
        warm_cpu = min(c for _, c in warm_times)
        res = {
            "partitions": args.partitions, "segment_files": len(files), "bytes": total, "records": n,
            "reader_reference_s": ref.wall, "reader_mb_s": total / 1e6 / ref.wall,
            "cold_wall_s": cold.wall, "cold_cpu_s": cold.cpu, "cold_mb_s": total / 1e6 / cold.wall,
            "cold_rss_growth_mb": cold_peak / 1e6,
            "warm_wall_s": warm_wall, "warm_cpu_s": warm_cpu, "warm_peak_traced_mb": warm_peak / 1e6,
            "cold_vs_reader": (total / 1e6 / cold.wall) / (total / 1e6 / ref.wall),
            "warm_vs_cold": warm_wall / cold.wall,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
        OUT.mkdir(exist_ok=True)
        (OUT / "logdir.json").write_text(strictjson.dumps(res, indent=2))
        print(f"log dir: {args.partitions} partitions, {len(files)} segments, {total / 1e6:.0f} MB, {n} records")
        print(f"reference: plain reader over the same files   {res['reader_mb_s']:8.1f} MB/s  ({ref.wall:.2f} s)")
        print(f"cold refresh: {cold.wall:6.2f} s wall {cold.cpu:6.2f} s CPU  {res['cold_mb_s']:8.1f} MB/s "
              f"= {res['cold_vs_reader']:.2f}x the reader; RSS grew {res['cold_rss_growth_mb']:.0f} MB")
        print(f"warm refresh: {warm_wall:6.3f} s wall {warm_cpu:6.3f} s CPU  = {res['warm_vs_cold']:.3f}x cold "
              f"(target: < 1 s); peak traced memory {res['warm_peak_traced_mb']:.0f} MB")
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)

"""The exporter's own cost (issue 14 point 3): series and render time of /metrics for a broker with
5,000 compacted partitions, at both granularities, in one run.

The log dir is ``bench.bench_logdir``'s (segments the real broker wrote, copied into every partition
folder); the cleaner's checkpoint puts 99% of the partitions fully cleaned below their active segment
(healthy: cause active_segment_only) and 1% never cleaned (eligible: unhealthy), as on a broker whose
cleaner keeps up. One scan fills the store; then the exposition is rendered from it, as each scrape
(or, with the scrape helper's change, each refresh) does. The reference measured in the same run is
the warm log-dir refresh of the same partitions (the collector's other recurring cost)."""

from __future__ import annotations

import argparse
import gzip
import shutil
import tempfile
from pathlib import Path

from bench.bench_logdir import make_log_dir
from bench.common import OUT, Timer, log
from monitor.fileio import strictjson


def checkpoint_mix(d: Path, unhealthy_every: int) -> int:
    """Rewrite the cleaner checkpoint: every partition cleaned up to its active segment, but every
    ``unhealthy_every``-th never cleaned (offset 0). Returns how many are unhealthy."""
    lines, bad = [], 0
    for folder in sorted(d.iterdir()):
        if not folder.is_dir():
            continue
        topic, _, p = folder.name.rpartition("-")
        active = max(int(f.name[:-4]) for f in folder.glob("*.log"))
        dirty = int(p) % unhealthy_every == 0
        bad += dirty
        lines.append(f"{topic} {p} {0 if dirty else active}")
    (d / "cleaner-offset-checkpoint").write_text(f"0\n{len(lines)}\n" + "\n".join(lines) + "\n")
    return bad


def measure(d: Path, granularity: str, repeat: int) -> dict:
    from prometheus_client import generate_latest

    from collectors.app import build
    from monitor.settings.config import BrokerConfig, ClusterConfig, Config

    col = build(Config(granularity=granularity, clusters=(ClusterConfig(
        name="bench", brokers=(BrokerConfig(id="1", log_dirs=(str(d),)),)),)))
    try:
        assert col.runner.refresh_all()
        with Timer() as warm:
            col.runner.refresh_all()
        times, page = [], b""
        for _ in range(repeat):
            with Timer() as t:
                page = generate_latest(col.registry)
            times.append(t.wall)
        with Timer() as gz:
            packed = gzip.compress(page)
        lines = [x for x in page.decode().splitlines() if x and not x.startswith("#")]
        per_partition = [x for x in lines if 'partition="' in x]
        return {"series": len(lines), "partition_series": len(per_partition), "bytes": len(page),
                "gzip_bytes": len(packed), "render_s": min(times), "gzip_s": gz.wall, "warm_refresh_s": warm.wall}
    finally:
        col.close()


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench exporter")
    ap.add_argument("--partitions", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=2, help="segments per partition (plus the active one)")
    ap.add_argument("--unhealthy-every", type=int, default=100, help="every Nth partition never cleaned")
    ap.add_argument("--repeat", type=int, default=3, help="renders per granularity (the best is kept)")
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench-exporter-"))
    try:
        log(f"writing segments through the broker and copying them into {args.partitions} partitions ...")
        d, total = make_log_dir(root, args.partitions, args.rounds)
        bad = checkpoint_mix(d, args.unhealthy_every)
        got = {g: measure(d, g, args.repeat) for g in ("topic", "partition")}
        t, p = got["topic"], got["partition"]
        res = {"partitions": args.partitions, "unhealthy_partitions": bad, "bytes_on_disk": total, **{
            f"{g}_{k}": v for g, m in got.items() for k, v in m.items()},
            "series_ratio": t["series"] / p["series"], "render_ratio": t["render_s"] / p["render_s"],
            "topic_series_per_healthy_partition":
                (t["partition_series"] - bad * p["partition_series"] / args.partitions) / (args.partitions - bad),
            "topic_render_vs_warm_refresh": t["render_s"] / t["warm_refresh_s"]}
        OUT.mkdir(exist_ok=True)
        (OUT / "exporter.json").write_text(strictjson.dumps(res, indent=2))
        print(f"{args.partitions} partitions ({bad} unhealthy), {total / 1e6:.0f} MB on disk")
        for g, m in got.items():
            print(f"granularity {g:9}: {m['series']:7,} series ({m['partition_series']:,} per-partition), "
                  f"{m['bytes'] / 1e6:5.2f} MB ({m['gzip_bytes'] / 1e6:.2f} MB gzip), render {m['render_s']:.3f} s, "
                  f"gzip {m['gzip_s']:.3f} s; warm log-dir refresh {m['warm_refresh_s']:.3f} s")
        print(f"topic / partition: series {res['series_ratio']:.3f}x, render {res['render_ratio']:.3f}x; "
              f"render at topic = {res['topic_render_vs_warm_refresh']:.2f}x the warm refresh")
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)

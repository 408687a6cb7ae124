"""``bench render``: what rendering /metrics costs in memory and formatting work (issue 43 items 2-3 for the
served page), at ``--partitions`` (4,000 and 20,000 by default), in one process, with tracemalloc.

The log dir is ``bench.bench_scrape``'s (one segment per partition, no broker); the collector is the one
``collect`` builds (headers first, as served), at each ``--granularity`` (topic: a healthy partition's
default series; partition: every series, as every partition of an unhealthy broker), its store filled by
two refreshes. Then, for the page Prometheus asks for (OpenMetrics, gzip), measured by tracemalloc:
  retained   bytes still allocated after a render was published (the page and what it keeps), per partition;
  peak       the highest allocation while rendering and encoding, above what was allocated before, per partition;
  top        where the retained allocations were made (file:line), largest first.
Then a steady refresh: ``--changed`` (1%) of the partitions get a batch appended, the log dirs are
refreshed and the page rendered again (its peak above the render it replaces); ``formatted`` counts the
partitions and lines formatted again (``collectors.export.partitions``' own counters; "not available" where
it has none). At granularity partition every partition's active segment age moves with the clock between
the renders: one line of each is a change.

Memory only the Python heap shows: tracemalloc traces Python's allocations (the RSS the bench ``logdir
--broker-size`` reports adds the interpreter, the allocator's slack and C libraries)."""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import tracemalloc
from pathlib import Path

from bench.common import OUT, log
from monitor.fileio import strictjson

ACCEPT = "application/openmetrics-text;version=1.0.0;escaping=underscores"  # what Prometheus 3 asks first


def _append(pd: Path) -> None:
    """One more batch at the end of the partition's segment (a write: its report changes)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from recordfixtures import items, v2

    seg = pd / "00000000000000000000.log"
    end = 24 + (seg.stat().st_size - 1)  # any offset past the segment's: a distinct base offset each time
    seg.open("ab").write(v2(items(range(end, end + 3), distinct=6)).data)


def _formatted(col) -> int | None:
    from collectors.export.partitions import PartitionCollector

    for c in getattr(col.registry, "_collector_to_names", {}):
        if isinstance(c, PartitionCollector):
            return getattr(c, "formatted", None)
    return None


def _traced_render(col, top: int = 0):
    """One render of the page Prometheus asks for, under tracemalloc: (page, bytes allocated before it, still
    allocated after it, the peak while rendering, the ``top`` allocation sites still held)."""
    gc.collect()
    tracemalloc.start(1)
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    col.rendered.render()
    page = col.rendered.page(ACCEPT, "gzip")
    gc.collect()
    retained, peak = tracemalloc.get_traced_memory()
    stats = tracemalloc.take_snapshot().statistics("lineno")[:top] if top else []
    tracemalloc.stop()
    return page, base, retained, peak, stats


def measure(d: Path, partitions: int, changed: float, top: int, granularity: str) -> dict:
    from collectors.app import build
    from monitor.settings.config import BrokerConfig, ClusterConfig, Config

    col = build(Config(granularity=granularity, clusters=(ClusterConfig(
        name="bench", brokers=(BrokerConfig(id="1", log_dirs=(str(d),)),)),)), headers_first=True)
    try:
        assert col.runner.refresh_all()
        col.runner.refresh_all()  # a measured write rate, as a steady collector has
        page, base, retained, peak, stats = _traced_render(col, top)
        f0 = _formatted(col)
        folders = sorted(p for p in d.iterdir() if p.is_dir())
        step = max(1, round(1 / changed)) if changed else 0
        touched = folders[::step] if step else []
        for pd in touched:
            _append(pd)
        col.runner.refresh_all()
        steady, base2, _, peak2, _ = _traced_render(col)
        f1 = _formatted(col)
        return {
            "partitions": partitions, "granularity": granularity, "page_gzip_bytes": len(page.body),
            "retained_bytes": retained - base, "peak_bytes": peak - base,
            "retained_kb_per_partition": (retained - base) / 1024 / partitions,
            "peak_kb_per_partition": (peak - base) / 1024 / partitions,
            "top_retained": [f"{s.traceback[0].filename.rsplit('/', 2)[-1]}:{s.traceback[0].lineno} "
                             f"{s.size / 1e6:.1f} MB" for s in stats],
            "steady_peak_kb_per_partition": (peak2 - base2) / 1024 / partitions,
            "steady_changed_partitions": len(touched), "steady_page_gzip_bytes": len(steady.body),
            "steady_formatted_partitions": "not available" if f0 is None else f1[0] - f0[0],
            "steady_formatted_lines": "not available" if f0 is None else f1[1] - f0[1],
            "first_formatted_lines": "not available" if f0 is None else f0[1],
        }
    finally:
        col.close()


def _print(r: dict) -> None:
    print(f"{r['partitions']} partitions, granularity {r['granularity']}: render retained "
          f"{r['retained_kb_per_partition']:.2f} KB a partition ({r['retained_bytes'] / 1e6:.1f} MB), peak "
          f"{r['peak_kb_per_partition']:.2f} KB a partition ({r['peak_bytes'] / 1e6:.1f} MB), a steady render's peak "
          f"{r['steady_peak_kb_per_partition']:.2f} KB a partition above the render it replaces; page "
          f"{r['page_gzip_bytes'] / 1e3:.0f} kB gzip; steady render with {r['steady_changed_partitions']} partitions "
          f"written: {r['steady_formatted_partitions']} partitions formatted again ({r['steady_formatted_lines']} of "
          f"{r['first_formatted_lines']} lines)", flush=True)
    for line in r["top_retained"]:
        print(f"    {line}")


def main(argv) -> int:
    from bench.bench_scrape import make_log_dir

    ap = argparse.ArgumentParser(prog="bench render")
    ap.add_argument("--partitions", type=int, nargs="+", default=[4000, 20000])
    ap.add_argument("--changed", type=float, default=0.01,
                    help="fraction of partitions written to before the steady render")
    ap.add_argument("--granularity", nargs="+", default=["topic", "partition"],
                    help="topic: a healthy partition's default series (the default); partition: every series")
    ap.add_argument("--top", type=int, default=8, help="allocation sites listed")
    ap.add_argument("--dir", default=None, help="where the log dir is made (default: the system's temp dir)")
    args = ap.parse_args(argv)
    results = []
    for n in args.partitions:
        root = Path(tempfile.mkdtemp(prefix="bench-render-", dir=args.dir))
        try:
            log(f"writing {n} partitions in {root} ...")
            d = make_log_dir(root, n)
            for g in args.granularity:
                r = measure(d, n, args.changed, args.top, g)
                results.append(r)
                _print(r)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "render.json").write_text(strictjson.dumps(results, indent=2))
    return 0

"""Cleaner simulation speed: ``monitor.model.nextclean.project_partition`` against the reader's ``records()``
over the same partitions (the audit calls the projection for every partition, beside its record pass).

Uses the segments ``bench audit`` writes (``--dir`` of an earlier ``bench audit`` run, else ``--gb`` GB
written now through the real broker). Each partition is projected with its whole log dirty
(``first_dirty`` 0, ``upper`` past its end: both passes read everything, the costliest case) and with
its first 80% of batches cleaned before (a log the cleaner keeps up with). Prints MB/s and the ratio
to ``records()``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from bench.bench_audit import best, data_dir
from bench.bench_reader import read_all
from bench.common import OUT, log
from monitor.fileio import strictjson


def bounds(parts, dirty_share: float) -> list:
    """Per partition: its files, the first dirty offset leaving the last ``dirty_share`` of its batches
    dirty (1.0: the whole log, both passes read everything), and its log end (the upper bound)."""
    from monitor.kafka.record import SegmentReader

    out = []
    for segs in parts:
        bases = [b.base_offset for f in segs for b in SegmentReader(f).batches(bodies=False)]
        end = max(b.next_offset for b in SegmentReader(segs[-1]).batches(bodies=False))
        out.append(([(str(f), f.stat().st_size) for f in segs], bases[min(len(bases) - 1,
                                                                           int(len(bases) * (1 - dirty_share)))], end))
    return out


def project_all(tasks, now_ms: int) -> int:
    from monitor.model.nextclean import project_partition
    from monitor.model.transactions import AbortedRanges

    kept = 0
    for files, first_dirty, end in tasks:
        p = project_partition(files, lambda u: open(u, "rb"), first_dirty=first_dirty, upper=end, log_start=0,
                              now_ms=now_ms, delete_retention_ms=86_400_000, aborted=AbortedRanges(()),
                              last_records={}, name=files[0][0])
        assert p.unknown_reason is None, p.unknown_reason
        kept += p.next_clean_bytes
    return kept


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench nextclean")
    ap.add_argument("--gb", type=float, default=0.5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dir", help="a `bench audit --dir` to reuse (default: a temp dir, removed after)")
    args = ap.parse_args(argv)
    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-nextclean-"))
    try:
        log_dir = data_dir(tmp, args.gb)
        parts = [sorted(d.glob("*.log")) for d in sorted(log_dir.glob("audit-*")) if list(d.glob("*.log"))]
        files = [f for segs in parts for f in segs]
        total = sum(f.stat().st_size for f in files)
        log(f"{len(parts)} partitions, {len(files)} segment files, {total / 1e6:.0f} MB")
        ref, (n, _) = best(lambda: read_all(files), args.repeat)
        whole, fifth = bounds(parts, 1.0), bounds(parts, 0.2)
        sim, kept = best(lambda: project_all(whole, 1 << 42), args.repeat)
        part, _ = best(lambda: project_all(fifth, 1 << 42), args.repeat)
        r = {"bytes": total, "records": n, "reader_mb_s": total / 1e6 / ref, "nextclean_mb_s": total / 1e6 / sim,
             "nextclean_vs_reader": ref / sim, "nextclean_dirty_20_mb_s": total / 1e6 / part,
             "nextclean_dirty_20_vs_reader": ref / part, "next_clean_bytes": kept}
        OUT.mkdir(exist_ok=True)
        (OUT / "nextclean.json").write_text(strictjson.dumps(r, indent=2))
        print(f"{total / 1e6:.0f} MB, {n} records; best of {args.repeat}")
        print(f"reference: reader records()        {r['reader_mb_s']:8.1f} MB/s")
        print(f"project_partition, all dirty       {r['nextclean_mb_s']:8.1f} MB/s = "
              f"{r['nextclean_vs_reader']:.2f}x records()")
        print(f"project_partition, 20% dirty       {r['nextclean_dirty_20_mb_s']:8.1f} MB/s = "
              f"{r['nextclean_dirty_20_vs_reader']:.2f}x records()")
        return 0
    finally:
        if not args.dir:
            shutil.rmtree(tmp, ignore_errors=True)

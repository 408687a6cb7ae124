"""Spark audit speed: ``local[2]`` against one process of the ``monitor`` reader over the same files.

Writes at least ``--gb`` GB of segments through the real broker (compacted topics, 4 partitions,
uncompressed and lz4) that it never cleans ("all-dirty"), and as much again after a clean (a tombstone every
50th record, a quarter of the keys written twice) that the broker's own cleaner cleans once ("cleaned-once":
every segment but the active one, waited for on its checkpoint), stops it, then times in the same run, on each of the two, (best of ``--repeat`` each):
  * reference: one Python process reading every record with its key (``SegmentReader.records()``);
  * also: one process reading the arrays view (the reader's fastest path) and one process running
    the very same per-partition audit code as the Spark tasks, without Spark;
  * Spark audit: the whole audit (bounds, per-key fold, estimates, top keys, producers, tombstone
    buckets, faults: every report table computed), outputs not written.
Prints MB/s and the ratios. Targets (issue 45): the one-process audit >= 600 MB/s; the Spark job >= 1.6x
``records()`` and >= 0.35x the arrays read, on 2 cores.
``--dir`` keeps the data: a second run with the same ``--dir`` reuses it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from bench.bench_reader import read_all
from bench.common import OUT, Timer, broker, log, produce_bulk
from monitor.fileio import strictjson


DATASETS = {
    # name: (topic prefix, what the data is)
    "all-dirty": ("audit-", "never cleaned (min.cleanable.dirty.ratio 1.0): every record dirty"),
    "cleaned-once": ("cleaned-", "cleaned once by the broker's own cleaner (every segment but the active one)"),
}
CLEAN_WAIT_S = 900
OVERWRITE = 1.25  # a cleaned topic is written this many times its all-dirty twin's size (see write_data)


def write_data(root: Path, gb: float, cleaned: bool = False) -> Path:
    """``gb`` GB never cleaned (topics ``audit-none``, ``audit-lz4``), and with ``cleaned`` as much again
    after a clean: topics the broker's cleaner then cleans once (``cleaned-*``: small segments, dirty
    ratio 0.01), waited for on the cleaner's checkpoint.

    A cleaned topic has as many keys as its all-dirty twin of the same codec has records (so its live
    data is that topic's size) and is written ``OVERWRITE`` times that, every key once and then a
    quarter of them again, a tombstone every 50th record: the clean has records to remove (the older
    copies) and what it keeps is as large as the all-dirty set, so the two sets' figures differ by the
    work, not the size. How long the writes and the broker's clean took is kept in ``data.json``
    beside the log dir and printed with the figures."""
    took = {}
    with broker(root / "kafka") as st:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": st.bootstrap})
        written = {}
        for codec in ("none", "lz4"):
            t = f"audit-{codec}"
            admin.create_topics([NewTopic(t, 4, 1, config={
                "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "1.0",
                "segment.bytes": str(128 << 20)})])[t].result(30)
            written[codec] = produce_bulk(st.bootstrap, t, int(gb * 1e9 / 2), codec, partitions=4,
                                          on_disk=Path(st.log_dir))
        t0 = time.monotonic()
        for codec in ("none", "lz4") if cleaned else ():
            t = f"cleaned-{codec}"
            admin.create_topics([NewTopic(t, 4, 1, config={
                "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01",
                "segment.bytes": str(cleaned_segment_bytes(gb))})])[t].result(30)
            keys = -(-written[codec] // 4) * 4  # a multiple of the partitions: a key stays in one
            produce_bulk(st.bootstrap, t, int(gb * 1e9 / 2 * OVERWRITE), codec, partitions=4,
                         tombstone_every=50, keys=keys, records=int(written[codec] * OVERWRITE))
        if cleaned:
            t1 = time.monotonic()
            wait_cleaned(Path(st.log_dir), "cleaned-")
            took = {"cleaned_written_s": t1 - t0, "clean_wait_after_writes_s": time.monotonic() - t1,
                    "cleaned_segment_bytes": cleaned_segment_bytes(gb), "gb": gb}
        del admin
        log_dir = Path(st.log_dir)
    (root / "data.json").write_text(strictjson.dumps(took, indent=2))
    return log_dir


def cleaned_segment_bytes(gb: float) -> int:
    """The cleaned topics' segment.bytes: 16 MiB (``--gb`` 1 and up), or less so that a partition (a
    sixteenth of ``gb`` before the clean) rolls at least three segments: the cleaner never cleans the
    active one, so a partition of one segment would never be cleaned (``--gb 0.2``); not below Kafka's
    1 MiB floor."""
    return max(1 << 20, min(16 << 20, int(gb * 1e9 / 16 / 3)))


def cleaned_offsets(log_dir: Path) -> dict:
    """(topic, partition) -> the broker's cleaner checkpoint (``cleaner-offset-checkpoint``: version, count,
    then ``topic partition offset`` lines)."""
    path = log_dir / "cleaner-offset-checkpoint"
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text().splitlines()[2:]:
        topic, partition, offset = line.split()
        out[(topic, int(partition))] = int(offset)
    return out


def wait_cleaned(log_dir: Path, prefix: str) -> None:
    """Until every ``prefix`` partition's checkpoint reaches its active segment (all but it cleaned once),
    polling the checkpoint file."""
    deadline = time.monotonic() + CLEAN_WAIT_S
    while True:
        done = cleaned_offsets(log_dir)
        left = []
        for d in sorted(log_dir.glob(f"{prefix}*-*")):
            topic, _, part = d.name.rpartition("-")
            active = max(int(f.name[:20]) for f in d.glob("*.log"))
            if active > 0 and done.get((topic, int(part)), -1) < active:  # one segment: nothing to clean
                left.append(d.name)
        if not left:
            log(f"{prefix}* cleaned once: {len(done)} checkpoints")
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"the broker's cleaner did not reach the active segments of {left} in {CLEAN_WAIT_S} s")
        time.sleep(1)


def data_dir(root: Path, gb: float, cleaned: bool = False) -> Path:
    """The log dir of ``write_data`` under ``root``: the segments an earlier run left there (``--dir``),
    else ``gb`` GB written now."""
    log_dir = root / "kafka" / "data"
    if list(log_dir.glob("audit-*/*.log")):
        log(f"reusing the segments under {log_dir}")
        return log_dir
    return write_data(root, gb, cleaned)


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


TINY_BYTES = 64 << 10


def tiny_input(listed, root: Path) -> list:
    """A partition of one small segment: the first batches (up to ``TINY_BYTES``, at least one) of the
    data set's first segment that holds any (a clean can leave an empty one), copied under ``root`` in
    its topic-partition folder. The Spark audit's wall on it is
    its fixed cost a run (planning the data source, the tasks' job, the collect, the report tables):
    the work on 64 KiB is a few milliseconds."""
    from monitor.kafka.record import SegmentReader

    src = Path(next((u for u, size in listed if size > 0), listed[0][0]))
    end = 0
    with open(src, "rb") as fh:
        for b in SegmentReader(fh, name=str(src)).batches(bodies=False):
            if end and b.position + b.size > TINY_BYTES:
                break
            end = b.position + b.size
    dst = root / src.parent.name / src.name
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(src, "rb") as fh:
        dst.write_bytes(fh.read(end))
    return [(str(dst), end)]


def measure(spark, listed, now: int, repeat: int, what: str, scratch: Path, log_dirs: dict | None = None) -> dict:
    """The four figures on one set of segments, each the best of ``repeat``, and the Spark audit's
    fixed cost (its wall on a tiny input, ``tiny_input``). ``log_dirs``: the log dir's checkpoints, as
    the audit job reads them (``inputs.read_log_dirs``): cleaned-once data is audited from the broker's
    cleaner checkpoint, as a copy of a broker's log dir would be."""
    from spark_analysis.audit import AuditInputs, run_audit
    from spark_analysis.audit.segments import partition_tasks

    files = [Path(u) for u, _ in listed]
    total = sum(s for _, s in listed)
    log(f"{len(files)} segment files, {total / 1e6:.0f} MB ({what})")

    def inputs(files=listed):
        return AuditInputs(kind="segments", files=files, now_ms=now, log_dirs=log_dirs or {})

    ref, (n, _) = best(lambda: read_all(files), repeat)
    log(f"reference, records(): {total / 1e6 / ref:.1f} MB/s ({n} records)")
    arr, _ = best(lambda: read_arrays(files), repeat)
    log(f"arrays view: {total / 1e6 / arr:.1f} MB/s")
    one, _ = best(lambda: audit_one_process(partition_tasks(inputs())), repeat)
    log(f"the audit in one process: {total / 1e6 / one:.1f} MB/s")
    with Timer() as warm:  # JVM, Python workers and Spark's planning code warmed up: not measured
        run_audit(spark, inputs([listed[0]])).partitions.collect()

    def run(files):
        res = run_audit(spark, inputs(files))
        res.partitions.collect()
        return res

    tiny = tiny_input(listed, scratch)
    fixed, _ = best(lambda: run(tiny), max(repeat, 3))
    log(f"Spark audit of {tiny[0][1] / 1e3:.0f} kB (its fixed cost a run): {fixed:.3f} s")
    spark_wall, res = best(lambda: run(listed), repeat)
    log(f"Spark audit: {total / 1e6 / spark_wall:.1f} MB/s")
    assert res.summary["records"] >= n
    return {
        "what": what, "bytes": total, "segments": len(files), "records": n,
        "reader_mb_s": total / 1e6 / ref, "arrays_mb_s": total / 1e6 / arr,
        "one_process_audit_mb_s": total / 1e6 / one, "spark_audit_mb_s": total / 1e6 / spark_wall,
        "audit_vs_reader": ref / spark_wall, "audit_vs_arrays": arr / spark_wall,
        "audit_vs_one_process_audit": one / spark_wall, "spark_startup_s": warm.wall,
        "spark_fixed_s": fixed, "spark_fixed_input_bytes": tiny[0][1],
        "spark_beyond_fixed_mb_s": total / 1e6 / (spark_wall - fixed) if spark_wall > fixed else None,
        "reclaimable_bytes": res.summary["reclaimable_bytes"],
    }


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench audit")
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dir", help="keep the broker dir here (default: a temp dir, removed after)")
    args = ap.parse_args(argv)
    tmp = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-audit-"))
    try:
        log_dir = data_dir(tmp, args.gb, cleaned=True)
        from spark_analysis.inputs import list_inputs, read_log_dirs
        from spark_analysis.session import session

        now = int(time.time() * 1000)
        listed = list_inputs("segments", [str(log_dir)])
        log_dirs = read_log_dirs([str(log_dir)])
        spark = session(args.master, app="bench-audit", conf={"spark.ui.showConsoleProgress": "false"})
        results = {}
        try:
            for name, (prefix, what) in DATASETS.items():
                files = [(u, s) for u, s in listed if Path(u).parent.name.startswith(prefix)]
                if files:
                    results[name] = measure(spark, files, now, args.repeat, what, tmp / "tiny" / name, log_dirs)
        finally:
            spark.stop()
        made = tmp / "data.json"
        data = json.loads(made.read_text()) if made.exists() else {}
        r = {"master": args.master, "repeat": args.repeat, "data": data, **results}
        OUT.mkdir(exist_ok=True)
        (OUT / "audit.json").write_text(strictjson.dumps(r, indent=2))
        print(f"Spark master {args.master}; best of {args.repeat}; one run, the same data for every row")
        if data:
            print(f"cleaned-once data (--gb {data['gb']:g}): written in {data['cleaned_written_s']:.0f} s "
                  f"({data['cleaned_segment_bytes'] >> 20} MiB segments),\n  the broker's clean done "
                  f"{data['clean_wait_after_writes_s']:.0f} s after the last write")
        for name, m in results.items():
            print(f"{name}: {m['bytes'] / 1e6:.0f} MB in {m['segments']} segments, {m['records']} records "
                  f"({m['what']})")
            print(f"  reference: one process, reader records()   {m['reader_mb_s']:8.1f} MB/s")
            print(f"  one process, reader arrays view            {m['arrays_mb_s']:8.1f} MB/s")
            print(f"  one process, the same audit without Spark  {m['one_process_audit_mb_s']:8.1f} MB/s")
            print(f"  Spark audit (every table but written)      {m['spark_audit_mb_s']:8.1f} MB/s  = "
                  f"{m['audit_vs_reader']:.2f}x records(), {m['audit_vs_arrays']:.2f}x the arrays read, "
                  f"{m['audit_vs_one_process_audit']:.2f}x the one-process audit")
            beyond = m["spark_beyond_fixed_mb_s"]
            print(f"    fixed cost a run (audit of {m['spark_fixed_input_bytes'] / 1e3:.0f} kB) "
                  f"{m['spark_fixed_s']:.3f} s; beyond it "
                  + (f"{beyond:.1f} MB/s" if beyond is not None else "unknown (the run took no longer)"))
        print("targets: one-process audit >= 600 MB/s; Spark audit >= 1.6x records() and >= 0.35x the arrays read")
        return 0
    finally:
        if not args.dir:
            shutil.rmtree(tmp, ignore_errors=True)

"""``bench memory``: where the log-dir scanner's own memory goes (issue 43, item 2), in-process, no page.

A log dir as ``bench logdir --broker-size`` makes it (``--partitions``, ``--segments`` rolled and an active one,
``--gb`` of log; no broker), then three phases, each in a process of its own so that each starts from the
interpreter alone: ``cold`` (a ``LogDirScanner`` as the collector builds it, headers first with a summary
cache, one refresh: the first page's state), ``records`` (the same, then refreshes until no record is pending,
and the cache written: the state a collector holds for good), ``restart`` (a new scanner on that cache, one
refresh). Each phase reports its first refresh's CPU seconds (at ``restart``: the restart's first page less its
render) and its RSS and peak RSS (VmHWM) above the interpreter's, in KB a partition, against issue 43's 8 KB; with ``--trace`` a second run of each phase reports tracemalloc's top lines (file:line) and,
from the garbage collector's objects, the top types (tracemalloc slows Python and adds its own memory: its
runs' RSS is not reported). Memory does not depend on the machine's load; the times printed do.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench.common import OUT, log
from monitor.fileio import strictjson

TOP = 15
TARGET_KB = 8  # issue 43: <= 8 KB a partition above the interpreter (200 MiB at 20,000 partitions)


def _rss_kb() -> tuple[int, int]:
    """(VmRSS, VmHWM) in KB."""
    got = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS", "VmHWM")):
                got[line[:5]] = int(line.split()[1])
    return got["VmRSS"], got["VmHWM"]


def _types() -> list:
    """The top types by ``sys.getsizeof`` over the collector's objects and the untracked objects they hold
    (ints, strings, arrays), each object once: (type, bytes, count)."""
    size, count, seen = collections.Counter(), collections.Counter(), set()
    for o in gc.get_objects():
        for x in (o, *gc.get_referents(o)):
            if id(x) in seen or (x is not o and gc.is_tracked(x)):
                continue
            seen.add(id(x))
            size[type(x).__name__] += sys.getsizeof(x)
            count[type(x).__name__] += 1
    return [(t, n, count[t]) for t, n in size.most_common(TOP)]


def _lines(snap) -> list:
    cwd = os.getcwd()
    return [(f"{os.path.relpath(st.traceback[0].filename, cwd)}:{st.traceback[0].lineno}", st.size, st.count)
            for st in snap.statistics("lineno")[:TOP]]


def phase(d: Path, state: Path, name: str, trace: bool) -> dict:
    """One phase in this process (see the module's docstring)."""
    from collectors.logdirs.scanner import LogDirScanner
    from collectors.logdirs.summary_state import SummaryState
    from monitor.fileio.iobudget import IoBudget

    gc.collect()
    base = _rss_kb()[0]
    if trace:
        tracemalloc.start()
    sc = LogDirScanner([d], headers_first=True, io_budget=IoBudget(None), say_faults=True,
                       state=SummaryState(state, "bench.cache"))
    t, cpu = time.perf_counter(), time.process_time()
    partitions = len(sc.refresh().partitions)
    first_cpu = time.process_time() - cpu  # the first refresh's CPU: the restart's first page, less its render
    refreshes = 1
    if name == "records":
        while sc._reader.pending_bytes() and refreshes < 500:
            sc.refresh()
            refreshes += 1
        sc.state.save(sc._reader.kept())
    wall = time.perf_counter() - t
    gc.collect()
    rss, hwm = _rss_kb()
    out = {"phase": name, "partitions": partitions, "refreshes": refreshes, "wall_s": wall, "first_refresh_cpu_s": first_cpu,
           "pending_bytes": sc._reader.pending_bytes(), "restored_segments": sc.state.restored, "interpreter_kb": base}
    if trace:
        out["traced_bytes"], out["traced_peak_bytes"] = tracemalloc.get_traced_memory()
        out["lines"] = _lines(tracemalloc.take_snapshot())
        tracemalloc.stop()
        out["types"] = _types()
    else:
        out["rss_kb_per_partition"] = (rss - base) / partitions
        out["hwm_kb_per_partition"] = (hwm - base) / partitions
    return out


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench memory")
    ap.add_argument("--partitions", type=int, default=4000)
    ap.add_argument("--segments", type=int, default=3, help="rolled segments a partition (and an active one)")
    ap.add_argument("--gb", type=float, default=0.5)
    ap.add_argument("--trace", action="store_true", help="also tracemalloc's and the types' top lines")
    ap.add_argument("--dir", help="where the log dir is made (default: the temp dir)")
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--log-dir", help=argparse.SUPPRESS)
    ap.add_argument("--state", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.phase:
        print(strictjson.dumps(phase(Path(args.log_dir), Path(args.state), args.phase, args.trace)))
        return 0
    from bench.bench_logdir_broker import make_log_dir

    root = Path(tempfile.mkdtemp(prefix="bench-memory-", dir=args.dir))
    try:
        log(f"writing {args.gb} GB over {args.partitions} partitions in {root} ...")
        d, total, _ = make_log_dir(root, args.gb, args.partitions, args.segments)
        results = []
        for trace in (False, True) if args.trace else (False,):
            state = root / f"state-{trace}"
            for name in ("cold", "records", "restart"):
                if name == "records":
                    shutil.rmtree(state, ignore_errors=True)
                log(f"{name}{' (tracemalloc)' if trace else ''} ...")
                cmd = [sys.executable, "-m", "bench", "memory", "--phase", name, "--log-dir", str(d),
                       "--state", str(state)] + (["--trace"] if trace else [])
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                results.append(json.loads(out.strip().splitlines()[-1]))
        OUT.mkdir(exist_ok=True)
        (OUT / "memory.json").write_text(strictjson.dumps({"log_bytes": total, "phases": results}, indent=2))
        _print(total, results)
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _print(total: int, results: list) -> None:
    print(f"log dir: {results[0]['partitions']} partitions, {total / 1e9:.2f} GB of .log")
    for r in results:
        n = r["partitions"]
        if "traced_bytes" not in r:
            print(f"{r['phase']}: {r['refreshes']} refresh(es), the first {r['first_refresh_cpu_s']:.2f} CPU-s; "
                  f"RSS {r['rss_kb_per_partition']:.1f} KB a partition above "
                  f"the interpreter ({r['interpreter_kb'] / 1024:.0f} MB), peak {r['hwm_kb_per_partition']:.1f} KB: "
                  f"{'within' if r['hwm_kb_per_partition'] <= TARGET_KB else 'exceeds'} {TARGET_KB} KB")
            continue
        print(f"{r['phase']} (tracemalloc): {r['traced_bytes'] / 1e6:.1f} MB traced ({r['traced_bytes'] / n / 1024:.1f} "
              f"KB a partition), peak {r['traced_peak_bytes'] / 1e6:.1f} MB")
        for where, size, count in r["lines"]:
            print(f"  {size / 1e6:7.2f} MB {count:8d}  {where}")
        print("  by type:")
        for t, size, count in r["types"]:
            print(f"  {size / 1e6:7.2f} MB {count:8d}  {t}")

"""Scrapes under load (issue 14): ``--concurrency`` (200) clients scraping /metrics at once for
``--seconds`` against a real ``collect`` process exposing ``--partitions`` (5,000) partitions, while
its JMX source goes down and up (a broker restarting); target: no errors and p99 under 1 s.

The log dir is made without a broker (a broker is far too slow to create 5,000 partitions here): one
segment per partition (cleaned to offset 10, then dirty records with duplicate keys and tombstones), written
by kafka-python's record builders (tests/recordfixtures.py) and a cleaner checkpoint naming each, read
by the collector's real log-dir source. The JMX page comes from tests/faultserver.py, cycling ok ->
hang -> connection closed, so refreshes (and renders) happen during the load and one fetch is held.

Every client keeps its connection (as Prometheus does), asks for OpenMetrics with gzip (Prometheus'
headers), reads the whole body, and gives up after 10 s (an error). The reference measured in the same
run: the very bytes of the collector's page served by Python's own ``http.server.ThreadingHTTPServer``
(same backlog, keep-alive) in its own process, under the same clients: what a Python server on this
machine does at this moment with no collector behind it. Memory: the collector's resident set (VmRSS)
before and at most during the load, and its peak (VmHWM) since start.

Not compared here: rendering per scrape (the collector before this change). At 5,000 partitions in
every detail one render (collect and OpenMetrics encoding) is over 10 s of CPU on this machine: 200 of
them at once never finish within the clients' 10 s, and would hold 200 copies of the families."""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import OUT, log
from monitor.fileio import strictjson

ACCEPT = ("application/openmetrics-text;version=1.0.0;escaping=underscores,application/openmetrics-text;"
          "version=0.0.1;q=0.75,text/plain;version=1.0.0;escaping=underscores;q=0.5,*/*;q=0.1")  # Prometheus 3
TIMEOUT = 10.0


def make_log_dir(root: Path, partitions: int) -> Path:
    """``partitions`` partitions (100 per topic) of one segment each (cleaned up to offset 10, then dirty
    records, duplicate keys and tombstones), with a cleaner checkpoint."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from recordfixtures import items, v2

    d = root / "logdir"
    d.mkdir(parents=True)
    segment = b"".join(w.data for w in (v2(items(range(0, 10), distinct=6)),
                                        v2(items(range(10, 20), tombstone_every=5, distinct=6)),
                                        v2(items(range(20, 24), distinct=6))))
    lines = []
    for p in range(partitions):
        topic, part = f"orders-{p // 100:03d}", p % 100
        pd = d / f"{topic}-{part}"
        pd.mkdir()
        (pd / "00000000000000000000.log").write_bytes(segment)
        lines.append(f"{topic} {part} 10")
    (d / "cleaner-offset-checkpoint").write_text(f"0\n{len(lines)}\n" + "\n".join(lines) + "\n")
    return d


def _status(pid: int) -> dict:
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0]) / 1024  # MiB
    return out


def load(port: int, concurrency: int, seconds: float, pid: int | None = None) -> dict:
    """``concurrency`` clients on kept connections until ``seconds`` pass: latencies, errors, req/s,
    and (``pid``) the server's resident set, sampled every 0.2 s."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    lock = threading.Lock()
    start = threading.Event()
    deadline = [0.0]
    rss = []
    pages = set()  # (gzip mtime, length): one per render published while the clients ran

    def client():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        start.wait()
        while time.monotonic() < deadline[0]:
            t0 = time.monotonic()
            try:
                c.request("GET", "/metrics", headers={"Accept": ACCEPT, "Accept-Encoding": "gzip"})
                r = c.getresponse()
                body = r.read()
                ok = r.status == 200 and r.getheader("Content-Encoding") == "gzip" and len(body) > 0
                kind = None if ok else f"http {r.status}"
                page = (body[4:8], len(body))
            except (OSError, http.client.HTTPException) as exc:
                kind = type(exc).__name__
                c.close()
            with lock:
                if kind is None:
                    latencies.append(time.monotonic() - t0)
                    pages.add(page)
                else:
                    errors[kind] = errors.get(kind, 0) + 1
        c.close()

    def sample():
        while time.monotonic() < deadline[0]:
            rss.append(_status(pid)["VmRSS"])
            time.sleep(0.2)  # the sampling period, not a synchronisation

    threads = [threading.Thread(target=client, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    deadline[0] = t0 + seconds
    start.set()
    if pid is not None:
        threading.Thread(target=sample, daemon=True).start()
    for t in threads:
        t.join(seconds + TIMEOUT + 5)
    wall = time.monotonic() - t0
    latencies.sort()
    n = len(latencies)

    def q(p):
        return latencies[min(n - 1, int(p * n))] if n else None

    return {"requests": n + sum(errors.values()), "ok": n, "errors": sum(errors.values()), "error_kinds": errors,
            "p50_s": q(0.50), "p99_s": q(0.99), "max_s": latencies[-1] if n else None, "rps": n / wall,
            "wall_s": wall, "max_rss_mib": max(rss) if rss else None, "distinct_pages": len(pages)}


STATIC = r"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
body = open(sys.argv[1], "rb").read()
ctype = sys.argv[2]
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
class S(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
s = S(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def get(port: int, headers: dict, timeout: float = 120) -> tuple[dict, bytes]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", "/metrics", headers=headers)
        r = c.getresponse()
        return dict(r.getheaders()), r.read()
    finally:
        c.close()


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench scrape")
    ap.add_argument("--partitions", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=15.0, help="each load run (collector, reference)")
    ap.add_argument("--granularity", choices=("topic", "partition"), default="topic",
                    help="the collector's granularity: topic (the default: 4 series per healthy partition) or "
                         "partition (every series of every partition)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import gzip

    import yaml
    from faultserver import FaultServer

    shm = Path("/dev/shm")  # tmpfs: creating 5,000 folders on a busy disk takes longer than the load run
    root = Path(tempfile.mkdtemp(prefix="bench-scrape-", dir=shm if os.access(shm, os.W_OK) else None))
    fs = FaultServer()
    procs: list[subprocess.Popen] = []
    try:
        t0 = time.monotonic()
        d = make_log_dir(root, args.partitions)
        log(f"{args.partitions} partitions written in {time.monotonic() - t0:.1f} s (no broker)")
        cfg = {"clusters": [{"name": "bench", "brokers": [{"id": "1", "jmx_url": fs.url, "log_dirs": [str(d)]}]}],
               "intervals": {"jmx": 3, "log_dirs": 3600}, "timeouts": {"jmx": 30},
               "listen": {"address": "127.0.0.1", "port": 0}, "granularity": args.granularity}
        (root / "monitor.yaml").write_text(yaml.safe_dump(cfg))
        errlog = open(root / "collector.log", "w+")
        col = subprocess.Popen([sys.executable, "-m", "cli", "collect", "--config", str(root / "monitor.yaml")],
                               stdout=subprocess.DEVNULL, stderr=errlog, start_new_session=True)
        procs.append(col)
        port = None
        while port is None:
            if col.poll() is not None:
                raise SystemExit(f"collect exited {col.returncode}: {(root / 'collector.log').read_text()}")
            m = re.search(r"serving http://127\.0\.0\.1:(\d+)/metrics", (root / "collector.log").read_text())
            port = int(m.group(1)) if m else None
            time.sleep(0.1)  # polling the log for the port line
        headers = {"Accept": ACCEPT, "Accept-Encoding": "gzip"}
        t0 = time.monotonic()
        while True:  # the log dir read and rendered; the first OpenMetrics+gzip page encoded (lazily)
            h, z = get(port, headers)
            text = gzip.decompress(z).decode()
            if re.search(r'source_up\{[^}]*kind="log_dirs"[^}]*\} 1\.0', text):
                break
            if time.monotonic() - t0 > 180:
                ups = [x for x in text.splitlines() if "source_up{" in x]
                raise SystemExit(f"the collector never served the log dir's partitions: {ups}\n"
                                 + (root / "collector.log").read_text()[-2000:])
            time.sleep(0.5)  # polling until the first full page
        series = sum(1 for x in text.splitlines() if x and not x.startswith("#"))
        log(f"collector ready in {time.monotonic() - t0:.1f} s: {series} series, {len(text) / 1e6:.1f} MB "
            f"OpenMetrics, {len(z) / 1e6:.2f} MB gzip")
        before = _status(col.pid)

        stop = threading.Event()

        def restarts():  # the broker's JMX page: up, hanging, gone, up ... every 2 s
            modes = ["ok", "hang", "close"]
            i = 0
            while not stop.wait(2.0):
                i += 1
                fs.set_mode(modes[i % 3])

        threading.Thread(target=restarts, daemon=True).start()
        log(f"collector: {args.concurrency} concurrent scrapes for {args.seconds:.0f} s ...")
        res = load(port, args.concurrency, args.seconds, col.pid)
        stop.set()
        fs.set_mode("ok")
        after = _status(col.pid)

        (root / "page.gz").write_bytes(z)
        ref_proc = subprocess.Popen([sys.executable, "-c", STATIC, str(root / "page.gz"), h["Content-Type"]],
                                    stdout=subprocess.PIPE, text=True, start_new_session=True)
        procs.append(ref_proc)
        ref_port = int(ref_proc.stdout.readline())
        log(f"reference (stdlib server, same bytes): {args.concurrency} concurrent scrapes for "
            f"{args.seconds:.0f} s ...")
        ref = load(ref_port, args.concurrency, args.seconds, ref_proc.pid)

        out = {"partitions": args.partitions, "granularity": args.granularity, "series": series, "openmetrics_bytes": len(text.encode()),
               "gzip_bytes": len(z), "concurrency": args.concurrency, "seconds": args.seconds,
               "collector": res, "reference": ref,
               "collector_rss_mib_before": before["VmRSS"], "collector_rss_mib_after": after["VmRSS"],
               "collector_peak_rss_mib": after["VmHWM"],
               "p99_vs_reference": res["p99_s"] / ref["p99_s"] if res["p99_s"] and ref["p99_s"] else None,
               "rps_vs_reference": res["rps"] / ref["rps"] if ref["rps"] else None,
               "target_met": res["errors"] == 0 and res["p99_s"] is not None and res["p99_s"] < 1.0}
        OUT.mkdir(exist_ok=True)
        (OUT / f"scrape-{args.granularity}.json").write_text(strictjson.dumps(out, indent=2))

        def line(name, r):
            return (f"{name:<30} {r['rps']:7.1f} req/s  p50 {r['p50_s'] or 0:6.3f} s  p99 {r['p99_s'] or 0:6.3f} s  "
                    f"max {r['max_s'] or 0:6.3f} s  errors {r['errors']} of {r['requests']} {r['error_kinds'] or ''}")

        print(f"{args.partitions} partitions at granularity {args.granularity}, {series} series: {len(text) / 1e6:.1f} MB OpenMetrics, "
              f"{len(z) / 1e6:.2f} MB gzip; {args.concurrency} concurrent keep-alive scrapes, {args.seconds:.0f} s each")
        print(line("reference: stdlib, same bytes", ref))
        print(line("collector (JMX source cycling)", res))
        print(f"renders published during the collector's load: {res['distinct_pages'] - 1} "
              f"({res['distinct_pages']} distinct pages served)")
        print(f"ratios to the reference: p99 {out['p99_vs_reference'] or float('nan'):.2f}x, "
              f"req/s {out['rps_vs_reference'] or float('nan'):.2f}x")
        print(f"collector memory: VmRSS {before['VmRSS']:.0f} MiB before, {res['max_rss_mib'] or 0:.0f} MiB at most "
              f"during, {after['VmRSS']:.0f} MiB after; peak since start {after['VmHWM']:.0f} MiB")
        print(f"target (no errors, p99 < 1 s): {'met' if out['target_met'] else 'NOT met'}")
        return 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        fs.close()
        shutil.rmtree(root, ignore_errors=True)

"""Child processes the demo and the tests start beside the broker (the collector, Prometheus, the
dashboard, an audit): each in its own process group, waited for on its HTTP endpoint, and always stopped
with its children.

Why here: ``localkafka`` is the edge that starts local processes (the broker, the cluster), and these
helpers were part of the demo's scenario (``cli/demo.py``), which ``cli/main.py`` and ``tests/procs.py``
imported for them. Here the command line, the demo and the tests share them without depending on the
demo; ports come from ``localkafka.broker.free_port`` (the kernel's, so two runs never collide).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

from boundedhttp import FetchError, get
from localkafka.broker import free_port  # noqa: F401 - re-exported: the one way a helper process gets its port

MAX_PAGE_BYTES = 16 * 1024 * 1024  # the demo's own Prometheus and collector: Timeouts.max_page_bytes' default


def wait_http(url: str, timeout: float, proc: subprocess.Popen | None = None, log: Path | None = None) -> None:
    """Until ``url`` answers 200; a RuntimeError with the log's tail when ``proc`` exits first, a
    TimeoutError after ``timeout`` seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered:\n{tail}")
        try:
            if get(url, deadline=2, max_bytes=MAX_PAGE_BYTES).status == 200:
                return
        except FetchError:
            pass
        time.sleep(0.25)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s")


@contextmanager
def process(cmd: list[str], log: Path, ready_url: str | None = None, timeout: float = 60, env: dict | None = None):
    """Run ``cmd`` in its own process group; stop it (TERM, then KILL) when the block ends."""
    p = spawn(cmd, log, env)
    try:
        if ready_url:
            wait_http(ready_url, timeout, p, log)
        yield p
    finally:
        stop(p, grace=15)


def spawn(cmd: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    """``cmd`` in its own process group (so ``stop`` ends its children too), output appended to ``log``."""
    with open(log, "ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env={**os.environ, **(env or {})})


def stop(p: subprocess.Popen, grace: float) -> None:
    """TERM to the process group, KILL after ``grace`` seconds; a group already gone is fine."""
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(grace)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(5)

"""Start helper processes (collector, Prometheus, Streamlit) on free loopback ports and always stop them."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    from monitor.localkafka.broker import free_port as fp

    return fp()


def wait_http(url: str, timeout: float = 60, proc: subprocess.Popen | None = None, log: Path | None = None) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered:\n{tail}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout}s")


@contextmanager
def process(cmd: list[str], log: Path, ready_url: str | None = None, timeout: float = 60, env=None):
    """Run ``cmd`` in its own process group; stop it (TERM, then KILL) when the block ends."""
    with open(log, "ab") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, env={**os.environ, **(env or {})})
    try:
        if ready_url:
            wait_http(ready_url, timeout, p, log)
        yield p
    finally:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)

"""Helper processes for tests: the demo's own helpers (free loopback ports, start and always stop), a
query of a running Prometheus, and a CLI child's own peak RSS."""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

from cli.demo import free_port, process, wait_http  # noqa: F401
from kafkatools import CLI_MODULE


def prometheus_query(url: str, q: str) -> list[dict]:
    """The result vector of the instant query ``q`` on the Prometheus at ``url``."""
    with urllib.request.urlopen(f"{url}/api/v1/query?query={urllib.parse.quote(q)}", timeout=5) as r:
        return json.load(r)["data"]["result"]


def run_measured(*args, timeout: float = 300) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS in bytes) of ``python -m cli ARGS`` as a child process,
    reaped with ``os.wait4`` for its own resource usage (``RUSAGE_CHILDREN`` would be the largest of every
    child the test process ever reaped: a broker's JVM, Spark)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", CLI_MODULE, *args], stdout=out, stderr=err)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                pytest.fail(f"{args} did not finish within {timeout} s")
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read().decode(), err.read().decode(), usage.ru_maxrss * 1024

"""Helper processes for tests: localkafka.processes' helpers (free loopback ports, start and always stop), a
query of a running Prometheus, and a CLI child's own peak RSS."""

import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

import pytest

from localkafka.processes import free_port, process, wait_http  # noqa: F401
from kafkatools import CLI_MODULE


def prometheus_query(url: str, q: str) -> list[dict]:
    """The result vector of the instant query ``q`` on the Prometheus at ``url``."""
    with urllib.request.urlopen(f"{url}/api/v1/query?query={urllib.parse.quote(q)}", timeout=5) as r:
        return json.load(r)["data"]["result"]


# run_measured's go-between: a small interpreter that spawns the command and reports its rusage. A child's
# ru_maxrss starts from the RSS of the process it was forked from (the copied address space's high-water
# mark is kept across exec): forked from a test process that loaded Spark or pyarrow (~600 MiB), any
# command would measure ~600 MiB. Spawned from this ~10 MiB interpreter, it measures itself.
SPAWNER = r"""
import json, os, sys
pid = os.posix_spawn(sys.executable, [sys.executable, "-m", *sys.argv[2:]], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024], fh)
"""


def run_measured(*args, timeout: float = 300) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS in bytes) of ``python -m cli ARGS`` as a child process, its peak
    its own (``SPAWNER`` says why it is not forked from the test process)."""
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "rusage.json")
        with open(os.path.join(tmp, "out"), "w+b") as out, open(os.path.join(tmp, "err"), "w+b") as err:
            proc = subprocess.Popen([sys.executable, "-c", SPAWNER, result, CLI_MODULE, *args], stdout=out,
                                    stderr=err, start_new_session=True)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                pytest.fail(f"{args} did not finish within {timeout} s")
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read().decode(), err.read().decode()
        if not os.path.exists(result):
            pytest.fail(f"{args}: no rusage from the spawner (exit {proc.returncode}): {stderr[-2000:]}")
        with open(result) as fh:
            code, peak = json.load(fh)
        return code, stdout, stderr, peak

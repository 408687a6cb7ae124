"""The compatibility tier (``./dev test compat``, ``pytest -m compat``): the project against a real broker of
each Kafka family users run, not only the suite's own version (localkafka/pom.xml).

Each module of this folder names one Kafka version (``KAFKA_VERSION``) and star-imports the checks
(compatchecks.py); the ``family`` fixture starts one broker of that version for the module
(``compaction-monitor broker start --kafka-version``: a 3.x broker on its own ZooKeeper node, a 4.x one in KRaft), puts compacted topics
in the states the causes name (``compatscenario.build``), and stops it (and a 3.x broker's ZooKeeper) after
the module's last test. One broker per module and topics of a few kilobytes with segments rolled at once:
the tier's cost is three broker starts and the cleaner's few rounds, waited for by polling its checkpoint.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from pathlib import Path

import pytest

from clirun import run_cli
from compatscenario import build, stop_children
from kafkatools import localbroker

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"  # where tests/conftest.py keeps broker logs


def pytest_collection_modifyitems(items):
    """Every test of this folder is in the ``compat`` tier (``pytest -m compat``)."""
    for item in items:
        if "/tests/compat/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.compat)


@pytest.fixture(scope="module")
def family(request, tmp_path_factory):
    """One broker of the module's ``KAFKA_VERSION`` with the scenario's topics (a ``compatscenario.Scenario``)."""
    version = request.module.KAFKA_VERSION
    directory = tmp_path_factory.mktemp(f"kafka-{version}")
    atexit.register(localbroker.stop, directory, progress=lambda *_: None)
    children: list = []
    state = None
    try:
        # started as a user starts it (`compaction-monitor broker start --kafka-version`, in-process): the
        # command's own test for each version it supports but the default, which the whole suite starts
        started = run_cli("broker", "start", "--dir", str(directory), "--kafka-version", version)
        print(started.stderr.replace("\n", f"\n[kafka {version}] "), file=sys.stderr)
        state = localbroker.read_state(directory)
        assert started.returncode == 0 and state is not None, started.stderr
        yield build(state, children)
    finally:
        stop_children(children)
        localbroker.stop(directory, progress=lambda *_: None)
        left = [p for p in (state.pid, state.zookeeper_pid) if p and localbroker.is_alive(p)] if state else []
        for pid in left:  # each runs in a session of its own (localkafka.broker starts them so)
            os.killpg(pid, signal.SIGKILL)
        ARTIFACTS.mkdir(exist_ok=True)  # the logs kept for a failed run
        for log in (directory / "logs" / "server.log", directory / "logs" / "log-cleaner.log"):
            if log.exists():
                (ARTIFACTS / f"kafka-{version}-{log.name}").write_bytes(log.read_bytes())
        assert not left, f"still running after localbroker.stop: {left} (the broker, then its ZooKeeper, stop with it)"

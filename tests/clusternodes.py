"""One node of the shared local cluster (tests/conftest.py ``kafka_cluster``) stopped and started again,
for the tests of a broker down. localkafka.cluster starts and stops the cluster as a whole; a test that
takes one node away must bring it back as it was (same command, ports, data) and wait until the
cluster is whole again (every partition's ISR full) before other tests use it.

The node is restarted with the command line it was running with (read from /proc before it stops), so
whatever options the cluster gave it come back unchanged. Its broker.json gets the new pid, so the
session's ``localcluster.stop`` stops the restarted node too.

``paused(node)`` freezes a node instead (SIGSTOP to its process group, SIGCONT on leaving, whatever
happens inside): the JVM keeps its sockets, so the kernel still completes TCP handshakes on its ports
but nothing ever answers, as with a broker partitioned away or hung in a GC pause. The JMX exporter
agent runs inside that JVM, so its page hangs too."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import signal
import subprocess
import time
from pathlib import Path

from kafkatools import cluster_admin
from localkafka import broker as one
from waiting import wait_for


def stop_node(node: one.BrokerState) -> list[str]:
    """Stop one running node (SIGTERM, as Kafka's shutdown expects); returns its command line."""
    cmd = [a.decode() for a in Path(f"/proc/{node.pid}/cmdline").read_bytes().split(b"\0")[:-1]]
    one._terminate(node.pid)
    return cmd


def start_node(node: one.BrokerState, cmd: list[str], timeout: float = 120.0, *,
               jmx_basic_auth: bool = False) -> one.BrokerState:
    """Start a node stopped by ``stop_node`` again with ``cmd``; wait until it serves (its JMX exporter
    answering 401 counts, when the cluster runs it behind basic auth: ``cluster.jmx_username``)."""
    logs = Path(node.logs_dir)
    offset = node.server_log.stat().st_size if node.server_log.exists() else 0
    with open(logs / "stdout.log", "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=node.dir)
    state = dataclasses.replace(node, pid=proc.pid, started_at=time.time(), server_log_offset=offset)
    (Path(node.dir) / one.STATE_FILE).write_text(state.to_json())
    one._wait_ready(state, proc, timeout, {"authentication": True} if jmx_basic_auth else {})
    return state


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)  # the node runs in its own session (localkafka.broker starts it so)
    except ProcessLookupError:
        pass


@contextlib.contextmanager
def paused(node: one.BrokerState):
    """The node frozen (SIGSTOP) inside the block and running again (SIGCONT) after it, even when the
    block fails; also at interpreter exit, should the block never be left (a killed pytest)."""
    def resume():
        _signal_group(node.pid, signal.SIGCONT)

    atexit.register(resume)
    _signal_group(node.pid, signal.SIGSTOP)
    try:
        yield node
    finally:
        resume()
        atexit.unregister(resume)


def wait_whole(cluster, timeout: float = 120.0) -> None:
    """Until every partition of every topic has all its replicas in sync."""
    admin = cluster_admin(cluster)  # must outlive its futures

    def whole():
        md = admin.list_topics(timeout=10)
        return len(md.brokers) == len(cluster.nodes) and all(
            not t.error and all(sorted(p.isrs) == sorted(p.replicas) for p in t.partitions.values())
            for t in md.topics.values())

    wait_for(whole, timeout, "every broker back and every partition's ISR full")

"""A one-shot command pointed at a cluster it cannot reach (issue 33, point 4): one line naming the
bootstrap address and the kind (refused, unknown host, TLS) with the advice for it, exit 1, and no flood
of librdkafka's lines on stderr (there were ~205: a failed connect logged and called back per retry);
``explain`` still reports what the log dirs say, and advises no ACL (nothing answered, none is missing).
The command line in-process (tests/clirun.py: librdkafka's lines reach its stderr too), against a
loopback port bound and never listened on (refused), a name under .invalid (RFC 2606: never resolves),
and the session broker (PLAINTEXT) asked for TLS.

``check-config`` is ``topics lint``'s old name, kept as an alias."""

from __future__ import annotations

import socket
from contextlib import contextmanager

import pytest
import yaml

from clirun import Ran, run_cli
from monitor.kafka.checkpoint import format_checkpoint
from recordfixtures import items, v2, write

pytestmark = pytest.mark.slow  # each waits a second or more for a Kafka client to give up connecting
MAX_STDERR_LINES = 3  # the command's line and librdkafka's one warning per broker


@contextmanager
def refusing_port():
    """A loopback port bound for the test's length and never listened on: connects are refused, and no
    other process takes it meanwhile."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{held.getsockname()[1]}"


run = run_cli


def log_dir(tmp_path) -> str:
    write(tmp_path / "orders-0" / "00000000000000000000.log", [v2(items(range(0, 20)))])
    (tmp_path / "cleaner-offset-checkpoint").write_text(format_checkpoint({("orders", 0): 0}))
    return str(tmp_path)


def said(r: Ran, prog: str, bootstrap: str, words: str) -> str:
    """The command's one line about the cluster; stderr holds at most a handful of lines."""
    lines = r.stderr.strip().splitlines()
    assert len(lines) <= MAX_STDERR_LINES and "Traceback" not in r.stderr, r.stderr
    mine = [line for line in lines if f"{prog}: cannot reach the cluster at " in line]
    assert len(mine) == 1, r.stderr
    assert f"{prog}: cannot reach the cluster at {bootstrap} ({words}): " in mine[0], mine[0]
    return mine[0]


@pytest.mark.parametrize("kind", ["refused", "unknown host"])
def test_explain_says_which_cluster_and_why_exits_1_and_advises_no_acl(kind, tmp_path):
    d = log_dir(tmp_path)
    with refusing_port() as dead:
        bootstrap = dead if kind == "refused" else "no-such-broker.invalid:9092"
        r = run("explain", "--log-dir", d, "--bootstrap-server", bootstrap)
    assert r.returncode == 1, (r.returncode, r.stderr)
    line = said(r, "explain", bootstrap, "connection refused" if kind == "refused" else "unknown host")
    assert line.startswith("explain: ") or line.startswith("compaction-monitor: explain: ")
    assert ("is a broker listening there" if kind == "refused" else "does not resolve") in line
    assert "orders-0" in r.stdout and "cause:     unknown" in r.stdout  # the log dirs' report still comes
    assert "kafka-acls" not in r.stdout + r.stderr and "DescribeConfigs" not in r.stdout  # no ACL is missing
    assert "make the cluster reachable" in r.stdout


@pytest.mark.parametrize("command", [("topics", "lint"), ("check-config",)])  # the old name is an alias
def test_topics_lint_says_which_cluster_and_why_and_exits_1(tmp_path, command):
    with refusing_port() as dead:
        r = run(*command, "--bootstrap-server", dead)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert said(r, "topics lint", dead, "connection refused").startswith("topics lint: ")
    assert "consumer_groups" not in r.stderr  # the groups' source fails for the same reason: not said twice


def test_an_audit_of_a_live_topic_says_which_cluster_and_why_and_exits_1_before_spark(tmp_path):
    """The audit reads the topic from the cluster itself: unreachable, there is no audit to run (the
    admin API being optional elsewhere, an audit of log dirs goes on: tests/spark_analysis/test_audit_config)."""
    with refusing_port() as dead:
        r = run("audit", "--input-kind", "topic", "--input", "orders", "--out", str(tmp_path / "out"),
                "--bootstrap-servers", dead)
    assert r.returncode == 1, (r.returncode, r.stderr)
    said(r, "audit", dead, "connection refused")
    assert not (tmp_path / "out").exists()  # nothing started


def test_an_audit_waits_for_a_silent_cluster_as_long_as_timeouts_admin_says(tmp_path):
    """A listener that accepts and never answers (an overloaded broker, a proxy): the audit's admin requests wait
    ``timeouts.admin``, the collector's setting, which its advice names as the wait; it waited a fixed 10 s
    whatever monitor.yaml said."""
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("timeouts: {admin: 1.5}\n")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # the kernel accepts the connection; nobody reads the request
        bootstrap = f"127.0.0.1:{silent.getsockname()[1]}"
        r = run("audit", "--input-kind", "topic", "--input", "orders", "--out", str(tmp_path / "out"),
                "--config", str(cfg), "--bootstrap-server", bootstrap)
    assert r.returncode == 1, (r.returncode, r.stderr)
    line = said(r, "audit", bootstrap, "no answer in time")
    assert "(timeouts.admin is the wait)" in line and "within 1.5s" in line, line


def test_a_tls_client_against_a_plaintext_listener_is_told_tls(kafka, tmp_path):
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text(yaml.safe_dump({"clusters": [{"name": "c", "bootstrap_servers": kafka.bootstrap,
                                                 "client": {"security.protocol": "SSL"}}]}))
    r = run("explain", "--config", str(cfg), "--log-dir", log_dir(tmp_path))
    assert r.returncode == 1, (r.returncode, r.stderr)
    line = said(r, "explain", kafka.bootstrap, "TLS handshake failed")
    assert "security.protocol" in line and "connecting to a PLAINTEXT broker listener?" in line

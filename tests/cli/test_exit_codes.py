"""The exit-code rule across every subcommand (issue #17): 0 all good, 1 data faults met, 2 usage or
config errors. Each subcommand, found from the parser itself (a new one is walked too), is given a
usage error and, when it reads a config, a bad one: exit 2 and one line, no traceback. The command line
in-process (tests/clirun.py); the audit that runs Spark as a child (its driver is spark-submit's)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import build_parser
from cli.parsing import subparsers
from clirun import Ran, run_cli

# the least each subcommand that reads --config needs besides it, so that only the config is wrong
MINIMAL = {
    "logdir": lambda tmp: [str(tmp)],
    "explain": lambda tmp: ["--log-dir", str(tmp)],
    "check-config": lambda tmp: ["--log-dir", str(tmp)],
    "collect": lambda tmp: ["--once", "--port", "0"],
    "rules": lambda tmp: ["render"],
    "grafana": lambda tmp: ["render"],
    "audit": lambda tmp: ["--input", str(tmp), "--out", str(tmp / "out")],
    "dashboard": lambda tmp: ["--port", "0"],
}


def subcommands() -> dict[str, argparse.ArgumentParser]:
    sub = subparsers(build_parser())
    return dict(sub.choices)


def takes_config(name: str, parser: argparse.ArgumentParser) -> bool:
    if name == "audit":  # its own parser (spark_analysis.job), reached through main()
        from spark_analysis.job import build_parser as audit_parser

        parser = audit_parser()
    return any("--config" in a.option_strings for a in parser._actions)


run = run_cli


def one_line_no_traceback(r: Ran) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "Py4J" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_the_walk_covers_every_subcommand():
    names = set(subcommands())
    assert {"broker", "inspect", "logdir", "collect", "rules", "audit", "dashboard", "demo", "config"} <= names
    assert {n for n, p in subcommands().items() if takes_config(n, p)} == set(MINIMAL), \
        "a subcommand reads --config: add its minimal arguments to MINIMAL"


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_a_usage_error_is_one_line_and_exit_2(name):
    line = one_line_no_traceback(run(name, "--no-such-flag"))
    assert line.startswith("compaction-monitor") and "error: " in line and line.endswith("--help)")


def test_no_subcommand_and_an_unknown_one():
    for args in ([], ["frobnicate"]):
        assert one_line_no_traceback(run(*args)).startswith("compaction-monitor: error: ")


@pytest.mark.parametrize("name", sorted(MINIMAL))
@pytest.mark.parametrize("bad", ["shape", "missing", "yaml"])
def test_a_config_error_is_one_line_and_exit_2(name, bad, tmp_path):
    cfg = tmp_path / "monitor.yaml"
    if bad == "shape":
        cfg.write_text("clusters:\n  - client: SASL_SSL\n")
        want = f"compaction-monitor: config error: {cfg}: clusters[0].client: expected a mapping"
    elif bad == "yaml":
        cfg.write_text("listen: [unclosed\n")
        want = f"compaction-monitor: config error: {cfg}: (yaml): "
    else:
        cfg = tmp_path / "nope.yaml"
        want = f"compaction-monitor: config error: {cfg}: (file): cannot read"
    line = one_line_no_traceback(run(name, *MINIMAL[name](tmp_path), "--config", str(cfg)))
    assert line.startswith(want), line


def test_config_check_is_a_config_error_too(tmp_path):
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("intervals: {jmx: .inf}\n")
    assert one_line_no_traceback(run("config", "check", str(cfg))).startswith(
        f"compaction-monitor: config error: {cfg}: intervals.jmx: ")


@pytest.mark.parametrize("args, says", [
    (["rules", "render", "--out", "/nonexistent/r.yml"], "the folder /nonexistent does not exist"),
    (["rules", "render", "--out", "{tmp}"], "is a folder; expected a file name"),
    (["rules", "render", "--out", "/sys/r.yml"], "cannot write (permission denied)"),
    (["audit", "--input", "{tmp}/logs", "--out", "/sys/audits"], "--out /sys/audits: cannot write there"),
])
def test_a_bad_output_is_one_line_and_exit_2(args, says, tmp_path):
    from recordfixtures import three_v2_batches

    three_v2_batches(tmp_path / "logs" / "orders-0" / "00000000000000000000.log")
    line = one_line_no_traceback(run(*[a.replace("{tmp}", str(tmp_path)) for a in args]))
    assert says in line, line


# ---------------------------------------------------------------- data faults: exit 1, the fault reported


def two_partitions(tmp_path):
    """A log dir of orders-0 and orders-1, three batches each (offsets 0..5)."""
    from recordfixtures import three_v2_batches

    for p in (0, 1):
        three_v2_batches(tmp_path / "logs" / f"orders-{p}" / "00000000000000000000.log")
    return tmp_path / "logs"


@pytest.mark.parametrize("name, fmt", [("logdir", "json"), ("explain", "json"), ("logdir", "table")])
def test_a_checkpoint_entry_past_the_end_is_a_data_fault_and_the_partition_is_reported(name, fmt, tmp_path):
    logs = two_partitions(tmp_path)
    from monitor.kafka.checkpoint import format_checkpoint

    args = [str(logs)] if name == "logdir" else ["--log-dir", str(logs)]
    clean = run(name, *args, "--topic-config", "orders:cleanup.policy=compact", "--format", fmt)
    assert clean.returncode == 0, clean.stderr
    (logs / "cleaner-offset-checkpoint").write_text(format_checkpoint({("orders", 0): 99, ("orders", 1): 6}))
    r = run(name, *args, "--topic-config", "orders:cleanup.policy=compact", "--format", fmt)
    assert r.returncode == 1, (r.returncode, r.stderr)
    why = f"{logs}/cleaner-offset-checkpoint: line 3: orders 0 99: offset 99 is past the log end offset 6"
    assert why in r.stderr and "Traceback" not in r.stderr, r.stderr
    if fmt == "table":
        assert f"fault: orders-0: {why}" in r.stdout
        assert [ln.split()[:2] for ln in r.stdout.splitlines() if ln.startswith("orders ")] == [["orders", "1"],
                                                                                              ["orders", "0"]]
        return
    rows = {(x["topic"], x["partition"]): x for x in json.loads(r.stdout)}
    assert set(rows) == {("orders", 0), ("orders", 1)}  # the faulted partition is there, not left out
    cause = rows[("orders", 0)] if name == "explain" else rows[("orders", 0)]["cause"]
    assert cause["cause"] == "unknown" and why in json.dumps(cause)
    if name == "logdir":
        assert why in rows[("orders", 0)]["fault"] and rows[("orders", 1)]["fault"] is None


def test_broker_status_of_a_stopped_broker_is_1(tmp_path):
    """A broker that is not running is a fault met, not a usage error: 1 (was 3). The state file is the
    one a real start writes; its process is gone (pid_max: the kernel hands out pids below it, so no
    process has it, and none had to be started and reaped to get a dead pid)."""
    from localkafka.broker import STATE_FILE, BrokerState

    gone = int(Path("/proc/sys/kernel/pid_max").read_text())
    state = BrokerState(dir=str(tmp_path), pid=gone, node_id=1, cluster_id="x", bootstrap="127.0.0.1:1",
                        controller="127.0.0.1:2", jmx_url="", log_dir=str(tmp_path), logs_dir=str(tmp_path),
                        kafka_version="4.3.0", started_at=0.0)
    (tmp_path / STATE_FILE).write_text(state.to_json())
    r = run("broker", "status", "--dir", str(tmp_path))
    assert r.returncode == 1 and "status:      stopped" in r.stdout, (r.returncode, r.stdout, r.stderr)
    r = run("broker", "status", "--dir", str(tmp_path / "none"))
    assert r.returncode == 1 and "no broker state in" in r.stderr


@pytest.mark.slow  # one Spark audit
def test_an_audit_that_meets_a_corrupt_batch_is_1(tmp_path):
    from recordfixtures import three_v2_batches

    seg = three_v2_batches(tmp_path / "logs" / "orders-0" / "00000000000000000000.log")
    data = bytearray(seg.path.read_bytes())
    second = seg.positions[1]
    data[second + 70] ^= 0xFF  # a byte of the second batch's records: its CRC no longer matches
    seg.path.write_bytes(bytes(data))
    r = subprocess.run([sys.executable, "-m", "cli", "audit", "--input", str(tmp_path / "logs"), "--out",
                        str(tmp_path / "out"), "--master", "local[1]"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, (r.returncode, r.stderr[-3000:])
    assert "audit: 1 corrupt or unreadable spot(s) met; the report lists them" in r.stderr
    latest = json.loads((tmp_path / "out" / "latest.json").read_text())
    assert json.loads((Path(latest["path"]) / "summary.json").read_text())["fault_list"][0]["position"] == second

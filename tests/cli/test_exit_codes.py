"""The exit-code rule across every subcommand (issue #17): 0 all good, 1 data faults met, 2 usage or
config errors. Each subcommand, found from the parser itself (a new one is walked too), is given a
usage error and, when it reads a config, a bad one: exit 2 and one line, no traceback. Processes as a
user runs them."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from cli.main import build_parser

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
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def takes_config(name: str, parser: argparse.ArgumentParser) -> bool:
    if name == "audit":  # its own parser (spark_analysis.job), reached through main()
        from spark_analysis.job import build_parser as audit_parser

        parser = audit_parser()
    return any("--config" in a.option_strings for a in parser._actions)


def run(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def one_line_no_traceback(r: subprocess.CompletedProcess) -> str:
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
    (["rules", "render", "--out", "/sys/r.yml"], "cannot write (Permission denied)"),
    (["audit", "--input", "{tmp}/logs", "--out", "/sys/audits"], "--out /sys/audits: cannot write there"),
])
def test_a_bad_output_is_one_line_and_exit_2(args, says, tmp_path):
    from recordfixtures import three_v2_batches

    three_v2_batches(tmp_path / "logs" / "orders-0" / "00000000000000000000.log")
    line = one_line_no_traceback(run(*[a.replace("{tmp}", str(tmp_path)) for a in args]))
    assert says in line, line

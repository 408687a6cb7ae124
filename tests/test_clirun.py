"""tests/clirun.py's ``run_cli``: the command line in the test's process gives what a child would (exit
code, stdout, stderr, what a C library writes to the descriptors), sees the environment and working folder
it is given, and leaves the process as it found it (environment, folder, streams, root logger)."""

from __future__ import annotations

import logging
import os
import sys

import clirun
from clirun import run_cli
from recordfixtures import three_v2_batches


def _state():
    root = logging.getLogger()
    return dict(os.environ), os.getcwd(), (sys.stdin, sys.stdout, sys.stderr), list(root.handlers), root.level


def test_a_usage_error_is_exit_2_on_stderr_and_nothing_is_left_changed():
    before = _state()
    r = run_cli("logdir", "--no-such-flag")
    assert r.returncode == 2 and r.stdout == "" and "error: " in r.stderr and len(r.stderr.splitlines()) == 1
    assert _state() == before


def test_the_environment_given_is_seen_and_taken_back(tmp_path):
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - client: {sasl.password: '${env:CLIRUN_TEST_PW}'}\n")
    os.environ.pop("CLIRUN_TEST_PW", None)
    unset = run_cli("collect", "--once", "--config", cfg)
    assert unset.returncode == 2 and "${env:CLIRUN_TEST_PW}" in unset.stderr, unset.stderr
    given = run_cli("config", "check", cfg, env={"CLIRUN_TEST_PW": "s3cret"})
    assert given.returncode == 0 and "s3cret" not in given.stdout, given.stderr
    assert "CLIRUN_TEST_PW" not in os.environ


def test_the_working_folder_given_is_the_commands(tmp_path):
    three_v2_batches(tmp_path / "orders-0" / "00000000000000000000.log")
    before = os.getcwd()
    r = run_cli("logdir", ".", "--format", "json", "--topic-config", "orders:cleanup.policy=compact", cwd=tmp_path)
    assert r.returncode == 0 and '"topic": "orders"' in r.stdout, r.stderr
    assert os.getcwd() == before


def test_what_is_written_to_the_descriptor_is_caught():
    """A C library (librdkafka) writes to file descriptor 2, past sys.stderr."""
    got: list[str] = []
    with clirun._descriptor(2, got):
        os.write(2, b"from C\n")
    assert got == ["from C\n"]

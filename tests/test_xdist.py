"""The suite on pytest-xdist (``./dev test``): the users of a session fixture too costly to start on two
workers carry that fixture's ``xdist_group`` (tests/conftest.py ``SHARED_FIXTURES``), so that
``--dist loadgroup`` runs them on one worker, and ``./dev`` picks the number of workers as its comment says."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def rules(request):
    """tests/conftest.py as pytest loaded it (``import conftest`` could be another folder's)."""
    found = [p for p in request.config.pluginmanager.get_plugins()
             if getattr(p, "__file__", None) == str(ROOT / "tests" / "conftest.py")]
    assert len(found) == 1, found
    return found[0]


def test_a_test_takes_the_first_group_whose_fixture_it_uses(rules):
    assert rules.shared_group({"kafka", "tmp_path"}) is None  # one broker a worker: not grouped
    assert rules.shared_group({"kafka", "kafka_cluster"}) == "kafka_cluster"
    assert rules.shared_group({"spark", "spark_standalone"}) == "audit_reference"
    assert rules.shared_group({"spark_kafka", "kafka"}) == "spark"
    # every fixture named is one of tests/conftest.py's
    assert all(callable(getattr(rules, f, None)) for fixtures, _ in rules.SHARED_FIXTURES.values() for f in fixtures)


def test_this_run_groups_the_users_of_each_shared_fixture(request, rules):
    """Every collected test of this run carries the group of the fixtures it uses and no other; on
    ``--dist loadgroup`` xdist has seen it (it appends ``@group`` to the test's id for its scheduler)."""
    loadgroup = request.config.getoption("dist", "no") == "loadgroup"
    wrong = []
    for item in request.session.items:
        want = rules.shared_group(getattr(item, "fixturenames", ()))
        mark = item.get_closest_marker("xdist_group")
        got = mark.args[0] if mark else None
        if got != want or (loadgroup and want and not item.nodeid.endswith(f"@{want}")):
            wrong.append(f"{item.nodeid}: {got} (want {want})")
    assert not wrong, wrong[:5]


def _workers(env: dict[str, str], default: str = "") -> subprocess.CompletedProcess:
    """./dev's ``test_workers`` function, run by itself (./dev test would install and run the suite)."""
    dev = (ROOT / "dev").read_text()
    function = re.search(r"^test_workers\(\) \{\n.*?^\}\n", dev, re.M | re.S).group(0)
    script = "say() { echo \"$*\" >&2; }\n" + function + 'test_workers "$1"\n'
    env = {k: v for k, v in os.environ.items() if k != "COMPACTION_MONITOR_TEST_WORKERS"} | env
    return subprocess.run(["bash", "-c", script, "dev", default], env=env, capture_output=True, text=True)


def test_dev_runs_a_worker_per_core_at_most_four_and_the_variable_overrides():
    cores = len(os.sched_getaffinity(0))  # what nproc counts
    assert _workers({}).stdout == f"{min(cores, 4)}\n"
    assert _workers({}, default="0").stdout == "0\n"  # the fast tier: one process
    assert _workers({"COMPACTION_MONITOR_TEST_WORKERS": "0"}).stdout == "0\n"
    assert _workers({"COMPACTION_MONITOR_TEST_WORKERS": "3"}, default="0").stdout == "3\n"
    bad = _workers({"COMPACTION_MONITOR_TEST_WORKERS": "two"})
    assert bad.returncode == 2 and bad.stdout == "" \
        and bad.stderr == "COMPACTION_MONITOR_TEST_WORKERS=two: not a number of workers\n"


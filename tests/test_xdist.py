"""The suite on pytest-xdist (``./dev test``): the users of a session fixture too costly to start on two
workers carry that fixture's ``xdist_group`` (tests/conftest.py ``SHARED_FIXTURES``), the controller's
scheduler sends each group to one worker whole, and ``./dev`` picks the number of workers as its comment says."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

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


def _item(nodeid: str, fixtures=(), own=()) -> SimpleNamespace:
    """A collected test as groups_of reads it: ``own`` are module-scoped fixtures its module defines."""
    module = nodeid.split("::", 1)[0]
    defs = {name: [SimpleNamespace(scope="module", baseid=module)] for name in own}
    defs |= {name: [SimpleNamespace(scope="session", baseid="")] for name in fixtures}
    return SimpleNamespace(nodeid=nodeid, fixturenames=[*fixtures, *own],
                           _fixtureinfo=SimpleNamespace(name2fixturedefs=defs))


def test_a_module_with_fixtures_of_its_own_runs_whole_on_one_worker(rules):
    """Its fixtures set up once: the whole module in the group of a shared fixture one of its tests uses,
    else in a group of its own; a module without any is grouped test by test."""
    items = [_item("tests/a.py::t1", own=["live"]), _item("tests/a.py::t2", ["spark"], own=["live"]),
             _item("tests/b.py::t1", ["kafka"], own=["cleaned"]), _item("tests/b.py::t2", ["kafka"]),
             _item("tests/c.py::t1", ["kafka_cluster"]), _item("tests/c.py::t2", ["kafka"])]
    assert rules.groups_of(items) == {"tests/a.py::t1": "spark", "tests/a.py::t2": "spark",
                                      "tests/b.py::t1": "tests/b.py", "tests/b.py::t2": "tests/b.py",
                                      "tests/c.py::t1": "kafka_cluster"}
    # a module-scoped fixture of a conftest is shared by several modules: not the module's own
    shared_module = SimpleNamespace(nodeid="tests/d.py::t1", fixturenames=["stack"], _fixtureinfo=SimpleNamespace(
        name2fixturedefs={"stack": [SimpleNamespace(scope="module", baseid="tests")]}))
    assert rules.groups_of([shared_module]) == {}


def test_this_run_groups_the_users_of_each_shared_fixture(request, rules):
    """Every collected test of this run carries the group of the fixtures it uses and no other; on an xdist
    worker, the file it wrote for the controller's scheduler says the same."""
    wrong = []
    # groups_of over the whole collection, before -m or -k deselected (a module's group depends on all its
    # tests); over this run's tests when nothing was deselected
    groups = request.config.stash[rules.GROUPS]
    if not request.config.getoption("markexpr") and not request.config.getoption("keyword"):
        assert groups == rules.groups_of(request.session.items)
    for item in request.session.items:
        want = groups.get(item.nodeid)
        mark = item.get_closest_marker("xdist_group")
        if (mark.args[0] if mark else None) != want:
            wrong.append(f"{item.nodeid}: {mark} (want {want})")
    assert not wrong, wrong[:5]
    where = getattr(request.config, "workerinput", {}).get(rules.GROUPS_KEY)
    if where:
        told = rules.read_groups(Path(where))
        want = groups
        assert {k: told.get(k) for k in want} == want


class _Worker:
    """What xdist's scheduler calls on a worker, recorded."""

    def __init__(self, name):
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices):
        self.sent += indices

    def shutdown(self):
        self.shutting_down = True


def test_the_scheduler_sends_a_group_whole_to_one_worker_largest_first(rules, tmp_path):
    ids = ["a.py::t1", "a.py::t2", "b.py::cluster1", "c.py::spark1", "d.py::cluster2", "e.py::spark2", "f.py::t3",
           "g.py::cluster3"]
    groups = {"b.py::cluster1": "kafka_cluster", "d.py::cluster2": "kafka_cluster", "g.py::cluster3": "kafka_cluster",
              "c.py::spark1": "spark", "e.py::spark2": "spark"}
    (tmp_path / "gw0.json").write_text(json.dumps(groups))
    config = SimpleNamespace(getvalue={"dist": "loadgroup", "tx": ["popen", "popen"]}.get,
                             option=SimpleNamespace(loadscopereorder=True), stash=pytest.Stash())
    config.stash[rules._groups_dir] = tmp_path
    sched = rules.pytest_xdist_make_scheduler(config, None)
    workers = [_Worker("gw0"), _Worker("gw1")]
    for w in workers:
        sched.add_node(w)
        sched.add_node_collection(w, ids)
    sched.schedule()
    done: set[int] = set()
    while not sched.tests_finished:  # each worker runs what it was sent; the scheduler sends more
        for w in workers:
            for i in [i for i in w.sent if i not in done]:
                done.add(i)
                sched.mark_test_complete(w, i)
    got = [[ids[i] for i in w.sent] for w in workers]
    # the largest group first, whole on one worker; the next on the other; then the rest one by one
    assert got[0][:3] == ["b.py::cluster1", "d.py::cluster2", "g.py::cluster3"]
    assert got[1][:2] == ["c.py::spark1", "e.py::spark2"]
    assert not {"c.py::spark1", "e.py::spark2"} & set(got[0]) and not {"b.py::cluster1"} & set(got[1])
    assert sorted(got[0] + got[1]) == sorted(ids)
    assert rules.pytest_xdist_make_scheduler(SimpleNamespace(getvalue={"dist": "load"}.get, stash=pytest.Stash()),
                                             None) is None  # another --dist: xdist's own


def _workers(env: dict[str, str], default: str = "") -> subprocess.CompletedProcess:
    """./dev's ``test_workers`` function, run by itself (./dev test would install and run the suite)."""
    dev = (ROOT / "dev").read_text()
    function = re.search(r"^test_workers\(\) \{\n.*?^\}\n", dev, re.M | re.S).group(0)
    script = "say() { echo \"$*\" >&2; }\n" + function + 'test_workers "$1"\n'
    env = {k: v for k, v in os.environ.items() if k != "COMPACTION_MONITOR_TEST_WORKERS"} | env
    return subprocess.run(["bash", "-c", script, "dev", default], env=env, capture_output=True, text=True)


def test_dev_runs_a_worker_a_core_unless_the_variable_or_the_tier_says_otherwise():
    cores = len(os.sched_getaffinity(0))  # what nproc counts
    assert _workers({}).stdout == f"{min(cores, 4)}\n"  # the default (CONTRIBUTING.md, "Workers")
    assert _workers({"COMPACTION_MONITOR_TEST_WORKERS": "auto"}).stdout == f"{min(cores, 4)}\n"
    assert _workers({}, default="0").stdout == "0\n"  # the fast tier: one process
    assert _workers({"COMPACTION_MONITOR_TEST_WORKERS": "0"}).stdout == "0\n"
    assert _workers({"COMPACTION_MONITOR_TEST_WORKERS": "3"}, default="0").stdout == "3\n"
    bad = _workers({"COMPACTION_MONITOR_TEST_WORKERS": "two"})
    assert bad.returncode == 2 and bad.stdout == "" \
        and bad.stderr == "COMPACTION_MONITOR_TEST_WORKERS=two: not a number of workers\n"


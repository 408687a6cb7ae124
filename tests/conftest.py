"""Shared fixtures: one real Kafka broker for the whole session, record segments made at test time
(tests/recordfixtures.py), Spark sessions, and the seed of each
test's random inputs. Also the test tiers: the ``slow`` marker put by tests/tiers.py's rule on every test
that starts a process, a broker, Spark or a server (``pytest -m "not slow"``, ``./dev test fast``, runs
the rest in well under a minute), and the fast tier's guard against a process the rule did not see.

Helpers the tests share live beside this file: kafkatools.py (topics, writing rounds, copying a
partition, waiting for the cleaner), waiting.py (``wait_for``), dumpcompare.py (kafka-dump-log).

The broker runs on loopback ports the kernel hands out, under pytest's temp
dir, so two runs on one machine never collide; it is stopped at the end of
the session (and at interpreter exit if pytest dies on the way).

On pytest-xdist (``./dev test`` runs ``-n WORKERS --dist loadgroup``) every session fixture is per worker
process: each worker that runs a broker test starts its own broker under its own temp dir. The tests of a
fixture too costly to start twice run on one worker (``SHARED_FIXTURES``, an ``xdist_group`` each, which
reach the controller's scheduler through files, ``pytest_xdist_make_scheduler``); the image build is the
controller's, one for all workers (``pytest_configure_node``).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import tiers  # noqa: E402  (beside this file)

ARTIFACTS = ROOT / "test-artifacts"
# The xdist worker this process is ("gw0", ...), or None in a run without workers.
WORKER = os.environ.get("PYTEST_XDIST_WORKER")

# The tests that run together on one xdist worker (``--dist loadgroup``): the users of a session fixture that
# costs more to start on a second worker than its tests cost to run in a row on one. A test takes the first
# group whose fixtures it uses (an ``xdist_group`` each: two marks would make a group of their own).
# Not grouped: ``kafka`` (one broker, ~10 s to start, used by most slow tests: grouping them would run
# the suite on one worker; each worker starts its own) and ``record_gallery`` (files, no process).
SHARED_FIXTURES = {
    "kafka_cluster": ({"kafka_cluster"}, "three SASL_SSL brokers with their JMX agents: 3 JVMs, ~20 s to start"),
    "kafka_cleaner_off": ({"kafka_cleaner_off"}, "a broker of its own, stopped after its last user's teardown"),
    "audit_reference": ({"audit_reference", "spark_standalone", "s3_server"},
                        "the reference audit (a Spark run, ~20 s) the standalone-cluster and S3 runs are compared with"),
    "spark": ({"spark", "spark_kafka", "_spark_sessions"},
              "the local Spark session: a JVM of its own (one per process), ~10 s to start"),
}


def own_module_fixtures(item) -> set[str]:
    """The module-scoped fixtures ``item`` uses that its own module defines (set up once a module, on each
    worker that runs one of its tests)."""
    module = item.nodeid.split("::", 1)[0]
    info = getattr(item, "_fixtureinfo", None)
    return {name for name, defs in (info.name2fixturedefs.items() if info else ())
            if defs and defs[-1].scope == "module" and defs[-1].baseid == module}


def groups_of(items) -> dict[str, str]:
    """Test id -> ``xdist_group``. A module with fixtures of its own (``own_module_fixtures``: a broker, a
    stack, data a broker cleaned) runs whole on one worker, so they are set up once: in the group of a shared
    fixture one of its tests uses (``shared_group``), else a group named after the module. Any other test
    takes the group of the shared fixtures it uses, if any."""
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    groups = {}
    for module, its in modules.items():
        whole = any(own_module_fixtures(i) for i in its)
        shared = [shared_group(getattr(i, "fixturenames", ())) for i in its]
        for item, group in zip(its, shared):
            if whole:
                group = next((g for g in shared if g), module)
            if group:
                groups[item.nodeid] = group
    return groups


def shared_group(fixturenames) -> str | None:
    """The ``xdist_group`` of a test using these fixtures (``SHARED_FIXTURES``), or None."""
    used = set(fixturenames)
    return next((name for name, (fixtures, _) in SHARED_FIXTURES.items() if used & fixtures), None)


def _artifact(name: str) -> Path:
    """Where a session's log is kept after the run: test-artifacts/NAME, or WORKER-NAME on an xdist worker
    (each worker has brokers of its own)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / (f"{WORKER}-{name}" if WORKER else name)

# Every Spark driver the tests start (the session's, each `compaction-monitor audit` subprocess, the
# demo's) runs tiny inputs on a JVM that starts afresh: its C2 compiler costs more CPU than it ever saves
# there (a session, a shuffle and a pandas UDF: 21 s of CPU with it, 12 s on C1 alone, at load 18).
# spark-submit passes SPARK_SUBMIT_OPTS to the driver's JVM; one set by the caller is kept as it is.
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1")


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the xdist_group marks put here
def pytest_collection_modifyitems(config, items):
    """The ``slow`` rule (tests/tiers.py says what makes a test slow and why): applied to every test, so a
    new test lands in its tier without a mark. Tests on the session's broker also get ``kafka``, and the
    users of a costly shared fixture its ``xdist_group`` (``SHARED_FIXTURES``), a module with fixtures of
    its own one group for all its tests (``groups_of``)."""
    rule = tiers.Rule()
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("slow") is None:
            why = tiers.why_slow(item, rule)
            if why:
                item.add_marker(pytest.mark.slow(reason=why))
        if used & {"kafka", "kafka_admin"}:
            item.add_marker(pytest.mark.kafka)
    groups = config.stash[GROUPS] = groups_of(items)  # of every collected test, before -m or -k deselects
    for item in items:
        group = groups.get(item.nodeid)
        if group and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
    _tell_the_controller_the_groups(config, items)
    last = {}
    for name in STOPPED_AFTER_LAST_USER:
        users = [item for item in items if name in getattr(item, "fixturenames", ())]
        # the last user in this order runs last (on its worker) when all its users share one xdist group
        # (sent whole, in this order) or run in one process; else the fixture waits for the session's end
        if users and len({groups.get(item.nodeid) for item in users}) == 1:
            last[name] = users[-1]  # the item, not its nodeid (xdist may append "@group" to the id)
    config.stash[_last_users] = last


@pytest.fixture(autouse=True)
def _no_process_in_the_fast_tier(request):
    """The fast tier's guard: a test not marked slow that starts a process (itself or through a fixture, in
    any thread) fails, naming what it ran. The rule (tests/tiers.py) marks what it can see; this catches
    what it cannot (a process started behind a method call or a function chosen at run time): mark that
    test ``@pytest.mark.slow  # why``. In every run, so the whole suite (CI) fails on it too."""
    if request.node.get_closest_marker("slow") is not None:
        yield
        return
    with tiers.processes_started() as started:
        yield
    if started:
        pytest.fail(f"{request.node.nodeid} is in the fast tier (not marked slow) and started "
                    f"{len(started)} process(es): {'; '.join(started[:3])}. A process belongs to the slow tier: "
                    f"mark the test @pytest.mark.slow (tests/tiers.py says why)", pytrace=False)


def _stop_broker(directory: Path) -> None:
    from kafkatools import localbroker

    localbroker.stop(directory, progress=lambda *_: None)


def _stop_cluster(directory: Path) -> None:
    from kafkatools import localcluster

    localcluster.stop(directory, progress=lambda *_: None)


# Session fixtures stopped once the last test that uses them is torn down, not at the session's end: an idle
# broker's JVM costs CPU (3% of a core) for as long as it runs, and on xdist the session is the other
# worker's too. fixture -> how to stop what it started in its directory (its own teardown stops it again:
# a no-op then). Not the ``kafka`` broker: its users run till the end.
STOPPED_AFTER_LAST_USER = {"kafka_cleaner_off": _stop_broker, "kafka_cluster": _stop_cluster}
_last_users = pytest.StashKey[dict]()
GROUPS = pytest.StashKey[dict]()  # test id -> xdist_group, as pytest_collection_modifyitems put them
_fixture_dirs = pytest.StashKey[dict]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """Each of ``STOPPED_AFTER_LAST_USER`` is stopped once the last test that uses it is torn down."""
    yield
    started = item.config.stash.get(_fixture_dirs, {})
    for name, last in item.config.stash.get(_last_users, {}).items():
        if item is last and name in started:
            STOPPED_AFTER_LAST_USER[name](started[name])


_image_build = pytest.StashKey[dict]()
_groups_dir = pytest.StashKey[Path]()
GROUPS_KEY = "compaction_monitor_xdist_groups"  # a worker's workerinput: where it writes its tests' groups


def _tell_the_controller_the_groups(config, items) -> None:
    """An xdist worker: its tests' groups (test id -> ``xdist_group``) as a file for the controller's
    scheduler. xdist 3.8's own channel, an ``@group`` suffix it appends to the test's id, no longer takes on
    pytest 9.2, whose test ids are structured (pytest-xdist issue #1386): loadgroup then ignores every mark."""
    where = getattr(config, "workerinput", {}).get(GROUPS_KEY)
    if not where:
        return
    groups = {}
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark:
            groups[item.nodeid] = str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    path = Path(where) / f"{config.workerinput['workerid']}.json"
    path.with_suffix(".part").write_text(json.dumps(groups))
    path.with_suffix(".part").replace(path)  # whole or absent: the controller reads it after every collection


def read_groups(directory: Path) -> dict[str, str]:
    """Test id -> group, from every worker's file (they collect the same tests)."""
    out: dict[str, str] = {}
    for path in sorted(Path(directory).glob("*.json")):
        out.update(json.loads(path.read_text()))
    return out


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the groups the workers wrote (``_tell_the_controller_the_groups``): a group is
    one unit of work, on one worker; the other tests go one by one to whichever worker is free. The largest
    groups go first (xdist's default order), so the longest unit never starts last."""
    if config.getvalue("dist") != "loadgroup" or _groups_dir not in config.stash:
        return None
    from xdist.scheduler import LoadGroupScheduling

    directory = config.stash[_groups_dir]

    class SharedFixtureScheduling(LoadGroupScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # asked first once every worker has collected (and written its file)
                self.groups = read_groups(directory)
            return self.groups.get(nodeid) or super()._split_scope(nodeid)

    return SharedFixtureScheduling(config, log)


def _imagebuild():
    """tests/deploy/imagebuild.py (the controller of an xdist run does not load tests/deploy/conftest.py)."""
    deploy = str(ROOT / "tests" / "deploy")
    if deploy not in sys.path:
        sys.path.insert(0, deploy)
    import imagebuild

    return imagebuild


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist's controller, before it starts a worker: the work dir of the session's one image build, for
    each worker's image tests to wait on (tests/deploy/conftest.py: two workers building the same images
    would cost minutes of both cores twice), and the folder where it writes its tests' groups."""
    build = node.config.stash.setdefault(_image_build, {"proc": None})
    if "workdir" not in build:
        build["workdir"] = Path(tempfile.mkdtemp(prefix="compaction-monitor-images-"))
    node.workerinput[_imagebuild().WORKERINPUT_KEY] = str(build["workdir"])
    if _groups_dir not in node.config.stash:
        node.config.stash[_groups_dir] = Path(tempfile.mkdtemp(prefix="compaction-monitor-groups-"))
    node.workerinput[GROUPS_KEY] = str(node.config.stash[_groups_dir])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """xdist's controller: the image build starts once a worker has collected an image test (before any
    test runs: the scheduler waits for every worker's collection), in the background as in a serial run."""
    imagebuild = _imagebuild()
    build = node.config.stash.get(_image_build, None)
    if build is None or build["proc"] is not None or not any(imagebuild.is_image_test(i) for i in ids):
        return
    if imagebuild.missing_reason() is None:  # else each worker's image tests skip, saying why
        build["proc"] = imagebuild.start(build["workdir"])


def pytest_sessionfinish(session):
    """xdist's controller, after its last worker ended: the groups' folder and the image build removed."""
    if _groups_dir in session.config.stash:
        shutil.rmtree(session.config.stash[_groups_dir], ignore_errors=True)
    build = session.config.stash.get(_image_build, None)
    if build is None:
        return
    if build["proc"] is None:
        shutil.rmtree(build["workdir"], ignore_errors=True)
    else:
        _imagebuild().finish(build["proc"], build["workdir"], ARTIFACTS)


@pytest.fixture(autouse=True, scope="session")
def _state_directory(tmp_path_factory):
    """A collector a test starts keeps its summary cache (collectors.logdirs.summary_state) under pytest's temp dir,
    never in /var/lib/compaction-monitor or the user's ~/.local/state: $STATE_DIRECTORY, as systemd sets it."""
    before = os.environ.get("STATE_DIRECTORY")
    os.environ["STATE_DIRECTORY"] = str(tmp_path_factory.mktemp("state"))
    yield
    if before is None:
        os.environ.pop("STATE_DIRECTORY", None)
    else:
        os.environ["STATE_DIRECTORY"] = before


SEED_ENV = "TEST_SEED"
_seed_key = pytest.StashKey[int]()


@pytest.fixture
def seed(request) -> int:
    """The seed of this test's random inputs: ``$TEST_SEED`` if set, else one fixed per test (from its
    id), so every run draws the same inputs. A failing test prints it (see the report hook below)."""
    value = int(os.environ.get(SEED_ENV) or zlib.crc32(request.node.nodeid.encode()))
    request.node.stash[_seed_key] = value
    return value


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and _seed_key in item.stash:
        report.sections.append(("random inputs", f"seed {item.stash[_seed_key]}: replay with "
                                                 f"{SEED_ENV}={item.stash[_seed_key]} pytest '{item.nodeid}'"))


@pytest.fixture(scope="session")
def record_gallery(tmp_path_factory):
    """One segment per magic, codec and odd layout, made by kafka-python's record builders: name -> Segment."""
    from recordfixtures import gallery

    return gallery(tmp_path_factory.mktemp("record-gallery"))


@pytest.fixture(scope="session")
def kafka(tmp_path_factory):
    """A running single-node KRaft broker (``BrokerState``): bootstrap, jmx_url, log_dir, logs."""
    from kafkatools import localbroker as broker

    directory = tmp_path_factory.mktemp("kafka")
    state = broker.start(directory, progress=lambda m: print(f"[kafka] {m}", file=sys.stderr))
    atexit.register(broker.stop, directory, progress=lambda *_: None)
    yield state
    broker.stop(directory, progress=lambda *_: None)
    # keep server.log / log-cleaner.log for inspection after a failed run
    for log in (state.server_log, state.cleaner_log):
        if log.exists():
            _artifact(log.name).write_bytes(log.read_bytes())


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory, pytestconfig):
    """A running 3-node KRaft cluster with SASL_SSL and ACLs (``localcluster.ClusterState``), started
    the first time a test asks for it and stopped after the last of its tests (``STOPPED_AFTER_LAST_USER``;
    else at the end of the session, and at interpreter exit if pytest dies on the way). Users admin (super user), monitor (Describe/DescribeConfigs on topics
    and the cluster, Describe on groups) and blind (no ACL); kafkatools.client_config(cluster, user)
    gives their client configs. ``start_seconds`` is how long it took to start (for the report). The JMX
    exporter agents run as operators often do: the bare catch-all rule, behind HTTP Basic auth
    (``jmx_username`` and ``jmx_password_file`` of the state; kafkatools.cluster_brokers gives the
    collector's broker settings)."""
    from kafkatools import localcluster

    directory = tmp_path_factory.mktemp("kafka-cluster")
    pytestconfig.stash.setdefault(_fixture_dirs, {})["kafka_cluster"] = directory
    atexit.register(localcluster.stop, directory, progress=lambda *_: None)
    try:
        state = localcluster.start(directory, brokers=3, security="sasl_ssl", jmx_auth=True,
                                   jmx_exporter_config="jmx-exporter-catchall.yaml",
                                   progress=lambda m: print(f"[kafka_cluster] {m}", file=sys.stderr))
    except BaseException:
        localcluster.stop(directory, progress=lambda *_: None)
        raise
    yield state
    localcluster.stop(directory, progress=lambda *_: None)
    for b in state.brokers():
        for log in (b.server_log, b.cleaner_log):
            if log.exists():
                _artifact(f"cluster-node-{b.node_id}-{log.name}").write_bytes(log.read_bytes())


@pytest.fixture(scope="session")
def kafka_cleaner_off(tmp_path_factory, pytestconfig):
    """A second real broker started with ``log.cleaner.enable=false`` (deprecated in Kafka 4, still
    honoured: a read-only setting, so a broker of its own): a cleaner that cannot keep up, for real.
    One for every test that needs it (tests/alerts/test_prometheus_alerts.py,
    tests/collectors/test_cleaner_settings_kafka.py), each on topics of its own; stopped after the last
    of them (``STOPPED_AFTER_LAST_USER``)."""
    from kafkatools import own_broker

    directory = tmp_path_factory.mktemp("kafka-cleaner-off")
    pytestconfig.stash.setdefault(_fixture_dirs, {})["kafka_cleaner_off"] = directory
    with own_broker(directory, "kafka cleaner off", **{"log.cleaner.enable": "false"}) as state:
        yield state


@pytest.fixture(scope="session")
def kafka_admin(kafka):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": kafka.bootstrap})


class _SparkSessions:
    """At most one local Spark session at a time (Spark allows one per process). A plain one for most
    tests; the one test that reads a live topic asks for Spark's Kafka source, which is resolved from
    Maven only then: the plain session and its JVM are stopped, and a new JVM starts with the package.
    Later tests reuse that session (it can do everything the plain one can)."""

    def __init__(self):
        self.current = None
        self.with_kafka = False

    def get(self, kafka_source: bool):
        from spark_analysis.session import session

        if self.current is not None and (self.with_kafka or not kafka_source):
            return self.current
        self.stop()
        self.current = session("local[2]", app="compaction-monitor-tests", kafka_source=kafka_source)
        self.with_kafka = kafka_source
        return self.current

    def stop(self):
        if self.current is None:
            return
        from pyspark import SparkContext

        self.current.stop()
        self.current = None
        gateway = SparkContext._gateway
        if gateway is not None:  # the JVM reads spark.jars.packages only at its start: end it
            gateway.shutdown()
            proc = getattr(gateway, "proc", None)
            if proc is not None:
                proc.stdin.close()
                proc.wait(60)
            SparkContext._gateway = None
            SparkContext._jvm = None


@pytest.fixture(scope="session")
def _spark_sessions():
    sessions = _SparkSessions()
    yield sessions
    sessions.stop()


@pytest.fixture
def spark(_spark_sessions):
    """A local Spark session (2 cores), shared by the session's Spark tests; stopped at its end."""
    return _spark_sessions.get(kafka_source=False)


@pytest.fixture(scope="session")
def spark_standalone(tmp_path_factory):
    """A Spark standalone master and two workers (1 core, 1 GiB each: the 2 cores of ``local[2]``) on
    loopback, from PySpark's own spark-class (``spark_analysis.standalone``); started by the first test
    that asks, stopped at the session's end (and at exit if pytest dies on the way)."""
    from spark_analysis import standalone

    directory = tmp_path_factory.mktemp("spark-standalone")
    cluster = standalone.start(directory, workers=2, cores=1, memory="1g",
                               progress=lambda m: print(f"[spark_standalone] {m}", file=sys.stderr))
    atexit.register(cluster.stop)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """moto's S3 server on a free loopback port (tests/s3server.py), for the session; stopped at its end."""
    import s3server

    server = s3server.start(tmp_path_factory.mktemp("moto") / "moto.log")
    atexit.register(server.stop)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def audit_reference(tmp_path_factory):
    """The audit of ``auditcompare.log_dir`` by ``audit --master local[2]`` into a local folder: what
    the standalone-cluster and S3 runs of the same input must equal. (input dir, config, read_run)."""
    import json

    import pyarrow.fs as pafs

    from auditcompare import CONFIG, audit, log_dir, read_run

    root = tmp_path_factory.mktemp("audit-reference")
    inputs = log_dir(root / "logs")
    cfg = root / "monitor.yaml"
    cfg.write_text(CONFIG)
    r = audit("local[2]", str(inputs), str(root / "out"), cfg)
    assert r.returncode == 0, r.stderr[-4000:]
    return inputs, cfg, read_run(pafs.LocalFileSystem(), json.loads((root / "out" / "latest.json").read_text())["path"])


@pytest.fixture
def spark_kafka(_spark_sessions):
    """A local Spark session with Spark's Kafka source (``spark.jars.packages``, resolved from Maven
    the first time): only for the test that reads a live topic through Spark."""
    return _spark_sessions.get(kafka_source=True)

"""A real single-node Apache Kafka broker on loopback, for the demo and the tests.

This module is the broker's lifecycle: its ports, its ``server.properties``, start, wait until it
serves, stop. The jars come from localkafka.jars (Maven, cached); Kafka's own tools, including the
``kafka-storage format`` a first start runs, from localkafka.kafkatools.

Which Kafka: the pom's version by default, or the ``kafka_version`` a caller names (the compatibility
tests run the versions users run). A 4.x broker runs in KRaft as a combined broker+controller, logging
through Kafka 4's log4j2.yaml; a 3.x broker runs on a ZooKeeper node that ``start`` starts first and
``stop`` stops after it (``broker.id`` and ``zookeeper.connect``, no ``process.roles``; no format step: the
broker writes its own version-0 meta.properties), logging through Kafka 3's log4j.properties. Both with
the JMX exporter and Jolokia agents, and the cleaner's log in ``log-cleaner.log`` as each stock config
writes it.

This module starts processes; it imports no Kafka client. Everything about a
running broker is kept in ``<dir>/broker.json`` so that another process
(``compaction-monitor broker status``, a test, the demo) can find it.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse
import uuid
from pathlib import Path

from boundedhttp import FetchError, get
from freeport import free_port  # noqa: F401 - re-exported: localkafka.processes, the cluster, the tests
from localkafka.jars import HERE, KAFKA_VERSION, KRAFT, ZOOKEEPER, BrokerError, agent_jar, classpath, family, fetch_jars, java
from localkafka.kafkatools import format_storage
from monitor.fileio import strictjson

STATE_FILE = "broker.json"
STARTED_MARKER = "Kafka Server started"
# what server.log says once a broker serves, by family: KRaft's BrokerServer, ZooKeeper's KafkaServer
STARTED_MARKERS = {KRAFT: STARTED_MARKER, ZOOKEEPER: "] started (kafka.server.KafkaServer)"}
# each family's stock log4j config (a file next to this module) and the JVM property that names it
LOG4J = {KRAFT: ("log4j2.yaml", "-Dlog4j2.configurationFile={}"),
         ZOOKEEPER: ("log4j.properties", "-Dlog4j.configuration=file:{}")}


# the JMX exporter agent configs start() can run (files next to this module)
JMX_EXPORTER_CONFIGS = ("jmx-exporter.yaml", "jmx-exporter-catchall.yaml", "jmx-exporter-catchall-keepcase.yaml")


# ------------------------------------------------------------------- state


@dataclasses.dataclass(frozen=True)
class BrokerState:
    """What a running local broker is: written to ``broker.json`` at start."""

    dir: str
    pid: int
    node_id: int
    cluster_id: str
    bootstrap: str
    controller: str
    jmx_url: str
    log_dir: str
    logs_dir: str
    kafka_version: str
    started_at: float
    jolokia_url: str = ""
    server_log_offset: int = 0  # where this run's lines start in server.log
    zookeeper: str = ""  # a 3.x broker's ZooKeeper node (host:port), started and stopped with it
    zookeeper_pid: int = 0

    @property
    def family(self) -> str:
        return family(self.kafka_version)

    @property
    def server_log(self) -> Path:
        return Path(self.logs_dir) / "server.log"

    @property
    def cleaner_log(self) -> Path:
        return Path(self.logs_dir) / "log-cleaner.log"

    def to_json(self) -> str:
        return strictjson.dumps(dataclasses.asdict(self), indent=2)


def read_state(directory: Path) -> BrokerState | None:
    path = Path(directory) / STATE_FILE
    if not path.exists():
        return None
    try:
        return BrokerState(**json.loads(path.read_text()))
    except (ValueError, TypeError) as exc:
        raise BrokerError(f"{path}: not a broker state file ({exc})") from exc


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); look at /proc when we can.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


# -------------------------------------------------------------------- start


# Uuid.java: the all-zero id and the metadata topic's id (0, 1) are never handed out.
RESERVED_UUIDS = frozenset({bytes(16), (1).to_bytes(16, "big")})


def kafka_uuid(draw=lambda: uuid.uuid4().bytes) -> str:
    """A random id in Kafka's Uuid text form (URL-safe base64 of 16 bytes, no padding), drawn the
    way Kafka's ``Uuid.randomUuid()`` draws one: again while it is reserved or its text starts with
    ``-``, so that no tool can read it as an option. (``draw`` is for tests.)"""
    while True:
        raw = draw()
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if raw not in RESERVED_UUIDS and not text.startswith("-"):
            return text


# A local broker lives for a test or a demo and moves megabytes, not gigabytes: C1 alone compiles what
# it runs soon enough, and C2's compiles cost more CPU than they save (measured: 9 -> 5.3 s of CPU until
# ready, idle 4.5% -> 2.5% of a core).
BROKER_JIT = ["-XX:TieredStopAtLevel=1"]


# Settings that let compaction happen within seconds. Topic configs
# (segment.ms, min.cleanable.dirty.ratio, ...) do the rest per test.
FAST_CLEANER = {
    "log.cleaner.backoff.ms": "500",
    "log.retention.check.interval.ms": "1000",
    "log.segment.delete.delay.ms": "1000",
    "file.delete.delay.ms": "1000",
    "log.initial.task.delay.ms": "0",
}


def _ports(previous: "BrokerState | None") -> tuple[int, int, int, int]:
    """Broker, controller (or ZooKeeper), JMX exporter and Jolokia ports: the previous run's when they are
    still free (a restarted broker keeps its addresses), else fresh ones from the kernel."""
    if previous is not None and previous.jolokia_url:
        second = previous.controller or previous.zookeeper  # KRaft's controller port, or a 3.x broker's ZooKeeper
        old = [int(previous.bootstrap.rsplit(":", 1)[1]), int(second.rsplit(":", 1)[1]),
               int(previous.jmx_url.rsplit(":", 1)[1].split("/")[0]),
               int(previous.jolokia_url.rsplit(":", 1)[1].split("/")[0])]
        if previous.jolokia_url and all(_port_free(p) for p in old):
            return tuple(old)
    ports: list[int] = []
    while len(ports) < 4:
        p = free_port()
        if p not in ports:
            ports.append(p)
    return tuple(ports)


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def server_properties(node_id: int, bport: int, cport: int, log_dir: Path, extra: dict | None,
                      kind: str = KRAFT) -> str:
    """The broker's server.properties: a KRaft broker+controller (``cport`` its controller's port), or a
    ZooKeeper-mode broker (``kind`` ZOOKEEPER: ``cport`` its ZooKeeper's port)."""
    if kind == ZOOKEEPER:
        mode = {
            "broker.id": str(node_id),
            "zookeeper.connect": f"127.0.0.1:{cport}",
            "listeners": f"PLAINTEXT://127.0.0.1:{bport}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{bport}",
        }
    else:
        mode = {
            "process.roles": "broker,controller",
            "node.id": str(node_id),
            "controller.quorum.voters": f"{node_id}@127.0.0.1:{cport}",
            "listeners": f"PLAINTEXT://127.0.0.1:{bport},CONTROLLER://127.0.0.1:{cport}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{bport}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            # the share coordinator is Kafka 4's (a 3.x broker warns of an unknown setting)
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
        }
    props = {
        **mode,
        "log.dirs": str(log_dir),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "3",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "3",
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "false",
        **FAST_CLEANER,
    }
    props.update(extra or {})
    return "".join(f"{k}={v}\n" for k, v in props.items())


def start(
    directory: Path,
    *,
    extra_config: dict | None = None,
    heap: str = "512m",
    timeout: float = 120.0,
    progress=print,
    jmx_exporter_config: str = "jmx-exporter.yaml",
    jmx_http_server: dict | None = None,
    kafka_version: str = KAFKA_VERSION,
) -> BrokerState:
    """Start a broker of ``kafka_version`` from ``directory``; wait until it serves. A 4.x one: KRaft
    storage formatted under ``directory`` and a combined broker+controller; a 3.x one: a ZooKeeper node
    first (``directory/zookeeper``), then the broker on it (see the module's doc).

    ``jmx_exporter_config``: the JMX exporter agent's rules, one of ``JMX_EXPORTER_CONFIGS`` (a file
    next to this module): the project's rule-named set by default, or the bare catch-all rule with
    and without ``lowercaseOutputName``, as many operators run it (the cleaner gauges then have
    their MBean name in a label). ``jmx_http_server``: the agent's ``httpServer`` settings (jmx_exporter
    >= 0.20): ``authentication.basic`` (username, and password or algorithm, salt and passwordHash) makes
    the page answer 401 without them; ``ssl.keyStore`` (filename, password) and ``ssl.certificate.alias``
    serve it over https."""
    if jmx_exporter_config not in JMX_EXPORTER_CONFIGS:
        raise BrokerError(f"unknown JMX exporter config {jmx_exporter_config!r}: one of {', '.join(JMX_EXPORTER_CONFIGS)}")
    directory = Path(directory).resolve()
    existing = read_state(directory)
    if existing and is_alive(existing.pid):
        raise BrokerError(f"a broker is already running from {directory} (pid {existing.pid}, {existing.bootstrap})")
    kind = family(kafka_version)
    if existing and family(existing.kafka_version) != kind and (directory / "data" / "meta.properties").exists():
        raise BrokerError(f"{directory}: holds the data of a Kafka {existing.kafka_version} broker "
                          f"({family(existing.kafka_version)}), which a {kind} broker of Kafka {kafka_version} "
                          f"cannot read: start Kafka {existing.kafka_version} there, or use another directory")
    libs = fetch_jars(progress=progress, version=kafka_version)
    directory.mkdir(parents=True, exist_ok=True)
    log_dir = directory / "data"
    logs_dir = directory / "logs"
    logs_dir.mkdir(exist_ok=True)
    node_id = 1
    bport, cport, jport, jlport = _ports(existing)

    props = directory / "server.properties"
    props.write_text(server_properties(node_id, bport, cport, log_dir, extra_config, kind))
    jmx_cfg = directory / "jmx-exporter.yaml"
    jmx_cfg.write_text((HERE / jmx_exporter_config).read_text() + _http_server_yaml(jmx_http_server))
    log4j_name, log4j_flag = LOG4J[kind]
    log4j = directory / log4j_name
    log4j.write_text((HERE / log4j_name).read_text())

    meta = log_dir / "meta.properties"
    zookeeper, zk_pid = "", 0
    if meta.exists():
        cluster_id = _read_properties(meta).get("cluster.id", "")
    elif kind == ZOOKEEPER:
        cluster_id = ""  # the broker draws it at its first start (into ZooKeeper and meta.properties)
    else:
        cluster_id = kafka_uuid()
        progress(f"formatting KRaft storage in {log_dir}")
        _format(libs, log_dir, node_id, cluster_id, logs_dir, log4j)
    if kind == ZOOKEEPER:
        zookeeper, zk_pid = f"127.0.0.1:{cport}", _start_zookeeper(libs, directory / "zookeeper", cport, log4j, timeout)

    jvm = [
        f"-Xmx{heap}", f"-Xms{heap}", "-XX:+UseG1GC", *BROKER_JIT, "-Djava.awt.headless=true",
        log4j_flag.format(log4j), f"-Dkafka.logs.dir={logs_dir}",
        f"-javaagent:{agent_jar(libs)}=127.0.0.1:{jport}:{jmx_cfg}",
        f"-javaagent:{agent_jar(libs, 'jolokia-agent-jvm')}=host=127.0.0.1,port={jlport},discoveryEnabled=false",
    ]
    cmd = [java(), *jvm, "-cp", classpath(libs), "kafka.Kafka", str(props)]
    log_offset = (logs_dir / "server.log").stat().st_size if (logs_dir / "server.log").exists() else 0
    out = open(logs_dir / "stdout.log", "ab")
    progress(f"starting Kafka {kafka_version} on 127.0.0.1:{bport} (JMX exporter on :{jport})")
    try:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=directory)
    except BaseException:
        if zk_pid:
            _terminate(zk_pid)
        raise
    finally:
        out.close()
    state = BrokerState(
        dir=str(directory), pid=proc.pid, node_id=node_id, cluster_id=cluster_id,
        bootstrap=f"127.0.0.1:{bport}", controller="" if zookeeper else f"127.0.0.1:{cport}",
        jmx_url=f"{'https' if (jmx_http_server or {}).get('ssl') else 'http'}://127.0.0.1:{jport}/metrics", jolokia_url=f"http://127.0.0.1:{jlport}/jolokia",
        log_dir=str(log_dir), logs_dir=str(logs_dir),
        kafka_version=kafka_version, started_at=time.time(), server_log_offset=log_offset,
        zookeeper=zookeeper, zookeeper_pid=zk_pid,
    )
    (directory / STATE_FILE).write_text(state.to_json())
    try:
        _wait_ready(state, proc, timeout, jmx_http_server or {})
        if not state.cluster_id:  # a ZooKeeper-mode broker wrote its own at its first start
            state = dataclasses.replace(state, cluster_id=_read_properties(meta).get("cluster.id", ""))
            (directory / STATE_FILE).write_text(state.to_json())
    except BaseException:
        _terminate(proc.pid)
        if zk_pid:
            _terminate(zk_pid)
        raise
    progress(f"broker ready: bootstrap {state.bootstrap}, metrics {state.jmx_url}")
    return state


def _start_zookeeper(libs: Path, zk_dir: Path, port: int, log4j: Path, timeout: float) -> int:
    """A standalone ZooKeeper node on 127.0.0.1:``port`` for a 3.x broker, as Kafka 3's
    ``zookeeper-server-start.sh`` runs one (QuorumPeerMain on Kafka's own jars and log4j.properties;
    its logs in ``zk_dir/logs``, not in the broker's server.log); its pid once it accepts connections."""
    data, logs = zk_dir / "data", zk_dir / "logs"
    data.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    cfg = zk_dir / "zookeeper.properties"
    cfg.write_text(f"dataDir={data}\nclientPort={port}\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\n"
                   "admin.enableServer=false\n")
    cmd = [java(), "-Xmx128m", "-Xms128m", *BROKER_JIT, "-Djava.awt.headless=true",
           f"-Dlog4j.configuration=file:{log4j}", f"-Dkafka.logs.dir={logs}",
           "-cp", classpath(libs), "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(cfg)]
    with open(logs / "stdout.log", "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=zk_dir)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BrokerError(f"ZooKeeper exited with {proc.returncode} while starting:\n{_tail(logs / 'stdout.log')}")
        if _port_open("127.0.0.1", port):
            return proc.pid
        time.sleep(0.2)
    _terminate(proc.pid)
    raise BrokerError(f"ZooKeeper did not accept connections on 127.0.0.1:{port} within {timeout:.0f}s; "
                      f"see {logs / 'server.log'}")


# One ``kafka-storage format`` per process and Kafka version (a JVM: seconds); every later broker's storage
# is that one's files with its own ids. What format writes for a single combined node on a static quorum:
# the feature levels of the release (the same bytes for any cluster id, node or dir but for its timestamps
# and CRCs) and meta.properties (version, node.id, directory.id, cluster.id). Up to 4.3 the feature levels
# are ``bootstrap.checkpoint``; from 4.4 they are a snapshot in the metadata log's own folder
# (``__cluster_metadata-0``): ``FORMAT_WRITES`` names what is copied, by the first file's name.
_FORMATTED: dict[Path, Path] = {}
FORMAT_WRITES = ("bootstrap.checkpoint", "__cluster_metadata-0")


def _format(libs: Path, log_dir: Path, node_id: int, cluster_id: str, logs_dir: Path, log4j: Path) -> None:
    """Format ``log_dir`` as ``kafka-storage format`` does (see _FORMATTED): the first time by the tool
    itself into a template, then from the template."""
    import shutil

    template = _FORMATTED.get(libs)
    if template is None or not template.exists():
        import atexit
        import tempfile

        root = Path(tempfile.mkdtemp(prefix="kafka-format-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        template = root / "data"
        (root / "server.properties").write_text(server_properties(node_id, free_port(), free_port(), template, None))
        fmt = format_storage(libs, root / "server.properties", kafka_uuid(), logs_dir, log4j)
        if fmt.returncode != 0:
            raise BrokerError(f"kafka-storage format failed:\n{fmt.stdout}\n{fmt.stderr}")
        wrote = sorted(p.name for p in template.iterdir())
        if len(wrote) != 2 or "meta.properties" not in wrote or not set(wrote) & set(FORMAT_WRITES):
            raise BrokerError(f"kafka-storage format wrote {wrote}: expected meta.properties and one of "
                              f"{', '.join(FORMAT_WRITES)} (what this module copies)")
        _FORMATTED[libs] = template
    log_dir.mkdir(parents=True, exist_ok=True)
    for entry in template.iterdir():
        if entry.name == "meta.properties":
            continue
        if entry.is_dir():
            shutil.copytree(entry, log_dir / entry.name)
        else:
            shutil.copyfile(entry, log_dir / entry.name)
    meta = {"node.id": str(node_id), "directory.id": kafka_uuid(), "version": "1", "cluster.id": cluster_id}
    (log_dir / "meta.properties").write_text("#\n" + "".join(f"{k}={v}\n" for k, v in meta.items()))


def _read_properties(path: Path) -> dict:
    out = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _http_server_yaml(http_server: dict | None) -> str:
    """The JMX exporter agent's ``httpServer`` block, as JSON (which YAML reads as it is)."""
    return f"httpServer: {strictjson.dumps(http_server)}\n" if http_server else ""


def _jmx_ready(url: str, http_server: dict, deadline: float = 2) -> bool:
    """The agent serves: a 200, or a 401 behind basic auth; over https (a CA of the caller's), the port open."""
    if http_server.get("ssl"):
        parts = urllib.parse.urlsplit(url)
        return _port_open(parts.hostname, parts.port)
    return _http_ok(url, (200, 401) if http_server.get("authentication") else (200,), deadline)


def _wait_ready(state: BrokerState, proc: subprocess.Popen, timeout: float, jmx_http_server: dict | None = None) -> None:
    deadline = time.monotonic() + timeout
    host, port = state.bootstrap.split(":")
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = _tail(Path(state.logs_dir) / "stdout.log") + _tail(state.server_log)
            raise BrokerError(f"broker exited with {proc.returncode} while starting:\n{tail}")
        # one patient GET per page rather than retries every 2 s: the JMX exporter's first page takes
        # seconds on a loaded machine, and an abandoned request is built all the same (the retries that
        # gave up on it queued behind it: 20 s and more at a load of 10)
        patience = max(2.0, min(30.0, deadline - time.monotonic()))
        if (_log_contains(state.server_log, STARTED_MARKERS[state.family], state.server_log_offset) and _port_open(host, int(port))
                and _jmx_ready(state.jmx_url, jmx_http_server or {}, patience)
                and _http_ok(state.jolokia_url + "/version", deadline=patience)):
            return
        time.sleep(0.3)
    raise BrokerError(f"broker did not start within {timeout:.0f}s; see {state.server_log}")


def _tail(path: Path, n: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def _log_contains(path: Path, text: str, offset: int = 0) -> bool:
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return text.encode() in fh.read()
    except OSError:
        return False


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _http_ok(url: str, ok=(200,), deadline: float = 2) -> bool:
    try:
        return get(url, deadline=deadline, max_bytes=16 * 1024 * 1024).status in ok
    except FetchError:
        return False


# --------------------------------------------------------------------- stop


def _terminate(pid: int, grace: float = 30.0) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                return
        except ChildProcessError:
            if not is_alive(pid):
                return
        time.sleep(0.2)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop(directory: Path, progress=print) -> bool:
    """Stop the broker started from ``directory`` (and then its ZooKeeper, if it has one); keep its data and
    logs. False if none ran."""
    state = read_state(directory)
    if state is None:
        return False
    if state.zookeeper_pid and not is_alive(state.pid) and is_alive(state.zookeeper_pid):
        _terminate(state.zookeeper_pid)  # a broker that died left its ZooKeeper running
    if not is_alive(state.pid):
        return False
    progress(f"stopping broker pid {state.pid}")
    _terminate(state.pid)
    if state.zookeeper_pid:
        progress(f"stopping ZooKeeper pid {state.zookeeper_pid}")
        _terminate(state.zookeeper_pid)
    progress(f"stopped; logs kept in {state.logs_dir}")
    return True

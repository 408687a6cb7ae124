"""A real multi-node Apache Kafka (KRaft) cluster on loopback, optionally with SASL_SSL and ACLs.

What the production-shape issue (#14) and the least-privilege issue (#22) test against: N combined
broker+controller nodes (a static N-voter controller quorum), each with its own log dir, server.log,
JMX exporter agent and Jolokia agent, started from the same cached jars as the single broker
(localkafka.broker, whose one-node path this module leaves alone). Topics default to replication
factor 3 with ``min.insync.replicas`` 2 (capped at the node count).

With ``security="sasl_ssl"`` (the users, ACLs and JAAS configs: localkafka.security):

- TLS material from the JDK's ``keytool`` (localkafka.tls): a CA, a PKCS12 keystore per node (SAN
  127.0.0.1/localhost), one truststore, the CA as PEM for librdkafka.
- Clients and brokers among themselves: SASL/SCRAM-SHA-512 over TLS on the one ``SASL_SSL``
  listener. The bootstrap super user ``admin`` is written into the metadata by
  ``kafka-storage format --add-scram`` (it must exist before the brokers can replicate); the others
  (``monitor``, ``blind``) by ``kafka-configs --alter --add-config-file`` once the cluster serves.
- The controller listener: SSL with client certificates (mutual TLS) on loopback. Not SASL/SCRAM:
  KRaft controllers cannot use SCRAM among themselves, since SCRAM credentials live in the metadata
  log the controllers themselves serve (KAFKA-15513: the maintainers' advice is another mechanism on the
  controller listener); and not PLAINTEXT, which
  with an authorizer on would require making ``User:ANONYMOUS`` a super user. Each node's
  certificate (CN=kafka-broker-N) maps to the principal ``User:kafka-broker``
  (``ssl.principal.mapping.rules``), a super user.
- ``StandardAuthorizer`` with ``allow.everyone.if.no.acl.found=false``; ``super.users`` admin and the
  broker principal. ``monitor`` gets Describe and DescribeConfigs on every topic and the cluster and
  Describe on every group (``kafka-acls``), ``blind`` nothing.
- Passwords are drawn per cluster and written to mode-0600 files in the cluster dir
  (``secrets/<user>.password``); nothing here prints them. The one place a password stands on a
  command line is ``kafka-storage format --add-scram`` (the tool takes it nowhere else), for the
  second or so that format runs.

The JMX exporter agents run with the project's rule-named set by default, or (``jmx_exporter_config``)
the bare catch-all rule, and (``jmx_auth``) behind HTTP Basic auth, as many operators run them: the
user ``prometheus``, its password in ``secrets/jmx.password``, the agents holding a salted hash of it.

State: ``<dir>/cluster.json`` (a ``ClusterState``) and each node's ``<dir>/node-N/broker.json`` (a
``localkafka.broker.BrokerState``, so one node can be stopped on its own with ``broker.stop``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from localkafka import broker as one
from localkafka import jars, tls
from localkafka.kafkatools import TOOL_JVM, option, run_java, tool_class
from localkafka.security import (ADMIN, COLLECT_CONFIG, JMX_USER, MECHANISM, USERS, collect_config,
                                 java_client_properties, jmx_basic_auth, make_users, node_security, redact)
from monitor.fileio import strictjson

CLUSTER_FILE = "cluster.json"
SECURITIES = ("plaintext", "sasl_ssl")


@dataclasses.dataclass(frozen=True)
class ClusterState:
    """What a running local cluster is: written to ``cluster.json`` at start."""

    dir: str
    cluster_id: str
    security: str
    bootstrap: str  # every node's client listener, comma-separated
    nodes: list  # node dirs (each with its broker.json)
    kafka_version: str
    started_at: float
    start_seconds: float = 0.0  # from the call of start() to every node serving (and users made)
    ca_pem: str = ""
    truststore: str = ""
    password_files: dict = dataclasses.field(default_factory=dict)  # user -> file (mode 0600)
    admin_properties: str = ""  # a Java client config for Kafka's tools, as admin (mode 0600)
    jmx_exporter_config: str = "jmx-exporter.yaml"  # the agents' rules (localkafka.broker.JMX_EXPORTER_CONFIGS)
    jmx_username: str = ""  # the agents' HTTP Basic auth user ("" : no auth)
    jmx_password_file: str = ""  # and its password (mode 0600); the agents keep a salted hash of it
    collect_config: str = ""  # monitor.yaml for ``collect --config`` (mode 0600, passwords by reference)

    def brokers(self) -> list[one.BrokerState]:
        states = [one.read_state(Path(d)) for d in self.nodes]
        return [s for s in states if s is not None]

    def password(self, user: str) -> str:
        return Path(self.password_files[user]).read_text()

    def to_json(self) -> str:
        return strictjson.dumps(dataclasses.asdict(self), indent=2)


def read_cluster(directory: Path) -> ClusterState | None:
    path = Path(directory) / CLUSTER_FILE
    if not path.exists():
        return None
    try:
        return ClusterState(**json.loads(path.read_text()))
    except (ValueError, TypeError) as exc:
        raise one.BrokerError(f"{path}: not a cluster state file ({exc})") from exc


def _distinct_ports(n: int) -> list[int]:
    ports: list[int] = []
    while len(ports) < n:
        p = one.free_port()
        if p not in ports:
            ports.append(p)
    return ports


def _node_properties(node: int, ports: dict, voters: str, log_dir: Path, security: str, n: int,
                     secure: dict | None) -> str:
    bport, cport = ports[node][0], ports[node][1]
    rf, isr = str(min(3, n)), str(min(2, n))
    client = "SASL_SSL" if security == "sasl_ssl" else "PLAINTEXT"
    props = {
        "process.roles": "broker,controller",
        "node.id": str(node),
        "controller.quorum.voters": voters,
        "listeners": f"{client}://127.0.0.1:{bport},CONTROLLER://127.0.0.1:{cport}",
        "advertised.listeners": f"{client}://127.0.0.1:{bport}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": client,
        "listener.security.protocol.map": (f"CONTROLLER:SSL,{client}:{client}" if secure
                                           else f"CONTROLLER:PLAINTEXT,{client}:{client}"),
        "log.dirs": str(log_dir),
        "num.partitions": "1",
        "default.replication.factor": rf,
        "min.insync.replicas": isr,
        "offsets.topic.replication.factor": rf,
        "offsets.topic.num.partitions": "3",
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": isr,
        "transaction.state.log.num.partitions": "3",
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": isr,
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "false",
        **one.FAST_CLEANER,
    }
    if secure:
        props.update(node_security(node, secure))
    return "".join(f"{k}={v}\n" for k, v in props.items())


def start(directory: Path, *, brokers: int = 3, security: str = "plaintext", heap: str = "512m",
          timeout: float = 180.0, progress=print, jmx_exporter_config: str = "jmx-exporter.yaml",
          jmx_auth: bool = False) -> ClusterState:
    """Format (first time) and start ``brokers`` combined nodes under ``directory``; wait until every
    one serves; with sasl_ssl, make the users and ACLs. Raise ``BrokerError`` if any node fails.

    ``jmx_exporter_config``: the JMX exporter agents' rules (one of localkafka.broker.JMX_EXPORTER_CONFIGS:
    the project's rule-named set, or the bare catch-all rule as many operators run it); ``jmx_auth``: the
    agents answer only to HTTP Basic auth as ``JMX_USER`` with a password of their own (a mode-0600 file,
    ``ClusterState.jmx_password_file``)."""
    t0 = time.monotonic()
    if security not in SECURITIES:
        raise one.BrokerError(f"--security {security!r}: expected one of {', '.join(SECURITIES)}")
    if jmx_exporter_config not in one.JMX_EXPORTER_CONFIGS:
        raise one.BrokerError(f"unknown JMX exporter config {jmx_exporter_config!r}: one of "
                              f"{', '.join(one.JMX_EXPORTER_CONFIGS)}")
    if brokers < 1:
        raise one.BrokerError(f"--brokers {brokers}: expected at least 1")
    directory = Path(directory).resolve()
    previous = read_cluster(directory)
    if previous is not None:
        alive = [b for b in previous.brokers() if one.is_alive(b.pid)]
        if alive:
            raise one.BrokerError(f"a cluster is already running from {directory} (pid {alive[0].pid}, "
                                  f"{previous.bootstrap})")
        if previous.security != security or len(previous.nodes) != brokers:
            raise one.BrokerError(f"{directory} holds a {len(previous.nodes)}-node {previous.security} cluster: "
                                  f"start it with those settings, or use another --dir")
    nodes = list(range(1, brokers + 1))
    if previous is None and any((directory / f"node-{n}" / "data" / "meta.properties").exists() for n in nodes):
        # formatted with a cluster id and admin credential that were never recorded: cannot be joined
        raise one.BrokerError(f"{directory} holds formatted nodes but no {CLUSTER_FILE} (an earlier start failed "
                              f"before recording them): remove {directory} or use another --dir")
    libs = jars.fetch_jars(progress=progress)
    directory.mkdir(parents=True, exist_ok=True)
    flat = _distinct_ports(4 * brokers)
    ports = {n: flat[4 * (n - 1):4 * n] for n in nodes}  # broker, controller, JMX exporter, Jolokia
    voters = ",".join(f"{n}@127.0.0.1:{ports[n][1]}" for n in nodes)

    secure, password_files, tls_files, admin_props = None, {}, None, ""
    background = ThreadPoolExecutor(max_workers=4)
    making_tls = None
    if security == "sasl_ssl":
        secrets_dir = directory / "secrets"
        if previous is None:
            progress("making the CA, keystores and truststore with keytool")
            tls_files = tls.planned(directory / "tls", nodes)  # made while the nodes are formatted
            making_tls = background.submit(tls.make_certificates, directory / "tls", nodes)
            secrets_dir.mkdir(mode=0o700, exist_ok=True)
            for user in USERS:
                password_files[user] = str(tls.write_secret(secrets_dir / f"{user}.password", tls.new_password()))
        else:
            tls_files = tls.planned(directory / "tls", nodes)  # made at the first start
            password_files = dict(previous.password_files)
        store_pw = tls.store_password(tls_files)
        admin_pw = Path(password_files[ADMIN]).read_text()
        secure = {"keystores": tls_files.keystores, "truststore": tls_files.truststore,
                  "store_password": store_pw, "admin_password": admin_pw}
        admin_props = str(tls.write_secret(secrets_dir / "admin.properties",
                                           java_client_properties(tls_files.truststore, store_pw, ADMIN, admin_pw)))

    http_server, jmx_password_file = None, ""
    if jmx_auth:
        secrets_dir = directory / "secrets"
        secrets_dir.mkdir(mode=0o700, exist_ok=True)
        jmx_password_file = (previous.jmx_password_file if previous and previous.jmx_password_file
                             else str(tls.write_secret(secrets_dir / "jmx.password", tls.new_password())))
        http_server = jmx_basic_auth(JMX_USER, Path(jmx_password_file).read_text(), secrets.token_hex(8))

    cluster_id = previous.cluster_id if previous else one.kafka_uuid()
    node_dirs = {n: directory / f"node-{n}" for n in nodes}

    def prepare(n: int) -> None:
        d = node_dirs[n]
        (d / "logs").mkdir(parents=True, exist_ok=True)
        props = d / "server.properties"
        if props.exists():
            props.unlink()
        fd = os.open(props, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # holds the store password
        with os.fdopen(fd, "w") as fh:
            fh.write(_node_properties(n, ports, voters, d / "data", security, brokers, secure))
        (d / "jmx-exporter.yaml").write_text((jars.HERE / jmx_exporter_config).read_text()
                                             + one._http_server_yaml(http_server))
        (d / "log4j2.yaml").write_text((jars.HERE / "log4j2.yaml").read_text())
        if (d / "data" / "meta.properties").exists():
            return
        args = ["format", option("--cluster-id", cluster_id), option("--config", props), "--ignore-formatted"]
        if secure:
            args += ["--add-scram", f"{MECHANISM}=[name={ADMIN},password={secure['admin_password']}]"]
        fmt = run_java(libs, tool_class("kafka-storage"), args,
                       jvm=[*TOOL_JVM, f"-Dkafka.logs.dir={d / 'logs'}",
                            f"-Dlog4j2.configurationFile={d / 'log4j2.yaml'}"])
        if fmt.returncode != 0:
            raise one.BrokerError(f"kafka-storage format of node {n} failed:\n"
                                  + redact(fmt.stdout + fmt.stderr, secure))

    progress(f"preparing {brokers} nodes (cluster {cluster_id}; storage formatted where it is not yet)")
    try:
        with ThreadPoolExecutor(max_workers=brokers) as pool:
            list(pool.map(prepare, nodes))
        if making_tls is not None:
            making_tls.result()
    finally:
        background.shutdown(wait=True)

    procs, states = {}, {}
    for n in nodes:
        d, (bport, cport, jport, jlport) = node_dirs[n], ports[n]
        logs = d / "logs"
        jvm = [
            f"-Xmx{heap}", f"-Xms{heap}", "-XX:+UseG1GC", *one.BROKER_JIT, "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={d / 'log4j2.yaml'}", f"-Dkafka.logs.dir={logs}",
            f"-javaagent:{jars.agent_jar(libs)}=127.0.0.1:{jport}:{d / 'jmx-exporter.yaml'}",
            f"-javaagent:{jars.agent_jar(libs, 'jolokia-agent-jvm')}=host=127.0.0.1,port={jlport},"
            "discoveryEnabled=false",
        ]
        cmd = [jars.java(), *jvm, "-cp", jars.classpath(libs), "kafka.Kafka", str(d / "server.properties")]
        offset = (logs / "server.log").stat().st_size if (logs / "server.log").exists() else 0
        with open(logs / "stdout.log", "ab") as out:
            procs[n] = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True, cwd=d)
        states[n] = one.BrokerState(
            dir=str(d), pid=procs[n].pid, node_id=n, cluster_id=cluster_id,
            bootstrap=f"127.0.0.1:{bport}", controller=f"127.0.0.1:{cport}",
            jmx_url=f"http://127.0.0.1:{jport}/metrics", jolokia_url=f"http://127.0.0.1:{jlport}/jolokia",
            log_dir=str(d / "data"), logs_dir=str(logs), kafka_version=jars.KAFKA_VERSION,
            started_at=time.time(), server_log_offset=offset)
        (d / one.STATE_FILE).write_text(states[n].to_json())
    state = ClusterState(
        dir=str(directory), cluster_id=cluster_id, security=security,
        bootstrap=",".join(states[n].bootstrap for n in nodes), nodes=[str(node_dirs[n]) for n in nodes],
        kafka_version=jars.KAFKA_VERSION, started_at=time.time(),
        ca_pem=tls_files.ca_pem if tls_files else "", truststore=tls_files.truststore if tls_files else "",
        password_files=password_files, admin_properties=admin_props, jmx_exporter_config=jmx_exporter_config,
        jmx_username=JMX_USER if jmx_auth else "", jmx_password_file=jmx_password_file)
    (directory / CLUSTER_FILE).write_text(state.to_json())
    progress(f"starting {brokers} Kafka {jars.KAFKA_VERSION} nodes ({security}) on {state.bootstrap}")
    try:
        deadline = time.monotonic() + timeout
        users = None
        with ThreadPoolExecutor(max_workers=1) as pool:
            for n in nodes:
                one._wait_ready(states[n], procs[n], max(1.0, deadline - time.monotonic()), http_server)
                if secure and previous is None and users is None:
                    # one node serving means a quorum: make the users while the others finish starting
                    users = pool.submit(make_users, libs, state, secure)
            if users is not None:
                users.result()
    except BaseException:
        for p in procs.values():
            one._terminate(p.pid)
        raise
    state = dataclasses.replace(state, start_seconds=round(time.monotonic() - t0, 1),
                                collect_config=str(write_collect_config(state)))
    (directory / CLUSTER_FILE).write_text(state.to_json())
    progress(f"cluster ready in {state.start_seconds:.0f}s: bootstrap {state.bootstrap}")
    return state


def write_collect_config(state: ClusterState) -> Path:
    """``security.collect_config`` of the cluster written to ``<dir>/secrets/monitor.yaml`` with mode 0600
    (the secrets folder is 0700): what a user passes to ``collect --config``. It names where each password
    is, never the password; 0600 all the same, as it says where the cluster's secrets are."""
    import yaml

    folder = Path(state.dir) / "secrets"
    folder.mkdir(mode=0o700, exist_ok=True)
    text = ("# compaction-monitor collect --config this file: the local cluster, as the user monitor (least\n"
            "# privilege); the passwords by reference to their mode-0600 files\n"
            + yaml.safe_dump(collect_config(state), sort_keys=False))
    return tls.write_secret(folder / COLLECT_CONFIG, text)


def stop(directory: Path, progress=print) -> bool:
    """Stop every node of the cluster started from ``directory``; keep data and logs. False if none ran."""
    state = read_cluster(directory)
    if state is None:
        return False
    alive = [b for b in state.brokers() if one.is_alive(b.pid)]
    for b in alive:  # SIGTERM to all first: a controller quorum that loses members one by one waits
        try:
            os.killpg(b.pid, 15)
        except ProcessLookupError:
            pass
    for b in alive:
        one._terminate(b.pid)
    if alive:
        progress(f"stopped {len(alive)} node(s); logs kept under {state.dir}")
    return bool(alive)


def run_tool(state: ClusterState, main: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run one of Kafka's own tools (its main class, e.g. ``org.apache.kafka.tools.MetadataQuorumCommand``)
    against the cluster as admin: ``--bootstrap-server`` and, when secured, ``--command-config`` are
    added before ``args``. Output with the cluster's passwords replaced by ``***``."""
    libs = jars.fetch_jars(progress=lambda *_: None)
    common = [option("--bootstrap-server", state.bootstrap)]
    if state.admin_properties:
        common.append(option("--command-config", state.admin_properties))
    proc = run_java(libs, main, [*common, *args], jvm=TOOL_JVM, timeout=timeout)
    secrets = tuple(state.password(u) for u in state.password_files)
    return subprocess.CompletedProcess(proc.args, proc.returncode, redact(proc.stdout, None, secrets),
                                       redact(proc.stderr, None, secrets))

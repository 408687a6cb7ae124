"""The secured cluster's identities: SCRAM users, the monitor's least-privilege ACLs, the JAAS and
Java client configs, the JMX exporter agents' Basic auth, and the redaction of every password.

Why its own module: who may do what on the ``sasl_ssl`` cluster (issue #22's least privilege) is a
job of its own, read apart from how the nodes are formatted, started and stopped
(localkafka.cluster, which calls these). The TLS material itself comes from localkafka.tls.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from localkafka import tls
from localkafka.jars import BrokerError
from localkafka.kafkatools import TOOL_JVM, option, run_java, tool_class

ADMIN, MONITOR, BLIND = "admin", "monitor", "blind"
USERS = (ADMIN, MONITOR, BLIND)
MECHANISM = "SCRAM-SHA-512"
BROKER_PRINCIPAL = "kafka-broker"
# CN=kafka-broker-N,O=... -> kafka-broker (the controller listener's principal for every node)
BROKER_PRINCIPAL_RULE = "RULE:^CN=(kafka-broker)-[0-9]+,.*$/$1/,DEFAULT"
# What the read-only monitor may do (issue #22's least privilege): (resource options, operations)
MONITOR_ACLS = (
    (["--topic=*", "--cluster"], ["Describe", "DescribeConfigs"]),
    (["--group=*"], ["Describe"]),
)


def node_security(node: int, secure: dict) -> dict:
    """A secured node's ``server.properties`` entries: its keystore, mutual TLS on the controller
    listener (SCRAM cannot serve among controllers), SCRAM over TLS for clients and brokers, the authorizer."""
    ks, pw = secure["keystores"][str(node)], secure["store_password"]
    return {
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": ks,
        "ssl.keystore.password": pw, "ssl.key.password": pw,
        "ssl.truststore.type": "PKCS12", "ssl.truststore.location": secure["truststore"],
        "ssl.truststore.password": pw,
        "listener.name.controller.ssl.client.auth": "required",
        "ssl.principal.mapping.rules": BROKER_PRINCIPAL_RULE,
        "sasl.enabled.mechanisms": MECHANISM,
        "sasl.mechanism.inter.broker.protocol": MECHANISM,
        f"listener.name.sasl_ssl.{MECHANISM.lower()}.sasl.jaas.config": jaas(ADMIN, secure["admin_password"]),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "false",
        "super.users": f"User:{ADMIN};User:{BROKER_PRINCIPAL}",
    }


def jaas(user: str, password: str) -> str:
    return f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" password="{password}";'


def java_client_properties(truststore: str, store_password: str, user: str, password: str) -> str:
    """A Java client's config (Kafka's tools: ``--command-config``) for ``user`` over SASL_SSL."""
    return (f"security.protocol=SASL_SSL\nsasl.mechanism={MECHANISM}\nsasl.jaas.config={jaas(user, password)}\n"
            f"ssl.truststore.type=PKCS12\nssl.truststore.location={truststore}\n"
            f"ssl.truststore.password={store_password}\n")


JMX_USER = "prometheus"
COLLECT_CONFIG = "monitor.yaml"  # in the cluster's secrets folder: what ``collect --config`` reads


def secret_reference(path: str) -> str:
    """A password file as monitor.yaml refers to it (``${directory:DIR:NAME}``: the file's whole content),
    so that the config names where the password is and never holds it."""
    folder, name = os.path.split(path)
    return "${directory:%s:%s}" % (folder, name)


def collect_config(state, user: str = MONITOR, name: str = "local") -> dict:
    """monitor.yaml for ``collect`` against the local cluster ``state`` (a localkafka.cluster.ClusterState)
    as ``user`` (``monitor`` by default: the least-privilege user the ACLs are made for): the bootstrap
    servers, librdkafka's client settings (SASL_SSL, SCRAM, the cluster's CA) and each node's JMX exporter
    page and log dir, with the JMX agents' Basic auth. Every password by reference to its mode-0600 file
    (``secret_reference``), none in the config itself."""
    client = {}
    if state.security == "sasl_ssl":
        client = {"security.protocol": "SASL_SSL", "sasl.mechanism": MECHANISM, "ssl.ca.location": state.ca_pem,
                  "sasl.username": user, "sasl.password": secret_reference(state.password_files[user])}
    auth = ({"jmx_username": state.jmx_username, "jmx_password": secret_reference(state.jmx_password_file)}
            if state.jmx_username else {})
    brokers = [{"id": b.node_id, "jmx_url": b.jmx_url, "log_dirs": [b.log_dir], **auth} for b in state.brokers()]
    return {"clusters": [{"name": name, "bootstrap_servers": state.bootstrap, "client": client,
                          "brokers": brokers}]}


def jmx_basic_auth(username: str, password: str, salt: str) -> dict:
    """The JMX exporter agent's ``httpServer.authentication`` for a user, with a salted SHA-256 of the
    password rather than the password (jmx_exporter 1.0.1's MessageDigestAuthenticator compares the hex of
    SHA-256(salt + ":" + password) with its leading zeros dropped, so the hash is given that way)."""
    digest = hashlib.sha256(f"{salt}:{password}".encode()).hexdigest().lstrip("0")
    return {"authentication": {"basic": {"username": username, "algorithm": "SHA-256", "salt": salt,
                                         "passwordHash": digest}}}


def redact(text: str, secure: dict | None, extra: tuple = ()) -> str:
    """``text`` (a tool's output) with every password of the cluster replaced by ``***``."""
    for secret in [*((secure or {}).get(k) for k in ("admin_password", "store_password")), *extra]:
        if secret:
            text = text.replace(secret, "***")
    return text


def make_users(libs: Path, state, secure: dict) -> None:
    """SCRAM credentials for the users other than admin (``kafka-configs``) and the monitor's ACLs
    (``kafka-acls``), all as admin over SASL_SSL; the tools run side by side. ``state``: the
    localkafka.cluster.ClusterState being started."""
    secrets_dir = Path(state.dir) / "secrets"
    common = [option("--bootstrap-server", state.bootstrap), option("--command-config", state.admin_properties)]
    jobs = []
    for user in (MONITOR, BLIND):
        # the password goes in a (0600) file, not on the command line: --add-config-file
        cfg = tls.write_secret(secrets_dir / f"{user}.scram.properties",
                               f"{MECHANISM}=password={state.password(user)}\n")  # no [..] in the file form
        jobs.append((tool_class("kafka-configs"), [*common, "--alter", "--entity-type=users",
                                                  option("--entity-name", user),
                                                  option("--add-config-file", cfg)], cfg))
    for resources, operations in MONITOR_ACLS:
        jobs.append(("org.apache.kafka.tools.AclCommand",
                     [*common, "--add", option("--allow-principal", f"User:{MONITOR}"), *resources,
                      *(option("--operation", op) for op in operations)], None))

    def run(job):
        main, args, cleanup = job
        try:
            proc = run_java(libs, main, args, jvm=TOOL_JVM, timeout=120)
        finally:
            if cleanup:
                Path(cleanup).unlink(missing_ok=True)
        if proc.returncode != 0:
            raise BrokerError(f"{main} failed ({proc.returncode}):\n"
                              + redact(proc.stdout + proc.stderr, secure, tuple(map(state.password, USERS))))

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        list(pool.map(run, jobs))

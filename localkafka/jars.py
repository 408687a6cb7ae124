"""Kafka's jars for the local broker and its tools: resolved once with Maven, cached, put on a classpath.

Why its own module: Kafka is not on PyPI or in Debian, so the broker's jars (and Kafka's own tools,
and the Prometheus JMX exporter and Jolokia agents) come from Maven Central through ``mvn`` and the
small ``pom.xml`` beside this file. Fetching and locating them is one job, shared by the one-node
broker (localkafka.broker), the cluster (localkafka.cluster) and the tool runners
(localkafka.kafkatools); none of them needs to know how the cache is laid out. The cache lives
outside the work tree (``~/.cache/compaction-monitor`` or ``$COMPACTION_MONITOR_CACHE``) so a
second start downloads nothing.

Which Kafka: the pom's ``kafka.version`` unless a caller names another (``kafka_version``), each version
in a cache folder of its own. A 4.x version resolves through ``pom.xml`` (Maven's ``-Dkafka.version``
overrides the property); a 3.x one through ``pom-zookeeper.xml``: the ZooKeeper its brokers run on, and
the log4j 1.x API (reload4j, as Kafka 3.x's own tarball ships) that its ``log4j.properties`` is written
for. ``family`` says which a version is; the launcher (localkafka.broker) starts it accordingly.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent


class BrokerError(RuntimeError):
    """The local broker could not be fetched, started, or found."""


def _pom_property(name: str, pom_file: str = "pom.xml") -> str:
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    root = ET.parse(HERE / pom_file).getroot()
    node = root.find(f"m:properties/m:{name}", ns)
    if node is None or not node.text:
        raise BrokerError(f"{pom_file} has no <{name}> property")
    return node.text.strip()


KAFKA_VERSION = _pom_property("kafka.version")
JMX_EXPORTER_VERSION = _pom_property("jmx.exporter.version")
JOLOKIA_VERSION = _pom_property("jolokia.version")

# The two families of brokers the launcher starts: 3.x on ZooKeeper (Kafka 3.x's last mode that needs no
# format step, still what Confluent Platform 7.x runs), 4.x in KRaft (the only mode 4.0 kept).
ZOOKEEPER, KRAFT = "zookeeper", "kraft"
POMS = {ZOOKEEPER: "pom-zookeeper.xml", KRAFT: "pom.xml"}
ZOOKEEPER_VERSION = _pom_property("zookeeper.version", POMS[ZOOKEEPER])

# The versions the compatibility tier (tests/compat, one module per version) runs beside the pom's, one of
# each family: ./dev setup fetches their jars with the default's; ./dev test leaves them to the first test
# that starts one (``resolve``'s lock: once across xdist workers)
COMPAT_VERSIONS = ("3.9.1", "4.3.0")
# What ``compaction-monitor broker start --kafka-version`` starts: the versions a real broker in the tests
# proves the monitor on (docs/compatibility.md), no other
SUPPORTED_VERSIONS = tuple(sorted({KAFKA_VERSION, *COMPAT_VERSIONS}, key=lambda v: tuple(map(int, v.split(".")))))


def family(version: str = KAFKA_VERSION) -> str:
    """``ZOOKEEPER`` for a Kafka 3.x version, ``KRAFT`` for 4.x and later; a version that is no
    ``MAJOR.MINOR.PATCH`` of Kafka 3 or later is a BrokerError naming it."""
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts) or int(parts[0]) < 3:
        raise BrokerError(f"Kafka version {version!r}: expected MAJOR.MINOR.PATCH of Kafka 3.0.0 or later")
    return ZOOKEEPER if int(parts[0]) == 3 else KRAFT


def supported(version: str) -> str:
    """``version`` when it is one of ``SUPPORTED_VERSIONS``; a BrokerError of one line naming them otherwise
    (another version may start, but nothing here shows the monitor reads what it writes)."""
    if version in SUPPORTED_VERSIONS:
        return version
    said = ", ".join(f"{v} ({'on ZooKeeper ' + ZOOKEEPER_VERSION if family(v) == ZOOKEEPER else 'KRaft'}"
                     f"{', the default' if v == KAFKA_VERSION else ''})" for v in SUPPORTED_VERSIONS)
    raise BrokerError(f"expected a Kafka version the launcher starts and the tests run: {said}; got {version!r}")


def pom(version: str = KAFKA_VERSION) -> Path:
    """The pom that resolves ``version``'s jars (see the module's doc)."""
    return HERE / POMS[family(version)]


def cache_root() -> Path:
    env = os.environ.get("COMPACTION_MONITOR_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "compaction-monitor"


def libs_dir(version: str = KAFKA_VERSION) -> Path:
    """Folder of every jar a broker of ``version`` and its tools need, keyed by the version and its pom's
    content (the default version's folder is named as before: its cache stays valid)."""
    return cache_root() / f"kafka-{version}-{_pom_digest(version)}" / "libs"


def _pom_digest(version: str = KAFKA_VERSION) -> str:
    import hashlib

    return hashlib.sha1(pom(version).read_bytes()).hexdigest()[:10]


def fetch_jars(progress=print, version: str = KAFKA_VERSION) -> Path:
    """Resolve ``version``'s jars with Maven once; later calls return the cached folder at once."""
    target = libs_dir(version)
    if (target / ".complete").exists():
        return target
    progress(f"resolving Apache Kafka {version} and JMX exporter {JMX_EXPORTER_VERSION} from Maven Central ...")
    resolve(pom(version), target, {"kafka.version": version, "jmx.exporter.version": JMX_EXPORTER_VERSION,
                                   "jolokia.version": JOLOKIA_VERSION})
    progress(f"cached {len(list(target.glob('*.jar')))} jars in {target}")
    return target


def resolve(pom_file: Path, target: Path, properties: dict[str, str], what: str = "",
            timeout: float | None = None) -> Path:
    """``pom_file``'s runtime dependencies (with these Maven ``properties``) copied by ``mvn`` into
    ``target``, whole or not at all (a temporary folder renamed, marked ``.complete``); cached: a complete
    ``target`` is returned at once. ``what`` names the set in an error.

    One resolver at a time per ``target`` (an exclusive lock on ``target``'s ``.lock`` file beside it):
    ``./dev test`` fetches only the default version's jars before pytest starts, and the first test that
    needs another set (a compatibility broker, kafka-streams) resolves it then, possibly on two xdist
    workers at once: the second waits for the first and finds the set complete, where it would have run
    Maven again and replaced the folder under the first one's broker."""
    if (target / ".complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes (or the process dies)
        if (target / ".complete").exists():  # resolved by whoever held the lock before
            return target
        return _resolve_locked(pom_file, target, properties, what, timeout)


def _resolve_locked(pom_file: Path, target: Path, properties: dict[str, str], what: str,
                    timeout: float | None) -> Path:
    mvn = shutil.which("mvn")
    if not mvn:
        raise BrokerError("Maven (`mvn`) is not on PATH: install it (Debian: apt-get install maven)")
    tmp = Path(tempfile.mkdtemp(prefix="libs-", dir=target.parent))
    cmd = [mvn, "-q", "-B", "-f", str(pom_file), *(f"-D{k}={v}" for k, v in properties.items()),
           "dependency:copy-dependencies", f"-DoutputDirectory={tmp}", "-DincludeScope=runtime"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise BrokerError(f"mvn{f' ({what})' if what else ''} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
                          f"{proc.stderr[-3000:]}")
    (tmp / ".complete").write_text(properties.get("kafka.version", "") + "\n")
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)
    return target


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    java = shutil.which("java")
    if not java:
        raise BrokerError("no `java` on PATH and no JAVA_HOME: install a Java 17+ runtime")
    return java


AGENT_PREFIXES = ("jmx_prometheus_javaagent", "jolokia-agent-jvm")


def classpath(libs: Path) -> str:
    jars = sorted(p for p in libs.glob("*.jar") if not p.name.startswith(AGENT_PREFIXES))
    return os.pathsep.join(str(j) for j in jars)


def agent_jar(libs: Path, prefix: str = "jmx_prometheus_javaagent") -> Path:
    found = sorted(libs.glob(f"{prefix}-*.jar"))
    if not found:
        raise BrokerError(f"no {prefix} agent jar in {libs}")
    return found[0]


if __name__ == "__main__":  # pragma: no cover
    print(fetch_jars(), file=sys.stderr)

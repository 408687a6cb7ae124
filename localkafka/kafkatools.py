"""Running Kafka's own command-line tools (kafka-dump-log, kafka-transactions, kafka-configs,
kafka-storage) as Java processes on the cached jars.

Why its own module: the tests, the benchmarks and ``compaction-monitor broker dump`` check this
project's figures against Kafka's own tools, and starting a broker needs ``kafka-storage format``;
none of that is the broker's lifecycle (localkafka.broker) or the jar cache (localkafka.jars). One
runner (``run_java``) and one way to pass an option (``option``) keep every call the same.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from pathlib import Path

from localkafka.jars import KAFKA_VERSION, BrokerError, classpath, fetch_jars, java


# Where each tool's main class lives, by the first Kafka version it is there (newest first): the tools
# moved from core (Scala, ``kafka.*``) to the tools module (Java, ``org.apache.kafka.tools``) release by
# release; a broker of another version is checked with its own version's tool (``kafka_version``).
TOOL_CLASSES = {
    "kafka-dump-log": (("4.0.0", "org.apache.kafka.tools.DumpLogSegments"), ("3.0.0", "kafka.tools.DumpLogSegments")),
    "kafka-configs": (("4.4.0", "org.apache.kafka.tools.ConfigCommand"), ("3.0.0", "kafka.admin.ConfigCommand")),
    "kafka-transactions": (("3.0.0", "org.apache.kafka.tools.TransactionsCommand"),),
    "kafka-storage": (("3.0.0", "kafka.tools.StorageTool"),),
}


def tool_class(tool: str, kafka_version: str = KAFKA_VERSION) -> str:
    """The main class of Kafka's ``tool`` (a ``TOOL_CLASSES`` name) in ``kafka_version``."""
    have = tuple(int(x) for x in kafka_version.split("."))
    for since, cls in TOOL_CLASSES[tool]:
        if have >= tuple(int(x) for x in since.split(".")):
            return cls
    raise BrokerError(f"{tool}: no main class known for Kafka {kafka_version} (known from {since} on)")


# a short-lived tool's JVM (the cluster's users, ACLs and format): a small heap that starts quickly
TOOL_JVM = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dlog4j2.level=WARN"]


def option(name: str, value: object) -> str:
    """``--name=value`` as one argument: a value that starts with ``-`` (a generated id, a topic or
    a path) can then never be read by a Kafka tool as an option of its own."""
    return f"{name}={value}"


def format_storage(libs: Path, props: Path, cluster_id: str, logs_dir: Path, log4j: Path | None = None):
    """Run ``kafka-storage format`` for ``props`` with ``cluster_id``; return the finished process."""
    jvm = [f"-Dkafka.logs.dir={logs_dir}"] + ([f"-Dlog4j2.configurationFile={log4j}"] if log4j else [])
    return run_java(libs, tool_class("kafka-storage"),
                     ["format", option("--cluster-id", cluster_id), option("--config", props), "--ignore-formatted"],
                     jvm=jvm)


def run_java(libs: Path, main: str, args: list[str], jvm: list[str] | None = None, **kw):
    """Run ``main`` on the jars; its JVM maps the classes it loaded last time from a class-data-sharing
    archive (see ``_shared_classes``)."""
    archive = _shared_classes(libs, main, jvm or [])
    if archive.exists():
        cmd = [java(), *(jvm or []), f"-XX:SharedArchiveFile={archive}", *_CDS_QUIET, "-cp", classpath(libs), main, *args]
        return subprocess.run(cmd, capture_output=True, text=True, **kw)
    archive.parent.mkdir(parents=True, exist_ok=True)
    dumped = archive.with_name(f"{archive.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    cmd = [java(), *(jvm or []), f"-XX:ArchiveClassesAtExit={dumped}", *_CDS_QUIET, "-cp", classpath(libs), main, *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
        if proc.returncode == 0 and dumped.exists():
            os.replace(dumped, archive)  # atomic: a run beside this one maps the whole archive or none
        return proc
    finally:
        dumped.unlink(missing_ok=True)


# Every check against Kafka's tools starts a JVM that loads the same few thousand classes from the jars
# (1.5 s of CPU for a dump of one small segment, 0.7 s from an archive of them). A tool's first run
# writes the classes it loaded to an archive (JDK 13+ dynamic CDS), its later runs map it. The archive
# is keyed by the tool, the JVM binary and the classpath and JVM flags (not -D properties); one that no
# longer fits is ignored by the JVM (-Xshare:auto) and the tool runs as without it. Its log lines would
# land in the tool's stdout, which callers parse: off.
_CDS_QUIET = ["-Xlog:cds=off", "-Xlog:cds+dynamic=off"]


def _shared_classes(libs: Path, main: str, jvm: list[str]) -> Path:
    binary = Path(java()).resolve()
    key = "\0".join([str(binary), str(binary.stat().st_mtime_ns), classpath(libs), main,
                     *(f for f in jvm if not f.startswith("-D"))])
    return Path(libs).parent / "cds" / f"{main.rsplit('.', 1)[-1]}-{hashlib.sha1(key.encode()).hexdigest()[:16]}.jsa"



def dump_log(files: list[Path | str], *args: str, timeout: float = 600, kafka_version: str = KAFKA_VERSION) -> str:
    """Run Kafka's own ``kafka-dump-log`` (DumpLogSegments) of ``kafka_version`` on ``files``; return its stdout.

    ``args`` are passed through, e.g. ``"--print-data-log"`` or ``"--deep-iteration"``.
    """
    libs = fetch_jars(progress=lambda *_: None, version=kafka_version)
    argv = [option("--files", ",".join(str(f) for f in files)), *args]
    proc = run_java(libs, tool_class("kafka-dump-log", kafka_version), argv,
                     jvm=["-Xmx512m", "-Dlog4j2.level=WARN"], timeout=timeout)
    if proc.returncode != 0:
        raise BrokerError(f"kafka-dump-log failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def transactions_tool(bootstrap: str, *args: str, timeout: float = 120,
                      kafka_version: str = KAFKA_VERSION) -> subprocess.CompletedProcess:
    """Run Kafka's own ``kafka-transactions.sh`` (TransactionsCommand) against ``bootstrap``, e.g.
    ``find-hanging --broker-id 1`` or ``abort --topic T --partition 0 --start-offset N``."""
    libs = fetch_jars(progress=lambda *_: None, version=kafka_version)
    return run_java(libs, tool_class("kafka-transactions", kafka_version), ["--bootstrap-server", bootstrap, *args],
                     jvm=["-Xmx256m", "-XX:TieredStopAtLevel=1", "-Dlog4j2.level=WARN"], timeout=timeout)


def configs_tool(bootstrap: str, *args: str, timeout: float = 120,
                 kafka_version: str = KAFKA_VERSION) -> subprocess.CompletedProcess:
    """Run Kafka's own ``kafka-configs.sh`` (ConfigCommand) against ``bootstrap``, e.g.
    ``--alter --entity-type brokers --entity-default --add-config log.cleaner.threads=2``."""
    libs = fetch_jars(progress=lambda *_: None, version=kafka_version)
    return run_java(libs, tool_class("kafka-configs", kafka_version), ["--bootstrap-server", bootstrap, *args],
                     jvm=["-Xmx256m", "-XX:TieredStopAtLevel=1", "-Dlog4j2.level=WARN"], timeout=timeout)


def dump_log_command(files: list[str], *args: str) -> list[str]:
    """The java command line of ``kafka-dump-log``, for callers that stream its output."""
    libs = fetch_jars(progress=lambda *_: None)
    return [java(), "-Xmx512m", "-cp", classpath(libs), tool_class("kafka-dump-log"),
            option("--files", ",".join(files)), *args]

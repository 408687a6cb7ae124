"""Data written by real Kafka clients the projection tests did not write themselves: a Kafka Streams
exactly_once_v2 application and the Java transactional producer (``StreamsApp.java`` beside this file
says what each writes).

Kafka Streams comes from Maven Central at the broker's version (``localkafka/pom.xml``'s kafka.version,
passed to ``pom.xml`` here), resolved once into the cache the broker's jars use (``localkafka.jars``);
the Java source is compiled with ``javac`` into the test's temp folder. Every process started here is
stopped here: the application closes when its stdin does, and is killed (its process group) if it has
not exited by then."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path

from localkafka.jars import KAFKA_VERSION, BrokerError, cache_root, java, resolve
from waiting import wait_for

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "StreamsApp.java"
JVM = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dlog4j2.level=WARN"]


def streams_jars(version: str = KAFKA_VERSION) -> Path:
    """kafka-streams ``version`` and what it needs at run time, resolved with Maven once and cached."""
    digest = hashlib.sha1((HERE / "pom.xml").read_bytes()).hexdigest()[:10]
    return resolve(HERE / "pom.xml", cache_root() / f"kafka-streams-{version}-{digest}" / "libs",
                   {"kafka.version": version}, what=f"kafka-streams {version}", timeout=600)


def compile_app(out: Path, version: str = KAFKA_VERSION) -> str:
    """``StreamsApp.java`` compiled into ``out``: the classpath to run it with."""
    libs = streams_jars(version)
    cp = os.pathsep.join([str(out)] + sorted(str(j) for j in libs.glob("*.jar")))
    javac = shutil.which("javac") or str(Path(java()).parent / "javac")
    proc = subprocess.run([javac, "-d", str(out), "-cp", cp, str(SOURCE)], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        raise BrokerError(f"javac {SOURCE.name} failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return cp


def produce(cp: str, bootstrap: str, topic: str, codec: str, transactional_id: str, log: Path) -> None:
    """The Java transactional producer's records into ``topic`` (partition 0) with ``codec``."""
    with open(log, "ab") as out:
        proc = subprocess.run([java(), *JVM, "-cp", cp, "StreamsApp", "produce", bootstrap, topic, codec,
                               transactional_id], stdout=out, stderr=subprocess.STDOUT, timeout=120,
                              start_new_session=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the Java producer ({codec}) exited {proc.returncode}: "
                           f"{log.read_text(errors='replace')[-3000:]}")


class App:
    """A running application: ``kill`` ends it at once (SIGKILL, as a crash), its transaction left open."""

    def __init__(self, proc: subprocess.Popen, log: Path):
        self.proc, self.log = proc, log

    def said(self, text: str) -> bool:
        if self.proc.poll() is not None and text not in self.log.read_text(errors="replace"):
            raise RuntimeError(f"the Streams app exited {self.proc.returncode}: "
                               f"{self.log.read_text(errors='replace')[-3000:]}")
        return text in self.log.read_text(errors="replace")

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


@contextmanager
def streams_app(cp: str, bootstrap: str, app_id: str, input_topic: str, output_topic: str, state_dir: Path,
                log: Path, configs: dict):
    """The Streams application running (until its state is RUNNING), an ``App``; closed (stdin closed,
    then ``KafkaStreams.close``: its last transaction committed) when the block ends, killed if it is not
    gone 60 s later. ``log``: its own output (one file a run); ``configs``: Streams configs (name -> value)."""
    args = [f"{k}={v}" for k, v in configs.items()]
    out = open(log, "ab")
    proc = subprocess.Popen([java(), *JVM, "-cp", cp, "StreamsApp", "streams", bootstrap, app_id, input_topic,
                             output_topic, str(state_dir), *args], stdin=subprocess.PIPE, stdout=out,
                            stderr=subprocess.STDOUT, start_new_session=True)
    app = App(proc, log)
    try:
        wait_for(lambda: app.said("STATE RUNNING"), 120, "the Streams application to reach RUNNING")
        yield app
        if proc.poll() is None:
            proc.stdin.close()
            proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        out.close()

"""A Spark standalone cluster on loopback: one master and N workers, started from PySpark's own
``bin/spark-class`` (inside the pip package: no Spark download), for running the audit against a
real ``spark://`` master on one machine (the tests, ``./dev bench audit --standalone``).

Why it exists: ``local[N]`` runs the tasks in the driver's JVM, so it never shows what a cluster
changes: the code and the Python the executors run (separate JVMs with their own Python workers),
results that travel between processes, and the executors' own view of files. Every port is free
and on 127.0.0.1; :meth:`StandaloneCluster.stop` ends the master, the workers and the executor
JVMs the workers started (each process started in its own process group, ended by its id).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from freeport import free_port

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


def spark_home() -> Path:
    """The installed PySpark's own Spark (``bin/spark-class``, ``jars/``)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


@dataclass
class StandaloneCluster:
    directory: Path
    master_port: int
    master_ui_port: int
    procs: list = field(default_factory=list)  # (name, Popen, log path)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.master_ui_port}"

    def state(self) -> dict:
        """The master's own view (its web UI's ``/json``): workers, their state, cores, memory."""
        with urllib.request.urlopen(f"{self.ui_url}/json", timeout=5) as r:
            return json.load(r)

    def alive_workers(self) -> int:
        try:
            return sum(1 for w in self.state().get("workers", []) if w.get("state") == "ALIVE")
        except OSError:
            return 0

    def logs(self) -> str:
        return "\n".join(f"--- {name} ({log}):\n{_tail(log)}" for name, _, log in self.procs)

    def stop(self, timeout: float = 30.0) -> None:
        """Workers first (each ends its executors), then the master; each by its process group."""
        for name, proc, _ in reversed(self.procs):
            if proc.poll() is None:
                _signal_group(proc, signal.SIGTERM)
        for name, proc, _ in reversed(self.procs):
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait(timeout)
            _signal_group(proc, signal.SIGKILL)  # an executor JVM left in the group
        self.procs.clear()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: Path, n: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError as exc:
        return f"(unreadable: {exc})"


def _env(directory: Path) -> dict:
    env = dict(os.environ)
    env.update({"SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(directory),
                "SPARK_NO_DAEMONIZE": "1",
                # the master's REST submission server listens on the fixed port 6066 by default: off
                "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false"})
    return env


def _spawn(name: str, args: list[str], directory: Path, env: dict) -> tuple:
    log = directory / f"{name}.log"
    fh = open(log, "wb")
    try:
        proc = subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], stdout=fh,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=directory,
                                start_new_session=True)
    finally:
        fh.close()
    return name, proc, log


def start(directory: Path, workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 120.0,
          progress=lambda m: None) -> StandaloneCluster:
    """A master and ``workers`` workers (``cores`` cores and ``memory`` each) on free loopback ports;
    returns once the master lists every worker ALIVE. On failure everything started is stopped and
    RuntimeError carries the processes' logs."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    env = _env(directory)
    cluster = StandaloneCluster(directory, free_port(), free_port())
    try:
        progress(f"Spark master on {cluster.master_url} (web UI {cluster.ui_url})")
        cluster.procs.append(_spawn("master", [MASTER_CLASS, "--host", "127.0.0.1", "--port", str(cluster.master_port),
                                               "--webui-port", str(cluster.master_ui_port)], directory, env))
        _wait(lambda: _up(cluster), timeout, "the master's web UI", cluster)
        for i in range(workers):
            work = directory / f"worker-{i}"
            work.mkdir(exist_ok=True)
            cluster.procs.append(_spawn(f"worker-{i}", [
                WORKER_CLASS, cluster.master_url, "--host", "127.0.0.1", "--port", str(free_port()),
                "--webui-port", str(free_port()), "--cores", str(cores), "--memory", memory,
                "--work-dir", str(work)], directory, env))
        _wait(lambda: cluster.alive_workers() >= workers, timeout, f"{workers} workers registered", cluster)
        progress(f"{workers} workers registered ({cores} core(s), {memory} each)")
        return cluster
    except BaseException:
        cluster.stop()
        raise


def _up(cluster: StandaloneCluster) -> bool:
    try:
        cluster.state()
        return True
    except OSError:
        return False


def _wait(condition, timeout: float, what: str, cluster: StandaloneCluster) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        dead = [name for name, p, _ in cluster.procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            why = f"{', '.join(dead)} exited" if dead else f"not within {timeout:g}s"
            raise RuntimeError(f"Spark standalone: waiting for {what}: {why}\n{cluster.logs()}")
        time.sleep(0.2)  # the poll interval

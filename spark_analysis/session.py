"""The audit's SparkSession, and a check that the executors can run the audit's code before any work.

Why apart from the job: the tests, the benches and the job start Spark the same way (this
interpreter's Python for local workers, Spark's own settings on a cluster), and a cluster whose
executors lack compaction-monitor must fail in one line naming their Python, not mid-task."""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from pathlib import Path

from spark_analysis.failure import first_line
from spark_analysis.progress import log

# Spark's Kafka source, resolved from Maven Central through spark.jars.packages. Its 4.3.0 build is
# not published there (yet): 4.1.1 is, and reads topics under Spark 4.3 (the tests do so).
# Override with AUDIT_SPARK_KAFKA_PACKAGE, e.g. to match a cluster's Spark.
SPARK_KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.1"


def session(master: str | None, app: str = "kafka-compaction-audit", kafka_source: bool = False, conf: dict | None = None):
    """A SparkSession; in local mode the Python workers use this interpreter (its packages). On a
    cluster the executors' Python is ``spark.pyspark.python`` / ``PYSPARK_PYTHON`` (Spark's own
    settings), in which compaction-monitor must be installed; ``AUDIT_SHIP_CODE=1`` ships its sources
    instead (the pure-Python decoder: a zip cannot carry the C extension)."""
    from pyspark.sql import SparkSession

    local = master is None or master.startswith("local")
    if local:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    b = SparkSession.builder.appName(app)
    if master:
        b = b.master(master)
    b = (b.config("spark.ui.showConsoleProgress", "true")
          .config("spark.sql.shuffle.partitions", os.environ.get("AUDIT_SHUFFLE_PARTITIONS", "16"))
          .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if local:
        b = b.config("spark.ui.enabled", "false").config("spark.driver.memory", "2g")
        # the JVM only moves the tasks' few rows here (the records are read and folded in Python), yet
        # its C2 compiler took 1.5 to 3 CPU-s an audit compiling each query's generated code anew,
        # more than the JVM's own work, on the same cores as the tasks: C1 alone compiles cheaply
        b = b.config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    conf = dict(conf or {})
    packages = [p for p in conf.pop("spark.jars.packages", "").split(",") if p]
    if kafka_source:
        packages.insert(0, os.environ.get("AUDIT_SPARK_KAFKA_PACKAGE", SPARK_KAFKA_PACKAGE))
    if packages:
        b = b.config("spark.jars.packages", ",".join(packages))
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    # Spark's log4j lines (every failed task's stack trace, hundreds of lines for one full disk) are off:
    # a failure is told in one line (spark_analysis.failure); AUDIT_SPARK_LOG_LEVEL=WARN shows them again
    spark.sparkContext.setLogLevel(os.environ.get("AUDIT_SPARK_LOG_LEVEL", "OFF"))
    if not local and os.environ.get("AUDIT_SHIP_CODE", "0") == "1":
        # a fallback for executors without the package: its sources, run by the pure-Python decoder
        # (several times slower than the C one; a zip cannot carry an extension)
        spark.sparkContext.addPyFile(_code_zip())
    return spark


def settle_worker() -> None:
    """Called first in the audit's tasks, in the Python worker: ``gc.freeze()``, once per worker.

    Why: Spark's daemon runs ``gc.collect()`` after every task of a reused Python worker
    (``pyspark/daemon.py``), and with pyspark, pyarrow, numpy and the audit's modules loaded that full
    collection walks every object they made, each time: at the bench's sizes as long as a quarter of
    a task's fold (py-spy on the workers). Frozen, what the imports made is out of the collector's
    reach (it is never garbage: modules stay loaded), and the collection after a task walks only what
    the task left behind."""
    import gc

    global _SETTLED
    if not _SETTLED:
        gc.freeze()
        _SETTLED = True


_SETTLED = False


class ExecutorError(ValueError):
    """The executors cannot run the audit's code: their Python named, with what to do."""


def check_executors(spark, progress=log) -> dict:
    """One small job (a task per core) that imports compaction-monitor in the executors' Python and
    reports where from and which record decoder it has, before the audit does any work: executors
    without the package fail here with ExecutorError naming their Python, not in the middle of a
    task. Returns {python, package file, decoder} -> tasks. Local masters run this interpreter: skipped."""
    sc = spark.sparkContext
    if sc.master.startswith("local"):
        return {}

    def probe(_):  # nested: pickled by value, so it unpickles where the package is missing too
        import sys

        try:
            from monitor.kafka.record import v2
        except ImportError as exc:
            return [(sys.executable, None, f"{exc.__class__.__name__}: {exc}")]
        return [(sys.executable, v2.__file__.rsplit("/monitor/", 1)[0], v2.decoder())]

    n = max(sc.defaultParallelism, 1)
    try:
        seen = sc.parallelize(range(n), n).mapPartitions(probe).collect()
    except Exception as exc:  # noqa: BLE001 - a Py4J error: the executors' Python could not start
        raise ExecutorError(f"the executors of {sc.master} cannot run Python ({first_line(exc)[:300]}); "
                            "set spark.pyspark.python (or PYSPARK_PYTHON) to a Python that exists where they "
                            "run") from None
    counts: dict = {}
    for key in seen:
        counts[key] = counts.get(key, 0) + 1
    for (python, where, decoder), tasks in sorted(counts.items(), key=str):
        if where is None:
            raise ExecutorError(
                f"the executors' Python ({python}) cannot import compaction-monitor ({decoder}): install it "
                "there (pip install '.[audit]' from a clone of the project, or its wheel; on YARN a packed venv, see "
                "deploy/spark-submit.sh) and point spark.pyspark.python at it, or set AUDIT_SHIP_CODE=1 to "
                "ship its sources (pure-Python decoder, several times slower)")
        progress(f"executors: {python}, compaction-monitor from {where}, {decoder} record decoder")
        if decoder != "c":
            progress(f"warning: the executors' compaction-monitor ({where}) has no C decoder: the audit runs "
                     "several times slower (build it where a compiler exists: pip install .)")
    return counts


def _code_zip() -> str:
    """Ship ``monitor`` and ``spark_analysis`` to executors that do not have them installed."""
    root = Path(__file__).resolve().parent.parent
    out = Path(tempfile.mkdtemp()) / "compaction_monitor_code.zip"
    with zipfile.ZipFile(out, "w") as z:
        for pkg in ("monitor", "spark_analysis"):
            for f in (root / pkg).rglob("*.py"):
                z.write(f, f.relative_to(root))
    return str(out)

"""The audit job: ``compaction-monitor audit ...`` locally, or unchanged under ``spark-submit``:

    spark-submit --master yarn --archives venv.tar.gz#venv --conf spark.pyspark.python=./venv/bin/python \\
        spark_analysis/job.py --input hdfs://nn/kafka-copy/ --out hdfs://nn/audits/

The executors import compaction-monitor installed in their Python (so they run its C record decoder);
before any work a one-task probe checks they can (``check_executors``). ``s3a:`` inputs and outputs
take the endpoint and credentials of the standard AWS variables (``spark_analysis.s3``); each bucket
is checked before Spark starts.

Each run writes a new folder ``<out>/run-<UTC time>/`` (nothing earlier is overwritten) with Parquet
tables (partitions, topics, tombstone_buckets, top_keys, top_producers, faults, replicas), ``summary.json``, a
self-contained ``report.html`` and the completion marker ``_SUCCESS`` (``monitor.auditrun``: written
under a hidden name, renamed when whole), and points ``<out>/latest.json`` at it. ``--out`` is checked
before Spark starts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from monitor.auditrun import LATEST, MARKER, REPORT, RUN_PREFIX, SUMMARY, TABLES, TEMP_PREFIX, marker_text
from monitor import strictjson
from monitor.valuecheck import bootstrap_problem, flag_type, number_type
from spark_analysis import failure

# Spark's Kafka source, resolved from Maven Central through spark.jars.packages. Its 4.3.0 build is
# not published there (yet): 4.1.1 is, and reads topics under Spark 4.3 (the tests do so).
# Override with AUDIT_SPARK_KAFKA_PACKAGE, e.g. to match a cluster's Spark.
SPARK_KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.1"


def log(msg: str) -> None:
    print(f"[audit] {msg}", file=sys.stderr, flush=True)


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
            from monitor.record import v2
        except ImportError as exc:
            return [(sys.executable, None, f"{exc.__class__.__name__}: {exc}")]
        return [(sys.executable, v2.__file__.rsplit("/monitor/", 1)[0], v2.decoder())]

    n = max(sc.defaultParallelism, 1)
    try:
        seen = sc.parallelize(range(n), n).mapPartitions(probe).collect()
    except Exception as exc:  # noqa: BLE001 - a Py4J error: the executors' Python could not start
        raise ExecutorError(f"the executors of {sc.master} cannot run Python ({_first_line(exc)[:300]}); "
                            "set spark.pyspark.python (or PYSPARK_PYTHON) to a Python that exists where they "
                            "run") from None
    counts: dict = {}
    for key in seen:
        counts[key] = counts.get(key, 0) + 1
    for (python, where, decoder), tasks in sorted(counts.items(), key=str):
        if where is None:
            raise ExecutorError(
                f"the executors' Python ({python}) cannot import compaction-monitor ({decoder}): install it "
                "there (pip install 'kafka-compaction-monitor[audit]'; on YARN a packed venv, see "
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


def list_inputs(kind: str, inputs: list[str]) -> list[tuple[str, int]]:
    """The files a run will read, listed once on the driver (names and sizes only).
    Segments must sit in ``<topic>-<partition>`` folders; -delete/-future/-stray folders are left out."""
    from monitor.topicconfig import NOT_CLEANED_BY_LOG_CLEANER
    from spark_analysis.arrow_rows import topic_partition
    from monitor.regularfile import NotRegularFile
    from spark_analysis.fs import list_files

    suffix = (".log",) if kind == "segments" else (".txt", ".dump", ".out")
    files, refused = [], []
    for uri in inputs:
        try:
            files += list_files(uri, suffix, refused)
        except NotRegularFile as exc:  # an input named on the command line: a usage error
            raise ValueError(str(exc)) from None
    for why in refused:
        log(f"left out {why}")
    if kind == "segments":
        files = kafka_segments(files, topic_partition)
        kept = []
        for uri, size in files:
            topic, _ = topic_partition(uri)
            if topic is None or topic in NOT_CLEANED_BY_LOG_CLEANER:
                continue
            kept.append((uri, size))
        files = kept
    if not files:
        what = "segment files (<topic>-<partition>/*.log)" if kind == "segments" else "dump files (*.txt, *.dump, *.out)"
        raise FileNotFoundError(f"no {what} under {', '.join(inputs)}")
    return files


def kafka_segments(files: list[tuple[str, int]], topic_partition) -> list[tuple[str, int]]:
    """The listed ``.log`` files that Kafka would load as segments, by the log-dir walk's rule
    (``monitor.kafkanames``): a name Kafka never writes (``5.log``, ``².log``) is left out, and so is
    every folder of a partition that two folders of one log dir load as (``orders-3`` and ``orders-03``:
    Kafka refuses to start), each with one line naming it."""
    import posixpath

    from monitor.kafkanames import printable, stray_reason
    from spark_analysis.arrow_rows import segment_base

    folders: dict = {}
    for uri, _ in files:
        tp = topic_partition(uri)
        if tp[0] is not None:
            folders.setdefault((posixpath.dirname(posixpath.dirname(uri)), tp), set()).add(posixpath.dirname(uri))
    dups = {k: sorted(fs) for k, fs in folders.items() if len(fs) > 1}
    for (d, (topic, partition)), fs in sorted(dups.items()):
        log(printable(f"left out {d}: duplicate log directories for {topic}-{partition}: "
                      f"{', '.join(posixpath.basename(f) for f in fs)} all load as it (Kafka's LogManager refuses "
                      "to start with both); delete the one that is not this replica"))
    dup = {f for fs in dups.values() for f in fs}
    kept = []
    for uri, size in files:
        if posixpath.dirname(uri) in dup:
            continue
        if segment_base(uri) is None:
            log(printable(f"left out {uri}: ignored: {stray_reason(posixpath.basename(uri)) or 'not a segment name'}"))
            continue
        kept.append((uri, size))
    return kept


def load_records(spark, kind: str, inputs: list[str], *, bootstrap: str | None = None, topics: list[str] | None = None,
                 kafka_options: dict | None = None, target_bytes: int | None = None):
    from spark_analysis.sources import register

    register(spark)
    if kind in ("segments", "dumps"):
        files = list_inputs(kind, inputs)
        reader = spark.read.format("kafka-segments" if kind == "segments" else "kafka-dumps")
        reader = reader.option("files", strictjson.dumps(files))
        if target_bytes:
            reader = reader.option("targetBytes", str(target_bytes))
        return reader.load()
    if kind == "topic":
        from spark_analysis.topic_input import read_topic

        return read_topic(spark, bootstrap, topics or inputs, kafka_options or {})
    raise ValueError(f"unknown input kind {kind!r}")


def read_checkpoints(inputs: list[str]) -> tuple[dict, dict]:
    """cleaner-offset-checkpoint and log-start-offset-checkpoint of every log dir under the inputs, in
    one map each (a partition in several log dirs: the last log dir's, in name order; the audit takes
    each replica's from its own log dir, ``read_log_dirs``)."""
    cleaner, starts = {}, {}
    for info in read_log_dirs(inputs).values():
        cleaner.update(info.cleaner)
        starts.update(info.starts)
    return cleaner, starts


def read_log_dirs(inputs: list[str]) -> dict:
    """log dir -> ``replicas.LogDirInfo`` of every log dir under the inputs: its cleaner-offset-checkpoint
    and log-start-offset-checkpoint entries and the broker id of its meta.properties."""
    from monitor.checkpoint import CheckpointError, read_checkpoint_stream
    from monitor.logdir import MAX_META_BYTES, meta_node_id, parse_properties
    from spark_analysis.fs import filesystem, list_files
    from spark_analysis.replicas import LogDirInfo

    dirs: dict = {}
    names = ("cleaner-offset-checkpoint", "log-start-offset-checkpoint", "meta.properties")
    for uri in inputs:
        refused = []
        try:
            found = list_files(uri, names, refused)
        except (FileNotFoundError, OSError):
            continue
        for why in refused:
            log(f"ignoring {why}")
        for f, _ in found:
            name = f.rsplit("/", 1)[-1]
            if name not in names:
                continue
            try:  # in bounded pieces: a damaged file costs neither memory nor a line of megabytes
                fs, path = filesystem(f)
                with fs.open_input_stream(path) as fh:
                    if name == "meta.properties":
                        raw = fh.read(MAX_META_BYTES + 1)
                        text = raw.decode("utf-8", "replace") if len(raw) <= MAX_META_BYTES else ""
                    else:
                        entries = read_checkpoint_stream(fh.read, f)
            except OSError:
                continue
            except CheckpointError as exc:
                log(f"ignoring {exc}")
                dirs.setdefault(f.rsplit("/", 1)[0], LogDirInfo())  # the log dir is there, its checkpoint is not
                continue
            info = dirs.setdefault(f.rsplit("/", 1)[0], LogDirInfo())
            if name == "meta.properties":
                info.broker = meta_node_id(parse_properties(text))
                continue
            (info.cleaner if name == "cleaner-offset-checkpoint" else info.starts).update(entries)
    return dict(sorted(dirs.items()))


CLEANER_FLAGS = {"log.cleaner.threads": "cleaner_threads", "log.cleaner.dedupe.buffer.size": "dedupe_buffer_size",
                 "log.cleaner.io.buffer.load.factor": "load_factor",
                 "log.cleaner.io.max.bytes.per.second": "io_max_bytes_per_second"}


def cleaner_params(args, throughput_from_log: float | None, broker_settings: dict | None = None,
                   settings: dict | None = None):
    """The cleaner model of the run, and of each broker: flags > the broker's own settings (admin API,
    config file; ``broker_settings``: broker id -> Kafka name -> BrokerSetting) > Kafka's defaults, each
    value's source kept (``CleanerParams.sources``). The run's per-partition estimate uses the lowest
    broker id's settings (all brokers' when they agree); the per-broker wall clock uses each broker's.
    Without brokers, ``settings`` (the config file's, or unknown with the admin API's failure) are the
    run's. Returns (the run's params, {broker id: params})."""
    from monitor.estimate import DEFAULT_THROUGHPUT, CleanerParams, params_for

    if args.throughput:
        tp, src = args.throughput * (1 << 20), "given"
    elif throughput_from_log:
        tp, src = throughput_from_log, "learned from log-cleaner.log"
    else:
        tp, src = DEFAULT_THROUGHPUT, "default"
    base = CleanerParams(hash_bytes=args.hash_bytes, throughput=tp, throughput_source=src)
    flags = {k: getattr(args, a) for k, a in CLEANER_FLAGS.items()}
    brokers = {str(b): params_for(base, settings, flags) for b, settings in (broker_settings or {}).items()}
    first = min(brokers, key=lambda b: (len(b), b)) if brokers else None
    return (brokers[first] if first is not None else params_for(base, settings, flags)), brokers


def restore_throughput(args, config: float | None):
    """The restore throughput of the run (``monitor.restore.resolve``): the flag, monitor.yaml's, the
    measurement file (``--restore-measurement``, else the checkout's bench/out/restore.json), else unknown."""
    from monitor.restore import MEASUREMENT, resolve

    return resolve(getattr(args, "restore_throughput", None), config,
                   getattr(args, "restore_measurement", None) or MEASUREMENT)


class OutputError(ValueError):
    """The output folder cannot take a run: named, with why (before Spark starts, or when a write fails)."""


def check_output(out: str) -> None:
    """``--out`` is a folder (or can be made one) that this process can write: made if missing, then a
    probe file written and removed. Done before Spark starts, so a bad ``--out`` costs no Spark work."""
    import pyarrow.fs as pafs

    from spark_analysis.fs import filesystem, local_problem

    if (why := local_problem(out, missing_ok=True)) is not None:  # a symlink loop or a dangling link, named so
        raise OutputError(f"--out {why}")
    try:
        fs, path = filesystem(out)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.File:
            raise OutputError(f"--out {out}: is a file; expected a folder (each run adds run-<time>/ under it)")
        if info.type == pafs.FileType.NotFound:
            fs.create_dir(path, recursive=True)
        probe = f"{path.rstrip('/')}/{TEMP_PREFIX}probe-{os.getpid()}"
        with fs.open_output_stream(probe) as fh:
            fh.write(b"")
        fs.delete_file(probe)
    except OutputError:
        raise
    except (OSError, ValueError) as exc:  # pyarrow's errors are OSError subclasses (ArrowIOError)
        raise OutputError(f"--out {out}: cannot write there ({_first_line(exc)})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return text.splitlines()[0]


def _new_run_name(out: str, name: str) -> str:
    """``name``, or ``name-2``, ``-3``... when a run of the same second exists: a run never fails on,
    nor writes into, an earlier one (the suffixes sort after the plain name, so runs stay in order)."""
    import pyarrow.fs as pafs

    from spark_analysis.fs import filesystem

    fs, path = filesystem(out.rstrip("/"))
    candidate, n = name, 1
    while (fs.get_file_info(f"{path}/{candidate}").type != pafs.FileType.NotFound
           or fs.get_file_info(f"{path}/{TEMP_PREFIX}{candidate}").type != pafs.FileType.NotFound):
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def _write_atomically(fs, path: str, data: bytes) -> None:
    """A file under a temporary name, then renamed: a reader sees the old content or the new, whole."""
    tmp = path.rsplit("/", 1)
    tmp = f"{tmp[0]}/{TEMP_PREFIX}{tmp[1]}-{os.getpid()}"
    with fs.open_output_stream(tmp) as fh:
        fh.write(data)
    fs.move(tmp, path)


def write_outputs(spark, result, out: str, run_name: str | None = None) -> str:
    """The run's tables, ``summary.json``, ``report.html`` and marker under ``<out>/.tmp-<run>``, renamed
    to ``<out>/<run>`` once whole; then ``latest.json``. On failure the temporary folder is removed
    (best effort) and OutputError names what failed: nothing left looks like a finished run."""
    import pyarrow.fs as pafs

    from spark_analysis.earlier import earlier_run
    from spark_analysis.fs import filesystem, move_dir
    from spark_analysis.report import render_report

    run = run_name or _new_run_name(out, RUN_PREFIX + dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ"))
    root = out.rstrip("/")
    fs, root_path = filesystem(root)
    tmp_uri, tmp_path = f"{root}/{TEMP_PREFIX}{run}", f"{root_path}/{TEMP_PREFIX}{run}"
    final_path = f"{root_path}/{run}"
    tables = dict(zip(TABLES, (result.partitions, result.topics, result.tombstone_buckets, result.top_keys,
                               result.top_producers, result.faults, result.replicas)))
    try:
        for name, df in tables.items():
            df.coalesce(1).write.mode("errorifexists").parquet(f"{tmp_uri}/{name}")
        topics = [r.asDict() for r in result.topics.collect()]
        parts = [r.asDict() for r in result.partitions.collect()]
        buckets = [r.asDict() for r in result.tombstone_buckets.collect()]
        keys = [r.asDict() for r in result.top_keys.collect()]
        replica_rows = [r.asDict() for r in result.replicas.collect()]
        summary = {**result.summary, "run": run, "tables": list(tables)}
        with fs.open_output_stream(f"{tmp_path}/{SUMMARY}") as fh:
            fh.write(strictjson.dumps(summary, indent=2, default=str).encode())
        with fs.open_output_stream(f"{tmp_path}/{REPORT}") as fh:
            fh.write(render_report(summary, topics, parts, buckets, keys, replica_rows,
                                   earlier=earlier_run(fs, root_path, run)).encode())
        files = {f.path[len(tmp_path) + 1:]: f.size
                 for f in fs.get_file_info(pafs.FileSelector(tmp_path, recursive=True)) if f.type == pafs.FileType.File}
        with fs.open_output_stream(f"{tmp_path}/{MARKER}") as fh:  # last: the run is whole
            fh.write(marker_text(run, summary["generated_at_ms"], files).encode())
        move_dir(fs, tmp_path, final_path, last=MARKER)
    except BaseException as exc:  # Ctrl-C too: the temporary folder goes either way
        try:
            fs.delete_dir(tmp_path)
        except OSError:
            pass
        if not isinstance(exc, Exception):
            raise
        raise OutputError(f"--out {out}: writing run {run} failed: {failure.describe(exc)} at {tmp_uri}; "
                          "nothing was kept") from exc
    base = f"{root}/{run}"
    try:
        _write_atomically(fs, f"{root_path}/{LATEST}", strictjson.dumps(
            {"run": run, "path": base, "generated_at_ms": summary["generated_at_ms"]}).encode())
    except OSError as exc:
        raise OutputError(f"--out {out}: run {run} is complete, but {LATEST} could not be updated "
                          f"({_first_line(exc)})") from None
    return base


def build_parser(parser_class=argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The audit's options; ``parser_class``: the command line's (its usage errors are one line)."""
    ap = parser_class(prog="compaction-monitor audit",
                                 description="Spark audit of Kafka log segments, kafka-dump-log dumps or a live topic.")
    ap.add_argument("--input", action="append", required=True,
                    help="log dir tree or segment file (segments), dump text files (dumps), or topic name (topic); "
                         "file:, hdfs: or s3a: paths; repeatable")
    ap.add_argument("--input-kind", choices=["segments", "dumps", "topic"], default="segments")
    ap.add_argument("--out", required=True, help="output folder; each run adds run-<time>/ under it")
    ap.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    ap.add_argument("--config", help="monitor.yaml: topic configs under clusters[0].topics, bootstrap servers")
    ap.add_argument("--bootstrap-servers", type=flag_type(bootstrap_problem, str), help="for --input-kind topic (and topic configs via the admin API)")
    ap.add_argument("--cleaner-log", action="append", default=[],
                    help="a broker's log-cleaner.log: calibrates the cleaner's throughput")
    ap.add_argument("--throughput", type=number_type("a finite number of MiB/s above 0", above=0), help="the cleaner's throughput in MiB/s (overrides the log)")
    ap.add_argument("--cleaner-threads", type=number_type("a whole number, at least 1", whole=True, minimum=1),
                    help="log.cleaner.threads (default: the brokers' from the admin API, else Kafka's 1)")
    ap.add_argument("--dedupe-buffer-size", type=number_type("a whole number of bytes, at least 1", whole=True,
                                                             minimum=1),
                    help="log.cleaner.dedupe.buffer.size (default: the brokers', else Kafka's 134217728)")
    ap.add_argument("--load-factor", type=number_type("a finite number above 0, at most 1", above=0, maximum=1),
                    help="log.cleaner.io.buffer.load.factor (default: the brokers', else Kafka's 0.9)")
    ap.add_argument("--hash-bytes", type=number_type("a whole number of bytes, at least 1", whole=True, minimum=1),
                    default=16, help="16 for MD5 (Kafka up to 4.3), 32 for SHA-256")
    ap.add_argument("--io-max-bytes-per-second", type=number_type("a finite number above 0", above=0),
                    help="log.cleaner.io.max.bytes.per.second (default: the brokers', else no throttle)")
    ap.add_argument("--restore-throughput", type=number_type("a finite number above 0", above=0), metavar="BYTES_PER_SECOND",
                    help="a consumer's restore throughput for each compacted topic's restore time (default: "
                         "monitor.yaml's restore_throughput_bytes_per_second, else ./dev bench restore's measurement)")
    ap.add_argument("--restore-measurement", default=None, metavar="PATH",
                    help="the measurement file of ./dev bench restore (default: bench/out/restore.json of the checkout)")
    ap.add_argument("--top", type=number_type("a whole number, at least 1", whole=True, minimum=1), default=20, help="top keys / producers per topic")
    ap.add_argument("--bucket", choices=["minute", "hour", "day", "auto"], default="auto",
                    help="tombstone build-up bucket")
    ap.add_argument("--min-free-bytes", type=number_type("a whole number of bytes", whole=True, minimum=0),
                    default=failure.MIN_FREE_BYTES, metavar="BYTES",
                    help="free space --out must have before Spark starts (default: %(default)s, 64 MiB: the "
                         "run's tables and report; 0: no check)")
    ap.add_argument("--now-ms", type=number_type("a whole number of ms", whole=True, minimum=0), help=argparse.SUPPRESS)
    return ap


BUCKETS = {"minute": 60_000, "hour": 3_600_000, "day": 86_400_000, "auto": None}


def run(args, topic_configs: dict | None = None, spark=None, broker_settings: dict | None = None,
        replicas: dict | None = None, settings: dict | None = None, leaders: dict | None = None,
        restore_config: float | None = None, file_configs: dict | None = None, admin_asked: bool = False,
        admin=None, admin_error: str | None = None) -> tuple[str, dict]:
    """Run the audit; returns the run folder and the summary. ``topic_configs``: topic -> TopicConfig
    (the admin API's); ``file_configs``: topic -> monitor.yaml's values; ``admin_asked``: an admin API
    was asked (``admin`` its answer, else ``admin_error`` why none): a topic it did not give has its
    config unknown (``AuditInputs.effective``);
    ``broker_settings``: broker id -> the broker's cleaner settings (``monitor.topicconfig.BrokerSetting``
    by Kafka name); ``replicas``: (topic, partition) -> broker ids, for each broker's wall clock;
    ``settings``: the cleaner settings when no broker's are known; ``leaders``: (topic, partition) -> the
    leader's broker id (the admin API's), to audit its replica when the log dirs hold several;
    ``restore_config``: monitor.yaml's restore throughput (``monitor.restore.resolve`` puts the flag above
    it, the measurement below)."""
    from monitor.cleanerlog import learned_throughput, parse_cleaner_log
    from spark_analysis import s3
    from spark_analysis.fs import local_problem, read_text

    paths = (args.input if args.input_kind != "topic" else []) + [args.out] + list(args.cleaner_log)
    s3.check_buckets(paths)  # a missing bucket or refused credentials: named, before any Spark work
    t0 = time.time()
    stats = []
    for f in args.cleaner_log:
        text = read_text(f)
        if text is None:
            why = local_problem(f)
            raise FileNotFoundError(f"{f}: cannot read the cleaner log" + (f" ({why.split(': ', 1)[1]})" if why else ""))
        stats += parse_cleaner_log(text.splitlines())
    params, brokers = cleaner_params(args, learned_throughput(stats), broker_settings, settings)
    restore = restore_throughput(args, restore_config)
    if args.input_kind in ("segments", "dumps"):
        list_inputs(args.input_kind, args.input)  # a path with nothing to read fails here, before Spark starts
    check_output(args.out)  # so does an --out that cannot take a run
    if (why := failure.space_problem(args.out, getattr(args, "min_free_bytes", failure.MIN_FREE_BYTES))) is not None:
        raise OutputError(why)  # ... or has no room for one (a full disk, before 30 s of Spark work)
    try:
        return _run_spark(args, spark, paths, t0, params, brokers, restore, topic_configs=topic_configs,
                          replicas=replicas, leaders=leaders, file_configs=file_configs, admin_asked=admin_asked,
                          admin=admin, admin_error=admin_error)
    except Exception as exc:
        if failure.is_spark_failure(exc):  # the JVM's stack traces, told in one line
            raise SparkFailure(f"Spark failed: {failure.describe(exc)}") from None
        raise


class SparkFailure(ValueError):
    """A Spark job that failed, its root cause in one line (``spark_analysis.failure.describe``)."""


def _run_spark(args, spark, paths, t0, params, brokers, restore, *, topic_configs, replicas, leaders, file_configs,
               admin_asked, admin, admin_error):
    from spark_analysis import s3
    from spark_analysis.audit import AuditInputs, run_audit

    own = spark is None
    if own:
        log(f"starting Spark ({args.master or 'default master'}) ...")
        spark = session(args.master or (None if os.environ.get("SPARK_ENV_LOADED") else "local[*]"),
                        kafka_source=args.input_kind == "topic",
                        conf=s3.spark_conf() if any(map(s3.is_s3, paths)) else None)
    try:
        check_executors(spark)
        log(f"reading {args.input_kind}: {', '.join(args.input)}")
        segments = args.input_kind == "segments"
        records = None if segments else load_records(spark, args.input_kind, args.input,
                                                     bootstrap=args.bootstrap_servers)
        log_dirs = read_log_dirs(args.input) if segments else {}
        cps, starts = read_checkpoints(args.input) if segments else ({}, {})
        files = list_inputs("segments", args.input) if segments else None
        inputs = AuditInputs(records=records, files=files, kind=args.input_kind, checkpoints=cps, log_starts=starts,
                             log_dirs=log_dirs, leaders={k: str(v) for k, v in (leaders or {}).items()},
                             topic_configs=topic_configs or {}, file_configs=file_configs or {},
                             admin_asked=admin_asked, admin=admin, admin_error=admin_error, cleaner=params, brokers=brokers,
                             replicas={k: tuple(str(b) for b in v) for k, v in (replicas or {}).items()},
                             now_ms=args.now_ms or int(time.time() * 1000), bucket_ms=BUCKETS[args.bucket],
                             top_n=args.top, restore=restore)
        result = run_audit(spark, inputs, progress=lambda m: log(m))
        log("writing Parquet tables, summary.json and report.html")
        base = write_outputs(spark, result, args.out)
        summary = result.summary
        log(f"done in {time.time() - t0:.0f}s: {summary['partitions']} partitions, "
            f"{summary['reclaimable_bytes'] / (1 << 20):,.1f} MiB reclaimable of {summary['bytes'] / (1 << 20):,.1f} MiB, "
            f"{summary['faults']} fault(s); report: {base}/report.html")
        return base, summary
    finally:
        if own:
            spark.stop()


def main(argv=None) -> int:
    """``spark-submit spark_analysis/job.py ...``: the audit without the command line. Topic configs come
    from ``--config``'s topics, else Kafka's defaults; the admin API is the command line's to ask
    (``compaction-monitor audit --bootstrap-servers``), since this edge imports no other."""
    from monitor.config import ConfigError, load_config
    from monitor.topicconfig import ConfigValueError, effective_configs

    args = build_parser().parse_args(argv)
    try:
        cfg = load_config(args.config)
        cluster = cfg.clusters[0] if cfg.clusters else None
        files = dict(cluster.topics) if cluster else {}
        effective_configs(file=files)  # a bad value fails here, naming its key
    except ConfigError as exc:
        for line in exc.lines:
            print(f"audit: config error: {line}", file=sys.stderr)
        return 2
    except ConfigValueError as exc:
        print(f"audit: config error: {exc}", file=sys.stderr)
        return 2
    if args.bootstrap_servers:
        log("topic configs from the admin API need `compaction-monitor audit`; using --config's topics "
            "and Kafka's defaults")
    try:
        _, summary = run(args, file_configs=files,
                         restore_config=cluster.restore_throughput_bytes_per_second if cluster else None)
    except (FileNotFoundError, ValueError) as exc:  # OutputError, ExecutorError, s3.StorageError...
        print(f"audit: {exc}", file=sys.stderr)
        return 2
    return 1 if summary["faults"] else 0  # corrupt input met (the report lists it), as the command line's audit


if __name__ == "__main__":
    sys.exit(main())

"""The audit job: ``compaction-monitor audit ...`` locally, or unchanged under ``spark-submit``:

    spark-submit --master yarn --archives venv.tar.gz#venv --conf spark.pyspark.python=./venv/bin/python \\
        spark_analysis/job.py --input hdfs://nn/kafka-copy/ --out hdfs://nn/audits/

The job only wires the parts, in the order the data goes: the inputs listed and read on the driver
(``inputs``), the Spark session and its executors checked (``session``), the audit run
(``audit.run_audit``: per partition, ``partition_audit`` reads it and yields its rows; then
``audit.tables`` builds the tables), the run folder written (``outputs``). The executors import
compaction-monitor installed in their Python (so they run its C record decoder);
before any work a one-task probe checks they can (``session.check_executors``). ``s3a:`` inputs and outputs
take the endpoint and credentials of the standard AWS variables (``spark_analysis.s3``); each bucket
is checked before Spark starts.

Each run writes a new folder ``<out>/run-<UTC time>/`` (nothing earlier is overwritten) with Parquet
tables (partitions, topics, tombstone_buckets, top_keys, top_producers, faults, replicas, whatif), ``summary.json``, a
self-contained ``report.html`` and the completion marker ``_SUCCESS`` (``monitor.contract.auditrun``: written
under a hidden name, renamed when whole), and points ``<out>/latest.json`` at it. ``--out`` is checked
before Spark starts.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from monitor.settings.valuecheck import bootstrap_problem, flag_type, number_type, path_text_problem
from spark_analysis import failure
from spark_analysis.inputs import list_inputs, load_records, read_checkpoints, read_log_dirs
from spark_analysis.outputs import OutputError, check_output, write_outputs
from spark_analysis.progress import log
from spark_analysis.session import check_executors, session

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
    from monitor.model.estimate import DEFAULT_THROUGHPUT, CleanerParams, params_for

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
    """The restore throughput of the run (``monitor.verdicts.restore.resolve``): the flag, monitor.yaml's, the
    measurement file (``--restore-measurement``, else, run from a checkout, its bench/out/restore.json),
    else unknown."""
    from monitor.verdicts.restore import MEASUREMENT, resolve

    return resolve(getattr(args, "restore_throughput", None), config,
                   getattr(args, "restore_measurement", None) or MEASUREMENT)


EXAMPLE = """examples:
  compaction-monitor audit --input /var/lib/kafka/data --out audits/ --bootstrap-server localhost:9092
  compaction-monitor audit --input-kind topic --input orders --bootstrap-server localhost:9092 --out audits/"""


def build_parser(parser_class=argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The audit's options; ``parser_class``: the command line's (its usage errors are one line, its help
    shows every default). ``--bootstrap-server`` is Kafka's tools' name; ``--bootstrap-servers`` (0.1.0's)
    is taken too, not shown. The examples are written as typed (``RawDescriptionHelpFormatter``)."""
    path = flag_type(path_text_problem, str)
    bootstrap = flag_type(bootstrap_problem, str)
    ap = parser_class(prog="compaction-monitor audit", epilog=EXAMPLE,
                      formatter_class=argparse.RawDescriptionHelpFormatter,
                      description="Spark audit of Kafka log segments, kafka-dump-log dumps or a live topic.")
    ap.add_argument("--input", action="append", required=True, type=path, metavar="PATH|TOPIC",
                    help="log dir tree or segment file (segments), dump text files (dumps), or topic name (topic); "
                         "file:, hdfs: or s3a: paths; repeatable")
    ap.add_argument("--input-kind", choices=["segments", "dumps", "topic"], default="segments",
                    help="what --input names (default: %(default)s)")
    ap.add_argument("--out", required=True, type=path, metavar="DIR",
                    help="output folder; each run adds run-<time>/ under it")
    ap.add_argument("--master", metavar="URL", help="Spark master (default: spark-submit's, else local[*])")
    ap.add_argument("--config", type=path, metavar="FILE",
                    help="monitor.yaml: topic configs under clusters[0].topics, bootstrap servers")
    ap.add_argument("--bootstrap-server", dest="bootstrap_servers", type=bootstrap,
                    metavar="HOST:PORT[,HOST:PORT...]", help="the cluster: for --input-kind topic, and topic configs via the admin API (default: the "
                         "config's)")
    ap.add_argument("--bootstrap-servers", dest="bootstrap_servers", type=bootstrap, help=argparse.SUPPRESS)
    ap.add_argument("--cleaner-log", action="append", default=[], type=path, metavar="FILE",
                    help="a broker's log-cleaner.log: calibrates the cleaner's throughput (repeatable)")
    ap.add_argument("--throughput", type=number_type("a finite number of MiB/s above 0", above=0),
                    metavar="MIB_PER_SECOND", help="the cleaner's throughput in MiB/s (default: learnt from "
                                                   "--cleaner-log, else 40, labelled a default)")
    ap.add_argument("--cleaner-threads", type=number_type("a whole number, at least 1", whole=True, minimum=1),
                    metavar="N", help="log.cleaner.threads (default: the brokers' from the admin API, else Kafka's 1)")
    ap.add_argument("--dedupe-buffer-size", type=number_type("a whole number of bytes, at least 1", whole=True,
                                                             minimum=1),
                    metavar="BYTES", help="log.cleaner.dedupe.buffer.size (default: the brokers', else Kafka's 134217728)")
    ap.add_argument("--load-factor", type=number_type("a finite number above 0, at most 1", above=0, maximum=1),
                    metavar="RATIO", help="log.cleaner.io.buffer.load.factor (default: the brokers', else Kafka's 0.9)")
    ap.add_argument("--hash-bytes", type=number_type("a whole number of bytes, at least 1", whole=True, minimum=1),
                    default=16, metavar="BYTES", help="16 for MD5 (Kafka up to 4.3), 32 for SHA-256 (default: %(default)s)")
    ap.add_argument("--io-max-bytes-per-second", type=number_type("a finite number above 0", above=0),
                    metavar="BYTES_PER_SECOND", help="log.cleaner.io.max.bytes.per.second (default: the brokers', else no throttle)")
    ap.add_argument("--restore-throughput", type=number_type("a finite number above 0", above=0),
                    metavar="BYTES_PER_SECOND",
                    help="a consumer's restore throughput for each compacted topic's restore time (default: "
                         "monitor.yaml's restore_throughput_bytes_per_second, else --restore-measurement's)")
    ap.add_argument("--restore-measurement", default=None, type=path, metavar="FILE",
                    help="the measurement file of ./dev bench restore (default: bench/out/restore.json when run "
                         "from a checkout; installed, none: the restore time is then unknown, saying so)")
    ap.add_argument("--top", type=number_type("a whole number, at least 1", whole=True, minimum=1), default=20,
                    metavar="N", help="top keys / producers per topic (default: %(default)s)")
    ap.add_argument("--bucket", choices=["minute", "hour", "day", "auto"], default="auto",
                    help="tombstone build-up bucket (default: %(default)s)")
    ap.add_argument("--min-free-bytes", type=number_type("a whole number of bytes", whole=True, minimum=0),
                    default=failure.MIN_FREE_BYTES, metavar="BYTES",
                    help="free space --out (and, in local mode, Spark's scratch: SPARK_LOCAL_DIRS, else /tmp) must "
                         "have before Spark starts (default: %(default)s, 64 MiB: the run's tables and report; 0: no "
                         "check)")
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
    ``broker_settings``: broker id -> the broker's cleaner settings (``monitor.model.topicconfig.BrokerSetting``
    by Kafka name); ``replicas``: (topic, partition) -> broker ids, for each broker's wall clock;
    ``settings``: the cleaner settings when no broker's are known; ``leaders``: (topic, partition) -> the
    leader's broker id (the admin API's), to audit its replica when the log dirs hold several;
    ``restore_config``: monitor.yaml's restore throughput (``monitor.verdicts.restore.resolve`` puts the flag above
    it, the measurement below)."""
    from monitor.kafka.cleanerlog import learned_throughput, parse_cleaner_log
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
    if spark is None and (args.master or ("" if os.environ.get("SPARK_ENV_LOADED") else "local")).startswith("local"):
        if (why := failure.scratch_problem(getattr(args, "min_free_bytes", failure.MIN_FREE_BYTES))) is not None:
            raise OutputError(why)  # a local session's shuffle and spill space, checked as --out is
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
    (``compaction-monitor audit --bootstrap-server``), since this edge imports no other."""
    from monitor.settings.config import ConfigError, load_config
    from monitor.model.topicconfig import ConfigValueError, effective_configs

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

"""The audit's inputs, read on the driver before any Spark work: the files a run will read (names and
sizes, by Kafka's own naming rules), the records of the dump and topic paths, and each log dir's
checkpoints and broker id. Why on the driver: listing is cheap and its errors (nothing to read, a
duplicate partition folder) must be told before Spark starts."""

from __future__ import annotations

from monitor.fileio import strictjson
from spark_analysis.progress import log


def list_inputs(kind: str, inputs: list[str]) -> list[tuple[str, int]]:
    """The files a run will read, listed once on the driver (names and sizes only).
    Segments must sit in ``<topic>-<partition>`` folders; -delete/-future/-stray folders are left out."""
    from monitor.model.topicconfig import NOT_CLEANED_BY_LOG_CLEANER
    from spark_analysis.arrow_rows import topic_partition
    from monitor.fileio.regularfile import NotRegularFile
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
    (``monitor.kafka.kafkanames``): a name Kafka never writes (``5.log``, ``².log``) is left out, and so is
    every folder of a partition that two folders of one log dir load as (``orders-3`` and ``orders-03``:
    Kafka refuses to start), each with one line naming it."""
    import posixpath

    from monitor.kafka.kafkanames import printable, stray_reason
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
    from monitor.kafka.checkpoint import CheckpointError, read_checkpoint_stream
    from monitor.kafka.logdir import MAX_META_BYTES, meta_node_id, parse_properties
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

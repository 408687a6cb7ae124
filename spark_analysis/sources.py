"""PySpark Python data sources ``kafka-segments`` (records), ``kafka-dumps`` (records of
kafka-dump-log text) and ``kafka-segment-keys`` (the segments audit: one task per partition, see
``partition_audit``).

``partitions()`` runs on the driver and only lists files (names and sizes); ``read()`` runs on the
executors, opens its own files and yields Arrow batches, so no record data passes through the
driver. Each task reads whole files; small files are grouped up to ``targetBytes`` per task.

    spark.dataSource.register(KafkaSegmentsDataSource)
    df = spark.read.format("kafka-segments").load("s3a://bucket/kafka-copy/")
"""

from __future__ import annotations

import base64
import json
import pickle
from dataclasses import dataclass

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from spark_analysis.schema import DDL

DEFAULT_TARGET_BYTES = 128 * 1024 * 1024


@dataclass
class FilesPartition(InputPartition):
    files: list  # [(uri, size)]

    def __init__(self, files):
        self.files = files


def plan(files: list[tuple[str, int]], target: int) -> list[FilesPartition]:
    """Whole files per task; consecutive small files grouped up to ``target`` bytes."""
    parts, current, size = [], [], 0
    for uri, n in files:
        if current and size + n > target:
            parts.append(FilesPartition(current))
            current, size = [], 0
        current.append((uri, n))
        size += n
    if current:
        parts.append(FilesPartition(current))
    return parts


class _FilesReader(DataSourceReader):
    suffix: tuple[str, ...] = ()

    def __init__(self, options: dict):
        self.options = options

    def _files(self) -> list[tuple[str, int]]:
        from spark_analysis.fs import list_files

        if "files" in self.options:  # a precomputed listing (the audit lists once, for several reads)
            return [tuple(x) for x in json.loads(self.options["files"])]
        out = []
        for p in self._paths():
            out += list_files(p, self.suffix)
        return out

    def _paths(self) -> list[str]:
        paths = self.options.get("paths")
        if paths:
            return json.loads(paths)
        return [self.options["path"]]

    def partitions(self):
        files = self._files()
        if not files:
            raise FileNotFoundError(f"no {'/'.join(self.suffix)} files under {', '.join(self._paths())}")
        return plan(files, int(self.options.get("targetBytes", DEFAULT_TARGET_BYTES)))


class _SegmentsReader(_FilesReader):
    suffix = (".log",)

    def read(self, partition: FilesPartition):
        from spark_analysis.arrow_rows import segment_batches
        from spark_analysis.fs import open_input

        for uri, size in partition.files:
            yield from segment_batches(uri, size, open_input)


class _DumpsReader(_FilesReader):
    suffix = (".txt", ".dump", ".out")

    def read(self, partition: FilesPartition):
        from spark_analysis.arrow_rows import dump_batches
        from spark_analysis.fs import open_input

        for uri, size in partition.files:
            yield from dump_batches(uri, size, open_input)


def encode_tasks(tasks: list) -> str:
    """``PartitionTask``s as one option string (options are strings; the tasks hold configs)."""
    return base64.b64encode(pickle.dumps(tasks)).decode()


@dataclass
class TaskPartition(InputPartition):
    task: object  # a partition_audit.PartitionTask

    def __init__(self, task):
        self.task = task


class _KeysReader(DataSourceReader):
    def __init__(self, options: dict):
        if "tasks" not in options:
            raise ValueError("kafka-segment-keys reads the tasks the audit planned (option 'tasks'), not a path")
        self.tasks = pickle.loads(base64.b64decode(options["tasks"]))

    def partitions(self):
        return [TaskPartition(t) for t in self.tasks]

    def read(self, partition: TaskPartition):
        from spark_analysis.fs import open_input
        from spark_analysis.partition_audit import audit_partition

        yield from audit_partition(partition.task, open_input)


class KafkaSegmentKeysDataSource(DataSource):
    """The segments audit's per-partition results (``keyfold.SCHEMA``): one task per partition reads
    its segments and folds the records per key on the executor. The audit plans the tasks and passes
    them as the ``tasks`` option (``encode_tasks``)."""

    @classmethod
    def name(cls):
        return "kafka-segment-keys"

    def schema(self):
        from spark_analysis.keyfold import FIELDS
        from spark_analysis.schema import _SPARK_TYPES

        return ", ".join(f"{n} {_SPARK_TYPES[t]}" for n, t in FIELDS)

    def reader(self, schema):
        return _KeysReader(self.options)


class KafkaSegmentsDataSource(DataSource):
    """Records of Kafka log segments (``*.log`` under the path: broker log dirs or copies)."""

    @classmethod
    def name(cls):
        return "kafka-segments"

    def schema(self):
        return DDL

    def reader(self, schema):
        return _SegmentsReader(self.options)


class KafkaDumpsDataSource(DataSource):
    """Records of ``kafka-dump-log --print-data-log`` text files (``*.txt``, ``*.dump``, ``*.out``)."""

    @classmethod
    def name(cls):
        return "kafka-dumps"

    def schema(self):
        return DDL

    def reader(self, schema):
        return _DumpsReader(self.options)


def register(spark) -> None:
    spark.dataSource.register(KafkaSegmentsDataSource)
    spark.dataSource.register(KafkaDumpsDataSource)
    spark.dataSource.register(KafkaSegmentKeysDataSource)

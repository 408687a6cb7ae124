"""``kafka-partition-audit``: the segments audit, one Spark task per partition
(``spark_analysis.partition_audit.audit_partition``), its results in the audit's row types (``rows``: a
struct column per output, one set per row; the module says why). Named for what it holds, the tasks'
data source, not after the module it runs (``spark_analysis.partition_audit``), whose name it once shared.

The audit plans the tasks on the driver and passes them as the ``tasks`` option: a JSON list of
``PartitionTask.to_json()`` (plain data: files, topic config as Kafka's config strings, bounds'
inputs), so what a task does can be read in the Spark UI or a log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from monitor.fileio import strictjson


@dataclass
class TaskPartition(InputPartition):
    task: str  # one PartitionTask as JSON

    def __init__(self, task):
        self.task = task


class _AuditReader(DataSourceReader):
    def __init__(self, options: dict):
        if "tasks" not in options:
            raise ValueError("kafka-partition-audit reads the tasks the audit planned (option 'tasks'), not a path")
        self.tasks = json.loads(options["tasks"])

    def partitions(self):
        return [TaskPartition(strictjson.dumps(t)) for t in self.tasks]

    def read(self, partition: TaskPartition):
        from spark_analysis.fs import open_input
        from spark_analysis.partition_audit import PartitionTask, audit_partition
        from spark_analysis.session import settle_worker

        settle_worker()

        yield from audit_partition(PartitionTask.from_json(json.loads(partition.task)), open_input)


class KafkaPartitionAuditDataSource(DataSource):
    @classmethod
    def name(cls):
        return "kafka-partition-audit"

    def schema(self):
        from spark_analysis.rows import ddl

        return ddl()

    def reader(self, schema):
        return _AuditReader(self.options)


def encode_tasks(tasks: list) -> str:
    """``PartitionTask``s as the ``tasks`` option."""
    return strictjson.dumps([t.to_json() for t in tasks])

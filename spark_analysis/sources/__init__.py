"""The audit's PySpark Python data sources, one per module:

* ``kafka-segments`` (``segments``): one row per record of Kafka log segments (public API, for your
  own Spark queries over a log dir or a copy of it);
* ``kafka-dumps`` (``dumps``): one row per record of ``kafka-dump-log --print-data-log`` text; the
  audit's records path folds them per partition;
* ``kafka-partition-audit`` (``partition_tasks``): the segments audit, one task per partition, each
  running ``spark_analysis.partition_audit`` on the task the driver planned for it.

``partitions()`` runs on the driver and only lists or plans (names, sizes, JSON tasks); ``read()``
runs on the executors, opens its own files and yields Arrow batches, so no record data passes
through the driver.

    register(spark)
    df = spark.read.format("kafka-segments").load("s3a://bucket/kafka-copy/")
"""

from __future__ import annotations


def register(spark) -> None:
    from spark_analysis.sources.dumps import KafkaDumpsDataSource
    from spark_analysis.sources.partition_tasks import KafkaPartitionAuditDataSource
    from spark_analysis.sources.segments import KafkaSegmentsDataSource

    for source in (KafkaSegmentsDataSource, KafkaDumpsDataSource, KafkaPartitionAuditDataSource):
        spark.dataSource.register(source)

"""``kafka-segments``: one row per record of Kafka log segments (``*.log`` under the path: broker log
dirs or copies), in the record schema (``schema``); a corrupt spot is a row with ``fault_kind`` set.

A public API, for your own Spark queries over segments (the audit itself reads segments a partition
per task, ``kafka-partition-audit``):

    register(spark)
    spark.read.format("kafka-segments").load("hdfs://nn/kafka-copy/").groupBy("topic").count()

Options: ``path`` (or ``paths``, a JSON list), ``targetBytes`` (files grouped per task, default 128 MiB).
"""

from __future__ import annotations

from spark_analysis.sources.files import RecordsDataSource


class KafkaSegmentsDataSource(RecordsDataSource):
    suffix = (".log",)
    batches = "segment_batches"

    @classmethod
    def name(cls):
        return "kafka-segments"

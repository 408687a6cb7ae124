"""A live topic read from earliest through Spark's own Kafka source (spark-sql-kafka-0-10), mapped to
the audit's record schema, for clusters whose log dirs are out of reach. What a consumer cannot see
(segment files, batch framing, compression, control records) stays null."""

from __future__ import annotations

from pyspark.sql import functions as F

from spark_analysis.arrow_rows import RECORD_OVERHEAD
from spark_analysis.schema import FIELDS, SPARK_TYPES


def read_topic(spark, bootstrap: str | None, topics: list[str], options: dict):
    if not bootstrap:
        raise ValueError("--input-kind topic needs --bootstrap-server")
    reader = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", ",".join(topics)).option("startingOffsets", "earliest")
              .option("endingOffsets", "latest").option("includeHeaders", "false"))
    for k, v in options.items():
        reader = reader.option(k if k.startswith("kafka.") else f"kafka.{k}", v)
    raw = reader.load()
    ks = F.coalesce(F.length("key"), F.lit(-1))
    vs = F.coalesce(F.length("value"), F.lit(-1))
    cols = {
        "topic": F.col("topic"), "partition": F.col("partition").cast("int"),
        "offset": F.col("offset"), "timestamp": (F.unix_micros("timestamp") / 1000).cast("long"),
        "timestamp_type": F.when(F.col("timestampType") == 1, "log_append").otherwise("create"),
        "key": F.col("key"), "key_size": ks.cast("int"), "value_size": vs.cast("int"),
        "record_bytes": (F.greatest(ks, F.lit(0)) + F.greatest(vs, F.lit(0)) + RECORD_OVERHEAD).cast("double"),
        "tombstone": F.col("value").isNull(), "control": F.lit(False), "transactional": F.lit(None),
        "segment": F.concat_ws("-", "topic", "partition"), "segment_base_offset": F.lit(None),
        "batch_position": F.lit(None), "batch_bytes": F.lit(None),
    }
    out = []
    for name, t in FIELDS:
        expr = cols.get(name, F.lit(None))
        out.append(expr.cast(SPARK_TYPES[t]).alias(name))
    return raw.select(*out)

#!/usr/bin/env bash
# The nightly audit on a Spark cluster (YARN here; any master works). The job ships its own
# code to the executors; they need the Python packages: pyarrow, cramjam, crc32c (e.g. through
# --archives with a packed virtualenv, or installed on the nodes).
set -euo pipefail
INPUT=${1:-hdfs:///backups/kafka/log-dirs/}       # copies of broker log dirs (or s3a://...)
OUT=${2:-hdfs:///reports/kafka-compaction/}
spark-submit \
  --master yarn --deploy-mode client \
  --num-executors 8 --executor-cores 4 --executor-memory 4g \
  --conf spark.sql.shuffle.partitions=256 \
  --conf spark.pyspark.python=./venv/bin/python \
  --archives compaction-monitor-venv.tar.gz#venv \
  "$(python -c 'import spark_analysis.job as j; print(j.__file__)')" \
  --input "$INPUT" --out "$OUT" --cleaner-log hdfs:///logs/kafka/log-cleaner.log

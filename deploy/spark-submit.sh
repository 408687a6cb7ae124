#!/usr/bin/env bash
# The nightly audit on a Spark cluster (YARN here; any master works). The executors get Python
# through a packed virtualenv (venv-pack) in which compaction-monitor itself is installed
# (pip install .), so that they run its C record decoder; AUDIT_SHIP_CODE=0 then stops the job
# from also shipping its sources as a zip (which would shadow the installed package and fall back
# to the pure-Python decoder, several times slower).
set -euo pipefail
export AUDIT_SHIP_CODE=0
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

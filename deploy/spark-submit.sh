#!/usr/bin/env bash
# The nightly audit on a Spark cluster (YARN here; a standalone spark:// master or Kubernetes work the
# same way). The executors get Python through a packed virtualenv (venv-pack) in which
# compaction-monitor itself is installed (pip install '.[audit]'), so that they import it and run its
# C record decoder; the job checks that before any work (a one-task probe) and fails, naming the
# executors' Python, when they cannot. No source zip is shipped (AUDIT_SHIP_CODE=1 would: pure-Python
# decoder, several times slower).
# s3a: paths: add --packages org.apache.hadoop:hadoop-aws:<your Hadoop version> and the standard AWS
# variables (AWS_ENDPOINT_URL for an S3-compatible server, credentials or the instance role) where
# the driver and the executors run; see docs/audit.md "Running the audit on a cluster and on S3".
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

"""The compaction audit: what the next clean leaves and reclaims and what is left once it settles, how
long the cleaner needs, where tombstones build up, which keys and producers drive it.

The partition's sizes are counted on the segments path: Kafka's cleaner run over its files
(``monitor.model.nextclean``, from ``partition_audit``; ``spark_analysis.projection``), each batch a clean
keeps re-encoded, each tombstone and marker kept until its KIP-534 delete horizon has passed. The fold
below gives the per-key figures (byte shares, estimates) and, for dumps and a live topic, which have no
batch bytes to re-encode, the labelled estimate of the next clean's size.

Two ways in, one fold (``keyfold``), one set of tables:
* segments (``audit.segments``): one Spark task per partition reads its segments, takes Kafka's bounds
  from the batch headers and folds the records next to the decoder;
* records (``audit.records``): kafka-dump-log dumps and a live topic arrive as a DataFrame of records;
  Kafka's bounds come from a small per-partition aggregate, then the records are folded a partition
  per task (``mapInArrow`` over records sorted by offset within their partition).
Either way the tasks hand Spark the row types of ``rows``, the driver collects the few per partition
in one job, and ``audit.tables`` merges key tables sent in parts (``merge``) and builds the report
tables. No record or key row passes through the driver.

What Kafka keeps, and so what is not counted as reclaimable:
* the active segment and whatever ``min.compaction.lag.ms`` or the last stable offset (an open
  transaction) holds back (above the bound U);
* transaction markers until one clean finds their transaction's data gone and their batch's delete
  horizon passed (``monitor.model.txncleaner``; segments path);
* tombstones that are the latest record of their key and still inside ``delete.retention.ms``.
Aborted transactional data below U is removed whole, and is never a key's record (it supersedes
nothing); the aborted ranges are folded from the log's own markers (``monitor.model.transactions``), as the
cleaner takes them from ``.txnindex``. The records path (dumps, a live topic) sees neither markers'
types nor transactions: there transactional data counts as plain records and the LSO is not applied.
A record below U superseded by a later record of its key below U is removed; a tombstone that is the
latest of its key and older than ``delete.retention.ms`` is removed too in the fold's shares (the counted
projection keeps it until the horizon a clean stamps on its batch has passed).
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from spark_analysis.audit.shapes import AuditInputs, AuditResult, Found, collect_small  # noqa: F401


def run_audit(spark: SparkSession, inputs: AuditInputs, progress=lambda msg: None) -> AuditResult:
    from spark_analysis.audit.records import audit_records
    from spark_analysis.audit.segments import audit_segments
    from spark_analysis.audit.tables import report

    if inputs.kind == "segments":
        if inputs.files is None:
            raise ValueError("a segments audit needs the segment files (AuditInputs.files)")
        found = audit_segments(spark, inputs, progress)
    else:
        found = audit_records(spark, inputs, progress)
    return report(spark, inputs, found, progress)

"""What the audit's two paths (``audit.segments``, ``audit.records``) and its tables (``audit.tables``)
share: its inputs (``AuditInputs``), what either path found (``Found``), the result (``AuditResult``) and
the driver's collect of the few rows per partition (``collect_small``).

Why apart from the package's ``__init__``: that runs the paths (``run_audit``), and the paths need these;
defined there, the package and its paths imported one another. ``spark_analysis.audit`` still gives them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame

from monitor.model.estimate import CleanerParams
from monitor.verdicts.restore import RestoreThroughput
from monitor.model.topicconfig import EffectiveConfig, TopicConfig, admin_refusal, effective_config

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass
class AuditInputs:
    kind: str  # segments | dumps | topic
    records: DataFrame | None = None  # dumps, topic: the records
    files: list | None = None  # segments: [(uri, size)] of the *.log files, listed once on the driver
    checkpoints: dict = field(default_factory=dict)  # (topic, partition) -> first dirty offset
    log_starts: dict = field(default_factory=dict)
    # log dir -> replicas.LogDirInfo (its own checkpoints, its broker): a replica is judged by its log dir's
    log_dirs: dict = field(default_factory=dict)
    leaders: dict = field(default_factory=dict)  # (topic, partition) -> leader's broker id (admin API), as str
    topic_configs: dict = field(default_factory=dict)  # topic -> TopicConfig: the admin API's (the topic's own)
    file_configs: dict = field(default_factory=dict)  # topic -> monitor.yaml's values (clusters[].topics)
    # an admin API was configured and asked: a topic it did not give has its config unknown, never
    # Kafka's defaults (monitor.model.topicconfig.admin_refusal); admin: its answer (None: it failed, admin_error)
    admin_asked: bool = False
    admin: object | None = None
    admin_error: str | None = None
    cleaner: CleanerParams = CleanerParams()
    brokers: dict = field(default_factory=dict)  # broker id -> its CleanerParams (settings from the admin API)
    replicas: dict = field(default_factory=dict)  # (topic, partition) -> broker ids holding a replica
    # a consumer's restore throughput (monitor.verdicts.restore.resolve); unknown unless the caller states one
    restore: RestoreThroughput = RestoreThroughput(None, "unknown", "no restore throughput given to the audit")
    now_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    bucket_ms: int | None = None  # tombstone build-up bucket; None: chosen from the time span
    top_n: int = 20
    max_keys: int | None = None  # keys one task holds before sending them in parts (tests lower it)
    window: int | None = None  # records a task folds at a time (tests lower it)

    def effective(self, topic: str) -> EffectiveConfig:
        """The topic's config by the collector's rule (``effective_config``, ``admin_refusal``): the
        admin API's, else monitor.yaml's over Kafka's defaults; the values neither gives are unknown
        when an admin API was asked and did not give the topic's, Kafka's defaults (source ``default``)
        only when none was asked. Read as a compacted topic's: the audit reads its segments as such."""
        admin = self.topic_configs.get(topic)
        refusal = None
        if admin is None and self.admin_asked:
            refusal = admin_refusal(self.admin, topic, down=self.admin_error if self.admin is None else None)
        return effective_config(topic, admin=admin, file=self.file_configs.get(topic), compacted=True,
                                refusal=refusal)

    def config(self, topic: str) -> TopicConfig:
        """The values the audit computes with: ``effective``'s, unknown ones as placeholders whose
        figures the report leaves unknown (``audit.tables.config_columns``)."""
        return self.effective(topic).config


@dataclass
class Found:
    """What either path found, for the shared report tables."""

    facts: list  # rows.ROW_TYPES["facts"] dicts, one per partition
    rows: "pa.Table"  # the fold tasks' rows (rows.SCHEMA) but key parts, collected: a few per partition
    out: DataFrame  # the fold tasks' rows in Spark, where key parts stay until merged
    faults: list  # dicts: segment, fault_kind, fault_position, fault_reason
    replicas: list = field(default_factory=list)  # replicas.REPLICAS_DDL rows: partitions in several log dirs
    bytes_all_replicas: int | None = None  # segments path: the bytes of every replica read (disk across them)


@dataclass
class AuditResult:
    partitions: DataFrame
    topics: DataFrame
    tombstone_buckets: DataFrame
    top_keys: DataFrame
    top_producers: DataFrame
    faults: DataFrame
    summary: dict
    replicas: DataFrame | None = None  # one row per replica of a partition found in several log dirs
    whatif: DataFrame | None = None  # each compacted topic under other settings (spark_analysis.whatif)


LARGE_ROWS = ("key", "key_hashes")  # row types left in Spark (a row or 8 bytes per key), never collected


def collect_small(out: DataFrame) -> "pa.Table":
    """The fold tasks' rows but the per-key ones, collected: a few per partition."""
    from pyspark.sql import functions as F

    cond = None
    for kind in LARGE_ROWS:
        c = F.col(kind).isNull()
        cond = c if cond is None else cond & c
    return out.filter(cond).toArrow()

"""A collector's /metrics page, written here, of a cluster with one partition of every kind the on-call pages
must read out: lagging (waiting), held back by min.compaction.lag.ms, an open transaction, a partition
still being read (its tombstones pending), a healthy one at granularity topic (its detail not exported), a dead
cleaner thread, a source down since a known time, a consumer group past delete.retention.ms, and the sizes
and ages the issue quotes raw (86851 bytes, 308754 duplicate bytes, 604800 s, 246.3113 s).

Served by ``faultserver.FaultServer`` as a real collector's page is served (HTTP), so the pages read it
through the same source code as a running collector's."""

from __future__ import annotations

NS = "kafka_compaction_"
NEXT_REMOVAL = 1_765_000_123.5  # partition_next_delete_horizon_timestamp_seconds of orders-0
DOWN_SINCE = 1_765_000_000  # source_last_success_timestamp_seconds of the source that is down (2025-12-06)


def _p(topic: str, partition: int, broker: str = "1") -> str:
    return f'cluster="c",broker="{broker}",topic="{topic}",partition="{partition}"'


def _line(name: str, labels: str, value: float) -> str:
    return f"{NS}{name}{{{labels}}} {value}"


def page() -> str:
    lines = []

    def part(topic, partition, cause, cleanable, **series):
        p = _p(topic, partition)
        lines.append(_line("partition_compaction_cause", p + f',cause="{cause}"', 1))
        lines.append(_line("partition_cleanable_ratio", p, cleanable))
        for name, value in series.items():
            if isinstance(value, tuple):  # (extra labels, value)
                lines.append(_line(name, p + "," + value[0], value[1]))
            else:
                lines.append(_line(name, p, value))

    detail = dict(partition_min_cleanable_dirty_ratio=0.5, partition_log_bytes=1_048_576,
                  partition_detail_pending=0)
    # lagging: eligible above its threshold, the cleaner not come (CompactionLagging, evaluated on the page)
    part("orders", 0, "waiting", 0.9, partition_uncleaned_ratio=0.9, partition_cleanable_bytes=86851,
         partition_uncleaned_bytes=86851, partition_eligible_seconds=234, partition_tombstones=("section=\"dirty\"", 3),
         partition_active_segment_duplicate_records=308754, partition_active_segment_duplicate_bytes=104857600,
         partition_active_segment_bytes=1048576, partition_active_segment_age_seconds=234,
         partition_segment_bytes=1073741824, partition_max_segment_age_seconds=604800,
         partition_active_segment_roll_seconds=604566, **detail)
    # held back: min.compaction.lag.ms holds every uncleaned byte, so its cleanable ratio is 0
    for p in range(4):
        part("cdc", p, "min_compaction_lag", 0.0, partition_uncleaned_ratio=1.0, partition_cleanable_bytes=0,
             partition_uncleaned_bytes=5000 + p, partition_compaction_blocked=("reason=\"min_compaction_lag\"", 1),
             partition_tombstones=("section=\"dirty\"", 0), **detail)
    # an open transaction holds the cleaner at the last stable offset
    part("payments", 2, "open_transaction", 0.0, partition_uncleaned_ratio=0.7, partition_cleanable_bytes=0,
         partition_uncleaned_bytes=7000, partition_last_stable_offset=1234,
         partition_open_transactions=1, partition_oldest_open_transaction_age_seconds=246.3113,
         partition_compaction_blocked=("reason=\"open_transaction\"", 1), **detail)
    # a partition whose records are still to be read: tombstones pending, not 0
    part("fresh", 0, "below_threshold", 0.2, partition_detail_pending=1)
    # healthy at granularity topic: cause and ratio only
    part("quiet", 0, "clean", 0.0, partition_tombstones=("section=\"clean\"", 0), partition_detail_pending=0)
    # orders-0's delete horizons: tombstones of each state, no marker read; the next removal at NEXT_REMOVAL
    for state, n in (("unstamped", 1), ("pending", 1), ("passed", 1)):
        labels = _p("orders", 0) + f',kind="tombstone",state="{state}"'
        lines.append(_line("partition_delete_horizon_records", labels, n))
    lines.append(_line("partition_next_delete_horizon_timestamp_seconds", _p("orders", 0), NEXT_REMOVAL))
    lines += [
        _line("broker_cleaner_dead_threads", 'cluster="c",broker="1"', 1),
        _line("broker_uncleanable_partitions", 'cluster="c",broker="1",log_dir="/d"', 0),
        _line("source_up", 'cluster="c",source="jmx:c:1",kind="jmx"', 1),
        _line("source_up", 'cluster="c",source="logdir:c:1",kind="logdir"', 0),
        _line("source_last_success_timestamp_seconds", 'cluster="c",source="logdir:c:1",kind="logdir"', DOWN_SINCE),
        _line("source_last_error_info",
              'cluster="c",source="logdir:c:1",kind="logdir",error="read",message="/d: permission denied"', 1),
        _line("consumer_group_lag_seconds", 'cluster="c",group="billing",topic="orders",partition="0",method="exact"',
              246.3113),
        _line("consumer_group_lag_records", 'cluster="c",group="billing",topic="orders",partition="0"', 1048576),
        _line("consumer_group_lag_retention_ratio", 'cluster="c",group="billing",topic="orders",partition="0"', 2.5),
    ]
    return "\n".join(lines) + "\n"

"""The config-dependence map against the model it describes (``monitor.model.compaction.partition_state``,
Kafka's LogCleanerManager), and the collector, the audit and the causes reading it alike."""

from dataclasses import fields, replace

import pytest

from monitor.verdicts.causes import explain
from monitor.verdicts.facts import VERDICT_CONFIGS
from monitor.model.compaction import PartitionState, partition_state
from monitor.model.configdeps import DEPENDS, MAX_LAG, MIN_LAG, MIN_RATIO, DELETE_RETENTION, configs_of, series_depends
from monitor.model.summary import SegmentSummary, add_tombstone
from monitor.model.topicconfig import AdminRefusal, TopicConfig, effective_config
from monitor.contract.metricnames import NAMESPACE

NOW = 10_000_000_000
DAY = 86_400_000

# one Kafka config name -> the TopicConfig field, and two values that differ
VARY = {MIN_RATIO: ("min_cleanable_dirty_ratio", 0.01, 0.99), MIN_LAG: ("min_compaction_lag_ms", 0, 3 * DAY),
        MAX_LAG: ("max_compaction_lag_ms", DAY, 2**63 - 1), DELETE_RETENTION: ("delete_retention_ms", 1, 10 * DAY)}


def _segments():
    """Three closed segments aged 5, 2 and 0.5 days and an active one: each bound has somewhere to fall."""
    out = []
    for i, age in enumerate((5 * DAY, 2 * DAY, DAY // 2)):
        s = SegmentSummary(f"/x/{i * 10:020d}.log", i * 10, size=1000, next_offset=i * 10 + 10,
                           max_timestamp=NOW - age, first_batch_max_timestamp=NOW - age - 1000)
        add_tombstone(s, i * 10 + 1, NOW - age, -1)
        out.append(s)
    out.append(SegmentSummary("/x/00000000000000000030.log", 30, size=100, next_offset=31, max_timestamp=NOW,
                              first_batch_max_timestamp=NOW))
    return out


STATE_FIGURES = sorted(set(DEPENDS) & {f.name for f in fields(PartitionState)})


@pytest.mark.parametrize("key", sorted(VARY))
def test_a_figure_does_not_move_with_a_config_the_map_says_it_does_not_read(key):
    """For every PartitionState figure in the map, changing a config it is not mapped to leaves it as
    it is: the map never withholds a figure Kafka computes without that config."""
    attr, a, b = VARY[key]
    base = TopicConfig(cleanup_policy=("compact",))
    one = partition_state("t", 0, _segments(), replace(base, **{attr: a}), NOW, checkpoint=10)
    two = partition_state("t", 0, _segments(), replace(base, **{attr: b}), NOW, checkpoint=10)
    moved = {f for f in STATE_FIGURES if getattr(one, f) != getattr(two, f)}
    assert moved, f"{key} moves no figure: the varied inputs prove nothing"
    assert all(key in DEPENDS[f] for f in moved), {f: DEPENDS[f] for f in moved if key not in DEPENDS[f]}


def test_the_cleanable_range_reads_the_min_lag_and_not_the_max_lag():
    """LogCleanerManager.cleanableOffsets bounds the range by the LSO, the active segment and the min
    lag; max.compaction.lag.ms only makes the log needCompactionNow (which is why it picks it)."""
    for f in ("first_uncleanable_offset", "cleanable_bytes", "cleanable_ratio", "not_yet_cleanable_bytes"):
        assert DEPENDS[f] == (MIN_LAG,)
    assert set(DEPENDS["eligible"]) == {MIN_RATIO, MIN_LAG, MAX_LAG}
    overdue = partition_state("t", 0, _segments(), TopicConfig(("compact",), 0.99, max_compaction_lag_ms=DAY),
                              NOW, checkpoint=10)
    never = partition_state("t", 0, _segments(), TopicConfig(("compact",), 0.99), NOW, checkpoint=10)
    assert overdue.cleanable_ratio == never.cleanable_ratio and overdue.cleanable_bytes == never.cleanable_bytes
    assert overdue.eligible and not never.eligible  # the max lag moves the pick only


def test_the_causes_verdict_reads_the_compaction_configs():
    assert VERDICT_CONFIGS == ("min.cleanable.dirty.ratio", "min.compaction.lag.ms", "max.compaction.lag.ms",
                               "delete.retention.ms", "segment.bytes", "segment.ms")
    assert configs_of("cleanable_ratio", "eligible") == (MIN_RATIO, MIN_LAG, MAX_LAG)


def _max_lag_unknown():
    """The admin API refused, monitor.yaml gives every compaction config but max.compaction.lag.ms."""
    file = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": "0",
            "delete.retention.ms": str(DAY), "segment.bytes": "1073741824", "segment.ms": "604800000"}
    ec = effective_config("t", file=file, refusal=AdminRefusal("refused", "no DescribeConfigs ACL"))
    assert not ec.known(MAX_LAG) and ec.known(MIN_LAG, MIN_RATIO)
    return ec


def test_with_only_the_max_lag_unknown_the_collector_the_audit_and_the_causes_all_give_the_ratio():
    """The fork this map closed: the collector withheld the cleanable ratio (its map read both lags)
    while the audit published it; the causes' evidence withheld every config-made figure."""
    from collectors.export import metrics as M
    from collectors.export.partitions import CONFIG_DEPENDS
    from spark_analysis.audit.tables import config_columns

    ec = _max_lag_unknown()
    assert CONFIG_DEPENDS == series_depends(NAMESPACE)
    assert ec.known(*CONFIG_DEPENDS[M.P_CLEANABLE_RATIO]) and ec.known(*CONFIG_DEPENDS[M.P_CLEANABLE_BYTES])
    assert not ec.known(*CONFIG_DEPENDS[M.P_ELIGIBLE]) and not ec.known(*CONFIG_DEPENDS[M.P_DELAY])

    st = partition_state("t", 0, _segments(), ec.config, NOW, checkpoint=10)
    row = config_columns({"cleanable_ratio": st.cleanable_ratio, "cleanable_bytes": st.cleanable_bytes,
                          "eligible": st.eligible}, ec)
    assert row["cleanable_ratio"] == st.cleanable_ratio and row["cleanable_bytes"] == st.cleanable_bytes
    assert row["eligible"] is None

    ev = explain(st, ec, now_ms=NOW).evidence
    assert ev["cleanable_ratio"] == st.cleanable_ratio and ev["first_uncleanable_offset"] == st.first_uncleanable_offset
    assert ev["eligible"] is None


def test_every_mapped_series_is_a_metric_and_every_mapped_column_an_audit_column():
    from collectors.export import metrics as M
    from spark_analysis.audit.tables import CONFIG_DEPENDENT, PARTITION_DDL

    assert set(series_depends(NAMESPACE)) <= set(M.METRICS)
    columns = {c.split()[0] for c in PARTITION_DDL.split(", ")}
    assert set(CONFIG_DEPENDENT) == set(DEPENDS) & columns
    assert {"cleanable_ratio", "eligible", "removable_records", "retention_deleted_bytes"} <= set(CONFIG_DEPENDENT)

"""The pages' tables (``dashboards.tables``), built from a collector's text page as the pages build them:
the Partitions table joins each partition's series, its one cause and fix, and the rule table's
CompactionLagging (evaluated by ``dashboards.alertrows``, as with a collector as the source); the
consumer-group table of the tombstones page shows how each time lag was told (the method label of
consumer_group_lag_seconds) and why one could not be (consumer_group_lag_seconds_unknown{reason})."""

from __future__ import annotations

import pytest

from dashboards import alertrows, sources, tables
from monitor.settings.config import Thresholds
from monitor.contract.rules import ALERT

G = 'cluster="c",group="g",topic="t",partition="{p}"'
PAGE = "\n".join([
    "# TYPE kafka_compaction_consumer_group_lag_records gauge",
    *(f"kafka_compaction_consumer_group_lag_records{{{G.format(p=p)}}} {10 + p}" for p in range(4)),
    "# TYPE kafka_compaction_consumer_group_lag_seconds gauge",
    f'kafka_compaction_consumer_group_lag_seconds{{{G.format(p=0)},method="exact"}} 48.0',
    f'kafka_compaction_consumer_group_lag_seconds{{{G.format(p=1)},method="interpolated"}} 30.5',
    f'kafka_compaction_consumer_group_lag_seconds{{{G.format(p=2)},method="extrapolated"}} 90.0',
    "# TYPE kafka_compaction_consumer_group_lag_seconds_unknown gauge",
    f'kafka_compaction_consumer_group_lag_seconds_unknown{{{G.format(p=3)},reason="too_few_samples"}} 1.0',
    "",
])


def test_each_time_lag_with_its_method_or_why_it_is_unknown():
    table = tables.consumer_groups_table(sources.samples_from_text(PAGE, "page")).set_index("partition")
    got = {int(p): (r["lag_seconds"], r["lag_method"], r["lag_unknown"]) for p, r in table.iterrows()}
    assert got[0] == (48.0, "exact", "") and got[1] == (30.5, "interpolated", "")
    assert got[2] == (90.0, "extrapolated", "")
    lag, method, why = got[3]
    assert lag != lag and method != method and why == "too_few_samples"  # NaN: no time lag, the reason instead


def test_a_page_at_granularity_topic_has_a_row_for_each_group_partition():
    """At granularity topic (the collector's default) a healthy group's partition carries its time lag and
    ratio only (collectors.export.metrics.GROUP_DEFAULT): it still has its row, its lag in records and what it
    may miss "not exported" (not "unknown"); an unhealthy one keeps its every series."""
    page = "\n".join([
        "# TYPE kafka_compaction_consumer_group_lag_records gauge",
        f"kafka_compaction_consumer_group_lag_records{{{G.format(p=1)}}} 400",
        "# TYPE kafka_compaction_consumer_group_lag_seconds gauge",
        f'kafka_compaction_consumer_group_lag_seconds{{{G.format(p=0)},method="exact"}} 0.0',
        f'kafka_compaction_consumer_group_lag_seconds{{{G.format(p=1)},method="exact"}} 70000.0',
        "# TYPE kafka_compaction_consumer_group_lag_seconds_unknown gauge",
        f'kafka_compaction_consumer_group_lag_seconds_unknown{{{G.format(p=2)},reason="no_writes_sampled"}} 1.0',
        "# TYPE kafka_compaction_consumer_group_lag_retention_ratio gauge",
        f"kafka_compaction_consumer_group_lag_retention_ratio{{{G.format(p=0)}}} 0.0",
        f"kafka_compaction_consumer_group_lag_retention_ratio{{{G.format(p=1)}}} 0.81",
        "# TYPE kafka_compaction_consumer_group_may_miss_updates gauge",
        f'kafka_compaction_consumer_group_may_miss_updates{{{G.format(p=1)},reason="lag_past_min_compaction_lag",'
        'latest_value_only="false"} 1.0',
        "",
    ])
    table = tables.consumer_groups_table(sources.samples_from_text(page, "page")).set_index("partition")
    assert sorted(table.index) == ["0", "1", "2"]
    assert table.loc["0", "lag_seconds"] == 0.0 and table.loc["0", "may_miss_updates"] == "not exported"
    assert table.loc["0", "lag_records"] != table.loc["0", "lag_records"]  # NaN: not exported
    assert table.loc["1", "lag_records"] == 400 and table.loc["1", "may_miss_updates"] == "lag_past_min_compaction_lag"
    assert table.loc["2", "lag_unknown"] == "no_writes_sampled" and table.loc["2", "may_miss_updates"] == "not exported"


def _partition_page() -> str:
    """Three partitions of ``orders`` on broker 1: 0 lagging (ratio above its minimum), 1 held back by an
    open transaction, 2 clean but with duplicates stuck in its active segment."""
    lines = []

    def series(name: str, kind: str, rows: dict[int, float], extra: dict[int, str] | None = None) -> None:
        lines.append(f"# TYPE kafka_compaction_{name} {kind}")
        for p, v in rows.items():
            more = (extra or {}).get(p, "")
            lines.append(f'kafka_compaction_{name}{{cluster="c",broker="1",topic="orders",partition="{p}"{more}}} {v}')

    series("partition_cleanable_ratio", "gauge", {0: 0.8, 1: 0.1, 2: 0.0})
    series("partition_min_cleanable_dirty_ratio", "gauge", {0: 0.5, 1: 0.5, 2: 0.5})
    series("partition_log_bytes", "gauge", {0: 4096, 1: 2048, 2: 1024})
    series("partition_last_stable_offset", "gauge", {1: 17})
    series("partition_compaction_cause", "gauge", {0: 1, 1: 1, 2: 1},
           {0: ',cause="waiting"', 1: ',cause="open_transaction"', 2: ',cause="clean"'})
    series("partition_compaction_blocked", "gauge", {1: 1}, {1: ',reason="last_stable_offset"'})
    series("partition_active_segment_duplicate_records", "gauge", {0: 3, 1: 0, 2: 40})
    series("partition_active_segment_duplicate_bytes", "gauge", {0: 300, 1: 0, 2: 4000})
    # other series of ours and another exporter's: the table reads only what it names
    lines += ["# TYPE up gauge", 'up{job="x"} 1', ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def partition_rows():
    samples = sources.samples_from_text(_partition_page(), "page")
    alerts = alertrows.evaluated_alerts(samples, Thresholds())
    return tables.partitions_table(samples, alerts)


def test_the_partitions_table_joins_each_partitions_series(partition_rows):
    rows = {r["partition"]: r for r in partition_rows.to_dict("records")}
    assert list(partition_rows["partition"]) == [0, 1, 2]  # sorted by topic and partition, as ints
    assert (rows[0]["cleanable_ratio"], rows[0]["threshold"], rows[0]["log_bytes"]) == (0.8, 0.5, 4096)
    assert [rows[p]["cause"] for p in (0, 1, 2)] == ["waiting", "open_transaction", "clean"]
    assert (rows[1]["blocked"], rows[0]["blocked"]) == ("last_stable_offset", "")
    assert "17" in rows[1]["fix"] and "orders" in rows[1]["fix"]  # the abort from the partition's LSO
    assert rows[0]["uncleaned_ratio"] is None  # a series the page does not carry: unknown, never 0


def test_lagging_is_the_rule_tables_alert_not_a_comparison_of_its_own(partition_rows):
    assert list(partition_rows["lagging"]) == [True, False, False]
    samples = sources.samples_from_text(_partition_page(), "page")
    assert tables.partitions_table(samples, None)["lagging"].tolist() == [False] * 3  # no alerts: none raised
    fired = alertrows.alerting(alertrows.evaluated_alerts(samples, Thresholds()), ALERT.CompactionLagging,
                               tables.PARTITION)
    assert fired.astype(str).to_dict("records") == [{"cluster": "c", "broker": "1", "topic": "orders",
                                                     "partition": "0"}]


def test_duplicates_stuck_in_the_active_segment_most_bytes_first(partition_rows):
    stuck = tables.stuck_in_active_segment(partition_rows)
    assert list(stuck["partition"]) == [2, 0]
    assert tables.stuck_in_active_segment(partition_rows.iloc[:0]).empty


def test_a_page_without_partitions_gives_the_tables_columns():
    empty = sources.samples_from_text("# TYPE up gauge\nup 1\n", "page")
    got = tables.partitions_table(empty)
    assert got.empty and {"cause", "fix", "lagging", *tables.ACTIVE_COLUMNS} <= set(got.columns)
    assert tables.consumer_groups_table(empty).empty


def test_the_horizons_table_has_each_state_and_leaves_unread_tombstones_unknown():
    """partition_delete_horizon_records{kind,state} per partition: partition 1's records are unread (headers
    first: its tombstone series are absent), so its tombstone columns are empty, not 0; the soonest removal
    first (tests/collectors/test_delete_horizons_kafka.py feeds the page a real collector's)."""
    P = 'cluster="c",broker="1",topic="t",partition="{p}"'
    rows = ["# TYPE kafka_compaction_partition_delete_horizon_records gauge"]
    for p, kinds in ((0, ("tombstone", "marker")), (1, ("marker",))):
        for kind in kinds:
            rows += [f'kafka_compaction_partition_delete_horizon_records{{{P.format(p=p)},kind="{kind}",state="{s}"}} '
                     f"{n + p}" for s, n in (("unstamped", 4), ("pending", 2), ("passed", 1))]
    rows += ["# TYPE kafka_compaction_partition_next_delete_horizon_timestamp_seconds gauge",
             f"kafka_compaction_partition_next_delete_horizon_timestamp_seconds{{{P.format(p=0)}}} 1795840205.5", ""]
    table = tables.horizons_table(sources.samples_from_text("\n".join(rows), "page"))
    assert list(table["partition"]) == [0, 1]
    first, second = table.iloc[0], table.iloc[1]
    assert (first["tombstones unstamped"], first["tombstones pending"], first["tombstones passed"]) == (4, 2, 1)
    assert (second["markers unstamped"], second["markers pending"], second["markers passed"]) == (5, 3, 2)
    assert second[["tombstones unstamped", "tombstones pending", "tombstones passed"]].isna().all()
    assert first["next removal"].isoformat() == "2026-11-28T04:30:05.500000+00:00"
    assert second["next removal"] != second["next removal"]  # NaT: none known

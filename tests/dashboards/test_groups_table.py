"""The consumer-group table of the tombstones page shows how each time lag was told (the method label of
consumer_group_lag_seconds) and why one could not be (consumer_group_lag_seconds_unknown{reason})."""

from __future__ import annotations

from dashboards import data

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
    table = data.consumer_groups_table(data.samples_from_text(PAGE, "page")).set_index("partition")
    got = {int(p): (r["lag_seconds"], r["lag_method"], r["lag_unknown"]) for p, r in table.iterrows()}
    assert got[0] == (48.0, "exact", "") and got[1] == (30.5, "interpolated", "")
    assert got[2] == (90.0, "extrapolated", "")
    lag, method, why = got[3]
    assert lag != lag and method != method and why == "too_few_samples"  # NaN: no time lag, the reason instead


def test_a_page_at_granularity_topic_has_a_row_for_each_group_partition():
    """At granularity topic (the collector's default) a healthy group's partition carries its time lag and
    ratio only (collectors.metrics.GROUP_DEFAULT): it still has its row, its lag in records and what it
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
    table = data.consumer_groups_table(data.samples_from_text(page, "page")).set_index("partition")
    assert sorted(table.index) == ["0", "1", "2"]
    assert table.loc["0", "lag_seconds"] == 0.0 and table.loc["0", "may_miss_updates"] == "not exported"
    assert table.loc["0", "lag_records"] != table.loc["0", "lag_records"]  # NaN: not exported
    assert table.loc["1", "lag_records"] == 400 and table.loc["1", "may_miss_updates"] == "lag_past_min_compaction_lag"
    assert table.loc["2", "lag_unknown"] == "no_writes_sampled" and table.loc["2", "may_miss_updates"] == "not exported"

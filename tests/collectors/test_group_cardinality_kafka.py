"""Cardinality of the consumer groups (issue 14 point 3), on the real broker through ``collect --once``:
at granularity topic (the default) a healthy group's partition costs at most
``collectors.export.metrics.GROUP_DEFAULT_SERIES`` series, every series at ``--granularity partition``; a group
lagging past ConsumerMayMissTombstones' warning fraction of delete.retention.ms keeps every series at
both and raises the alert at both (the rule evaluator as the dashboard runs it); the group-topic
aggregates; the Streamlit tombstones page over the default page.

Expected values come from what the test wrote: the offsets committed and the timestamps given to the
records (a record 660 s old against a delete.retention.ms of 1200 s: 0.55, past the default warning
fraction 0.5 and below 1)."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from confluent_kafka import TopicPartition

from collecting import collect_once
from collectors.export import metrics as M
from dashboards import alertrows, sources
from dashboards import tables as dashtables
from faultserver import FaultServer
from kafkatools import commit_offsets, compacted, create_topic, produce_timed, unique_topic
from monitor.settings.config import Thresholds

pytestmark = pytest.mark.kafka

PARTITIONS = 20
HEALTHY_GROUPS = 4
RETENTION_S = 1200
OLD_S = 660  # the lagging group's record: 0.55 of delete.retention.ms, 540 s of headroom below 1
OLD_RECORDS, NEW_RECORDS, COMMITTED = 20, 10, 5


@pytest.fixture(scope="module")
def groups(kafka, tmp_path_factory):
    b = kafka.bootstrap
    # min.compaction.lag.ms of an hour: the lag of 660 s is not past it, so ConsumerMayMissUpdates holds
    # nowhere and the lagging group's only alert is ConsumerMayMissTombstones (warning)
    t = create_topic(b, unique_topic("groupcard"), PARTITIONS,
                     **compacted(**{"delete.retention.ms": RETENTION_S * 1000, "min.compaction.lag.ms": 3_600_000}))
    old_ms = int(time.time() * 1000) - OLD_S * 1000
    produce_timed(b, t, [(f"old{i}".encode(), b"v", old_ms + i) for i in range(OLD_RECORDS)], partition=0)
    ends = {}
    for p in range(PARTITIONS):
        produce_timed(b, t, [(f"k{i}".encode(), b"v", 0) for i in range(NEW_RECORDS)], partition=p)
        ends[p] = NEW_RECORDS + (OLD_RECORDS if p == 0 else 0)
    prefix = unique_topic("gc")
    healthy = [f"{prefix}-ok{i}" for i in range(HEALTHY_GROUPS)]
    lagging = f"{prefix}-lagging"
    for g in healthy:  # caught up everywhere: lag 0
        commit_offsets({"bootstrap.servers": b, "group.id": g}, [TopicPartition(t, p, ends[p]) for p in ends])
    commit_offsets({"bootstrap.servers": b, "group.id": lagging},
                   [TopicPartition(t, p, COMMITTED if p == 0 else ends[p]) for p in ends])
    cfg = {"clusters": [{"name": "gc", "bootstrap_servers": b}]}  # the admin API only: groups and topics
    pages = {}
    for granularity in ("topic", "partition"):
        before = time.time()
        proc = collect_once({**cfg, **({"granularity": granularity} if granularity == "partition" else {})},
                            tmp_path_factory.mktemp(granularity))
        assert proc.returncode == 0, proc.stderr
        pages[granularity] = (proc.stdout, before, time.time())
    return {"topic": t, "healthy": healthy, "lagging": lagging, "old_ms": old_ms + COMMITTED, "ends": ends,
            "pages": pages}


def _samples(groups, granularity):
    return sources.samples_from_text(groups["pages"][granularity][0], granularity)


def _ours(samples, groups):
    g = samples["group"] if "group" in samples.columns else None
    return samples[(samples["topic"] == groups["topic"]) & g.notna()] if g is not None else samples.iloc[:0]


def per_group_partition(samples, groups) -> Counter:
    ours = _ours(samples, groups)
    ours = ours[ours["partition"].notna()]
    return Counter((r["group"], r["partition"]) for r in ours.to_dict("records"))


def test_a_healthy_group_partition_costs_at_most_the_default_series(groups):
    cut = per_group_partition(_samples(groups, "topic"), groups)
    full = per_group_partition(_samples(groups, "partition"), groups)
    bad = (groups["lagging"], "0")
    assert len(cut) == len(full) == (HEALTHY_GROUPS + 1) * PARTITIONS
    healthy = {k: n for k, n in cut.items() if k != bad}
    assert max(healthy.values()) <= M.GROUP_DEFAULT_SERIES, Counter(healthy.values())
    assert min(full[k] for k in healthy) > M.GROUP_DEFAULT_SERIES  # the default really drops series
    assert cut[bad] == full[bad] > M.GROUP_DEFAULT_SERIES  # the lagging one keeps every series
    names = {n for n in _ours(_samples(groups, "topic"), groups).query("partition == partition")["name"]}
    print(f"group series of the topic: default {sum(cut.values())}, partition {sum(full.values())}")
    assert names - {M.G_LAG_SECONDS, M.G_RETENTION_FRACTION} <= {M.G_LAG, M.G_AT_RISK, M.G_MAY_MISS}


def test_the_lagging_group_raises_consumer_may_miss_tombstones_at_both_granularities(groups):
    fired = {}
    for granularity in ("topic", "partition"):
        alerts = alertrows.evaluated_alerts(_samples(groups, granularity), Thresholds())
        ours = alerts[alerts["topic"] == groups["topic"]] if "topic" in alerts.columns else alerts.iloc[:0]
        fired[granularity] = sorted(map(tuple, ours[["alert", "severity", "group", "partition"]].astype(str).values))
    assert fired["topic"] == fired["partition"] == [("ConsumerMayMissTombstones", "warning", groups["lagging"], "0")]
    text, before, after = groups["pages"]["topic"]
    ratio = {r["group"]: r["value"] for r in _ours(_samples(groups, "topic"), groups).to_dict("records")
             if r["name"] == M.G_RETENTION_FRACTION and r["partition"] == "0"}
    lag_at = (before - groups["old_ms"] / 1000, after - groups["old_ms"] / 1000)
    assert lag_at[0] / RETENTION_S <= ratio[groups["lagging"]] <= lag_at[1] / RETENTION_S
    assert Thresholds().consumer_lag_warning_fraction < ratio[groups["lagging"]] < 1


def test_group_topic_aggregates_at_both_granularities(groups):
    for granularity in ("topic", "partition"):
        ours = _ours(_samples(groups, granularity), groups)
        agg = {(r["name"], r["group"]): r["value"] for r in ours[ours["partition"].isna()].to_dict("records")}
        lagging = groups["lagging"]
        assert agg[(M.GT_LAG, lagging)] == OLD_RECORDS + NEW_RECORDS - COMMITTED
        assert agg[(M.GT_UNHEALTHY, lagging)] == 1 and agg[(M.GT_LAG_UNKNOWN, lagging)] == 0
        ratio = agg[(M.GT_MAX_RETENTION_FRACTION, lagging)]
        assert agg[(M.GT_MAX_LAG_SECONDS, lagging)] == pytest.approx(ratio * RETENTION_S)
        assert Thresholds().consumer_lag_warning_fraction < ratio < 1
        for g in groups["healthy"]:
            assert agg[(M.GT_LAG, g)] == 0 and agg[(M.GT_UNHEALTHY, g)] == 0
            assert agg[(M.GT_MAX_LAG_SECONDS, g)] == 0 and agg[(M.GT_MAX_RETENTION_FRACTION, g)] == 0


def test_the_groups_table_and_the_tombstones_page_at_the_default_granularity(groups, monkeypatch):
    """The dashboard's group table has every group's partition at both granularities, with the same time
    lags; the Streamlit tombstones page renders the default page (served as is) without an error."""
    tables = {g: dashtables.consumer_groups_table(_samples(groups, g)) for g in ("topic", "partition")}
    tables = {g: t[t["topic"] == groups["topic"]].sort_values(["group", "partition"]).reset_index(drop=True)
              for g, t in tables.items()}
    assert len(tables["topic"]) == (HEALTHY_GROUPS + 1) * PARTITIONS
    cols = ["group", "partition", "lag_method", "lag_unknown"]
    assert tables["topic"][cols].equals(tables["partition"][cols])
    # the time lags of two collect --once runs: equal where caught up (0), the lagging one's grows
    lag = {g: dict(zip(zip(t["group"], t["partition"]), t["lag_seconds"])) for g, t in tables.items()}
    assert {k: v for k, v in lag["topic"].items() if v == 0} == {k: v for k, v in lag["partition"].items() if v == 0}
    assert set(tables["topic"]["may_miss_updates"]) == {"not exported"} | {
        tables["topic"].set_index(["group", "partition"]).loc[(groups["lagging"], "0"), "may_miss_updates"]}

    from streamlit.testing.v1 import AppTest

    server = FaultServer(ok_body=groups["pages"]["topic"][0].encode())
    try:
        monkeypatch.setenv("COMPACTION_MONITOR_NO_AUTOREFRESH", "1")
        for var in ("COMPACTION_MONITOR_CONFIG", "COMPACTION_MONITOR_PROMETHEUS_URL", "COMPACTION_MONITOR_AUDIT_DIR"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("COMPACTION_MONITOR_COLLECTOR_URL", server.url)
        at = AppTest.from_file(sources.__file__.rsplit("/", 1)[0] + "/views/tombstones.py", default_timeout=120)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        shown = next(d.value for d in at.dataframe if "Group" in d.value.columns and "Time lag" in d.value.columns)
        ours = shown[shown["Topic"] == groups["topic"]]
        assert len(ours) == (HEALTHY_GROUPS + 1) * PARTITIONS
        worst = ours.iloc[0]  # the page lists the longest time lag first
        assert (worst["Group"], worst["Partition"]) == (groups["lagging"], "0")
    finally:
        server.close()

"""The live pages as the person on call reads them, over a collector's page with one partition of every kind
(tests/dashboards/oncallpage.py, served over HTTP): the overview answers what is wrong, where and what to do,
every count is followed by what it counts, every figure is text of the one formatter (no ``None``, ``nan``,
scientific notation, raw bytes or seconds), a chart with nothing to show is a sentence, and a source that
is down is named with since when."""

from __future__ import annotations

import re

import pytest

from dashpages import page
from faultserver import FaultServer
from oncallpage import DOWN_SINCE, NEXT_REMOVAL, page as collector_page

from monitor.contract import units

UNREADABLE = re.compile(r"\bNone\b|\bnan\b|\bNaN\b|\bNaT\b|\d[eE][+-]?\d")
LIVE = ("overview", "brokers", "partitions", "tombstones")


@pytest.fixture(scope="module")
def collector():
    server = FaultServer(ok_body=collector_page().encode())
    yield server.url
    server.close()


def texts(at) -> list[str]:
    """Every text a person reads on the page: messages, Markdown, captions, tiles, and every table cell and
    column label."""
    out = [e.value for kind in ("error", "warning", "info", "success", "markdown", "caption", "subheader")
           for e in at.get(kind)]
    out += [f"{m.label} {m.value}" for m in at.metric]
    for d in (*at.dataframe, *at.table):
        out += [str(c) for c in d.value.columns]
        out += [str(v) for v in d.value.astype(str).values.ravel()]
    return out


def frames(at) -> list:
    """Every table on the page: the data grids and the static tables of the details."""
    return [d.value for d in (*at.dataframe, *at.table)]


@pytest.mark.parametrize("name", LIVE)
def test_no_none_nan_or_scientific_notation_anywhere(name, collector, monkeypatch):
    at = page(name, monkeypatch, collector_url=collector)
    bad = [t for t in texts(at) if UNREADABLE.search(t)]
    assert not bad, bad
    for f in frames(at):  # cells are text of the formatter: a grid never formats a number itself
        assert all(f[c].map(lambda v: isinstance(v, str)).all() for c in f.columns), f.dtypes
        assert not [c for c in f.columns if "_" in c or "(s)" in c], list(f.columns)  # words


def test_overview_groups_the_partitions_by_cause_with_fix_and_runbook(collector, monkeypatch):
    at = page("overview", monkeypatch, collector_url=collector)
    groups = {m.group(1): e.value for e in (*at.error, *at.warning, *at.info)
              if (m := re.match(r"\*\*(\w+)\*\* on ", e.value))}
    # first the causes whose alert fires (CompactionLagging on orders-0), then those whose alert does not
    # (yet: CompactionBlockedByTransaction is not raised for payments-2), folded, then configured behaviour;
    # the causes' precedence within each; clean is no group
    assert list(groups) == ["waiting", "open_transaction", "min_compaction_lag", "below_threshold"]
    assert [e.label for e in at.expander if "their alert pending" in e.label] == \
        ["1 partition(s) past a limit, their alert pending"]
    assert any(e.value.startswith("**open_transaction**") for e in at.warning)  # not red: its alert is not firing
    assert "payments-2" in groups["open_transaction"]
    assert "--topic payments --partition 2 --start-offset 1234" in groups["open_transaction"]
    assert "alerts/RUNBOOK.md#compactionblockedbytransaction" in groups["open_transaction"]
    assert "orders-0" in groups["waiting"] and "alerts/RUNBOOK.md#compactionlagging" in groups["waiting"]
    assert "cdc-0, cdc-1, cdc-2, cdc-3" in groups["min_compaction_lag"]
    assert "--entity-name cdc --add-config min.compaction.lag.ms=" in groups["min_compaction_lag"]
    assert "quiet-0" not in " ".join(groups.values())


def test_every_tile_is_followed_by_what_it_counts(collector, monkeypatch):
    at = page("overview", monkeypatch, collector_url=collector)
    tiles = {m.label: m.value for m in at.metric}
    named = {m.group(1): m.group(2).strip() for e in at.markdown
             for m in re.finditer(r"\*\*([^*]+)\*\*: (.*)", e.value)}
    assert tiles["Held back"] == "5"
    held = named["Held back"]
    assert all(f"cdc-{p} (min_compaction_lag)" in held for p in range(4)) and "payments-2 (open_transaction)" in held
    assert tiles["Lagging"] == "1" and named["Lagging"] == "orders-0"
    assert tiles["Groups at risk"] == "1" and named["Groups at risk"] == "billing"
    assert tiles["Dead threads"] == "1" and named["Dead threads"] == "broker 1: 1"
    assert tiles["Sources down"] == "1" and named["Sources down"] == "logdir:c:1"
    assert {k for k, v in tiles.items() if v != "0"} == set(named)  # a count above 0 is never alone


@pytest.mark.parametrize("name", LIVE)
def test_a_collector_source_down_is_named_with_since_when(name, collector, monkeypatch):
    at = page(name, monkeypatch, collector_url=collector)
    [down] = [e.value for e in at.error if "source(s) down" in e.value]
    assert "`logdir:c:1`" in down and units.timestamp_utc(DOWN_SINCE * 1000) in down and " d ago" in down
    assert "/d: permission denied" in down


@pytest.mark.parametrize("name", LIVE)
def test_the_dashboards_own_source_down_says_which_and_since_when(name, monkeypatch):
    from localkafka.broker import free_port

    url = f"http://127.0.0.1:{free_port()}/metrics"
    at = page(name, monkeypatch, collector_url=url)
    [err] = [e.value for e in at.error if "Cannot read the data source" in e.value]
    assert f"the collector at {url}" in err
    assert re.search(r"Unreadable since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z, (under 1 s|\d+ s) ago", err), err


def test_a_chart_only_when_it_has_something_to_show(collector, monkeypatch):
    """The brokers' page over a collector whose only cleaner gauge is a dead thread: the dead-thread chart
    (a value above 0) is drawn, every other panel is one sentence saying why there is no chart."""
    at = page("brokers", monkeypatch, collector_url=collector)
    sentences = [m.value for m in at.markdown if "no chart" in m.value]
    assert any("Longest recent clean**: no chart, no cleaning recorded yet" in v for v in sentences), sentences
    assert len(at.get("plotly_chart")) + len(sentences) == 6
    assert len(at.get("plotly_chart")) == 1  # the dead thread


def test_no_dead_thread_is_a_sentence_not_a_flat_line(monkeypatch):
    body = collector_page().replace('broker_cleaner_dead_threads{cluster="c",broker="1"} 1',
                                    'broker_cleaner_dead_threads{cluster="c",broker="1"} 0')
    server = FaultServer(ok_body=body.encode())
    try:
        at = page("brokers", monkeypatch, collector_url=server.url)
    finally:
        server.close()
    assert any("no chart, no cleaner thread has died" in m.value for m in at.markdown)
    assert not at.get("plotly_chart")


def test_partitions_read_in_words_and_units(collector, monkeypatch):
    """The figures the issue found raw (86851 bytes, 308754 duplicates of 104857600 bytes, 234 s, 604800 s)
    read in units; a partition still being read has its tombstones pending, a healthy one's detail
    unknown (not exported), never empty or 0."""
    at = page("partitions", monkeypatch, collector_url=collector)
    shown = frames(at)
    main = shown[0].set_index(["Topic", "Partition"])
    assert main.loc[("orders", "0"), "Uncleaned"] == "84.8 KiB"
    assert main.loc[("orders", "0"), "Cleanable ratio / min"] == "0.90 / 0.50"
    assert main.loc[("cdc", "0"), "Held back by"] == "min_compaction_lag"
    assert main.loc[("quiet", "0"), "Uncleaned"] == "unknown (not exported)"
    [tomb] = [f.set_index(["Topic", "Partition"]) for f in shown if "Tombstones" in f.columns]
    assert tomb.loc[("fresh", "0"), "Tombstones"].startswith("pending")
    assert tomb.loc[("orders", "0"), "Tombstones"] == "3"
    [sizes] = [f.set_index(["Topic", "Partition"]) for f in shown if "Eligible" in f.columns]
    assert sizes.loc[("orders", "0"), "Eligible"] == "for 3 min 54 s"
    [dup] = [f for f in shown if "Duplicate records" in f.columns]
    assert list(dup.iloc[0][["Duplicate records", "Duplicate size", "Rolls"]]) == ["308,754", "100.0 MiB", "in 7 d"]
    [roll] = [f for f in shown if "Rolls at age" in f.columns]
    assert list(roll.iloc[0][["Age", "Size", "Rolls at age"]]) == ["3 min 54 s", "1.0 MiB", "7 d"]
    assert all(len(f.columns) <= 7 for f in shown), [list(f.columns) for f in shown]  # fits 1366 px


def test_tombstones_time_lag_reads_as_a_duration(collector, monkeypatch):
    at = page("tombstones", monkeypatch, collector_url=collector)
    [groups] = [d.value for d in at.dataframe if "Time lag" in d.value.columns]
    assert list(groups["Time lag"]) == ["4 min 6 s"]  # 246.3113 s
    [records] = [f for f in frames(at) if "Lag" in f.columns]
    assert list(records["Lag"]) == ["1,048,576"]


def test_delete_horizons_read_as_counts_and_a_utc_time(collector, monkeypatch):
    at = page("tombstones", monkeypatch, collector_url=collector)
    [h] = [d.value for d in at.dataframe if "Next removal (UTC)" in d.value.columns]
    row = h.set_index(["Topic", "Partition"]).loc[("orders", "0")]
    assert row["Next removal (UTC)"] == units.timestamp_utc(NEXT_REMOVAL * 1000) == "2025-12-06T05:48:43.500Z"
    assert (row["Tombstones unstamped"], row["Tombstones pending"], row["Tombstones passed"]) == ("1", "1", "1")
    [markers] = [f for f in frames(at) if "Markers passed" in f.columns]
    assert set(markers.iloc[0][["Markers unstamped", "Markers pending", "Markers passed"]]) == {"unknown (no series)"}


def test_alerts_say_which_where_and_since_when(collector, monkeypatch):
    at = page("overview", monkeypatch, collector_url=collector)
    alerts = at.dataframe[0].value
    assert list(alerts.columns) == ["Severity", "Alert", "Where", "Since"]
    rows = dict(zip(alerts["Alert"], zip(alerts["Where"], alerts["Since"])))
    # one cluster: its name is left out of every row
    assert rows["ConsumerMayMissTombstones"] == ("group billing, orders-0",
                                                 "active, unknown (no history without Prometheus)")
    assert rows["CompactionMonitorDown"][0] == "source logdir:c:1"
    assert list(alerts["Severity"])[:2] == ["critical", "critical"]  # the most severe first

"""Every dashboard page with AppTest, fed by a real collector and a real Prometheus over a broker of
this module's own running the demo's scenario (the overview counts every partition and group the
collector sees, so no other test's topic may be there); and the unreachable, empty and no-audit states."""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml
from confluent_kafka import Consumer, TopicPartition

from cli import demo as cli_demo
from cli import demo_scenario
from localkafka import processes
from dashpages import page
from kafkatools import CLI_MODULE, own_broker, unique_topic, wait_records
from waiting import wait_for

pytestmark = pytest.mark.kafka
slow = pytest.mark.slow  # the tests on this module's own broker (conftest marks those on the session's)
NAMES = demo_scenario.Names(unique_topic("pages"))  # the scenario's topics and group
PARTITIONS = 3  # per topic, as cli.demo_scenario.create_topics makes them


def firing(prom: str, name: str):
    """Prometheus' alerts once ``name`` fires, else None."""
    got = cli_demo.alerts(prom)
    return got if name in {a["labels"]["alertname"] for a in got if a["state"] == "firing"} else None


def committed_partitions(bootstrap: str) -> list[int]:
    """The flood topic's partitions on which the stopped group has a committed offset, from the broker."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": NAMES.group, "enable.auto.commit": False})
    try:
        got = c.committed([TopicPartition(NAMES.flood, p) for p in range(PARTITIONS)], timeout=10)
    finally:
        c.close()
    return sorted(tp.partition for tp in got if tp.offset >= 0)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with own_broker(tmp_path_factory.mktemp("kafka-pages"), "kafka pages") as state:
        yield state


@pytest.fixture(scope="module")
def live(broker, tmp_path_factory):
    """The demo's scenario on this module's broker, with the collector and Prometheus over it."""
    t = demo_scenario.FAST
    demo_scenario.create_topics(broker.bootstrap, t, PARTITIONS, NAMES)
    work = demo_scenario.Workload(broker.bootstrap, t, names=NAMES)
    work.start()
    try:
        wait_records(broker.bootstrap, NAMES.flood, PARTITIONS, 50)  # what the stopped group reads
        demo_scenario.stopped_consumer(broker.bootstrap, NAMES.flood, NAMES.group)
        with cli_demo.stack(broker, tmp_path_factory.mktemp("dash"), t, dashboard=False) as run:
            wait_for(lambda: firing(run.prometheus_url, "ConsumerMayMissTombstones"), 120,
                     f"ConsumerMayMissTombstones firing for {NAMES.group}", interval=1)
            yield run
    finally:
        work.stop()


def brokers_page(monkeypatch, **sources):
    """The brokers page once it shows the broker's cleaner gauges: the collector drops a source's samples
    while it is down, and the broker's JMX exporter (a page of a few hundred KB from a JVM) missed the
    stack's fetch deadline now and then on a loaded two-core machine, leaving the page its "No broker cleaner
    gauges yet" line for a refresh (seen on xdist runs)."""
    def shown():
        at = page("brokers", monkeypatch, **sources)
        gone = any(i.value.startswith("No broker cleaner gauges") for i in at.info) or any(
            c.value.startswith("The brokers' gauges are missing") for c in at.caption)
        return None if gone else at

    return wait_for(shown, 90, "the brokers page with the broker's cleaner gauges", interval=2)


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def charts(at) -> int:
    return len(at.get("plotly_chart"))


def panels(at) -> int:
    """The brokers page's panels: each a chart, or a sentence saying why there is none."""
    return charts(at) + len([m for m in at.markdown if "no chart" in m.value])


@slow
def test_overview_from_prometheus(live, monkeypatch):
    """The on-call engineer opens the overview: the held-back topic and the stopped group are counted,
    and Prometheus' firing alerts are listed; the counts are those of the alerts."""
    at = page("overview", monkeypatch, prometheus_url=live.prometheus_url)
    m = metrics(at)
    assert int(m["Held back"]) == PARTITIONS  # the lagging topic's, held by min.compaction.lag.ms
    assert int(m["Groups at risk"]) == 1 and int(m["Dead threads"]) == 0 and int(m["Sources down"]) == 0
    # each count is followed by what it counts: the held-back partitions named, and the group
    named = " ".join(e.value for e in at.markdown)
    assert all(f"{NAMES.lagging}-{p} (min_compaction_lag)" in named for p in range(PARTITIONS))
    assert f"**Groups at risk**: {NAMES.group}" in named
    # what needs attention, by cause: the held-back topic under min_compaction_lag, with its fix
    [held] = [i.value for i in at.info if i.value.startswith("**min_compaction_lag**")]
    assert all(f"{NAMES.lagging}-{p}" in held for p in range(PARTITIONS))
    assert f"--entity-name {NAMES.lagging} --add-config min.compaction.lag.ms=" in held
    alerts = at.dataframe[0].value
    firing = alerts[alerts["Since"].str.startswith("firing for ")]
    print(m, alerts.to_string(), sep="\n")  # shown with a failure
    risk = firing[firing["Alert"] == "ConsumerMayMissTombstones"]
    assert risk["Where"].str.contains(f"group {NAMES.group},").all() and not risk.empty
    lagging = firing[firing["Alert"] == "CompactionLagging"]
    assert int(m["Lagging"]) == lagging["Where"].nunique()
    # held back by design is not lagging: nothing of it is cleanable. (Whether the healthy topic's cleaner
    # keeps within 3 s of its threshold depends on the machine's load, so it is not asserted.)
    assert not lagging["Where"].str.contains(NAMES.lagging).any()
    assert firing["Since"].str.match(r"firing for (under 1 s|\d+ (s|min|h|d)( \d+ (s|min))?)$").all()  # a duration
    # the UTC time each alert began, with its summary, in the expander under the table
    said = " ".join(e.value for e in at.markdown)
    assert re.search(r"\*\*ConsumerMayMissTombstones\*\* \([^)]*\), firing since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z, .* ago:",
                     said), said
    assert charts(at) == 1  # the heatmap
    assert not any("not evaluated" in c.value for c in at.caption)


@slow
def test_brokers_show_gauges_over_time(live, monkeypatch):
    at = brokers_page(monkeypatch, prometheus_url=live.prometheus_url)
    assert panels(at) == 6
    # the broker's cleaner threads are alive: a sentence, not a line at 0 (or too few samples yet: a sentence too)
    from monitor.contract.panels import panel

    assert any(m.value.startswith(f"**{panel('dead_threads').title}**: no chart, ") for m in at.markdown)


@slow
def test_partitions_table_and_drill_down(live, monkeypatch):
    """The engineer finds which partitions are uncleaned and why: min.compaction.lag.ms holds them back,
    so nothing is cleanable and they are not lagging."""
    at = page("partitions", monkeypatch, prometheus_url=live.prometheus_url)
    table = at.dataframe[0].value
    assert set(table["Topic"]) >= set(NAMES.topics)
    lag = table[table["Topic"] == NAMES.lagging]
    assert len(lag) == PARTITIONS and (lag["Cleanable ratio / min"] == "0.00 / 0.50").all()
    assert (lag["Held back by"] == "min_compaction_lag").all() and (lag["Lagging"] == "no").all()
    assert lag["Uncleaned"].str.match(r"\d+(\.\d)? (B|KiB|MiB)$").all()  # some bytes, in units
    # each partition's cause (partition_compaction_cause): min.compaction.lag.ms holds the lagging topic,
    # with the config to change; the chart counts the table's causes
    assert (lag["Cause"] == "min_compaction_lag").all()
    fixes = " ".join(m.value for m in at.markdown if m.value.startswith("**min_compaction_lag**"))
    assert f"--entity-name {NAMES.lagging} --add-config min.compaction.lag.ms=" in fixes
    details = [t.value for t in at.table]  # a partition's details: static tables in expanders
    [sizes] = [d for d in details if "Uncleaned ratio" in d.columns]
    assert (sizes[sizes["Topic"] == NAMES.lagging]["Uncleaned ratio"] == "1.00").all()
    [txn] = [d for d in details if "Open transactions" in d.columns]
    assert (txn[txn["Topic"] == NAMES.lagging]["Open transactions"] == "0").all()
    [bars] = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
              if "per cause" in json.loads(c.proto.spec)["layout"]["title"]["text"]]
    drawn = dict(zip(bars["data"][0]["y"], bars["data"][0]["x"]))
    assert drawn == table["Cause"].value_counts().to_dict()
    # duplicates stuck in active segments: a table of them, or the all-clear; never a failure
    assert any(h.value == "Duplicates stuck in the active segment" for h in at.subheader)
    stuck = [d.value for d in at.dataframe if "Duplicate records" in d.value.columns]
    assert all((d["Duplicate records"] != "0").all() for d in stuck)
    at.selectbox(key="partitions.pick").set_value(f"{NAMES.lagging}-1").run()
    assert not at.exception
    assert any("min_compaction_lag" in w.value for w in at.warning)
    assert any("Cause: **min_compaction_lag**" in i.value for i in at.info)
    assert metrics(at)["Uncleaned ratio"] == "1.00" and metrics(at)["Kafka's cleanable ratio"] == "0.00"
    at.multiselect(key="partitions.topics").set_value([NAMES.healthy]).run()
    assert set(at.dataframe[0].value["Topic"]) == {NAMES.healthy}


@slow
def test_tombstones_and_groups_at_risk(live, broker, monkeypatch):
    at = page("tombstones", monkeypatch, prometheus_url=live.prometheus_url)
    groups = [df for df in (d.value for d in at.dataframe) if "Group" in df.columns and "Time lag" in df.columns]
    assert len(groups) == 1 and set(groups[0]["Group"]) == {NAMES.group}
    # a row for each partition the group committed an offset on, as the broker reports them
    assert set(groups[0]["Topic"]) == {NAMES.flood}
    assert sorted(groups[0]["Partition"].astype(int)) == committed_partitions(broker.bootstrap)
    # each time lag a duration, told by the collector's method (none left without a reason)
    assert groups[0]["Time lag"].str.match(r"\d+(\.\d)? (ms|s|min|h|d)( \d+ (s|min))?$").all(), groups[0]
    assert set(groups[0]["Told"]) <= {"exact", "interpolated", "extrapolated"}
    # min.compaction.lag.ms is 0 on the flood topic: a group lagging at all may miss intermediate updates
    assert groups[0]["May miss updates"].str.contains("lags past min.compaction.lag.ms").all()  # REASON_WORDS
    # the figures behind the text: past delete.retention.ms, as the alert says
    from dashboards import sources, tables

    s = sources.Settings(prometheus_url=live.prometheus_url)
    lags = tables.consumer_groups_table(sources.current(s))
    assert (lags[lags["group"] == NAMES.group]["lag_seconds"] > demo_scenario.FAST.flood_retention_ms / 1000).all()
    # every chart has something to show, or a sentence says why not
    assert charts(at) + len([c for c in at.caption if "no chart" in c.value]) + len(
        [i for i in at.info if "No partition's delete-horizon series" in i.value]) == 4


@slow
def test_collector_only_evaluates_alerts_in_python(live, monkeypatch):
    """Without Prometheus the pages still show health, from the collector's current values."""
    at = page("overview", monkeypatch, collector_url=live.collector_url)
    alerts = at.dataframe[0].value
    assert "ConsumerMayMissTombstones" in set(alerts["Alert"])
    assert set(alerts["Since"]) == {"active, unknown (no history without Prometheus)"}
    assert "TombstonesPilingUp" not in set(alerts["Alert"])  # needs an hour of history, and says so
    assert any(c.value.startswith("TombstonesPilingUp is not evaluated without Prometheus") for c in at.caption)
    at = brokers_page(monkeypatch, collector_url=live.collector_url)
    assert panels(at) == 6


def test_config_review_lists_the_findings_and_the_brokers_cleaner_settings(live, broker, monkeypatch):
    """The demo's tombstone-flood topic keeps deletes 4 s (cli.demo_scenario.FAST) while its stopped group lags
    far more (ConsumerMayMissTombstones fires): the review flags delete.retention.ms on it, with the
    command that raises it; the broker's cleaner settings are Kafka's defaults, read from the broker."""
    at = page("config_review", monkeypatch, collector_url=live.collector_url)
    found = at.dataframe[0].value
    row = found[(found["topic"] == NAMES.flood) & (found["check"] == "delete_retention_below_consumer_lag")]
    assert len(row) == 1, found
    r = row.iloc[0]
    # in words (monitor.contract.units), not milliseconds: 4 s kept, a whole day suggested
    assert (r["setting"], r["now"], r["suggested"]) == ("delete.retention.ms", "4 s", "1 d")
    [commands] = [c.value for c in at.code]
    assert f"--entity-name {NAMES.flood} --add-config delete.retention.ms=86400000" in commands
    settings = at.dataframe[-1].value  # one row per setting, one column per broker
    mine = dict(zip(settings["setting"], settings[f"broker {broker.node_id}"]))
    assert (mine["log.cleaner.threads"], mine["log.cleaner.enable"]) == ("1 (admin)", "yes (admin)")
    assert mine["log.cleaner.dedupe.buffer.size"].startswith("128.0 MiB (")  # Kafka's default, in IEC bytes


def _lines(chart, axis: str) -> list[float]:
    """Where a Plotly chart draws its horizontal (``y``) or vertical (``x``) threshold lines."""
    spec = json.loads(chart.proto.spec)
    return [sh[f"{axis}0"] for sh in spec["layout"].get("shapes", []) if sh.get(f"{axis}0") == sh.get(f"{axis}1")]


@slow
def test_thresholds_come_from_the_loaded_config(live, tmp_path, monkeypatch):
    """monitor.yaml's thresholds, not Thresholds() defaults, are what the pages draw and evaluate with."""
    cfg = tmp_path / "m.yaml"
    cfg.write_text(yaml.safe_dump({"thresholds": {"clean_time_seconds": 1234, "consumer_lag_warning_fraction": 0.3}}))
    at = brokers_page(monkeypatch, collector_url=live.collector_url, config=cfg)
    assert [1234] in [_lines(c, "y") for c in at.get("plotly_chart")]
    default = brokers_page(monkeypatch, collector_url=live.collector_url)
    assert [1234] not in [_lines(c, "y") for c in default.get("plotly_chart")]
    at = page("tombstones", monkeypatch, collector_url=live.collector_url, config=cfg)
    assert any(0.3 in _lines(c, "x") and 1 in _lines(c, "x") for c in at.get("plotly_chart"))
    monkeypatch.setenv("COMPACTION_MONITOR_CONFIG", str(cfg))
    monkeypatch.setenv("COMPACTION_MONITOR_COLLECTOR_URL", live.collector_url)
    from dashboards import sources

    settings = sources.settings_from_env()
    assert settings.thresholds.clean_time_seconds == 1234
    # the collector's real samples, evaluated with the loaded thresholds: the stopped group is past
    # delete.retention.ms whatever the warning fraction, so it stays critical
    alerts = sources.alerts(settings, sources.current(settings))
    risk = alerts[alerts["alert"] == "ConsumerMayMissTombstones"]
    assert set(risk[risk["group"] == NAMES.group]["severity"]) == {"critical"}


def test_unreachable_sources_say_so(monkeypatch):
    from localkafka.broker import free_port

    port = free_port()
    for env in ({"prometheus_url": f"http://127.0.0.1:{port}"}, {"collector_url": f"http://127.0.0.1:{port}/metrics"}):
        for name in ("overview", "brokers", "partitions", "tombstones"):
            at = page(name, monkeypatch, **env)
            assert any("Cannot read the data source" in e.value and str(port) in e.value for e in at.error), name
    at = page("overview", monkeypatch)
    assert any("no data source configured" in e.value for e in at.error)


def test_no_compacted_topic_and_no_audit(kafka, tmp_path, monkeypatch):
    """A collector that only sees a broker's JMX page: no partitions to show, and no audit yet."""
    port = processes.free_port()
    cfg = {"listen": {"address": "127.0.0.1", "port": port},
           "clusters": [{"name": "j", "brokers": [{"id": 1, "jmx_url": kafka.jmx_url}]}]}
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(cfg))
    url = f"http://127.0.0.1:{port}/metrics"

    def jmx_up():
        with urllib.request.urlopen(url, timeout=5) as r:
            return 'kind="jmx",source="jmx:j:1"} 1.0' in r.read().decode()

    with processes.process([sys.executable, "-m", CLI_MODULE, "collect", "--config", str(tmp_path / "m.yaml")],
                          tmp_path / "c.log", url):
        wait_for(jmx_up, 30, "the collector's JMX source up")
        for name in ("partitions", "tombstones"):
            at = page(name, monkeypatch, collector_url=url)
            assert any("No compacted partition" in i.value for i in at.info), name
        at = page("config_review", monkeypatch, collector_url=url)
        assert any("No live topic configs" in i.value for i in at.info)
        at = page("brokers", monkeypatch, collector_url=url)
        assert panels(at) == 6
    (tmp_path / "audits").mkdir()
    at = page("audit", monkeypatch, audit_dir=tmp_path / "audits")
    assert any("No audit yet" in i.value for i in at.info)


@slow
def test_audit_page_shows_runs_and_picks_older_ones(live, broker, spark, tmp_path, monkeypatch):
    """Two audits of this module's broker: the page shows the latest run's figures, and an older run on
    request."""
    from monitor.contract import units
    from spark_analysis.job import build_parser, run

    out = tmp_path / "audits"
    args = build_parser().parse_args(["--input", broker.log_dir, "--out", str(out)])
    first, s1 = run(args, spark=spark)
    # a run in the same second gets run-<time>-2: the names still sort in run order
    second, s2 = run(args, spark=spark)
    assert Path(first).name < Path(second).name
    at = page("audit", monkeypatch, audit_dir=out)
    assert at.selectbox(key="audit.run").value == Path(second).name
    m = metrics(at)
    assert m["Scanned"] == units.bytes_iec(s2["bytes"]) and m["Corrupt spots"] == str(s2["faults"])
    assert charts(at) >= 1  # sizes per topic (clean time and the tombstone build-up when they have 2 points)
    at.selectbox(key="audit.run").set_value(Path(first).name).run()
    assert not at.exception
    assert metrics(at)["Scanned"] == units.bytes_iec(s1["bytes"])
    keys = next(d.value for d in at.dataframe if "Rank" in d.value.columns)  # the most updated keys
    # every compacted topic on this broker: the scenario's and the offsets the stopped group committed
    assert set(keys["Topic"]) == {*NAMES.topics, "__consumer_offsets"}


def test_audit_page_shows_the_producer_pitfalls_of_a_run(kafka, spark, tmp_path, monkeypatch):
    """A topic of two partitions with two deletes sent as empty strings and three keys sent to both
    partitions, audited from a copy: the page's pitfall figures and table are those counts."""
    from kafkatools import copy_partition, create_topic, partition_dir, produce
    from monitor.contract import units
    from spark_analysis.job import build_parser, run

    t = create_topic(kafka.bootstrap, unique_topic("pages-pitfalls"), 2, **{"cleanup.policy": "compact"})
    produce(kafka.bootstrap, t, [(f"k{i}".encode(), b"value") for i in range(10)], partition=0)
    produce(kafka.bootstrap, t, [(b"k1", b""), (b"k2", b"")], partition=0)  # deletes sent as empty strings
    produce(kafka.bootstrap, t, [(f"k{i}".encode(), b"value") for i in range(7, 10)], partition=1)  # k7..k9 again
    copy = tmp_path / "copy"
    for p in range(2):
        copy_partition(partition_dir(kafka.log_dir, t, p), copy)
    out = tmp_path / "audits"
    _, summary = run(build_parser().parse_args(["--input", str(copy), "--out", str(out)]), spark=spark)
    assert (summary["empty_value_records"], summary["keys_in_several_partitions"]) == (2, 3)
    at = page("audit", monkeypatch, audit_dir=out)
    m = metrics(at)
    assert m["Empty-string values (not tombstones)"] == "2"
    assert m["Keys in several partitions"] == "3"
    assert m["Records without a key"] == "0"
    [table] = [d.value for d in at.dataframe if "Empty-string values" in d.value.columns]
    row = table.set_index("Topic").loc[t]
    assert (row["Empty-string values"], row["Keys last set to an empty string"],
            row["Keys in several partitions"]) == ("2", "2", "3")
    [sizes] = [d.value for d in at.table if "Value size max" in d.value.columns]
    assert sizes.set_index("Topic").loc[t, "Value size max"] == units.bytes_iec(len(b"value"))


def test_audit_page_shows_each_topics_restore_time_changelogs_first(spark, tmp_path, monkeypatch):
    """Two topics' segments, a changelog and a plain one, audited with a stated restore throughput: the
    page lists the changelog first, each with its projected size over that throughput."""
    import pyarrow.parquet as pq

    from monitor.contract import units
    from recordfixtures import three_v2_batches
    from spark_analysis.job import build_parser, run

    for topic in ("a-plain", "app-store-changelog"):
        three_v2_batches(tmp_path / "logs" / f"{topic}-0" / "00000000000000000000.log")
    out = tmp_path / "audits"
    base, summary = run(build_parser().parse_args(["--input", str(tmp_path / "logs"), "--out", str(out),
                                                   "--restore-throughput", "250"]), spark=spark)
    at = page("audit", monkeypatch, audit_dir=out)
    [table] = [d.value for d in at.dataframe if "Restore time" in d.value.columns]
    assert list(table["Topic"]) == ["app-store-changelog", "a-plain"]
    written = {r["topic"]: r["next_clean_bytes"] for r in pq.read_table(f"{base}/topics").to_pylist()}
    assert list(table["Restore time"]) == [units.duration_s(written[t] / 250.0) for t in table["Topic"]]
    assert list(table["After the next clean"]) == [units.bytes_iec(written[t]) for t in table["Topic"]]
    # the two projections, labelled, counted from the segments
    m = metrics(at)
    assert m["After the next clean"] == units.bytes_iec(summary["next_clean_bytes"])
    assert m["Settled"] == units.bytes_iec(summary["settled_bytes"]) and m["Projection"] == "counted"
    assert any("Settled: after every delete horizon has passed and another clean" in c.value for c in at.caption)
    assert any("Throughput: 250 B/s" in c.value and "--restore-throughput" in c.value for c in at.caption)

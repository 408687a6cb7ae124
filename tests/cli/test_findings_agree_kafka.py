"""One set of findings (issue 41): on the session's real broker, one topic made the way each check of the
configuration review describes it, and one set up well. ``topics lint --format json``, the collector's
topic_config_finding series (one ``collect --once``), ``explain``'s configuration lines, the dashboard's
Config review page (AppTest over that same page of metrics) and ConsumerMayMissTombstones' critical rule
(``monitor.contract.rule_eval`` on it) must all give the findings the test made, no more, no fewer. Then
the same lint without ``--log-dir`` names the checks it could not run and does not pass.

Expected findings follow from the configs set, the record timestamps written and the offset committed."""

from __future__ import annotations

import json
import time

import pytest
from confluent_kafka import TopicPartition

from clirun import Ran, run_cli
from dashpages import page
from faultserver import FaultServer
from kafkatools import (commit_offsets, compacted, create_topic, produce, producer, set_topic_config,
                        unique_topic, wait_cleaned)

pytestmark = pytest.mark.kafka

DAY, HOUR = 86_400_000, 3_600_000
WELL = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.5, "delete.retention.ms": DAY,
        "max.compaction.lag.ms": DAY, "segment.ms": HOUR, "min.compaction.lag.ms": 0}
LAG_CHECK = "delete_retention_below_consumer_lag"


def produce_at(bootstrap: str, topic: str, items, ts_ms: int) -> None:
    p = producer(bootstrap)
    for k, v in items:
        p.produce(topic, key=k, value=v, partition=0, timestamp=ts_ms)
    assert p.flush(30) == 0


def cli(*args: str) -> Ran:
    return run_cli(*args)


def make_topics(b: str, log_dir: str) -> tuple[dict, set]:
    """The topics by role, and the (topic, check) findings they are made to give."""
    now = int(time.time() * 1000)
    name = lambda what: unique_topic(f"agree-{what}")  # noqa: E731
    t = {"good": create_topic(b, name("good"), **WELL)}
    produce(b, t["good"], [(f"k{i}".encode(), b"v" * 50) for i in range(50)])
    # a group two hours behind (the record at its committed offset is two hours old, still on disk: the
    # active segment is never cleaned), deletes kept a minute
    t["lagged"] = create_topic(b, name("lagged"), **{**WELL, "delete.retention.ms": 60_000})
    produce_at(b, t["lagged"], [(f"k{i}".encode(), b"v" * 50) for i in range(20)], now - 2 * HOUR)
    commit_offsets({"bootstrap.servers": b, "group.id": unique_topic("agree-group")}, [TopicPartition(t["lagged"], 0, 0)])
    t["ratio"] = create_topic(b, name("ratio"), **{**WELL, "min.cleanable.dirty.ratio": 0.01})
    t["both"] = create_topic(b, name("both"), **{**WELL, "cleanup.policy": "compact,delete", "retention.ms": HOUR})
    # quiet, holding tombstones, max.compaction.lag.ms unbounded (as tests/cli/test_check_config_kafka.py)
    t["quiet"] = create_topic(b, name("quiet"), **compacted(**{"delete.retention.ms": DAY}))
    produce_at(b, t["quiet"], [(f"k{i}".encode(), b"v" * 500) for i in range(300)], now - 3 * DAY)
    produce_at(b, t["quiet"], [(b"k0", b"v")], now - 3 * DAY + 10_000)
    wait_cleaned(log_dir, t["quiet"])
    set_topic_config(b, t["quiet"], **{"min.cleanable.dirty.ratio": "0.5"})
    produce_at(b, t["quiet"], [(f"k{i}".encode(), None) for i in range(1, 6)], now - 2 * DAY)
    produce_at(b, t["quiet"], [(b"k0", b"w")], now - 2 * DAY + 10_000)
    set_topic_config(b, t["quiet"], **{"segment.ms": str(HOUR)})
    # Kafka's default segment.ms and segment.bytes on a trickle
    t["segment"] = create_topic(b, name("segment"), **{k: v for k, v in WELL.items()
                                                       if k not in ("segment.ms", "max.compaction.lag.ms")})
    produce_at(b, t["segment"], [(f"k{i}".encode(), b"v" * 50) for i in range(50)], now - HOUR)
    made = {(t["lagged"], LAG_CHECK), (t["ratio"], "dirty_ratio_too_low"),
            (t["both"], "retention_below_delete_retention"), (t["quiet"], "unbounded_max_compaction_lag"),
            (t["segment"], "segment_roll_beyond_traffic")}
    return t, made


def test_lint_the_metric_explain_the_page_and_the_alert_give_one_set_of_findings(kafka, monkeypatch):
    from monitor.contract.rule_eval import Sample, evaluate_rule
    from monitor.contract.rules import rule
    from monitor.verdicts.configreview import CHECKS
    from prometheus_client.parser import text_string_to_metric_families

    b, log_dir = kafka.bootstrap, str(kafka.log_dir)
    t, made = make_topics(b, log_dir)
    mine = set(t.values())
    # a finding of every kind of the table but the one of a topic config this broker (4.3) does not have: Kafka
    # 4.4's max.decompressed.message.bytes, whose finding tests/compat/test_kafka_4_4_kraft.py shows
    assert {c for _, c in made} == set(CHECKS) - {"decompressed_limit_below_records"}

    lint = cli("topics", "lint", *sorted(mine), "--bootstrap-server", b, "--log-dir", log_dir, "--format", "json")
    assert lint.returncode == 1, lint.stderr[-3000:]
    out = json.loads(lint.stdout)
    by_lint = {(f["topic"], f["check"]) for f in out["findings"]}
    assert by_lint == made, out
    assert out["not_run"] == [] and out["passed"] is False

    collect = cli("collect", "--once", "--bootstrap-server", b, "--log-dir", log_dir)
    assert collect.returncode in (0, 1), collect.stderr[-3000:]
    samples = [Sample(s.name, s.labels, s.value) for fam in text_string_to_metric_families(collect.stdout)
               for s in fam.samples]
    by_metric = {(s.labels["topic"], s.labels["check"]) for s in samples
                 if s.name == "kafka_compaction_topic_config_finding" and s.labels["topic"] in mine}
    assert by_metric == made
    assert not [s for s in samples if s.name == "kafka_compaction_topic_config_check_not_run"
                and s.labels["topic"] in mine]

    explain = cli("explain", *sorted(mine), "--bootstrap-server", b, "--log-dir", log_dir, "--format", "json")
    assert explain.returncode in (0, 1), explain.stderr[-3000:]
    causes = json.loads(explain.stdout)
    assert {c["topic"] for c in causes} == mine
    by_explain = {(f["topic"], f["check"]) for c in causes for f in c["config_review"]["findings"]}
    assert by_explain == made
    text = cli("explain", t["ratio"], "--bootstrap-server", b, "--log-dir", log_dir)
    assert f"{t['ratio']}: dirty_ratio_too_low" in text.stdout and "1 finding(s) on 1 compacted topic(s)" in text.stdout

    server = FaultServer(ok_body=collect.stdout.encode())  # the page reads the same collect's metrics
    try:
        at = page("config_review", monkeypatch, collector_url=server.url)
    finally:
        server.close()
    table = at.dataframe[0].value
    by_page = {(r.topic, r.check) for r in table.itertuples() if r.topic in mine}
    assert by_page == made
    row = table[table["topic"] == t["segment"]].iloc[0]
    assert (row["setting"], row["now"], row["suggested"]) == ("segment.ms", "7 d", "1 h")  # words, not ms

    critical = evaluate_rule(rule("ConsumerMayMissTombstones", "critical"), samples)
    assert {a.labels["topic"] for a in critical if a.labels["topic"] in mine} == \
        {topic for topic, check in made if check == CHECKS[LAG_CHECK].name}
    assert CHECKS[LAG_CHECK].alert == "ConsumerMayMissTombstones"

    # without --log-dir: the checks that need one are named, with the input; no pass, no "all pass". The
    # segment topic (Kafka's default segment.ms, max.compaction.lag.ms unbounded) needs its write rate and
    # tombstones; the topic set up well needs nothing from a log dir, so it passes there too.
    bare = cli("topics", "lint", t["segment"], "--bootstrap-server", b, "--format", "json")
    assert bare.returncode == 1, bare.stderr[-3000:]
    got = json.loads(bare.stdout)
    assert got["findings"] == [] and got["passed"] is False
    assert {(n["check"], n["needs"]) for n in got["not_run"]} == {("unbounded_max_compaction_lag", "log_dir"),
                                                                 ("segment_roll_beyond_traffic", "log_dir")}
    words = cli("topics", "lint", t["segment"], "--bootstrap-server", b)
    assert words.returncode == 1 and "all pass" not in words.stdout
    assert "2 check(s) not run: segment_roll_beyond_traffic, unbounded_max_compaction_lag" in words.stdout
    assert "  needs:     the topic's partitions on disk (write rate, tombstones, active segment): give --log-dir" \
        in words.stdout
    good = cli("topics", "lint", t["good"], "--bootstrap-server", b)
    assert good.returncode == 0 and good.stdout.endswith("all pass\n"), good.stdout


def test_lint_dates_a_group_whose_committed_record_was_compacted_away_from_the_log_ends_progress(kafka):
    """The demo's case (issue 41): a group stopped at offset 4 of a topic rewritten steadily, its record at
    offset 4 long compacted away. The first record after it is seconds old: dated by it, the group would
    pass; one read cannot date it otherwise. lint takes a second log-end-offset sample and extrapolates, as
    the collector does between refreshes: thousands of records behind at tens a second is far more than
    delete.retention.ms (1 s here), a finding."""
    import threading

    b = kafka.bootstrap
    topic = create_topic(b, unique_topic("agree-gap"), **compacted(**{"delete.retention.ms": 1000}))
    produce(b, topic, [(f"k{i}".encode(), b"old") for i in range(10)])
    produce(b, topic, [(f"k{i % 10}".encode(), b"v" * 100) for i in range(3000)])
    stop = threading.Event()

    def steady():  # ~50 records a second until the test ends, as the demo's workload
        p = producer(b)
        i = 0
        while not stop.wait(0.02):
            p.produce(topic, key=f"k{i % 10}".encode(), value=b"w" * 100)
            p.poll(0)
            i += 1
        p.flush(10)

    writer = threading.Thread(target=steady, daemon=True)
    writer.start()
    try:
        wait_cleaned(str(kafka.log_dir), topic, past=10)
        group = unique_topic("agree-gap-g")
        commit_offsets({"bootstrap.servers": b, "group.id": group}, [TopicPartition(topic, 0, 4)])
        lint = cli("topics", "lint", topic, "--bootstrap-server", b, "--format", "json")
        collect = cli("collect", "--once", "--bootstrap-server", b)
        explain = cli("explain", topic, "--bootstrap-server", b, "--log-dir", str(kafka.log_dir), "--format", "json")
    finally:
        stop.set()
        writer.join(15)
    assert lint.returncode == 1, lint.stderr[-3000:]
    out = json.loads(lint.stdout)
    [f] = [f for f in out["findings"] if f["check"] == LAG_CHECK]
    assert f["evidence"]["slowest_group"] == group and f["evidence"]["lag_seconds"] > 1.0, f
    assert LAG_CHECK not in {n["check"] for n in out["not_run"]}
    # collect --once and explain take the same second sample: the same finding
    assert [x for x in collect.stdout.splitlines() if x.startswith("kafka_compaction_topic_config_finding{")
            and f'topic="{topic}"' in x and f'check="{LAG_CHECK}",cluster="default",current="1000"' in x]
    causes = json.loads(explain.stdout)
    assert causes and all(LAG_CHECK in {x["check"] for x in c["config_review"]["findings"]} for c in causes), causes

"""The audit's Kafka 4.4 max.decompressed.message.bytes finding (``audit.tables.decompressed_limit``, in
summary.json): each partition's largest decompressed record (its facts, from the record pass) against its
topic's setting, by the collector's check and cause; only for topics that set a cap or whose value is
unknown (why); absent when no topic sets one. No Spark: the function of the driver's facts and inputs."""

from __future__ import annotations

import html

from monitor.verdicts.causes import CAUSES
from monitor.verdicts.configreview import CHECKS
from spark_analysis.audit.shapes import AuditInputs
from spark_analysis.audit.tables import RECORDS_PATH, decompressed_limit


def _facts(topic, partition, largest):
    return {"topic": topic, "partition": partition, "max_decompressed_record_bytes": largest}


def test_a_cap_below_a_stored_record_is_the_collector_s_finding_and_one_above_passes():
    inputs = AuditInputs("segments", file_configs={"capped": {"max.decompressed.message.bytes": 2048},
                                                   "roomy": {"max.decompressed.message.bytes": 1 << 20},
                                                   "plain": {"cleanup.policy": "compact"}})
    got = decompressed_limit(inputs, [_facts("capped", 1, 4100), _facts("capped", 0, 1500), _facts("roomy", 0, 4100),
                                      _facts("plain", 0, 1 << 30)])
    assert got["check"] in CHECKS and got["cause"] in CAUSES and (got["over"], got["unknown"]) == (1, 0)
    rows = {(r["topic"], r["partition"]): r for r in got["partitions"]}
    assert sorted(rows) == [("capped", 0), ("capped", 1), ("roomy", 0)]  # no cap, no row
    over = rows[("capped", 1)]
    assert (over["over"], over["max_decompressed_record_bytes"], over["max_decompressed_message_bytes"]) == (True, 4100, 2048)
    assert over["summary"].startswith("max.decompressed.message.bytes=2048 (2.0 KiB) is below a stored record of 4100 bytes")
    assert "--alter" in over["fix"] and "--add-config max.decompressed.message.bytes=1048576" in over["fix"]
    assert [rows[k]["over"] for k in (("capped", 0), ("roomy", 0))] == [False, False]
    assert rows[("roomy", 0)]["summary"] is None and rows[("roomy", 0)]["unknown_reason"] is None


def test_no_topic_with_a_cap_leaves_no_finding():
    inputs = AuditInputs("segments", file_configs={"plain": {"cleanup.policy": "compact"}})
    assert decompressed_limit(inputs, [_facts("plain", 0, 1 << 30), _facts("other", 0, 10)]) is None


def test_an_unknown_setting_or_an_unmeasured_record_is_unknown_with_why():
    down = AuditInputs("segments", admin_asked=True, admin=None, admin_error="timed out after 10 s")
    [row] = decompressed_limit(down, [_facts("t", 0, 4100)])["partitions"]
    assert row["over"] is None and row["max_decompressed_message_bytes"] is None
    assert "max.decompressed.message.bytes" in row["unknown_reason"] and "timed out after 10 s" in row["unknown_reason"]
    dumps = AuditInputs("dumps", file_configs={"capped": {"max.decompressed.message.bytes": 2048}})
    got = decompressed_limit(dumps, [_facts("capped", 0, None)])
    assert got["partitions"][0]["unknown_reason"] == RECORDS_PATH and (got["over"], got["unknown"]) == (0, 1)


def test_the_html_report_says_the_finding_and_the_unknown_and_nothing_without_a_cap():
    from spark_analysis.report import decompressed_limit_html

    inputs = AuditInputs("segments", file_configs={"capped": {"max.decompressed.message.bytes": 2048}})
    summary = {"decompressed_limit": decompressed_limit(inputs, [_facts("capped", 0, 4100), _facts("capped", 1, None)])}
    page = decompressed_limit_html(summary)
    assert "<h2>max.decompressed.message.bytes (Kafka 4.4)</h2>" in page
    assert "decompressed_limit_below_records" in page and "record_over_decompressed_limit" in page
    assert "capped-0" in page and "4,100 B" in page and "is below a stored record of 4100 bytes" in page
    assert "unknown: " + html.escape(RECORDS_PATH) in page
    assert decompressed_limit_html({}) == ""


def test_an_audit_of_segments_finds_a_record_above_its_topic_s_cap(spark, tmp_path):
    """End to end in Spark: gzip records of 4 kB in a rolled segment of a topic whose monitor.yaml entry sets
    max.decompressed.message.bytes to 2 KiB: summary.json's finding holds the collector's figure for the
    same segment, and the report says it."""
    import json
    from pathlib import Path

    from monitor.contract.auditrun import SUMMARY
    from monitor.model.summary import summarize
    from recordfixtures import Rec, T0, v2, write
    from spark_analysis.job import build_parser, run

    part = tmp_path / "logs" / "capped-0"
    write(part / "00000000000000000000.log", [v2([Rec(i, T0 + i, b"k%d" % i, b"x" * 4000) for i in range(5)], "gzip")])
    write(part / "00000000000000000005.log", [v2([Rec(5, T0 + 5, b"k0", b"y" * 9000)], "gzip")])  # active: not read
    args = build_parser().parse_args(["--input", str(tmp_path / "logs"), "--out", str(tmp_path / "out"),
                                      "--restore-measurement", str(tmp_path / "no-such.json")])
    base, _ = run(args, spark=spark, file_configs={"capped": {"cleanup.policy": "compact",
                                                              "max.decompressed.message.bytes": 2048}})
    summary = json.loads((Path(base) / SUMMARY).read_text())
    [row] = summary["decompressed_limit"]["partitions"]
    collector = summarize(part / "00000000000000000000.log", 0)[0].max_decompressed_record_bytes
    assert (row["topic"], row["partition"], row["over"]) == ("capped", 0, True)
    assert row["max_decompressed_record_bytes"] == collector and 4000 < collector < 4100
    assert row["summary"].startswith(f"max.decompressed.message.bytes=2048 (2.0 KiB) is below a stored record of "
                                     f"{collector} bytes")
    assert "max.decompressed.message.bytes (Kafka 4.4)" in (Path(base) / "report.html").read_text()

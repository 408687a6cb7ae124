"""The audit's restore-time estimate (monitor.verdicts.restore): each compacted topic's projected size over the
stated consumer throughput, exactly; null with the reason when no throughput is known."""

from __future__ import annotations

import json
from pathlib import Path

from monitor.contract.auditrun import SUMMARY
from recordfixtures import three_v2_batches


def _segments(tmp_path: Path) -> Path:
    three_v2_batches(tmp_path / "logs" / "orders-changelog-0" / "00000000000000000000.log")
    return tmp_path / "logs"


def _audit(spark, tmp_path: Path, name: str, *flags: str, restore_config=None):
    from spark_analysis.job import build_parser, run

    args = build_parser().parse_args(["--input", str(_segments(tmp_path)), "--out", str(tmp_path / name),
                                      "--restore-measurement", str(tmp_path / "no-such.json"), *flags])
    base, _ = run(args, spark=spark, restore_config=restore_config)
    topics = [r.asDict() for r in spark.read.parquet(f"{base}/topics").collect()]
    return topics, json.loads((Path(base) / SUMMARY).read_text()), (Path(base) / "report.html").read_text()


def test_restore_seconds_is_the_projected_size_over_the_given_throughput_else_unknown(spark, tmp_path):
    topics, summary, html = _audit(spark, tmp_path, "flag", "--restore-throughput", "1000",
                                   restore_config=5.0)  # the flag wins over monitor.yaml's
    (t,) = topics
    assert t["streams_role"] == "changelog" and t["next_clean_bytes"] > 0
    assert t["restore_seconds"] == t["next_clean_bytes"] / 1000.0
    assert summary["restore_throughput_bytes_per_second"] == 1000.0
    assert summary["restore_throughput_source"] == "--restore-throughput"
    assert summary["restore_unknown_reason"] is None
    assert "Restore time" in html and "orders-changelog" in html

    topics, summary, html = _audit(spark, tmp_path, "unknown")
    (t,) = topics
    assert t["restore_seconds"] is None
    assert summary["restore_throughput_bytes_per_second"] is None
    assert summary["restore_throughput_source"] == "unknown"
    assert str(tmp_path / "no-such.json") in summary["restore_unknown_reason"]
    assert "./dev bench restore" in html  # the report says how to get a figure


def test_the_config_files_throughput_reaches_the_audit_below_the_flag(tmp_path, monkeypatch):
    """``monitor.yaml``'s restore_throughput_bytes_per_second is the run's unless the flag is given; the
    measurement file is read only when neither is."""
    from spark_analysis import job

    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - name: prod\n    restore_throughput_bytes_per_second: 2500000\n")
    measured = tmp_path / "restore.json"
    measured.write_text(json.dumps({"bytes_per_second": 7e6, "measured_at": "2026-11-23T05:00:00Z",
                                    "bootstrap": "127.0.0.1:1", "topic": "t"}))
    seen = []
    monkeypatch.setattr(job, "run", lambda args, restore_config=None, **_: (seen.append(
        job.restore_throughput(args, restore_config)), ("run", {"faults": 0}))[1])  # run's (folder, summary)
    base = ["--input", str(tmp_path), "--out", str(tmp_path / "out"), "--restore-measurement", str(measured)]
    assert job.main(base + ["--config", str(cfg)]) == 0
    assert job.main(base + ["--config", str(cfg), "--restore-throughput", "10"]) == 0
    assert job.main(base) == 0
    assert [(r.bytes_per_second, r.source.split(" ")[0]) for r in seen] == [
        (2_500_000.0, "monitor.yaml"), (10.0, "--restore-throughput"), (7e6, "measured")]
    assert str(measured) in seen[2].source


def test_a_bad_measurement_file_is_unknown_with_the_file_named(tmp_path):
    from monitor.verdicts.restore import resolve

    bad = tmp_path / "restore.json"
    bad.write_text('{"bytes_per_second": 0}')
    got = resolve(measurement=bad)
    assert got.bytes_per_second is None and str(bad) in got.reason and got.seconds(100.0) is None

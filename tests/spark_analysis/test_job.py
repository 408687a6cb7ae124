"""The audit job's run folders: a new one per run, never an earlier one reused."""

from __future__ import annotations

from spark_analysis.job import _new_run_name


def test_a_run_in_the_same_second_gets_its_own_folder(tmp_path):
    name = "run-20261123T025800Z"
    assert _new_run_name(str(tmp_path), name) == name
    (tmp_path / name).mkdir()
    assert _new_run_name(str(tmp_path), name) == name + "-2"
    (tmp_path / (name + "-2")).mkdir()
    assert _new_run_name(str(tmp_path), name) == name + "-3"
    # the suffixes sort after the plain name, so the newest run sorts last
    assert sorted([name + "-2", name, "run-20261123T025759Z"])[-1] == name + "-2"


def test_spark_submit_entry_point_takes_the_config_files_topics(tmp_path, monkeypatch):
    """``spark-submit spark_analysis/job.py --config monitor.yaml``: the file's topic configs reach the
    audit (they were dropped when the job ran without the command line)."""
    from spark_analysis import job

    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - name: prod\n    topics:\n      orders: {min.cleanable.dirty.ratio: 0.2, "
                   "delete.retention.ms: 60000}\n")
    seen = {}
    monkeypatch.setattr(job, "run", lambda args, file_configs=None, spark=None, **kw: (  # run's (folder, summary)
        seen.update(file_configs, asked=kw.get("admin_asked", False)), ("run", {"faults": 0}))[1])
    assert job.main(["--input", str(tmp_path), "--out", str(tmp_path / "out"), "--config", str(cfg)]) == 0
    assert seen.pop("asked") is False  # no admin API asked: Kafka's defaults for the rest, labelled so
    from spark_analysis.audit import AuditInputs

    ec = AuditInputs(kind="segments", file_configs=seen).effective("orders")
    orders = ec.config
    assert orders.compacted and orders.min_cleanable_dirty_ratio == 0.2 and orders.delete_retention_ms == 60000
    assert ec.sources["delete.retention.ms"] == "config" and ec.sources["segment.bytes"] == "default"
    assert set(seen) == {"orders"}


def test_spark_submit_entry_point_refuses_a_bad_config(tmp_path, capsys):
    from spark_analysis import job

    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - topics:\n      orders: {min.cleanable.dirty.ratio: 7}\n")
    assert job.main(["--input", str(tmp_path), "--out", str(tmp_path / "out"), "--config", str(cfg)]) == 2
    assert "min.cleanable.dirty.ratio" in capsys.readouterr().err


# ------------------------------------------------------------------ outputs: checked first, written whole

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import pytest  # noqa: E402

from monitor.auditrun import LATEST, MARKER, SUMMARY, TABLES, read_marker  # noqa: E402
from recordfixtures import three_v2_batches  # noqa: E402
from spark_analysis.report import NO_EARLIER  # noqa: E402


def segments(tmp_path: Path) -> Path:
    """A log dir with one partition's segment (written by kafka-python's record builders)."""
    three_v2_batches(tmp_path / "logs" / "orders-0" / "00000000000000000000.log")
    return tmp_path / "logs"


def test_check_output_refuses_a_file_and_an_unwritable_place_and_makes_a_missing_folder(tmp_path):
    from spark_analysis.job import OutputError, check_output

    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"--out .*/file: is a file; expected a folder"):
        check_output(str(tmp_path / "file"))
    with pytest.raises(OutputError, match=r"--out /sys/audits: cannot write there"):
        check_output("/sys/audits")  # sysfs takes no new entry, not even from root
    with pytest.raises(OutputError, match=r"cannot write there"):
        check_output(str(tmp_path / "file" / "below"))  # a folder under a file
    check_output(str(tmp_path / "new" / "audits"))
    assert (tmp_path / "new" / "audits").is_dir() and list((tmp_path / "new" / "audits").iterdir()) == []


@pytest.mark.parametrize("out, says", [("file", "is a file; expected a folder"), ("/sys/audits", "cannot write there")])
def test_audit_refuses_a_bad_out_before_spark_starts(tmp_path, out, says):
    (tmp_path / "file").write_text("x")
    out = out if out.startswith("/") else str(tmp_path / out)
    r = subprocess.run([sys.executable, "-m", "cli", "audit", "--input", str(segments(tmp_path)), "--out", out],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [f"compaction-monitor: audit: --out {out}: " + r.stderr.split(f"{out}: ", 1)[1].strip()]
    assert says in r.stderr and "starting Spark" not in r.stderr and "Traceback" not in r.stderr
    assert (tmp_path / "file").read_text() == "x"


def test_a_run_is_written_whole_with_its_marker_and_a_failed_one_leaves_nothing(spark, tmp_path):
    from spark_analysis.job import OutputError, build_parser, run, write_outputs

    out = tmp_path / "audits"
    base, summary = run(build_parser().parse_args(["--input", str(segments(tmp_path)), "--out", str(out)]),
                        spark=spark)
    base = Path(base)
    assert sorted(p.name for p in out.iterdir()) == sorted([base.name, LATEST])  # no temporary left
    listed = read_marker((base / MARKER).read_bytes())
    on_disk = {str(f.relative_to(base)): f.stat().st_size for f in base.rglob("*") if f.is_file()}
    assert on_disk.pop(MARKER) > 0
    assert listed == on_disk and SUMMARY in listed and "report.html" in listed
    assert {name.split("/")[0] for name in listed} >= set(TABLES)
    assert json.loads((base / SUMMARY).read_text())["records"] == summary["records"] == 6
    # the first run in the output location: nothing to compare its prediction with, said in one line
    assert f"<p>{NO_EARLIER}</p>" in (base / "report.html").read_text()
    latest = (out / LATEST).read_text()

    # the same tables again, but one fails while Spark writes it: no run folder, no temporary, latest kept
    tables = {t: spark.read.parquet(str(base / t)) for t in TABLES}
    tables["top_producers"] = spark.range(3).selectExpr("raise_error('disk on fire') AS x")
    result = SimpleNamespace(**tables, summary=json.loads((base / SUMMARY).read_text()))
    with pytest.raises(OutputError) as exc:
        write_outputs(spark, result, str(out), run_name="run-20990101T000000Z")
    assert "writing run run-20990101T000000Z failed" in str(exc.value) and "nothing was kept" in str(exc.value)
    assert "\n" not in str(exc.value)
    assert sorted(p.name for p in out.iterdir()) == sorted([base.name, LATEST])
    assert (out / LATEST).read_text() == latest


def test_the_audit_lists_only_what_kafka_would_load_as_segments(tmp_path, capsys):
    """The audit's input listing follows the log-dir walk's rule (``monitor.kafkanames``): stray names
    and every folder of a duplicated partition are left out, one line each, never read."""
    from spark_analysis.job import list_inputs

    logs = tmp_path / "logs"
    for folder in ("orders-0", "orders-3", "orders-03", "t-99999999999999999999"):
        three_v2_batches(logs / folder / "00000000000000000000.log")
    for stray in ("².log", "5.log", "99999999999999999999999.log"):
        (logs / "orders-0" / stray).write_bytes(b"x")
    files = list_inputs("segments", [str(logs)])
    assert [Path(u).relative_to(logs).as_posix() for u, _ in files] == ["orders-0/00000000000000000000.log"]
    lines = capsys.readouterr().err.splitlines()
    assert sorted(x.split(": ")[0] for x in lines) == sorted(
        [f"[audit] left out {logs}"] + [f"[audit] left out {logs}/orders-0/{s}" for s in ("².log", "5.log",
                                                                                       "99999999999999999999999.log")])
    assert any("duplicate log directories for orders-3: orders-03, orders-3" in x for x in lines)

"""The audit's run folders (``spark_analysis.outputs``): ``--out`` checked first, a new folder per run,
never an earlier one reused, each written whole with its marker, a failed one leaving nothing."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from monitor.contract.auditrun import LATEST, MARKER, SUMMARY, TABLES, read_marker
from recordfixtures import three_v2_batches
from spark_analysis.outputs import _new_run_name
from spark_analysis.report import NO_EARLIER


def segments(tmp_path: Path) -> Path:
    """A log dir with one partition's segment (written by kafka-python's record builders)."""
    three_v2_batches(tmp_path / "logs" / "orders-0" / "00000000000000000000.log")
    return tmp_path / "logs"


def test_a_run_in_the_same_second_gets_its_own_folder(tmp_path):
    name = "run-20261123T025800Z"
    assert _new_run_name(str(tmp_path), name) == name
    (tmp_path / name).mkdir()
    assert _new_run_name(str(tmp_path), name) == name + "-2"
    (tmp_path / (name + "-2")).mkdir()
    assert _new_run_name(str(tmp_path), name) == name + "-3"
    # the suffixes sort after the plain name, so the newest run sorts last
    assert sorted([name + "-2", name, "run-20261123T025759Z"])[-1] == name + "-2"


def test_check_output_refuses_a_file_and_an_unwritable_place_and_makes_a_missing_folder(tmp_path):
    from spark_analysis.outputs import OutputError, check_output

    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"--out .*/file: is a file; expected a folder"):
        check_output(str(tmp_path / "file"))
    with pytest.raises(OutputError, match=r"--out /sys/audits: cannot write there"):
        check_output("/sys/audits")  # sysfs takes no new entry, not even from root
    with pytest.raises(OutputError, match=r"cannot write there"):
        check_output(str(tmp_path / "file" / "below"))  # a folder under a file
    check_output(str(tmp_path / "new" / "audits"))
    assert (tmp_path / "new" / "audits").is_dir() and list((tmp_path / "new" / "audits").iterdir()) == []



def test_a_run_is_written_whole_with_its_marker_and_a_failed_one_leaves_nothing(spark, tmp_path):
    from spark_analysis.job import build_parser, run
    from spark_analysis.outputs import OutputError, write_outputs

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


def test_the_report_tables_are_local_data_not_a_job_each(spark, tmp_path):
    """The report's tables are made on the driver from a few rows a partition (``audit.tables``); handed
    to Spark as Arrow they are local data (``LocalRelation``), so collecting or writing one is no job over
    an RDD of pickled rows (what ``createDataFrame`` of Python rows makes in classic PySpark), and they
    hold the rows given, typed by their DDL."""
    from spark_analysis.audit import AuditInputs, run_audit
    from spark_analysis.audit.tables import FAULTS_DDL, local_frame
    from spark_analysis.inputs import list_inputs

    res = run_audit(spark, AuditInputs(kind="segments", files=list_inputs("segments", [str(segments(tmp_path))])))
    frames = {n: getattr(res, n) for n in ("partitions", "topics", "tombstone_buckets", "top_keys", "top_producers",
                                           "faults", "replicas", "whatif")}
    plans = {n: df._jdf.queryExecution().logical().getClass().getSimpleName() for n, df in frames.items()}
    assert plans == {n: "LocalRelation" for n in frames}, plans
    assert [r["records"] for r in res.partitions.collect()] == [6]
    rows = [{"segment": "s", "fault_kind": "crc", "fault_position": 7, "fault_reason": "r"}]
    df = local_frame(spark, rows, FAULTS_DDL)
    assert [r.asDict() for r in df.collect()] == rows
    assert df.schema == spark.createDataFrame(rows, FAULTS_DDL).schema


def test_a_report_table_s_ddl_is_parsed_once_a_process(spark, monkeypatch):
    """``local_frame`` parses a DDL string in the JVM once (``_schemas``): an audit makes nine tables a run
    from the same strings, each parse a Py4J round trip. The cached schema still types the rows."""
    import pyspark.sql.types as types

    from spark_analysis.audit import tables

    parsed = []
    real = types._parse_datatype_string
    monkeypatch.setattr(types, "_parse_datatype_string", lambda ddl: parsed.append(ddl) or real(ddl))
    tables._schemas.cache_clear()
    rows = [{"segment": "s", "fault_kind": "crc", "fault_position": 7, "fault_reason": "r"}]
    for _ in range(3):
        assert [r.asDict() for r in tables.local_frame(spark, rows, tables.FAULTS_DDL).collect()] == rows
    assert parsed == [tables.FAULTS_DDL]

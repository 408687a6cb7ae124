"""A Spark failure's text (a Py4J error: the driver's Java stack trace, causes nested) in one line."""

from __future__ import annotations

from spark_analysis.failure import describe, is_spark_failure, os_error_in

TRACE = """An error occurred while calling o267.parquet.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 12.0 failed 1 times
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2898)
\tat java.base/java.lang.Thread.run(Thread.java:1583)
Caused by: org.apache.spark.SparkException: Task failed while writing rows.
\tat org.apache.spark.sql.errors.QueryExecutionErrors$.taskFailedWhileWritingRowsError(QueryExecutionErrors.scala:775)
Caused by: org.apache.hadoop.fs.FSError: java.io.IOException: No space left on device
\tat org.apache.hadoop.fs.RawLocalFileSystem$LocalFSFileOutputStream.write(RawLocalFileSystem.java:383)
Caused by: java.io.IOException: No space left on device
\tat java.base/java.io.FileOutputStream.writeBytes(Native Method)
\t... 40 more
"""


class Py4JJavaError(Exception):  # the shape of py4j.protocol's: its text is the whole Java trace
    pass


def test_the_os_error_in_the_cause_chain_is_named():
    assert os_error_in(TRACE) == "no space left on device"
    assert describe(Py4JJavaError(TRACE)) == "no space left on device (IOException)"
    assert is_spark_failure(Py4JJavaError(TRACE)) and not is_spark_failure(ValueError("x"))


def test_without_one_the_root_cause_is_named_shortly():
    trace = TRACE.replace("No space left on device", "Stream closed " + "x" * 5000)
    got = describe(Py4JJavaError(trace))
    assert got.startswith("IOException: Stream closed xxx") and got.endswith("... (5014 characters)") and len(got) < 260


def test_a_plain_os_error_is_named_too():
    assert describe(OSError(28, "No space left on device")) == "no space left on device"


def test_spark_scratch_space_is_spark_local_dirs_first_else_the_jvm_tmpdir(tmp_path):
    from spark_analysis.failure import scratch_dir, scratch_problem

    assert scratch_dir({}) == ("/tmp", "java.io.tmpdir")
    assert scratch_dir({"SPARK_LOCAL_DIRS": f"{tmp_path},/other"}) == (str(tmp_path), "SPARK_LOCAL_DIRS")
    assert scratch_problem(0, {"SPARK_LOCAL_DIRS": str(tmp_path)}) is None
    missing, afile = tmp_path / "gone", tmp_path / "f"
    afile.write_text("")
    assert scratch_problem(0, {"SPARK_LOCAL_DIRS": str(missing)}) == \
        f"Spark's scratch space {missing} (SPARK_LOCAL_DIRS: shuffle and spill): no such folder; create it or " \
        "set SPARK_LOCAL_DIRS"
    assert "not a folder" in scratch_problem(0, {"SPARK_LOCAL_DIRS": str(afile)})
    assert " MiB free; an audit needs at least " in scratch_problem(1 << 62, {"SPARK_LOCAL_DIRS": str(tmp_path)})

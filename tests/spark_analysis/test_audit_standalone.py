"""The audit on a real Spark standalone cluster (a master and two workers on loopback, from PySpark's
own spark-class: the ``spark_standalone`` fixture): ``audit --master spark://...`` writes the same
tables as ``local[2]`` on the same input, and its executors decode with the C extension of the
installed package, no source zip shipped."""

from __future__ import annotations

import json
import sys

import pyarrow.fs as pafs
import pytest

from auditcompare import ROOT, audit, differences, read_run


# the cluster's start, the reference run (a fixture, shared with the S3 test) and the cluster run in one
# test's time: three JVMs' start-up and two audits; 6 minutes on the shared 2-core machine under load
@pytest.mark.timeout(1500)
def test_the_audit_on_a_standalone_cluster_writes_the_same_tables_as_local_mode(spark_standalone, audit_reference, tmp_path):
    inputs, cfg, local = audit_reference
    r = audit(spark_standalone.master_url, str(inputs), str(tmp_path / "cluster"), cfg)
    assert r.returncode == 0, r.stderr[-4000:]
    cluster = read_run(pafs.LocalFileSystem(), json.loads((tmp_path / "cluster" / "latest.json").read_text())["path"])

    assert differences(local, cluster) == []
    partitions = local[0]["partitions"]
    assert len(partitions) == 5 and sum(p["records"] for p in partitions) == 5 * 600  # auditcompare.log_dir's
    assert local[0]["top_keys"] and local[0]["tombstone_buckets"] and local[0]["top_producers"]

    # the tasks ran on the cluster's executors (the master saw the application) ...
    apps = spark_standalone.state()["completedapps"] + spark_standalone.state()["activeapps"]
    assert any(a["name"] == "kafka-compaction-audit" for a in apps), apps
    # ... in this venv's Python, importing the package from where it is installed (the checkout this
    # test runs, not a zip Spark shipped), and every partition's task decoded with the C extension
    said = [line for line in r.stderr.splitlines() if "executors:" in line]
    assert said == [f"[audit] executors: {sys.executable}, compaction-monitor from {ROOT}, c record decoder"], said
    assert cluster[1]["decoders"] == {"c": 5} and local[1]["decoders"] == {"c": 5}


def test_executors_that_cannot_import_the_package_fail_the_run_before_the_audit_starts(spark_standalone, tmp_path):
    """The executors' Python is Debian's own (no crc32c, no compaction-monitor installed): the probe
    names it and what to do, before the first audit task; nothing is written."""
    from auditcompare import CONFIG, log_dir

    system_python = "/usr/bin/python3"
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text(CONFIG)
    r = audit(spark_standalone.master_url, str(log_dir(tmp_path / "logs")), str(tmp_path / "out"), cfg,
              env={"PYSPARK_PYTHON": system_python})
    assert r.returncode == 2, r.stderr[-3000:]
    said = [line for line in r.stderr.splitlines() if line.startswith("compaction-monitor: audit:")]
    assert len(said) == 1 and f"the executors' Python ({system_python}) cannot import compaction-monitor" in said[0], \
        r.stderr[-3000:]
    assert "AUDIT_SHIP_CODE=1" in said[0] and "Traceback" not in r.stderr
    assert "auditing" not in r.stderr and not list((tmp_path / "out").glob("run-*"))

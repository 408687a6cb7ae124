"""The audit on a real Spark standalone cluster (a master and two workers on loopback, from PySpark's
own spark-class: the ``spark_standalone`` fixture): ``audit --master spark://...`` writes the same
tables as ``local[2]`` on the same input, and its executors decode with the C extension of the
installed package, no source zip shipped."""

from __future__ import annotations

import json
import sys

import pyarrow.fs as pafs

from auditcompare import ROOT, audit, differences, read_run


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

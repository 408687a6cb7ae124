"""The audit job's wiring: the spark-submit entry point takes the config file's topics, and a bad ``--out``
is refused before Spark starts (the outputs themselves: test_outputs.py, the inputs: test_inputs.py)."""

from __future__ import annotations


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


# ------------------------------------------------------------------ a bad --out: refused before Spark starts

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from clirun import run_cli  # noqa: E402
from recordfixtures import three_v2_batches  # noqa: E402


def segments(tmp_path: Path) -> Path:
    """A log dir with one partition's segment (written by kafka-python's record builders)."""
    three_v2_batches(tmp_path / "logs" / "orders-0" / "00000000000000000000.log")
    return tmp_path / "logs"


@pytest.mark.parametrize("out, says", [("file", "is a file; expected a folder"), ("/sys/audits", "cannot write there")])
def test_audit_refuses_a_bad_out_before_spark_starts(tmp_path, out, says):
    (tmp_path / "file").write_text("x")
    out = out if out.startswith("/") else str(tmp_path / out)
    r = run_cli("audit", "--input", segments(tmp_path), "--out", out)  # refused before Spark: in-process
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [f"compaction-monitor: audit: --out {out}: " + r.stderr.split(f"{out}: ", 1)[1].strip()]
    assert says in r.stderr and "starting Spark" not in r.stderr and "Traceback" not in r.stderr
    assert (tmp_path / "file").read_text() == "x"

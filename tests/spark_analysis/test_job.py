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
    monkeypatch.setattr(job, "run", lambda args, topic_configs=None, spark=None: seen.update(topic_configs))
    assert job.main(["--input", str(tmp_path), "--out", str(tmp_path / "out"), "--config", str(cfg)]) == 0
    orders = seen["orders"]
    assert orders.compacted and orders.min_cleanable_dirty_ratio == 0.2 and orders.delete_retention_ms == 60000
    assert set(seen) == {"orders"}


def test_spark_submit_entry_point_refuses_a_bad_config(tmp_path, capsys):
    from spark_analysis import job

    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - topics:\n      orders: {min.cleanable.dirty.ratio: 7}\n")
    assert job.main(["--input", str(tmp_path), "--out", str(tmp_path / "out"), "--config", str(cfg)]) == 2
    assert "min.cleanable.dirty.ratio" in capsys.readouterr().err

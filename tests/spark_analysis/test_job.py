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

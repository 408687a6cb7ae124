"""``inspect`` of a folder with no segment file in it (a log dir given for a partition folder, an empty
folder): one line naming it and what to give instead, exit 2, never a silent "0 file(s)" and 0. The CLI
as a user runs it, on folders made here."""

from __future__ import annotations


import pytest

from clirun import Ran, run_cli
from recordfixtures import three_v2_batches


def inspect(*paths) -> Ran:
    return run_cli("inspect", "--stats", *map(str, paths))


@pytest.mark.parametrize("case", ["log-dir", "empty"])
def test_a_folder_without_segments_is_one_line_exit_2(case, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    if case == "log-dir":
        three_v2_batches(folder / "orders-0" / "00000000000000000000.log")
    r = inspect(folder)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"inspect: {folder}: no segment file (<20-digit offset>.log) in this folder: give a partition folder " \
           "(TOPIC-PARTITION) or segment files" in r.stderr.splitlines(), r.stderr
    if case == "log-dir":  # the partition folder inside reads as before
        r = inspect(folder / "orders-0")
        assert r.returncode == 0 and "1 file(s), 3 batches, 6 records" in r.stderr, r.stderr

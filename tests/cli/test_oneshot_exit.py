"""One exit status for the three commands that read log dirs once (issue 42): ``collect --once``,
``logdir`` and ``explain`` exit 1 for a fault of a partition (cli.oneshot.FAULT_EXIT, the rule
``LogDirSnapshot.faults_met``) and 0 for the legitimate state a clean leaves, on the same files. The
state: a clean removed an aborted transaction's data and kept its ABORT marker and .txnindex entry in
segment 0, and the cleaner's checkpoint says 8, inside that segment (a clean stopped by a full offset
map, or a checkpoint read before the clean's swap); before, ``.txnindex`` was judged to name a marker the
log does not hold. In process: the subprocess path of ``collect --once`` is test_logdirs_faults_said."""

from __future__ import annotations

import io
import struct

import pytest

from cli.explain_cmd import run_explain
from cli.logdir_cmd import run_logdir
from collectors.app import run_collect
from monitor.kafka.checkpoint import format_checkpoint
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from recordfixtures import T0, control, items, v2, write

INDEX = "00000000000000000000.txnindex"


def entry(pid, first, last, lso) -> bytes:
    return struct.pack(">hqqqq", 0, pid, first, last, lso)


def log_dir(root, index: bytes):
    """``t-0`` as the clean left it (records 0..2, producer 7's ABORT marker at 6, records 7..9; an active
    segment from 10), its .txnindex ``index``; the cleaner's checkpoint at 8."""
    logs = root / "logs"
    write(logs / "t-0" / "00000000000000000000.log",
          [v2(items(range(0, 3))), control(6, "ABORT", 7, 0, T0), v2(items(range(7, 10)))])
    write(logs / "t-0" / "00000000000000000010.log", [v2(items(range(10, 12)))])
    (logs / "t-0" / INDEX).write_bytes(index)
    (logs / "cleaner-offset-checkpoint").write_text(format_checkpoint({("t", 0): 8}))
    return logs


def exits(logs) -> dict[str, tuple[int, str]]:
    """(exit status, stderr) of each command over the log dir."""
    got = {}
    cfg = Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", log_dirs=(str(logs),)),)),))
    out, err = io.StringIO(), io.StringIO()
    got["collect --once"] = run_collect(cfg, once=True, out=out, err=err), err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    got["logdir"] = run_logdir([logs], config=Config(), out=out, err=err), err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    got["explain"] = run_explain([], config=Config(), log_dirs=[logs], out=out, err=err), err.getvalue()
    return got


def test_the_state_a_clean_leaves_is_exit_0_for_all_three(tmp_path, caplog):
    logs = log_dir(tmp_path, entry(7, 3, 6, 7))  # the entry Kafka wrote at the abort, kept by the clean
    got = exits(logs)
    assert {k: code for k, (code, _) in got.items()} == dict.fromkeys(got, 0), got
    assert INDEX not in caplog.text


@pytest.mark.parametrize("index, words", [
    (entry(8, 3, 6, 7), "no ABORT marker of that producer at their last offset"),  # no marker of 8 at 6
    (entry(7, 3, 6, 7)[:20], "less than an entry"),  # cut short
])
def test_a_fault_of_the_index_is_exit_1_for_all_three_each_naming_the_file(tmp_path, caplog, index, words):
    logs = log_dir(tmp_path, index)
    got = exits(logs)
    assert {k: code for k, (code, _) in got.items()} == dict.fromkeys(got, 1), got
    path = str(logs / "t-0" / INDEX)
    for cmd in ("logdir", "explain"):
        [line] = [x for x in got[cmd][1].splitlines() if path in x]
        assert words in line, line
    # collect's scanner logs it (the serving log says it once while it lasts), naming the file
    assert path in caplog.text and words in caplog.text

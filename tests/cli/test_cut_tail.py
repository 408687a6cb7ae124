"""One cut-tail rule (issue 42): a segment that ends inside a batch is a batch being appended on its
partition's active segment, and damage on any other (Kafka appends only to the active one:
``monitor.kafka.record.reader.cut_tail_is_fault``). ``inspect`` of the folder, ``logdir``, ``explain`` and
``collect --once`` judge the same files alike: before, the collector left a cut tail out in any segment."""

from __future__ import annotations

import io

import pytest

from cli.explain_cmd import run_explain
from cli.inspect_cmd import run_inspect
from cli.logdir_cmd import run_logdir
from collectors.app import run_collect
from monitor.kafka.checkpoint import format_checkpoint
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from recordfixtures import items, v2, write

FIRST, ACTIVE = "00000000000000000000.log", "00000000000000000006.log"


def log_dir(root, cut: str):
    """``t-0``: segment 0 (offsets 0..5) and the active segment 6 (offsets 6..8); ``cut`` names the one whose
    file ends 40 bytes into a batch more."""
    logs = root / "logs"
    half = {FIRST: v2(items(range(100, 103))).data[:40], ACTIVE: v2(items(range(9, 12))).data[:40]}
    write(logs / "t-0" / FIRST, [v2(items(range(0, 3))), v2(items(range(3, 6)))])
    write(logs / "t-0" / ACTIVE, [v2(items(range(6, 9)))])
    with open(logs / "t-0" / cut, "ab") as fh:
        fh.write(half[cut])
    (logs / "cleaner-offset-checkpoint").write_text(format_checkpoint({("t", 0): 0}))
    return logs


def judged(logs) -> dict[str, tuple[int, str]]:
    """(exit status, stderr) of each command over the same files."""
    got = {}
    err = io.StringIO()
    got["inspect"] = run_inspect([str(logs / "t-0")], out=io.StringIO(), err=err), err.getvalue()
    err = io.StringIO()
    got["logdir"] = run_logdir([logs], config=Config(), out=io.StringIO(), err=err), err.getvalue()
    err = io.StringIO()
    got["explain"] = run_explain([], config=Config(), log_dirs=[logs], out=io.StringIO(), err=err), err.getvalue()
    cfg = Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", log_dirs=(str(logs),)),)),))
    err = io.StringIO()
    got["collect --once"] = run_collect(cfg, once=True, out=io.StringIO(), err=err), err.getvalue()
    return got


def test_a_cut_tail_of_the_active_segment_is_an_append_under_way_for_all(tmp_path, caplog):
    logs = log_dir(tmp_path, ACTIVE)
    got = judged(logs)
    assert {k: code for k, (code, _) in got.items()} == dict.fromkeys(got, 0), got
    assert "left out, as the collector does" in got["inspect"][1]  # a note, not a fault
    assert ACTIVE not in caplog.text  # the collector logs no fault of it


@pytest.mark.parametrize("strict", [False, True])
def test_a_cut_tail_of_an_older_segment_is_damage_for_all_naming_file_and_byte(tmp_path, caplog, strict):
    logs = log_dir(tmp_path, FIRST)
    got = judged(logs)
    assert {k: code for k, (code, _) in got.items()} == dict.fromkeys(got, 1), got
    where = f"{logs / 't-0' / FIRST}: byte {(logs / 't-0' / FIRST).stat().st_size - 40}: "
    for cmd in ("inspect", "logdir", "explain"):
        assert [x for x in got[cmd][1].splitlines() if where in x], (cmd, got[cmd][1])
    assert where in caplog.text  # the collector's log names it too
    if strict:  # inspect --strict says it the same way, stopping there
        err = io.StringIO()
        assert run_inspect([str(logs / "t-0")], skip_corrupt=False, out=io.StringIO(), err=err) == 1
        assert where in err.getvalue()
    # the segment named alone is judged as in its folder: a segment follows it there
    err = io.StringIO()
    assert run_inspect([str(logs / "t-0" / FIRST)], out=io.StringIO(), err=err) == 1 and where in err.getvalue()


def test_a_segment_named_alone_may_be_the_active_one_when_none_follows_it(tmp_path):
    logs = log_dir(tmp_path, ACTIVE)
    err = io.StringIO()
    assert run_inspect([str(logs / "t-0" / ACTIVE)], out=io.StringIO(), err=err) == 0, err.getvalue()
    assert "left out, as the collector does" in err.getvalue()
    alone = tmp_path / "elsewhere" / FIRST  # a copy outside its folder: nothing tells, so it may be
    alone.parent.mkdir()
    alone.write_bytes((logs / "t-0" / ACTIVE).read_bytes())
    assert run_inspect([str(alone)], out=io.StringIO(), err=io.StringIO()) == 0

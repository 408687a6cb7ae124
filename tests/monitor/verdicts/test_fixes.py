"""The fixes' command lines (monitor.verdicts.fixes): the dashboard's one-line fix against explain's, on real segment
files (tests/causefixtures.py)."""

from __future__ import annotations

from causefixtures import T0, build, plain, txn_layout
from monitor.model.topicconfig import TopicConfig
from monitor.verdicts.causes import explain
from monitor.verdicts.fixes import fix_outline


def test_the_pages_one_line_fix_names_what_explain_does(tmp_path):
    """The dashboard's fix (from a cause and the series' labels) and explain's (from the partition) use
    the same command builders: the outline's command, up to its placeholder, is in explain's fix."""
    lag = TopicConfig(cleanup_policy=("compact",), min_compaction_lag_ms=3_600_000)
    cases = [build(tmp_path / "a", [plain(0, 40), plain(40, 45), plain(45, 46)], checkpoint=40) + (T0 + 10_000,),
             build(tmp_path / "b", [plain(0, 20), plain(20, 40), plain(40, 41)], lag) + (T0 + 10_000,),
             build(tmp_path / "c", txn_layout(), now=T0 + 60_000, checkpoint=20) + (T0 + 60_000,),
             build(tmp_path / "d", txn_layout(), now=T0 + 1_000_000, checkpoint=20) + (T0 + 1_000_000,)]
    got = set()
    for state, cfg, _, now in cases:
        c = explain(state, cfg, now_ms=now, bootstrap="b:1")
        outline = fix_outline(c.cause, "t", 0, last_stable_offset=state.last_stable_offset, bootstrap="b:1")
        command = outline[outline.index("kafka-"):].split("<")[0]
        assert command in " ".join(c.fix), (c.cause, command, c.fix)
        got.add(c.cause)
    assert got == {"below_threshold", "min_compaction_lag", "open_transaction", "hanging_transaction"}

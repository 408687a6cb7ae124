"""What the scanner keeps per segment and per partition is data, not objects (issue 43): records without an
instance dict, one string per topic name, one config per topic in a refresh. Each of these was a top line of
tracemalloc at 4,000 partitions (docs/benchmarks.md); the figures themselves are pinned by the goldens and the
other tests here, equal before and after."""

from __future__ import annotations

from collectors.logdirs.scanner import LogDirScanner
from monitor.kafka.checkpoint import parse_checkpoint
from monitor.kafka.logdir import parse_partition_dir_name
from recordfixtures import items, v2, write


def _log_dir(root):
    for p in range(3):
        write(root / f"orders-{p}" / f"{0:020d}.log", [v2(items(range(0, 30), distinct=7, tombstone_every=5))])
        write(root / f"orders-{p}" / f"{30:020d}.log", [v2(items(range(30, 40), distinct=7))])
    (root / "cleaner-offset-checkpoint").write_text("0\n3\norders 0 30\norders 1 30\norders 2 30\n")
    return root


def test_summaries_states_reports_and_listings_hold_no_instance_dict(tmp_path):
    s = LogDirScanner([_log_dir(tmp_path)])
    snap = s.refresh()
    assert len(snap.partitions) == 3
    held = [*s._reader.kept(), *s._active_keys.values()]
    assert held and not any(hasattr(x, "__dict__") for x in held)
    assert not any(hasattr(r, "__dict__") or hasattr(r.state, "__dict__") for r in snap.partitions)


def test_a_topics_name_is_one_string_and_its_config_one_object_across_its_partitions(tmp_path):
    a, b = parse_partition_dir_name("".join(["orders", "-1"])), parse_partition_dir_name("".join(["orders", "-2"]))
    assert a[0] is b[0]
    keys = list(parse_checkpoint("0\n2\norders 0 5\norders 1 7\n"))
    assert keys[0][0] is keys[1][0] is a[0]
    snap = LogDirScanner([_log_dir(tmp_path)]).refresh()
    reports = snap.partitions
    assert len({id(r.state.topic) for r in reports}) == 1
    assert len({id(r.config) for r in reports}) == 1 and reports[0].config.config.compacted

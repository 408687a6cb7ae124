"""A refresh costs what changed (issue 43 item 3): an unchanged partition's report is handed on again, not read
and folded again (``collectors.logdirs.scanner.Folded``), and its cause not explained again
(``collectors.export.facts.CauseCache``), counted; a reused report equals a fresh fold at every clock value,
across the thresholds where its figures move with time (``monitor.model.compaction.valid_until_ms``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from collectors.export.facts import CauseCache, log_dir_facts
from collectors.logdirs.scanner import LogDirScanner
from monitor.model.compaction import AS_OF_FOLD
from monitor.model.topicconfig import effective_config
from recordfixtures import T0, items, v2

MINUTE = 60_000


def _segment(path: Path, offsets, tombstone_every: int = 3) -> None:
    path.write_bytes(v2(items(offsets, tombstone_every=tombstone_every, distinct=4, step_ms=MINUTE)).data)


def _log_dir(root: Path, partitions: int, segments: int = 4) -> Path:
    """``partitions`` partitions of ``orders``, each ``segments`` segments of 10 records a minute apart (a
    tombstone every 3rd), the first one cleaned (cleaner checkpoint at 10)."""
    d = root / "logdir"
    d.mkdir()
    for p in range(partitions):
        pd = d / f"orders-{p}"
        pd.mkdir()
        for s in range(segments):
            _segment(pd / f"{s * 10:020d}.log", range(s * 10, s * 10 + 10))
    lines = [f"orders {p} 10" for p in range(partitions)]
    (d / "cleaner-offset-checkpoint").write_text(f"0\n{partitions}\n" + "\n".join(lines) + "\n")
    return d


def _append(d: Path, partition: int) -> None:
    seg = sorted((d / f"orders-{partition}").glob("*.log"))[-1]
    with seg.open("ab") as fh:
        fh.write(v2(items(range(40, 43), distinct=4, step_ms=MINUTE)).data)


def _lookup(**configs):
    def lookup(topic, compacted):
        return effective_config(topic, compacted=compacted, command_line={"cleanup.policy": "compact", **configs})
    return lookup


def test_one_changed_partition_of_a_hundred_costs_one_fold_and_one_cause(tmp_path):
    d = _log_dir(tmp_path, 100, segments=2)
    now = [T0 / 1000 + 3600]
    scanner = LogDirScanner([d], config_lookup=_lookup(), clock=lambda: now[0], headers_first=True)
    causes = CauseCache()
    snap = scanner.refresh()
    while scanner.busy():  # the record pass, as the collector's refreshes read it
        now[0] += 30
        snap = scanner.refresh()
    now[0] += 30
    snap = scanner.refresh()  # the first refresh with nothing pending and a measured rate of 0
    log_dir_facts(snap, now[0], causes=causes)
    builds = causes.builds
    now[0] += 30
    snap = scanner.refresh()
    assert (snap.folded, snap.reused) == (0, 100)
    facts = log_dir_facts(snap, now[0], causes=causes)
    assert causes.builds == builds and len(facts.partitions) == 100
    _append(d, 7)
    now[0] += 30
    snap = scanner.refresh()
    assert (snap.folded, snap.reused) == (1, 99)
    changed = next(r for r in snap.partitions if r.state.partition == 7)
    assert changed.write_rate.bytes_per_second > 0
    facts = log_dir_facts(snap, now[0], causes=causes)
    assert causes.builds == builds + 1
    # each kept cause's name is that of the cause explained now from the same report, and the whole cause, when
    # asked for, is explained at this build's instant (nothing in it stale)
    for f in facts.partitions:
        fresh = f.report.cause(now[0])
        assert f.cause_name == fresh.cause and f.cause == fresh
    now[0] += 30
    snap = scanner.refresh()  # partition 7's rate is 0 again: folded once more, the rest reused
    assert (snap.folded, snap.reused) == (1, 99)


def _compare(reused, fresh, now_ms: int) -> None:
    """Field by field: the state (its ``AS_OF_FOLD`` figures taken at ``now_ms``) and every report field but the
    scanner's own history (the write rate and since when it is eligible, which a fresh scanner has not)."""
    for f in dataclasses.fields(reused.state):
        if f.name in AS_OF_FOLD:
            assert AS_OF_FOLD[f.name](reused.state, now_ms) == getattr(fresh.state, f.name), f.name
        else:
            assert getattr(reused.state, f.name) == getattr(fresh.state, f.name), f.name
    for f in dataclasses.fields(reused):
        if f.name not in ("state", "write_rate", "eligible_since", "active_keys", "lso_disagreement"):
            assert getattr(reused, f.name) == getattr(fresh, f.name), f.name
    assert (reused.active_keys.duplicate_records, reused.active_keys.duplicate_bytes) == \
           (fresh.active_keys.duplicate_records, fresh.active_keys.duplicate_bytes)


def test_a_reused_report_equals_a_fresh_fold_at_every_clock_value_across_the_thresholds(tmp_path):
    """min.compaction.lag.ms releases the dirty segments one by one, max.compaction.lag.ms falls due and
    delete.retention.ms passes tombstone by tombstone over the clock values below: a report reused stale past one
    of them (a time-dependent figure kept) differs from the fresh fold and fails here."""
    d = _log_dir(tmp_path, 3)
    configs = {"min.compaction.lag.ms": 12 * MINUTE, "max.compaction.lag.ms": 70 * MINUTE,
               "delete.retention.ms": 25 * MINUTE}
    now = [0.0]
    scanner = LogDirScanner([d], config_lookup=_lookup(**configs), clock=lambda: now[0])
    reused_at = []
    t = T0 + 20 * MINUTE
    while t < T0 + 110 * MINUTE:
        now[0] = t / 1000
        snap = scanner.refresh()
        fresh = LogDirScanner([d], config_lookup=_lookup(**configs), clock=lambda: now[0]).refresh()
        by_key = {(r.state.topic, r.state.partition): r for r in fresh.partitions}
        assert len(snap.partitions) == 3
        for r in snap.partitions:
            _compare(r, by_key[(r.state.topic, r.state.partition)], t)
        if snap.reused:
            reused_at.append(t)
        t += 97_000
    # both happened: reports reused between thresholds, and folded again as the clock crossed them
    assert reused_at and scanner.folds > 3 * 2 + 3 * 5


def test_a_leftover_file_going_stale_folds_the_report_again(tmp_path):
    """A ``.cleaned`` file left in the folder counts once it is older than file.delete.delay.ms: the report reused
    before that instant is folded again after it (its leftovers then hold the file), as a fresh fold's."""
    d = _log_dir(tmp_path, 1)
    (d / "orders-0" / f"{30:020d}.log.cleaned").write_bytes(b"c" * 10)
    changed = (d / "orders-0" / f"{30:020d}.log.cleaned").stat().st_ctime_ns // 1_000_000
    delay = 60_000
    now = [0.0]
    scanner = LogDirScanner([d], config_lookup=_lookup(**{"file.delete.delay.ms": delay}), clock=lambda: now[0])
    seen = []
    for at in (changed - 30_000, changed, changed + delay - 1_000, changed + delay + 1_000, changed + delay + 2_000):
        now[0] = at / 1000
        snap = scanner.refresh()
        fresh = LogDirScanner([d], config_lookup=_lookup(**{"file.delete.delay.ms": delay}),
                              clock=lambda: now[0]).refresh()
        _compare(snap.partitions[0], fresh.partitions[0], at)
        seen.append((snap.reused, len(snap.partitions[0].leftovers)))
    # folded, folded (the write rate measured), reused, folded again (stale now), reused
    assert seen == [(0, 0), (0, 0), (1, 0), (0, 1), (1, 1)]

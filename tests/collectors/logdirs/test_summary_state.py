"""The summary cache on disk (collectors.logdirs.summary_state): a restart trusts what it read before, and only
that. On a log dir written at test time (tests/recordfixtures.py: compacted partitions of several
segments, a ``__consumer_offsets`` partition): a restart reads at most 1% of the log and holds the
summaries a fresh read makes; a cache of another version, truncated, edited, foreign, a state dir that
cannot be written or is full, a segment the cleaner replaced after the cache was written: each is
discarded or said in one log line, and every figure is the fresh read's."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from clirun import run_cli
from collectors.app import build
from collectors.logdirs.scanner import LogDirScanner
from collectors.logdirs.summary_state import FULL, OK, UNWRITABLE, SummaryState, default_state_dir
from monitor.kafka.checkpoint import format_checkpoint
from monitor.model import summarystore as S
from monitor.model.tailcheck import CHECK_BYTES
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from recordfixtures import items, v2, write

PARTITIONS, ROLLED = 6, 4
NAME = "summaries-test.cache"


def seg(folder: Path, base: int) -> Path:
    return folder / f"{base:020d}.log"


def make_log_dir(root: Path) -> Path:
    """Compacted partitions t-0.. of ROLLED segments of 300 records (a tombstone every 7th) and an active
    one of 3; a ``__consumer_offsets`` partition of two segments of commits."""
    root.mkdir()
    for p in range(PARTITIONS):
        folder = root / f"t-{p}"
        for i in range(ROLLED):
            write(seg(folder, i * 300), [v2(items(range(i * 300, i * 300 + 150), distinct=40, tombstone_every=7)),
                                         v2(items(range(i * 300 + 150, i * 300 + 300), distinct=40))])
        write(seg(folder, ROLLED * 300), [v2(items(range(ROLLED * 300, ROLLED * 300 + 3), distinct=40))])
    offsets = root / "__consumer_offsets-0"
    for base in (0, 20):
        write(seg(offsets, base), [v2(items(range(base, base + 20), prefix="\x00\x01g", tombstone_every=5))])
    cp = {("t", p): 300 for p in range(PARTITIONS)}
    (root / "cleaner-offset-checkpoint").write_text(format_checkpoint(cp))
    (root / "log-start-offset-checkpoint").write_text(format_checkpoint({k: 0 for k in cp}))
    return root


def log_bytes(root: Path) -> int:
    return sum(f.stat().st_size for f in root.glob("*/*.log"))


def cold_bytes(root: Path) -> int:
    """What a cold refresh reads: every segment, ``__consumer_offsets``' twice (its summaries, its commits)."""
    return log_bytes(root) + sum(f.stat().st_size for f in root.glob("__consumer_offsets-*/*.log"))


def append_to_active(root: Path) -> None:
    """The broker goes on writing while the collector is down: every active segment grows."""
    for p in range(PARTITIONS):
        with open(seg(root / f"t-{p}", ROLLED * 300), "ab") as fh:
            fh.write(v2(items(range(ROLLED * 300 + 3, ROLLED * 300 + 5), distinct=40)).data)


def figures(snap):
    return sorted((r.state.topic, r.state.partition, r.state) for r in snap.partitions), snap.offsets_groups


def summaries(scanner):
    """What the scanner holds that its cache keeps: summaries, commits, the active segments' keys."""
    held = [*scanner._reader.kept(), *scanner._active_keys.values()]
    return sorted(held, key=lambda e: (e.path, type(e).__name__))


def appended_bytes(root: Path) -> int:
    return len(v2(items(range(ROLLED * 300 + 3, ROLLED * 300 + 5), distinct=40)).data) * PARTITIONS


NOW = 1_800_000_000.0  # one clock for every scanner: ages compare equal
NOW_MS = int(NOW * 1000)


def scanner(root, state_dir, said, **kw):
    """A scanner with a cache whose clock stands still: a save takes no time, so one is always due (SPACING)."""
    kw.setdefault("clock", lambda: 0.0)
    return LogDirScanner([root], state=SummaryState(state_dir, NAME, notify=said.append, **kw), clock=lambda: NOW)


@pytest.fixture
def logdir(tmp_path):
    return make_log_dir(tmp_path / "logdir")


def fresh(root):
    s = LogDirScanner([root], clock=lambda: NOW)
    return s, s.refresh()


def test_a_restart_with_the_cache_reads_only_what_was_appended_and_holds_a_fresh_reads_figures(logdir, tmp_path):
    """The active segments grew while the collector was down (same inode, larger): a restart reads only the
    appended bytes, for their summaries and for their keys, and one batch header a grown segment to
    know its prefix is still what was read (at load, and again at the read on); every figure, the
    active segments' duplicates included, is a fresh read's."""
    said = []
    first = scanner(logdir, tmp_path / "state", said)
    cold = first.refresh()
    assert cold.bytes_read == cold_bytes(logdir) and cold.state_cache == (True, OK, 0)
    assert (tmp_path / "state" / NAME).is_file() and said == []
    append_to_active(logdir)  # while the collector was down
    restarted = scanner(logdir, tmp_path / "state", said)
    snap = restarted.refresh()
    ref_scanner, ref = fresh(logdir)
    print(f"restart read {snap.bytes_read} + {restarted.active_key_bytes} of {log_bytes(logdir)} bytes")
    header = CHECK_BYTES * PARTITIONS  # one batch header a grown active segment
    assert snap.bytes_read <= appended_bytes(logdir) + header
    assert restarted.active_key_bytes <= appended_bytes(logdir) + header
    # at load: the grown summaries' tails, and every active segment's keys' (they record no mtime to tell
    # an unchanged file by: the offsets partition's too)
    assert restarted.state.checked_bytes <= 2 * header + CHECK_BYTES
    assert snap.state_cache == (True, OK, PARTITIONS * (ROLLED + 1) + 4)  # every segment, the offsets' (twice)
    assert figures(snap) == figures(ref) and snap.offsets_groups
    assert summaries(restarted) == summaries(ref_scanner)
    dups = {(r.state.partition, r.active_keys.duplicate_records, r.active_keys.known) for r in snap.partitions}
    assert dups == {(r.state.partition, r.active_keys.duplicate_records, True) for r in ref.partitions}
    assert said == []


def truncate_and_regrow(path: Path) -> None:
    """Kafka's truncation of the active segment in place (LogSegment.truncateTo on a leader change: the same
    file), then the new leader's batches from that offset: other bytes, larger than the file was."""
    size, inode = path.stat().st_size, path.stat().st_ino
    with open(path, "r+b") as fh:
        fh.truncate(0)
        fh.write(v2(items(range(ROLLED * 300, ROLLED * 300 + 9), distinct=3, tombstone_every=4)).data)
    assert path.stat().st_ino == inode and path.stat().st_size > size


def test_an_active_segment_truncated_in_place_and_grown_again_is_read_again(logdir, tmp_path):
    """Same inode, larger size, but not the bytes read: at restart its cached summary and keys are
    discarded (one line naming it) and read again; in memory (between two refreshes) likewise."""
    active = seg(logdir / "t-0", ROLLED * 300)
    running = scanner(logdir, tmp_path / "state", [])
    running.refresh()
    truncate_and_regrow(active)
    said = []
    restarted = scanner(logdir, tmp_path / "state", said)
    snap = restarted.refresh()
    ref_scanner, ref = fresh(logdir)
    assert figures(snap) == figures(ref) and summaries(restarted) == summaries(ref_scanner)
    assert len(said) == 1 and "2 of" in said[0] and str(active) in said[0] and "truncation" in said[0]
    mine = next(r for r in snap.partitions if (r.state.topic, r.state.partition) == ("t", 0))
    assert mine.active_keys.duplicate_records == 6 and mine.state.log_end_offset == ROLLED * 300 + 9
    truncate_and_regrow(seg(logdir / "t-1", ROLLED * 300))  # the running scanner, in memory
    again = running.refresh()
    ref_scanner, ref = fresh(logdir)
    assert figures(again) == figures(ref) and summaries(running) == summaries(ref_scanner)


def test_an_active_segment_over_a_key_bound_restores_over_it_and_is_not_read(logdir, tmp_path):
    def bounded(said):
        state = SummaryState(tmp_path / "state", NAME, notify=said.append, clock=lambda: 0.0)
        return LogDirScanner([logdir], state=state, clock=lambda: NOW, active_key_max_keys=2)

    first = bounded([])
    snap = first.refresh()
    assert all(r.active_keys.over_bound and not r.active_keys.known for r in snap.partitions)
    append_to_active(logdir)
    said = []
    restarted = bounded(said)
    again = restarted.refresh()
    assert restarted.active_key_bytes == 0 and said == []
    assert [r.active_keys.over_bound for r in again.partitions] == [r.active_keys.over_bound for r in snap.partitions]
    assert all(k._latest == {} for k in restarted._active_keys.values())


def test_nothing_changed_nothing_written(logdir, tmp_path):
    s = scanner(logdir, tmp_path / "state", [])
    s.refresh()
    path = tmp_path / "state" / NAME
    before = path.stat().st_ino
    s.refresh()
    assert path.stat().st_ino == before  # not replaced: the refresh read nothing
    append_to_active(logdir)
    s.refresh()
    assert path.stat().st_ino != before


def test_a_save_waits_twenty_times_its_own_duration(logdir, tmp_path):
    """A save that took 0.5 s (on this clock) is due again 10 s after it: a change before then is written
    by the first refresh after."""
    now = [0.0]

    def clock():
        now[0] += 0.5  # every reading half a second later: a save (two readings) takes 0.5 s
        return now[0]

    s = scanner(logdir, tmp_path / "state", [], clock=clock)
    path = tmp_path / "state" / NAME
    s.refresh()
    first = path.stat().st_ino
    append_to_active(logdir)
    s.refresh()
    assert path.stat().st_ino == first  # 10 s not yet passed since
    now[0] += 20
    s.refresh()  # nothing read this time, the change still unwritten: written now
    assert path.stat().st_ino != first and len(S.decode(path.read_bytes())[1]) == len(summaries(s))


def another_version(data: bytes) -> bytes:
    head_end = data.index(b"\n", len(S.MAGIC))
    return data[:head_end].replace(S.VERSION.encode(), b"0" * len(S.VERSION)) + data[head_end:]


BAD = {
    "other version": ("version", another_version),
    "truncated": ("truncated", lambda d: d[: len(d) * 2 // 3]),
    "edited by hand": ("checksum", lambda d: d[:-100] + bytes([d[-100] ^ 0x20]) + d[-99:]),
    "foreign": ("foreign", lambda d: b"# node.id=1\nprocess.roles=broker\n"),
    "a directory": ("cannot read it", None),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_cache_is_discarded_in_one_line_and_every_figure_is_a_fresh_reads(logdir, tmp_path, case):
    reason, damage = BAD[case]
    scanner(logdir, tmp_path / "state", []).refresh()
    path = tmp_path / "state" / NAME
    if damage is None:
        path.unlink()
        path.mkdir()
    else:
        path.write_bytes(damage(path.read_bytes()))
    said = []
    s = scanner(logdir, tmp_path / "state", said)
    snap = s.refresh()
    assert snap.bytes_read == cold_bytes(logdir)  # nothing trusted: read as at a cold start
    assert figures(snap) == figures(fresh(logdir)[1])
    assert str(path) in said[0] and reason in said[0] and "discarded" in said[0]
    assert snap.state_cache[2] == 0
    if damage is not None:  # written again, whole, by this version
        assert len(said) == 1
        assert snap.state_cache[:2] == (True, OK) and len(S.decode(path.read_bytes())[1]) == len(summaries(s))
    else:  # a directory cannot be replaced by the new file: said as well, and exported
        assert len(said) == 2 and "without a cache" in said[1] and snap.state_cache[:2] == (False, UNWRITABLE)


def test_a_segment_the_cleaner_replaced_after_the_write_is_read_again(logdir, tmp_path):
    """Same name, same size, same mtime: only the inode says it is another file (Kafka's swap renames the
    cleaned ``.swap`` over it). Its summary is the new file's, not the cache's."""
    scanner(logdir, tmp_path / "state", []).refresh()
    old = seg(logdir / "t-0", 0)
    st = old.stat()
    swap = Path(f"{old}.swap")  # the same records stamped LogAppendTime: another max timestamp, the same size
    write(swap, [v2(items(range(0, 150), distinct=40, tombstone_every=7), log_append_time=NOW_MS),
                 v2(items(range(150, 300), distinct=40), log_append_time=NOW_MS)])
    assert swap.stat().st_size == st.st_size
    os.utime(swap, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.rename(swap, old)
    assert old.stat().st_ino != st.st_ino and old.stat().st_mtime_ns == st.st_mtime_ns
    said = []
    s = scanner(logdir, tmp_path / "state", said)
    snap = s.refresh()
    ref_scanner, ref = fresh(logdir)
    assert snap.bytes_read == st.st_size and figures(snap) == figures(ref)
    assert summaries(s) == summaries(ref_scanner)
    assert [x.max_timestamp for x in summaries(s) if x.path == str(old)] == [NOW_MS]
    assert len(said) == 1 and "1 of" in said[0] and str(old) in said[0]


@pytest.mark.parametrize("where", ["under a regular file", "in /proc"])
def test_a_state_dir_that_cannot_be_written_leaves_the_collector_working_and_says_so(logdir, tmp_path, where):
    """Root ignores permissions: a path no process can make a dir at (under a file; /proc) stands for a
    read-only disk. The figures are a fresh read's; the series says the cache is down, and why."""
    (tmp_path / "file").write_text("x")
    state = tmp_path / "file" / "state" if where == "under a regular file" else Path("/proc/compaction-monitor-state")
    said = []
    s = scanner(logdir, state, said)
    snap = s.refresh()
    assert figures(snap) == figures(fresh(logdir)[1]) and snap.state_cache == (False, UNWRITABLE, 0)
    append_to_active(logdir)
    assert s.refresh().state_cache == (False, UNWRITABLE, 0)
    assert len(said) == 1 and str(state) in said[0] and "without a cache" in said[0]
    cfg = Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", log_dirs=(str(logdir),)),)),))
    col = build(cfg, str(state))
    try:
        assert col.runner.refresh_all()
        reg = col.registry
        labels = {"cluster": "c", "broker": "1"}
        assert reg.get_sample_value("kafka_compaction_log_dir_state_cache_up", {**labels, "reason": UNWRITABLE}) == 0
        assert reg.get_sample_value("kafka_compaction_log_dir_state_cache_restored_segments", labels) == 0
        assert reg.get_sample_value("kafka_compaction_partition_log_end_offset",
                                    {**labels, "topic": "t", "partition": "0"}) == ROLLED * 300 + 5
    finally:
        col.close()


def test_a_full_disk_keeps_the_last_cache_whole_and_leaves_no_temp_file(logdir, tmp_path):
    """ENOSPC injected into the write (the one fault a test cannot make a real filesystem show here)."""
    state = tmp_path / "state"
    said, full = [], [True]

    def write(fd, data):
        if full[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return os.write(fd, data)

    s = scanner(logdir, state, said, write=write)
    full[0] = False
    s.refresh()
    written = (state / NAME).read_bytes()
    full[0] = True
    append_to_active(logdir)
    snap = s.refresh()
    assert snap.state_cache == (False, FULL, 0) and figures(snap) == figures(fresh(logdir)[1])
    assert (state / NAME).read_bytes() == written and sorted(p.name for p in state.iterdir()) == [NAME]
    assert len(said) == 1 and "no space left on device" in said[0]
    full[0] = False
    assert s.refresh().state_cache == (True, OK, 0)  # the last refresh's change written now that there is room
    assert len(S.decode((state / NAME).read_bytes())[1]) == len(summaries(s)) and "written again" in said[-1]


def test_collect_once_keeps_a_cache_only_in_the_state_dir_given(logdir, tmp_path):
    """``collect --once`` is a one-shot check: no file left behind unasked; with ``--state-dir``, the cache
    and its series. (Serving, it always keeps one: the default dir, $STATE_DIRECTORY in these tests.)"""
    def once(*extra):
        return run_cli("collect", "--once", "--log-dir", str(logdir), *extra,
                       env={"STATE_DIRECTORY": str(tmp_path / "default")})

    plain = once()
    assert plain.returncode == 0 and "state_cache_up{" not in plain.stdout and not (tmp_path / "default").exists()
    given = once("--state-dir", str(tmp_path / "given"))
    assert given.returncode == 0, given.stderr
    assert 'kafka_compaction_log_dir_state_cache_up{broker="local",cluster="default",reason="ok"} 1.0' in given.stdout
    assert [p.name.startswith("summaries-default-local-") for p in (tmp_path / "given").iterdir()] == [True]
    again = once("--state-dir", str(tmp_path / "given"))
    restored = f"state_cache_restored_segments{{broker=\"local\",cluster=\"default\"}} {PARTITIONS * (ROLLED + 1) + 4}.0"
    assert restored in again.stdout


def test_the_default_state_dir(tmp_path):
    env = {"XDG_STATE_HOME": str(tmp_path / "xdg")}
    assert default_state_dir({**env, "STATE_DIRECTORY": "/run/a:/run/b"}) == "/run/a"
    host = tmp_path / "lib" / "compaction-monitor"
    (tmp_path / "lib").mkdir()
    assert default_state_dir(env, str(host)) == str(host)
    (tmp_path / "file").write_text("x")
    assert default_state_dir(env, str(tmp_path / "file" / "cm")) == str(tmp_path / "xdg" / "compaction-monitor")


def test_the_serving_collectors_restart_headers_first_reads_only_what_was_appended(logdir, tmp_path):
    """Headers first (the serving collector): the appended batches' headers, then their records, then the
    active segments' keys from the cache read on; every figure a fresh read's."""
    def serving():
        state = SummaryState(tmp_path / "state", NAME, notify=[].append, clock=lambda: 0.0)
        return LogDirScanner([logdir], state=state, clock=lambda: NOW, headers_first=True)

    def until_whole(s):
        snaps = [s.refresh()]
        while s.busy():
            snaps.append(s.refresh())
        snaps.append(s.refresh())  # the offsets' commits: read once no partition's records are pending
        return snaps

    until_whole(serving())
    append_to_active(logdir)
    restarted = serving()
    snaps = until_whole(restarted)
    ref_scanner, ref = fresh(logdir)
    assert figures(snaps[-1]) == figures(ref) and summaries(restarted) == summaries(ref_scanner)
    header = CHECK_BYTES * PARTITIONS
    assert sum(x.bytes_read for x in snaps) <= 2 * (appended_bytes(logdir) + header)  # headers, then records
    assert restarted.active_key_bytes <= appended_bytes(logdir) + header
    assert all(r.active_keys is not None and r.active_keys.known for r in snaps[-1].partitions)


def test_an_unchanged_serving_restart_folds_from_the_cache_alone_every_field_a_cold_reads(logdir, tmp_path,
                                                                                         monkeypatch):
    """Headers first, nothing changed while the collector was down: the restart's first refresh reads no
    segment byte and stats no segment beyond its listing (each cached summary is taken where the listing shows
    its file as summarised, and holds the listing's path string), and each partition's report is, field by
    field, a cold whole read's (its records not pending: the cache holds them)."""
    import dataclasses

    import monitor.model.summary as summarymod

    def serving():
        state = SummaryState(tmp_path / "state", NAME, notify=[].append, clock=lambda: 0.0)
        return LogDirScanner([logdir], state=state, clock=lambda: NOW, headers_first=True)

    first = serving()
    first.refresh()
    while first.busy():
        first.refresh()
    first.refresh()  # the offsets' commits, then the cache holds everything
    stats = []
    real = summarymod._stat
    monkeypatch.setattr(summarymod, "_stat", lambda path: stats.append(path) or real(path))
    restarted = serving()
    snap = restarted.refresh()
    assert snap.bytes_read == 0 and stats == []
    # each summary decoded from the cache holds the listing's path string, one string a segment, not two
    listed = {seg.path: seg.path for ld in restarted._listings.values() for p in ld.partitions for seg in p.segments
              if p.topic == "t"}
    held = [s for s in restarted._reader._cache.values() if s.path in listed]
    assert len(held) == PARTITIONS * (ROLLED + 1) and all(s.path is listed[s.path] for s in held)
    _, ref = fresh(logdir)
    got = {(r.state.topic, r.state.partition): r for r in snap.partitions}
    want = {(r.state.topic, r.state.partition): r for r in ref.partitions}
    assert got.keys() == want.keys() >= {("t", p) for p in range(PARTITIONS)}
    for key, r in want.items():
        for f in dataclasses.fields(r):
            mine, theirs = getattr(got[key], f.name), getattr(r, f.name)
            if f.name == "detail_pending":  # headers first says False once read; a whole read, None (not asked)
                assert (mine, theirs) == (False, None), key
            else:
                assert mine == theirs, (key, f.name)

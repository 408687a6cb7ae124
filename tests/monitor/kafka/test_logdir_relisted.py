"""A log dir listed again takes each partition folder whose names cannot have changed from the last listing
(``monitor.kafka.logdir.relisted``): the same object when no segment moved, the moved segments' sizes, mtimes and
inodes otherwise; a folder changed since, or changed just before the last listing (racy), is listed whole."""

from __future__ import annotations

import os
import time

from monitor.kafka.logdir import RACY_NS, scan_log_dir


def _log_dir(tmp_path):
    d = tmp_path / "logdir"
    pd = d / "orders-0"
    pd.mkdir(parents=True)
    for base in (0, 10):
        (pd / f"{base:020d}.log").write_bytes(b"x" * (100 + base))
        (pd / f"{base:020d}.index").write_bytes(b"")
    return d, pd


def _age(folder, seconds: float) -> None:
    old = time.time_ns() - int(seconds * 1e9)
    os.utime(folder, ns=(old, old))


def test_an_unchanged_folder_is_the_last_listings_object_and_an_append_only_restats(tmp_path):
    d, pd = _log_dir(tmp_path)
    _age(pd, 10)
    first = scan_log_dir(d)
    again = scan_log_dir(d, first)
    assert again.partitions[0] is first.partitions[0]  # nothing moved: no object made
    with open(pd / f"{10:020d}.log", "ab") as fh:  # an append moves no name: the folder's mtime stays
        fh.write(b"more")
    grown = scan_log_dir(d, again).partitions[0]
    assert grown is not again.partitions[0] and grown.segments[0] is again.partitions[0].segments[0]
    assert [s.size for s in grown.segments] == [100, 114] and grown.folder_key == again.partitions[0].folder_key


def test_a_folder_whose_names_changed_or_changed_just_before_the_listing_is_listed_whole(tmp_path):
    d, pd = _log_dir(tmp_path)
    _age(pd, 10)
    first = scan_log_dir(d)
    (pd / f"{20:020d}.log").write_bytes(b"y" * 7)  # a roll: a new name sets the folder's mtime
    rolled = scan_log_dir(d, first).partitions[0]
    assert [s.base_offset for s in rolled.segments] == [0, 10, 20]
    # changed within RACY_NS before that listing: listed whole again, though its mtime did not move since
    _age(pd, RACY_NS / 1e9 / 4)
    racy = scan_log_dir(d)
    (pd / f"{30:020d}.log").write_bytes(b"z")
    _age(pd, RACY_NS / 1e9 / 4)  # the same mtime as the racy listing saw, a file more
    assert [s.base_offset for s in scan_log_dir(d, racy).partitions[0].segments] == [0, 10, 20, 30]


def test_a_segment_gone_or_swapped_under_its_name_is_listed_whole(tmp_path):
    d, pd = _log_dir(tmp_path)
    _age(pd, 10)
    first = scan_log_dir(d)
    log = pd / f"{0:020d}.log"
    st = os.stat(log)
    tmp = pd / "swap.tmp"
    tmp.write_bytes(b"x" * 100)
    os.replace(tmp, log)  # the cleaner's swap: same name and size, another inode
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
    mtime = first.partitions[0].folder_key[1]
    os.utime(pd, ns=(mtime, mtime))  # even with the folder's mtime put back, the inode tells
    swapped = scan_log_dir(d, first).partitions[0]
    assert swapped.segments[0].ino == os.stat(log).st_ino != first.partitions[0].segments[0].ino
    log.unlink()
    _age(pd, 10)
    assert [s.base_offset for s in scan_log_dir(d, scan_log_dir(d, first)).partitions[0].segments] == [10]


def _checkpoint(d, name: str, entries: dict, *, renamed: bool = True, age: float = 10.0) -> None:
    """A checkpoint as Kafka writes it (a temporary file renamed over it), or written in place; its mtime
    ``age`` seconds ago."""
    text = f"0\n{len(entries)}\n" + "".join(f"{t} {p} {o}\n" for (t, p), o in entries.items())
    target = d / name
    if renamed:
        (d / f"{name}.tmp").write_text(text)
        os.replace(d / f"{name}.tmp", target)
    else:
        with open(target, "r+") as fh:
            fh.write(text)
    _age(target, age)


def test_an_unchanged_checkpoint_is_the_last_listings_entries_and_a_rewritten_one_is_read(tmp_path):
    """The cleaner's checkpoint taken again unread (the same dict) while its file is the same, and changed
    before the last listing by more than ``RACY_NS``; rewritten (renamed over, or in place with the same size,
    or changed just before the last listing) it is read again: the new offsets, never the kept ones."""
    d, pd = _log_dir(tmp_path)
    _age(pd, 10)
    name = "cleaner-offset-checkpoint"
    _checkpoint(d, name, {("orders", 0): 10})
    first = scan_log_dir(d)
    again = scan_log_dir(d, first)
    assert again.checkpoints[name] is first.checkpoints[name] == {("orders", 0): 10}
    assert again.checkpoint_lines[name] is first.checkpoint_lines[name]
    _checkpoint(d, name, {("orders", 0): 20})  # Kafka's write: a new inode, the same size
    moved = scan_log_dir(d, again)
    assert moved.checkpoints[name] == {("orders", 0): 20}
    _checkpoint(d, name, {("orders", 0): 30}, renamed=False)  # in place, the same size: its mtime and ctime move
    assert scan_log_dir(d, scan_log_dir(d, moved)).checkpoints[name] == {("orders", 0): 30}
    # written within RACY_NS before a listing, then in place again, its mtime set back to the same instant (its
    # ctime moves): read again
    _checkpoint(d, name, {("orders", 0): 40}, renamed=False, age=RACY_NS / 1e9 / 4)
    racy = scan_log_dir(d)
    _checkpoint(d, name, {("orders", 0): 50}, renamed=False, age=RACY_NS / 1e9 / 4)
    assert scan_log_dir(d, racy).checkpoints[name] == {("orders", 0): 50}


def test_a_malformed_checkpoint_is_read_and_said_at_every_listing(tmp_path):
    d, pd = _log_dir(tmp_path)
    name = "cleaner-offset-checkpoint"
    (d / name).write_text("0\n2\norders 0 10\n")  # two entries said, one there
    _age(d / name, 10)
    first = scan_log_dir(d)
    again = scan_log_dir(d, first)
    assert name in first.checkpoint_errors and again.checkpoint_errors[name] == first.checkpoint_errors[name]

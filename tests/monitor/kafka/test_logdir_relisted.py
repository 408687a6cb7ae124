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

"""One partition's read (collectors.logdirs.read): what the reader keeps between refreshes is what makes
the collector incremental. On real segment files (tests/recordfixtures.py): a partition read again
unchanged costs no segment read; a grown active segment is read only for the bytes it gained; a segment
replaced under the reader (the cleaner's swap) raises ``SegmentsMoved`` rather than being taken for the
one listed; what was not read in a refresh is forgotten. The figures are those of a fresh read."""

from __future__ import annotations

import os

import pytest

from collectors.logdirs.churn import Relister, SegmentsMoved
from collectors.logdirs.read import PartitionReader
from monitor.kafka.logdir import scan_partition
from monitor.model.topicconfig import effective_broker_setting, effective_config
from monitor.model.tailcheck import CHECK_BYTES
from monitor.model.transactions import TRANSACTION_MAX_TIMEOUT
from recordfixtures import items, v2, write

CFG = effective_config("t", compacted=True).config
TXN = effective_broker_setting(TRANSACTION_MAX_TIMEOUT)
NOW_MS = 1_800_000_000_000


def partition(root):
    folder = root / "t-0"
    write(folder / "00000000000000000000.log", [v2(items(range(0, 10), distinct=5))])
    write(folder / "00000000000000000010.log", [v2(items(range(10, 15), distinct=5))])
    return folder


def read(reader, folder):
    return reader.read(scan_partition(folder), CFG, NOW_MS, 0, 0, TXN)


def test_an_unchanged_partition_is_not_read_again_and_a_grown_one_only_for_what_it_gained(tmp_path):
    folder = partition(tmp_path)
    reader = PartitionReader(Relister())
    summaries, snapshot, state, check, faults, bad = read(reader, folder)
    assert (reader.reads, reader.bytes) == (2, sum(s.size for s in summaries))
    assert (state.log_end_offset, state.records, faults, bad, snapshot) == (15, 15, [], {}, None)
    again = read(reader, folder)
    assert (reader.reads, reader.bytes) == (2, sum(s.size for s in summaries))  # nothing read
    assert again[2] == state
    grown = v2(items(range(15, 18), distinct=5))
    with open(folder / "00000000000000000010.log", "ab") as fh:
        fh.write(grown.data)
    before = reader.bytes
    state = read(reader, folder)[2]
    # the active segment's new batch only, and its last batch read's header again (monitor.model.tailcheck)
    assert reader.reads == 3 and reader.bytes - before == len(grown.data) + CHECK_BYTES
    assert (state.log_end_offset, state.records) == (18, 18)
    assert state == read(PartitionReader(Relister()), folder)[2]  # as a reader that never saw it


@pytest.mark.parametrize("headers_first", [True, False], ids=["headers-first", "whole"])
def test_a_segment_as_the_listing_stat_ed_it_is_taken_from_the_reader_without_a_stat_of_its_own(
        tmp_path, monkeypatch, headers_first):
    """A summary whose file the refresh's listing found unchanged (inode, size, mtime) is handed on with no stat
    of its own (a restart trusts every cached segment so: two stats a segment were one); a segment the listing
    shows grown is stat'ed and read on, and the figures are a fresh reader's."""
    import monitor.model.summary as summarymod

    folder = partition(tmp_path)
    reader = PartitionReader(Relister(), headers_first=headers_first)
    first = read(reader, folder)[0]
    stats = []
    real = summarymod._stat
    monkeypatch.setattr(summarymod, "_stat", lambda path: stats.append(str(path)) or real(path))
    again = read(reader, folder)
    assert [a is b for a, b in zip(again[0], first)] == [True, True] and stats == []
    with open(folder / "00000000000000000010.log", "ab") as fh:
        fh.write(v2(items(range(15, 18), distinct=5)).data)
    grown = read(reader, folder)
    assert stats == [str(folder / "00000000000000000010.log")] and grown[0][0] is first[0]
    assert grown[2] == read(PartitionReader(Relister(), headers_first=headers_first), folder)[2]


def test_a_segment_replaced_under_the_read_is_no_segment_of_the_listing(tmp_path):
    folder = partition(tmp_path)
    listing = scan_partition(folder)
    first = folder / "00000000000000000000.log"
    mtime = first.stat().st_mtime_ns
    cleaned = folder / "00000000000000000000.log.swap"
    write(cleaned, [v2([r for r in items(range(0, 10), distinct=5) if r.offset >= 5])])
    os.rename(cleaned, first)  # the clean swapped in after the listing, its mtime the replaced one's
    os.utime(first, ns=(mtime, mtime))
    with pytest.raises(SegmentsMoved, match="00000000000000000000.log: listed with"):
        PartitionReader(Relister()).read(listing, CFG, NOW_MS, 0, 0, TXN)


def test_what_was_not_read_in_a_refresh_is_forgotten(tmp_path):
    folder = partition(tmp_path)
    reader = PartitionReader(Relister())
    summaries = read(reader, folder)[0]
    reader.forget({s.path for s in summaries[1:]})  # the first segment deleted by retention, say
    read(reader, folder)
    assert reader.reads == 3  # the forgotten one read again, the other not


def test_an_index_renamed_live_after_its_log_is_read_again_not_a_fault(tmp_path, monkeypatch):
    """Kafka's swap renames a segment's .log live before its .txnindex (LogSegment.changeFileSuffixes): a
    read between the two finds the log's abort with no entry. The listing's check sees the index that
    came meanwhile and the partition is read again (SegmentsMoved), not reported."""
    import struct

    import collectors.logdirs.read as readmod
    from recordfixtures import T0, control

    folder = tmp_path / "t-0"
    write(folder / "00000000000000000000.log", [
        v2(items(range(0, 3), "p7"), producer_id=7, producer_epoch=0, base_sequence=0, transactional=True),
        control(3, "ABORT", 7, 0, T0), v2(items(range(4, 6)))])
    write(folder / "00000000000000000006.log", [v2(items(range(6, 8)))])
    index = folder / "00000000000000000000.txnindex"
    (folder / "00000000000000000000.txnindex.swap").write_bytes(struct.pack(">hqqqq", 0, 7, 0, 3, 4))
    listing = scan_partition(folder)
    real = readmod.txn_index_faults

    def read_then_rename(*args):  # the index read while still .swap, renamed live right after
        faults = real(*args)
        os.rename(str(index) + ".swap", index)
        return faults

    monkeypatch.setattr(readmod, "txn_index_faults", read_then_rename)
    with pytest.raises(SegmentsMoved, match="00000000000000000000.txnindex: replaced while read"):
        PartitionReader(Relister()).read(listing, CFG, NOW_MS, 0, 0, TXN)
    monkeypatch.setattr(readmod, "txn_index_faults", real)
    assert read(PartitionReader(Relister()), folder)[4] == []  # read again: log and index agree
    os.rename(index, str(index) + ".swap")  # and while the .swap is still there: read again too
    with pytest.raises(SegmentsMoved, match="00000000000000000000.txnindex: replaced while read"):
        PartitionReader(Relister()).read(scan_partition(folder), CFG, NOW_MS, 0, 0, TXN)

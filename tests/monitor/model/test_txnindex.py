"""``.txnindex`` read strictly (monitor.model.txnindex) and cross-checked with the aborts folded from the log
(monitor.model.transactions.aborted_transactions): on entries packed by hand from Kafka's AbortedTxn layout,
and on a real broker's partition, against kafka-dump-log's reading of the same ``.txnindex`` and
``.log`` files. A disagreement reaches ``logdir`` as a read fault naming the file."""

from __future__ import annotations

import io
import json
import re
import shutil
import struct
from pathlib import Path

import pytest

from cli.logdir_cmd import run_logdir
from kafkatools import compacted, copy_partition, create_topic, localtools, partition_dir, produce, producer, roll, unique_topic
from monitor.settings.config import Config
from monitor.model.summary import summarize
from monitor.model.transactions import AbortedTxn, aborted_transactions
from monitor.model.txnindex import TxnIndexError, read_txn_index, txn_index_faults

# Kafka's AbortedTxn, as its toByteBuffer writes it: putShort(0) then four putLong, big-endian
def entry(pid, first, last, lso, version=0) -> bytes:
    return struct.pack(">h", version) + b"".join(struct.pack(">q", v) for v in (pid, first, last, lso))


def test_entries_read_as_kafka_writes_them(tmp_path):
    f = tmp_path / "00000000000000000100.txnindex"
    f.write_bytes(entry(7, 100, 120, 100) + entry(8, 90, 130, 131))
    assert len(f.read_bytes()) == 68  # AbortedTxn.TOTAL_SIZE is 34
    assert read_txn_index(f, 100) == (AbortedTxn(7, 100, 120, 100, 100), AbortedTxn(8, 90, 130, 131, 100))
    assert read_txn_index(tmp_path / "00000000000000000200.txnindex", 200) == ()  # not created: no abort


@pytest.mark.parametrize("data, position, words", [
    (entry(7, 100, 120, 100) + b"\0" * 20, 34, "20 bytes at the end"),
    (entry(7, 100, 120, 100) + entry(8, 121, 122, 123, version=1), 34, "version 1"),
    (entry(7, 10, 20, 10), 0, "below the segment's base offset 100"),
    (entry(7, 130, 120, 100), 0, "first offset 130 is after the last offset 120"),
    (entry(7, 100, 120, 100) + entry(8, 101, 120, 100), 34, "does not follow"),
    (entry(7, 100, 120, 500), 0, "last stable offset 500"),
])
def test_a_malformed_index_is_named_with_its_byte_position(tmp_path, data, position, words):
    f = tmp_path / "00000000000000000100.txnindex"
    f.write_bytes(data)
    with pytest.raises(TxnIndexError) as err:
        read_txn_index(f, 100)
    assert str(err.value).startswith(f"{f}: byte {position}: ") and words in str(err.value)


# ---------------------------------------------------------------- against a real broker

def _txn_producer(bootstrap: str, tid: str):
    p = producer(bootstrap, **{"transactional.id": tid, "transaction.timeout.ms": 600_000})
    p.init_transactions(30)
    return p


def _write(p, topic, prefix, n=10):
    for i in range(n):
        p.produce(topic, key=f"{prefix}-{i}".encode(), value=f"{prefix}-{i}".encode() * 4, partition=0)
    assert p.flush(30) == 0


DUMP_TXN = re.compile(r"version: (\d+) producerId: (-?\d+) firstOffset: (-?\d+) lastOffset: (-?\d+) "
                      r"lastStableOffset: (-?\d+)")


@pytest.fixture(scope="module")
def aborted_partition(kafka, tmp_path_factory):
    """Two transactional producers interleaved: A aborts while B is open (the entry's LSO is B's first
    offset), B commits, A aborts a transaction whose data spans a segment roll, A commits one; rolled
    below the active segment, never cleaned (min.cleanable.dirty.ratio 1.0 is never exceeded). A copy
    of the partition's .log and .txnindex files."""
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("txnidx"), **compacted(**{"min.cleanable.dirty.ratio": 1.0}))
    a, bb = _txn_producer(b, f"{t}-a"), _txn_producer(b, f"{t}-b")
    produce(b, t, [(b"plain", b"x")])
    a.begin_transaction()
    _write(a, t, "a1")
    bb.begin_transaction()
    _write(bb, t, "b1")
    a.abort_transaction(30)
    _write(bb, t, "b1more")
    bb.commit_transaction(30)
    a.begin_transaction()
    _write(a, t, "a2")
    roll(b, t)
    _write(a, t, "a2more")
    a.abort_transaction(30)
    a.begin_transaction()
    _write(a, t, "a3")
    a.commit_transaction(30)
    roll(b, t)
    folder = copy_partition(partition_dir(kafka.log_dir, t), tmp_path_factory.mktemp("txnidx"),
                            suffixes=(".log", ".txnindex"))
    return t, folder


def test_the_logs_aborts_equal_the_brokers_txnindex_and_kafka_dump_log(aborted_partition):
    t, folder = aborted_partition
    logs = sorted(folder.glob("*.log"))
    summaries = [summarize(f, int(f.name[:-4]))[0] for f in logs]
    ours = aborted_transactions(summaries)
    assert ours.complete and len(ours.aborted) == 2
    # the broker's .txnindex files, read by this reader and by kafka-dump-log
    index = [e for s in summaries for e in read_txn_index(folder / f"{s.base_offset:020d}.txnindex", s.base_offset)]
    assert list(ours.aborted) == index
    txnfiles = sorted(folder.glob("*.txnindex"))
    assert txnfiles
    printed = [tuple(int(x) for x in m.groups()) for m in DUMP_TXN.finditer(localtools.dump_log(txnfiles))]
    assert printed == [(0, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset) for e in index]
    # kafka-dump-log's ABORT markers are the entries' last offsets, of the same producers
    from dumpcompare import dump

    _, batches = dump(logs)
    aborts = [(x.producer_id, x.base_offset) for x in batches if x.is_control
              for r in x.records() if r.control_type == "ABORT"]
    assert aborts == [(e.producer_id, e.last_offset) for e in index]
    first_a1 = min(x.base_offset for x in batches if not x.is_control
                   and any(r.key == b"a1-0" for r in x.records()))
    first_a2 = min(x.base_offset for x in batches if not x.is_control
                   and any(r.key == b"a2-0" for r in x.records()))
    # each entry's LSO by Kafka's rule (ProducerStateManager.lastStableOffset): the first offset of the
    # earliest other transaction still open at the marker, else the marker's offset + 1. The coordinator
    # writes A's abort marker after its EndTxn answer, so B's commit may come before or after it:
    # computed from the log, not assumed (B open at the marker gives B's first offset, as in most runs)
    spans, open_ = [], {}
    for x in batches:
        if x.is_control:
            spans.append((x.producer_id, open_.pop(x.producer_id, None), x.base_offset))
        elif x.is_transactional:
            open_.setdefault(x.producer_id, x.base_offset)
    spans += [(pid, first, None) for pid, first in open_.items()]

    def lso(entry):
        others = [f for pid, f, end in spans if pid != entry.producer_id and f is not None and f < entry.last_offset
                  and (end is None or end > entry.last_offset)]
        return min(others, default=entry.last_offset + 1)

    assert [(e.first_offset, e.last_stable_offset) for e in index] == [(first_a1, lso(index[0])),
                                                                       (first_a2, lso(index[1]))]
    assert lso(index[1]) == index[1].last_offset + 1  # nothing else open at A's second abort
    # the second abort's data spans a roll: its entry is in the segment of its marker
    assert index[1].segment > first_a2
    assert txn_index_faults(summaries, summaries[0].base_offset) == []


def test_an_index_that_disagrees_with_the_log_is_a_read_fault_naming_it(aborted_partition, tmp_path):
    _, folder = aborted_partition
    dst = tmp_path / folder.name
    shutil.copytree(folder, dst)
    [f] = [f for f in sorted(dst.glob("*.txnindex")) if f.stat().st_size][:1]
    data = bytearray(f.read_bytes())
    struct.pack_into(">q", data, 10, struct.unpack_from(">q", data, 10)[0] + 1)  # the first offset, one later
    f.write_bytes(bytes(data))
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([tmp_path], config=Config(), fmt="json", include_all=True, out=out, err=err) == 1
    [row] = json.loads(out.getvalue())
    assert row["faults"] == 1
    assert str(f) in err.getvalue() and "disagrees" in err.getvalue()


def _cleaned_partition(folder: Path, entries: bytes) -> list:
    """The files a clean leaves (LogCleaner.cleanSegments into segment 0): the aborted data of producer 7
    (offsets 3..5) gone, its ABORT marker at 6 kept with its .txnindex entry (the clean still saw the
    data: CleanedTransactionMetadata.onControlBatchRead), the other records around it; an active
    segment from 10. Segment summaries in offset order."""
    from recordfixtures import T0, control, items, v2, write

    folder.mkdir()
    write(folder / "00000000000000000000.log", [v2(items(range(0, 3))), control(6, "ABORT", 7, 0, T0),
                                                 v2(items(range(7, 10)))])
    (folder / "00000000000000000000.txnindex").write_bytes(entries)
    write(folder / "00000000000000000010.log", [v2(items(range(10, 12)))])
    return [summarize(f, int(f.name[:-4]))[0] for f in sorted(folder.glob("*.log"))]


KEPT = entry(7, 3, 6, 7)  # (producer 7, first 3, last 6, lso 7): as Kafka wrote it at the abort, copied by the clean


@pytest.mark.parametrize("first_dirty, why", [
    (10, "the checkpoint the clean wrote: segment 0 cleaned"),
    (8, "a clean stopped by a full offset map inside segment 0 (it recopies the whole segment)"),
    (0, "a checkpoint read before the clean's swap (the collector reads it once per log dir, first)"),
])
def test_a_marker_a_clean_kept_with_its_entry_is_no_fault_whatever_the_checkpoint_says(tmp_path, first_dirty, why):
    summaries = _cleaned_partition(tmp_path / "t-0", KEPT)
    assert txn_index_faults(summaries, first_dirty) == [], why
    # the entry's agreement cannot be told from the log: it is not required either (a later clean drops it)
    summaries = _cleaned_partition(tmp_path / "u-0", b"")
    assert txn_index_faults(summaries, first_dirty) == [], why


@pytest.mark.parametrize("first_dirty", [10, 8, 0])
def test_an_entry_with_no_marker_of_its_producer_at_its_last_offset_is_still_a_fault(tmp_path, first_dirty):
    # producer 8 has no marker at 6; producer 7 has none at 9
    for n, wrong in enumerate((entry(8, 3, 6, 7), entry(7, 3, 9, 10))):
        summaries = _cleaned_partition(tmp_path / f"t{n}-0", wrong)
        [fault] = txn_index_faults(summaries, first_dirty)
        assert fault.startswith(str(tmp_path / f"t{n}-0" / "00000000000000000000.txnindex")), fault


@pytest.mark.parametrize("entries", [KEPT, b"", entry(8, 3, 6, 7)], ids=["kept", "empty", "stray"])
def test_the_listings_txnindex_files_give_what_opening_each_gives(tmp_path, entries):
    """``listed`` (the base offsets whose ``.txnindex`` the listing found): the faults, and the files noted as read
    (``seen``: inode, None for none), of opening every rolled segment's index."""
    summaries = _cleaned_partition(tmp_path / "t-0", entries)
    listed = {int(f.name[:20]) for f in (tmp_path / "t-0").glob("*.txnindex")}
    for first_dirty in (10, 8, 0):
        by_open, by_listing = {}, {}
        faults = txn_index_faults(summaries, first_dirty, by_open)
        assert txn_index_faults(summaries, first_dirty, by_listing, listed) == faults
        assert by_listing == by_open and list(by_open) == [str(tmp_path / "t-0" / "00000000000000000000.txnindex")]


def test_a_txnindex_the_listing_did_not_find_is_not_opened(tmp_path):
    """A log without aborts and no index listed: no fault and no open, each index noted as missing (a reader that
    checks ``seen`` afterwards, ``collectors.logdirs.churn.check_listing``, finds one made since). A malformed
    index made after the listing is not read; listed, it is a fault."""
    from recordfixtures import items, v2, write

    folder = tmp_path / "t-0"
    write(folder / "00000000000000000000.log", [v2(items(range(0, 3)))])
    write(folder / "00000000000000000003.log", [v2(items(range(3, 5)))])
    summaries = [summarize(f, int(f.name[:-4]))[0] for f in sorted(folder.glob("*.log"))]
    (folder / "00000000000000000000.txnindex").write_bytes(b"\x00" * 5)  # not a whole entry
    seen = {}
    assert txn_index_faults(summaries, 0, seen, set()) == []
    assert seen == {str(folder / "00000000000000000000.txnindex"): None}
    [fault] = txn_index_faults(summaries, 0, {}, {0})
    assert fault.startswith(str(folder / "00000000000000000000.txnindex")), fault


@pytest.mark.parametrize("committed_after", [True, False], ids=["data-gone", "last-batch-kept-empty"])
def test_the_brokers_clean_of_an_abort_is_no_fault_with_the_checkpoint_before_or_after_it(kafka, tmp_path_factory,
                                                                                         committed_after):
    """Issue 42: a collector that read the cleaner's checkpoint before a clean's swap and the segments
    after it reported the marker the clean kept as a stray .txnindex entry. The broker's own clean of an
    aborted transaction of two batches (its data gone, the ABORT marker and the entry kept), judged with
    the checkpoint the clean wrote, with the one before it (none yet: the log start) and with one inside
    the cleaned segment: no fault. Without a transaction of the producer after it, the clean keeps the
    aborted transaction's last batch as an empty header (Cleaner.isBatchLastRecordOfProducer): the log
    then shows the transaction from that batch, later than the entry's first offset."""
    from dumpcompare import dump
    from kafkatools import set_topic_config, wait_cleaned_up_to_active

    b = kafka.bootstrap
    # never cleaned (ratio 1.0) until all is written, then cleaned once: a second clean drops the entry
    t = create_topic(b, unique_topic("txnclean"), **compacted(**{"delete.retention.ms": 86_400_000,
                                                                 "min.cleanable.dirty.ratio": 1.0}))
    produce(b, t, [(f"plain-{i}".encode(), b"x" * 20) for i in range(5)])
    p = _txn_producer(b, f"{t}-a")
    p.begin_transaction()
    _write(p, t, "gone", n=5)
    _write(p, t, "gone-too", n=5)  # (flushed apart: a second batch)
    p.abort_transaction(30)
    if committed_after:
        p.begin_transaction()
        _write(p, t, "kept", n=2)
        p.commit_transaction(30)
    produce(b, t, [(f"after-{i}".encode(), b"y" * 20) for i in range(5)])
    roll(b, t)
    set_topic_config(b, t, min_cleanable_dirty_ratio=0.01)
    cp = wait_cleaned_up_to_active(kafka.log_dir, t)
    set_topic_config(b, t, min_cleanable_dirty_ratio=1.0)
    folder = copy_partition(partition_dir(kafka.log_dir, t), tmp_path_factory.mktemp("txnclean"),
                            suffixes=(".log", ".txnindex"))
    logs = sorted(folder.glob("*.log"))
    summaries = [summarize(f, int(f.name[:-4]))[0] for f in logs]
    _, batches = dump(logs)
    # the state the clean left: no aborted record, the marker kept, and its entry in the cleaned segment's index
    [marker] = [x for x in batches if x.is_control and any(r.control_type == "ABORT" for r in x.records())]
    [kept] = read_txn_index(folder / f"{summaries[0].base_offset:020d}.txnindex", summaries[0].base_offset)
    assert (kept.producer_id, kept.last_offset) == (marker.producer_id, marker.base_offset)
    left = [x for x in batches if not x.is_control and x.producer_id == marker.producer_id
            and x.base_offset < marker.base_offset]
    if committed_after:
        assert left == []
    else:  # the second batch's header, empty
        assert [(len(list(x.records())), x.base_offset > kept.first_offset) for x in left] == [(0, True)]
    assert summaries[0].base_offset == 0 and cp > marker.base_offset
    for first_dirty in (cp, 0, marker.base_offset):
        assert txn_index_faults(summaries, first_dirty) == [], first_dirty

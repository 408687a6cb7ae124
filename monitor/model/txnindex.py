"""A segment's ``.txnindex``, read strictly, and the cross-check of it with the log's own aborts.

Why: Kafka serves aborted ranges to READ_COMMITTED consumers and hands them to the cleaner from this
file, not from the log (UnifiedLog.collectAbortedTransactions); the cleaner drops the data batches
of every transaction it lists. An index that disagrees with the markers in the log makes consumers
and the cleaner act on the wrong ranges, so a disagreement is a read fault of the partition, never
silently trusted. The log's view comes from ``monitor.model.transactions.aborted_transactions``.

Layout (storage/.../log/AbortedTxn.java, TransactionIndex.java): entries of 34 bytes, back to back,
big-endian: version int16 (0), producerId int64, firstOffset int64, lastOffset int64 (the ABORT
marker's offset), lastStableOffset int64. Kafka rejects a version above 0, and an entry whose last
offset lies below the segment's base offset (TransactionIndex.sanityCheck); it appends entries in
increasing last offset. (Kafka's AbortedTxn.version() reads one byte at position 0, the high byte
of the int16, so it never sees a version below 256 as wrong; this reader checks the whole int16.)

The file is read in pieces of whole entries (``monitor.kafka.readbound.READ_PIECE_BYTES``), never whole, and
stops at the first entry that breaks a rule; at most ``MAX_BATCH_BYTES`` of entries are kept (3 million
aborted transactions in one segment), so a damaged or sparse index of any size costs a piece of memory.
"""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path
from typing import BinaryIO, Collection, Sequence

from monitor.kafka import readbound
from monitor.fileio.regularfile import open_regular, os_reason
from monitor.model.transactions import AbortedRanges, AbortedTxn

ENTRY = struct.Struct(">hqqqq")  # version, producerId, firstOffset, lastOffset, lastStableOffset
assert ENTRY.size == 34
CURRENT_VERSION = 0


class TxnIndexError(ValueError):
    """A malformed ``.txnindex``: the message names the file and the byte position."""

    def __init__(self, path, position: int, reason: str):
        super().__init__(f"{path}: byte {position}: {reason}")
        self.path, self.position, self.reason = str(path), position, reason


def txn_index_path(log_path: str | Path) -> Path:
    """The segment's ``.txnindex`` next to its ``.log`` (same base-offset name)."""
    p = Path(log_path)
    return p.with_name(p.name[:-len(".log")] + ".txnindex") if p.name.endswith(".log") else p.with_suffix(".txnindex")


def _index_name(log_path: str) -> str:
    """``txn_index_path`` as a string, without a ``Path`` made for it (once a rolled segment at every fold)."""
    log_path = str(log_path)
    return log_path[:-len(".log")] + ".txnindex" if log_path.endswith(".log") else str(txn_index_path(log_path))


def parse_txn_index(data: bytes, path, base_offset: int) -> tuple[AbortedTxn, ...]:
    """Every entry of an index's bytes, or ``TxnIndexError`` at the first one that breaks Kafka's rules."""
    return _read(io.BytesIO(data), len(data), path, base_offset)


def _read(fh: BinaryIO, size: int, path, base_offset: int) -> tuple[AbortedTxn, ...]:
    if size % ENTRY.size:
        pos = size - size % ENTRY.size
        raise TxnIndexError(path, pos, f"{size - pos} bytes at the end, less than an entry ({ENTRY.size} bytes)")
    out: list[AbortedTxn] = []
    prev_last = None
    per_piece = max(readbound.READ_PIECE_BYTES // ENTRY.size, 1) * ENTRY.size
    bound = readbound.MAX_BATCH_BYTES
    at = 0
    while at < size:
        piece = fh.read(min(per_piece, size - at))
        if len(piece) % ENTRY.size or not piece:  # the file changed size while it was read
            raise TxnIndexError(path, at + len(piece) - len(piece) % ENTRY.size, "file changed while it was read")
        for version, pid, first, last, lso in ENTRY.iter_unpack(piece):
            pos = at
            at += ENTRY.size
            if at > bound:
                raise TxnIndexError(path, pos, f"{size // ENTRY.size} entries ({size} bytes) are more than the {bound} "
                                               f"bytes a reader holds (monitor.kafka.readbound.MAX_BATCH_BYTES); not read "
                                               f"past here")
            if version != CURRENT_VERSION:
                raise TxnIndexError(path, pos, f"aborted transaction version {version}, Kafka writes {CURRENT_VERSION}")
            if last < base_offset:
                raise TxnIndexError(path, pos, f"last offset {last} of the aborted transaction of producer {pid} is "
                                               f"below the segment's base offset {base_offset}")
            if first > last:
                raise TxnIndexError(path, pos, f"first offset {first} is after the last offset {last} (producer {pid})")
            if prev_last is not None and last <= prev_last:
                raise TxnIndexError(path, pos, f"last offset {last} does not follow the previous entry's {prev_last}")
            if not 0 <= lso <= last + 1:
                raise TxnIndexError(path, pos, f"last stable offset {lso} outside [0, last offset + 1 = {last + 1}]")
            prev_last = last
            out.append(AbortedTxn(pid, first, last, lso, base_offset))
    return tuple(out)


def read_txn_index(path: str | Path, base_offset: int, seen: dict | None = None) -> tuple[AbortedTxn, ...]:
    """The entries of one ``.txnindex``, read in pieces; a missing file has none (Kafka creates it at the
    first abort). ``seen``: gets the file read, path -> inode (None: there was none), for a reader that
    checks afterwards that the index and the log it compares were there together (the cleaner's swap
    renames a segment's ``.log`` and its ``.txnindex`` one after the other)."""
    try:
        with open_regular(path) as fh:  # a FIFO or device is refused, never waited on
            st = os.fstat(fh.fileno())
            if seen is not None:
                seen[str(path)] = st.st_ino
            return _read(fh, st.st_size, path, base_offset)
    except FileNotFoundError:
        if seen is not None:
            seen[str(path)] = None
        return ()
    except OSError as exc:
        raise TxnIndexError(path, 0, f"cannot read: {os_reason(exc)}") from exc


def cross_check(log_aborts: AbortedRanges, indexes: dict[int, tuple[AbortedTxn, ...]], paths: dict[int, str],
                first_dirty: int, checked: Sequence[int]) -> list[str]:
    """Read faults (each naming the ``.txnindex``) where a segment's entries disagree with the log's
    aborts whose markers it holds. ``checked``: the base offsets of the segments to compare (not the
    active one: Kafka appends its entry after the marker, so a read in between sees only the marker).

    A segment at or after ``first_dirty`` was never cleaned: its entries equal the log's aborts
    exactly (producer, first offset, marker offset, LSO; where the log does not show the first
    offset, producer and marker, and such an abort may lack its entry: the log cannot tell whether a
    transaction was open). A cleaned segment keeps an entry only with its ABORT marker
    (CleanedTransactionMetadata.onControlBatchRead re-writes it when the marker stays), while the
    aborted data and so the first offset may be gone: each entry must name a marker the log holds.
    Nothing is concluded when the log's list is incomplete (``AbortedRanges.complete``).

    An ABORT marker with no data of its transaction in the log (``AbortedRanges.bare``) is what a clean
    leaves, even at or after ``first_dirty``: the first dirty offset is read from the cleaner's checkpoint,
    which Kafka writes after the clean's swap (the collector reads it once per log dir, before the
    partitions), and a clean stopped by a full offset map leaves it inside a segment it cleaned whole.
    Its entry may be there or not (CleanedTransactionMetadata writes it only while the clean still saw
    the aborted data), so it is neither required nor refused: that entry's agreement is unknown, not a
    fault. For the same reason an entry whose first offset lies before the log's transaction is not
    refused (``_same``)."""
    if not log_aborts.complete:
        return []
    by_seg: dict[int, list[AbortedTxn]] = {}
    for a in log_aborts.aborted:
        by_seg.setdefault(a.segment, []).append(a)
    bare: dict[int, set[tuple[int, int]]] = {}
    for pid, last, seg in log_aborts.bare:
        bare.setdefault(seg, set()).add((pid, last))
    faults = []
    for base in checked:
        entries, ours, cleaned_here = indexes.get(base, ()), by_seg.get(base, []), bare.get(base, set())
        name = paths.get(base, f"segment {base} .txnindex")
        if base >= first_dirty:
            # every entry matches a log abort exactly; every log abort whose first offset the log shows
            # has its entry (one whose transaction opened before the folded part may have none)
            mine = {(a.producer_id, a.last_offset): a for a in ours}
            wrong = [e for e in entries if not _same(mine.get((e.producer_id, e.last_offset)), e)
                     and (e.producer_id, e.last_offset) not in cleaned_here]
            listed = {(e.producer_id, e.last_offset) for e in entries}
            missing = [a for a in ours if a.first_offset is not None and (a.producer_id, a.last_offset) not in listed]
            if wrong or missing:
                faults.append(f"{name}: the index disagrees with the aborts the log's markers complete: "
                              f"index {_show(entries)}, log {_show(ours)}")
        else:
            markers = {(a.producer_id, a.last_offset) for a in ours} | cleaned_here
            stray = [e for e in entries if (e.producer_id, e.last_offset) not in markers]
            if stray:
                faults.append(f"{name}: aborted transaction(s) with no ABORT marker of that producer at their last "
                              f"offset in the log: {_show(stray)}")
    return faults


def _same(ours: AbortedTxn | None, entry: AbortedTxn) -> bool:
    """The entry is the log's abort: the same producer and marker, and the same first offset and LSO where
    the log can show them. A log that shows the transaction from a later batch than the entry's first
    offset is what a clean leaves when the aborted transaction's last batch was its producer's last data
    batch (Cleaner.isBatchLastRecordOfProducer keeps it as an empty header, the batches before it go): the
    first offset and the LSO then cannot be told from the log. An entry that starts after the log's
    transaction leaves data of it uncovered: not the same."""
    if ours is None:
        return False
    if ours.first_offset is None or entry.first_offset < ours.first_offset:
        return (ours.producer_id, ours.last_offset) == (entry.producer_id, entry.last_offset)
    return ours[:4] == entry[:4]


def _show(txns) -> str:
    shown = ", ".join(f"(producer {t.producer_id}, first {t.first_offset}, last {t.last_offset}, "
                      f"lso {t.last_stable_offset})" for t in list(txns)[:3])
    return f"[{shown}{', ...' if len(txns) > 3 else ''}]"


def txn_index_faults(segments: Sequence, first_dirty: int, seen: dict | None = None,
                     listed: Collection[int] | None = None) -> list[str]:
    """The read faults of a partition's ``.txnindex`` files (malformed, or disagreeing with the log),
    from its segment summaries (``monitor.model.summary``, offset order, the last one active); ``seen``
    as in ``read_txn_index``. ``listed``: the base offsets whose ``.txnindex`` the partition's listing found
    (``monitor.kafka.logdir.Segment.has_txnindex``); another segment's is taken as missing without an open that
    fails (Kafka creates one at a segment's first abort only: most segments have none), and noted in ``seen`` as
    missing, as a read that found none (a reader that checks ``seen`` afterwards finds one made since)."""
    from monitor.model.transactions import aborted_transactions

    if listed is not None and not any(s.base_offset in listed or s.txn_aborts for s in segments):
        # no index to read and no abort in the log: nothing to disagree (the active segment's aborts included:
        # the log's aborts are the summaries' ``txn_aborts``, ``aborted_transactions``)
        if seen is not None:
            seen.update((_index_name(s.path), None) for s in segments[:-1])
        return []
    faults: list[str] = []
    indexes, paths, checked = {}, {}, []
    for s in segments[:-1]:
        path = _index_name(s.path)
        paths[s.base_offset] = path
        if listed is not None and s.base_offset not in listed:
            if seen is not None:
                seen[path] = None
            indexes[s.base_offset] = ()
            checked.append(s.base_offset)
            continue
        try:
            indexes[s.base_offset] = read_txn_index(path, s.base_offset, seen)
        except TxnIndexError as exc:
            faults.append(str(exc))
            continue
        checked.append(s.base_offset)
    return faults + cross_check(aborted_transactions(segments, first_dirty), indexes, paths, first_dirty, checked)

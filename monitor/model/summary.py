"""What the compaction model needs to know about one segment, read once and cached.

A ``SegmentSummary`` is small (no record data, tombstones kept as one compact
array of rows) and keyed by what identifies unchanged content: path, size, mtime and
inode. A cleaned segment is swapped in as a new file (new inode) even when it
keeps the name, size and mtime of the one it replaces, so the inode is needed.
A segment that only grew (the active one) is read from where the last read
stopped and merged, so a steady-state refresh reads only new bytes, once its last batch read is
found where it was (``monitor.model.tailcheck``: Kafka truncates the active segment in place on a
leader change, and it may grow past its old size again with other batches).
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ClassVar

from monitor.kafka.record import RecordFormatError, SegmentReader
from monitor.kafka.record.reader import PAGE_BYTES, cut_tail_is_fault
from monitor.kafka.record.codecs import CodecError
from monitor.kafka.record.model import control_type_code
from monitor.kafka.record.varint import read_varint
from monitor.kafka.segindex import DISAGREES, IndexUntrusted, offset_index_ends, time_index_ends
from monitor.model.tailcheck import intact, tail
from monitor.model.transactions import ABORT, ABORT_FIELDS, COMMIT, DATA, MAX_ABORTS_PER_SEGMENT, TxnEvent


def _refuse(self, *args, **kwargs):
    raise TypeError("a shared empty container of SegmentSummary is read-only: take the summary's own (own())")


class _NoArray(array):
    """The one empty ``array('q')`` every summary holds until it has something of that kind (most segments hold
    no tombstone, horizon or abort: 80 B each of three arrays a segment, 16,000 segments at 4,000 partitions).
    Writes are refused, never shared: a writer takes the summary's own first (``own``)."""

    append = extend = insert = pop = remove = frombytes = fromlist = byteswap = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


class _NoDict(dict):
    """The one empty dict of ``_NoArray``'s kind, for the transaction maps."""

    __setitem__ = __delitem__ = setdefault = pop = popitem = update = clear = __ior__ = _refuse


class _NoList(list):
    """The one empty list of ``_NoArray``'s kind, for ``faults``."""

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


NO_ARRAY, NO_DICT, NO_LIST = _NoArray("q"), _NoDict(), _NoList()
TOMBSTONE_FIELDS = ("offset", "timestamp", "horizon")  # SegmentSummary.tombstone_rows, flat
_SHARED = {_NoArray: lambda: array("q"), _NoDict: dict, _NoList: list}  # a shared empty's kind -> a writable one


def _shared(empty):
    """A field whose default is the shared ``empty`` (a factory: a dataclass takes no container as a default)."""
    return field(default_factory=lambda: empty)


def own(s, name: str):
    """``s``'s own writable container ``name``, made now in place of the shared empty it held (``NO_ARRAY``,
    ``NO_DICT``, ``NO_LIST``): every write into a summary's containers goes through here. By type, not
    identity: a summary unpickled (a Spark worker's) holds copies of the shared empties, still read-only."""
    v = getattr(s, name)
    make = _SHARED.get(type(v))
    if make is not None:
        v = make()
        setattr(s, name, v)
    return v


@dataclass(slots=True)
class SegmentSummary:
    path: str
    base_offset: int
    size: int = 0  # bytes of .log read so far (== file size once read to the end)
    mtime_ns: int = 0
    inode: int = 0
    end_position: int = 0  # where the next incremental read starts (a batch boundary)
    # the last batch read (its position and stored CRC): re-read before reading on a grown file, so a
    # segment truncated in place and grown again is read again whole (monitor.model.tailcheck)
    tail_position: int = -1
    tail_crc: int = 0
    # Headers first (issue 31): the header pass (``scan_headers``) fills every field but the record-level
    # ones (tombstones, keyless and empty values) up to ``end_position``; those are read up to
    # ``detail_position`` (``read_detail``), the same batch boundaries. Whole once they meet.
    detail_position: int = 0
    # Index first (issue 43, ``from_indexes``): a rolled segment summarised from Kafka's own files (size, offsets,
    # first-batch and largest timestamps: what the cleaner manager needs) with no header pass. Every per-batch
    # figure (batches, records, transactions, delete horizons, markers) is pending until the record pass reads the
    # segment whole (``read_detail``); ``detail_position`` stays 0 so its bytes count as pending.
    headers_pending: bool = False
    pending_max_timestamp: int = -1  # the record pass's largest timestamp so far over such a segment's batches
    batches: int = 0
    records: int = 0
    next_offset: int | None = None  # last offset + 1 of the last batch; the base offset when it has none (fold_end)
    first_batch_max_timestamp: int = -1  # Kafka's "first batch timestamp" (max.compaction.lag)
    max_timestamp: int = -1  # Kafka's largestTimestamp when >= 0 (min.compaction.lag)
    control_records: int = 0
    transactional_batches: int = 0
    keyed_bytes: int = 0
    # producer pitfalls on disk (issue 16): records without a key, values of length 0 (not null: no tombstone)
    keyless_records: int = 0
    empty_value_records: int = 0
    # the largest record of a compressed batch, in bytes as its length field says (DefaultRecord's sizeInBytes,
    # the length varint left out): what Kafka 4.4 compares with max.decompressed.message.bytes wherever it
    # decompresses a batch, the cleaner included (DefaultRecord.readFrom: "Invalid record size: N exceeds the
    # configured maximum record size of M."); an uncompressed batch's records are never checked (0: none read)
    max_decompressed_record_bytes: int = 0
    # the tombstones, TOMBSTONE_FIELDS flat a tombstone (offset, timestamp, its batch's delete horizon or -1): one
    # array a segment, not three (issue 43: 80 B an array and its slack; read as three by the properties below)
    tombstone_rows: array = _shared(NO_ARRAY)
    faults: list[str] = _shared(NO_LIST)
    # the batch the last read found cut short where the file ends ("" none): a fault unless the segment is
    # its partition's active one, which only the partition's listing tells (``segment_faults``)
    cut_tail: str = ""
    earliest_delete_horizon: int = -1  # KIP-534: the earliest batch delete horizon here (from headers), -1 none
    # KIP-534, from headers (``monitor.model.horizoncount`` reads them): per delete horizon met, HORIZON_FIELDS
    # flat (the horizon; the position and max timestamp of its batch with the latest records, the one
    # ``monitor.model.horizon.problem`` rejects first; the COMMIT/ABORT marker records its batches hold).
    # A clean stamps every batch it stamps with one horizon, so a segment holds few; a horizon may
    # appear twice (``_note_horizon`` looks back a few entries only), readers add them up.
    delete_horizons: array = _shared(NO_ARRAY)
    markers_unstamped: int = 0  # COMMIT/ABORT marker records in batches without a delete horizon
    # The segment's net effect on open transactions (monitor.model.transactions), per producer id: its last
    # COMMIT/ABORT marker here, and its run of transactional data batches after that marker (a
    # transaction still open at the segment's end). At most two events per producer, however many
    # transactions the segment holds (an exactly-once changelog commits many times a second).
    txn_markers: dict[int, TxnEvent] = _shared(NO_DICT)
    txn_runs: dict[int, TxnEvent] = _shared(NO_DICT)
    # The aborted transactions this segment completes (monitor.model.transactions.aborted_transactions folds
    # them across segments into Kafka's AbortedTxn entries): ABORT_FIELDS per ABORT marker that closes
    # an open run, flat. Aborts are rare; past MAX_ABORTS_PER_SEGMENT a segment records no more and
    # counts them in ``txn_aborts_dropped`` (the fold then says its aborted ranges are incomplete).
    txn_aborts: array = _shared(NO_ARRAY)
    txn_aborts_dropped: int = 0
    txn_first_markers: dict[int, int] = _shared(NO_DICT)  # producer id -> its first marker's offset here
    # the container fields above hold the shared read-only empties until first written (``own``); the summary
    # cache decodes an empty one back to them (monitor.model.summarystore)
    SHARED_EMPTIES: ClassVar[dict] = {_NoArray: NO_ARRAY, _NoDict: NO_DICT, _NoList: NO_LIST}

    @property
    def detail_done(self) -> bool:
        """The record-level figures cover every batch the header pass read."""
        return self.detail_position >= self.end_position

    @property
    def detail_pending_bytes(self) -> int:
        return max(self.end_position - self.detail_position, 0)

    @property
    def tombstones(self) -> int:
        return len(self.tombstone_rows) // len(TOMBSTONE_FIELDS)

    @property
    def tombstone_offsets(self) -> array:
        """The tombstones' offsets, in offset order (a copy: ``add_tombstone`` writes)."""
        return self.tombstone_rows[0::3]

    @property
    def tombstone_timestamps(self) -> array:
        return self.tombstone_rows[1::3]

    @property
    def tombstone_horizons(self) -> array:
        """Each tombstone's batch's delete horizon, -1 when the batch has none."""
        return self.tombstone_rows[2::3]

    def txn_events(self) -> list[TxnEvent]:
        """The net transaction events, in offset order, for ``monitor.model.transactions.open_transactions``."""
        return sorted([*self.txn_markers.values(), *self.txn_runs.values()], key=lambda e: e.first_offset)

    def aborts(self) -> list[tuple[int, ...]]:
        """The recorded aborts as ``ABORT_FIELDS`` tuples, in offset order."""
        a, n = self.txn_aborts, len(ABORT_FIELDS)
        return [tuple(a[i:i + n]) for i in range(0, len(a), n)]

    def add_txn_event(self, e: TxnEvent) -> None:
        """Fold one event (in offset order) into the net effect: a marker ends its producer's run;
        a data batch opens a run or extends it (first offset and timestamp kept, epoch and last offset updated).
        An ABORT marker is also recorded as an abort (``txn_aborts``), with what the segment knows of
        the transaction it closes and of the others open at that moment (Kafka's AbortedTxn)."""
        if e.marker == ABORT:
            self._record_abort(e)
        if e.marker != DATA:
            own(self, "txn_first_markers").setdefault(e.producer_id, e.first_offset)
            if e.producer_id in self.txn_runs:
                del self.txn_runs[e.producer_id]
            own(self, "txn_markers")[e.producer_id] = e
            return
        run = self.txn_runs.get(e.producer_id)
        own(self, "txn_runs")[e.producer_id] = e if run is None else run._replace(
            producer_epoch=e.producer_epoch, last_offset=e.last_offset)

    def _record_abort(self, e: TxnEvent) -> None:
        pid = e.producer_id
        run = self.txn_runs.get(pid)
        first_here = pid not in self.txn_first_markers  # then the transaction may have opened before this segment
        if run is None and not first_here:
            return  # a marker with no transaction open: Kafka completes none (ProducerAppendInfo.appendEndTxnMarker)
        if len(self.txn_aborts) >= MAX_ABORTS_PER_SEGMENT * len(ABORT_FIELDS):
            self.txn_aborts_dropped += 1
            return
        others = [r.first_offset for q, r in self.txn_runs.items() if q != pid]
        own(self, "txn_aborts").extend((pid, -1 if run is None else run.first_offset, e.first_offset,
                                        min(others, default=-1), int(first_here)))

    def largest_timestamp(self) -> int:
        """LogSegment.largestTimestamp: the max record timestamp, else the file's mtime (ms)."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.mtime_ns // 1_000_000


def _named(path: str | Path) -> tuple[str, Path]:
    """(the path as the summary keeps it, as a Path): a ``str`` given is kept as that very object, so the
    reader's cache key and the summary's ``path`` are one string, not two of ~100 bytes a segment."""
    return (path, Path(path)) if isinstance(path, str) else (str(path), path)


def _stat(path: Path):
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ino


def _unchanged_or_grown(path: Path, previous: SegmentSummary | None):
    """(stat, the summary to continue or None for a fresh one, whether it is unchanged, bytes read to
    check a grown file's prefix: ``monitor.model.tailcheck``)."""
    size, mtime_ns, inode = st = _stat(path)
    if previous is not None and previous.inode == inode and previous.path == str(path) and not previous.faults:
        if previous.size == size and previous.mtime_ns == mtime_ns:
            return st, previous, True, 0
        if size > previous.size and not previous.headers_pending:  # one from indexes is read again whole
            ok, checked = intact(path, previous.tail_position, previous.tail_crc, previous.end_position)
            return st, previous if ok else None, False, checked
    if previous is not None and previous.inode == inode and previous.path == str(path) \
            and previous.size == size and previous.mtime_ns == mtime_ns:
        return st, previous, True, 0  # faulty and unchanged: as read
    return st, None, False, 0


def summarize(path: str | Path, base_offset: int, previous: SegmentSummary | None = None,
              take: Callable[[int], None] | None = None) -> tuple[SegmentSummary, int]:
    """Summarize a segment whole (headers and records), reusing ``previous`` when nothing changed or only
    bytes were appended. Returns the summary and how many bytes of the file this call read. ``take``:
    charged each batch's bytes as read (``monitor.fileio.iobudget``: it may wait).

    Faults (a corrupt or truncated batch) are recorded in ``faults``; reading stops
    at a fault that cannot be skipped, and the summary covers what came before it.
    """
    name, path = _named(path)
    (size, mtime_ns, inode), s, same, checked = _unchanged_or_grown(path, previous)
    if same:
        if s.detail_done:
            return s, 0
        return read_detail(s, take)
    if s is not None and not s.detail_done:  # headers ran ahead: records up to there, then both on
        s, read = read_detail(s, take)
        if s.faults or not s.detail_done:
            return s, read + checked
        more, read2 = summarize(path, base_offset, s, take)
        return more, read + read2 + checked
    start = 0 if s is None else s.end_position
    if s is None:
        s = SegmentSummary(name, base_offset, size=size, mtime_ns=mtime_ns, inode=inode)
    s.size, s.mtime_ns = size, mtime_ns
    read = _read_into(s, path, start=start, take=take)
    return s, read + checked


def scan_headers(path: str | Path, base_offset: int, previous: SegmentSummary | None = None
                 ) -> tuple[SegmentSummary, int]:
    """The header pass: what Kafka's LogCleanerManager needs of a segment (its size, offsets, first-batch and
    largest timestamps, transaction markers), read from its batches' headers alone (``SegmentReader.headers``:
    61 bytes a batch, a control batch's few bytes more), reusing ``previous`` as ``summarize`` does. The
    record-level figures (tombstones, keyless and empty values) stay as they were up to
    ``detail_position``: ``read_detail`` reads on from there. Returns the summary and the bytes read
    (pages touched, ``SegmentReader.bytes_read``)."""
    name, path = _named(path)
    (size, mtime_ns, inode), s, same, checked = _unchanged_or_grown(path, previous)
    if same:
        return s, 0
    start = 0 if s is None else s.end_position
    if s is None:
        s = SegmentSummary(name, base_offset, size=size, mtime_ns=mtime_ns, inode=inode)
    s.size, s.mtime_ns = size, mtime_ns
    reader = SegmentReader(path, start=start, skip_corrupt=True)
    try:
        for batch in reader.headers():
            _fold_batch(s, batch, _control_key(batch))
    except RecordFormatError as exc:
        own(s, "faults").append(str(exc))
    fold_end(s)
    s.end_position = reader.end_position
    _note_faults(s, reader)
    return s, reader.bytes_read + checked


# An index-first read costs about four pages (the two indexes' last entries, the first batch's header, the batches
# from the .index's last entry on); a segment whose .index holds n entries has at least n + 1 batches a page
# apart, so its header pass costs at least n + 1 pages: with fewer entries than this the header pass is cheaper.
INDEX_FIRST_MIN_ENTRIES = 3


def from_indexes(path: str | Path, base_offset: int, previous: SegmentSummary | None = None
                 ) -> tuple[SegmentSummary | None, int]:
    """A rolled segment summarised from what Kafka keeps for itself (``monitor.kafka.segindex``): its size and
    inode (stat), its first batch's max timestamp (one header at byte 0: Kafka's ``loadFirstBatchTimestamp``), its
    largest timestamp (the ``.timeindex``'s last entry: ``maxTimestampSoFar``), its next offset (the batches
    from the ``.index``'s last entry's position to the end: ``readNextOffset``). The per-batch figures stay
    pending (``headers_pending``) for the record pass. ``previous`` unchanged is returned as it is.

    Raises ``IndexUntrusted`` (the caller reads the segment by its headers) when an index is missing,
    truncated, not trimmed, older than the log, or disagrees with the batches read: a batch whose max
    timestamp is above the time index's last, a batch at the index's last position that does not hold its
    offset, a walk from there that does not end at the file's end. Returns the summary and the bytes read;
    (None, 0) for a segment whose header pass costs less (``INDEX_FIRST_MIN_ENTRIES``)."""
    name, path = _named(path)
    size, mtime_ns, inode = _stat(path)
    if previous is not None and previous.path == str(path) and (previous.size, previous.mtime_ns,
                                                                 previous.inode) == (size, mtime_ns, inode):
        return previous, 0
    stem = str(path)[:-len(".log")] if str(path).endswith(".log") else str(path)
    offsets = offset_index_ends(stem + ".index", base_offset, mtime_ns, INDEX_FIRST_MIN_ENTRIES)
    if offsets.entries < INDEX_FIRST_MIN_ENTRIES:
        return None, 0
    times = time_index_ends(stem + ".timeindex", base_offset, mtime_ns)
    read = (offsets.bytes_read and PAGE_BYTES) + PAGE_BYTES  # what the OS reads for them: a page each

    def disagrees(detail: str, suffix: str = ".index") -> IndexUntrusted:
        return IndexUntrusted(stem + suffix, DISAGREES, detail)
    start = offsets.last[1] if offsets.last is not None else 0
    first, faults = None, False
    if start:  # else the walk below starts at the first batch: its header is read once
        head = SegmentReader(path, skip_corrupt=True)
        walk = head.headers()
        try:
            first = next(walk, None)
        except RecordFormatError:
            faults = True
        finally:
            walk.close()
        read += head.bytes_read
        faults = faults or bool(head.faults) or first is None
    tail_reader = SegmentReader(path, start=start, skip_corrupt=True)
    try:
        batches = [] if faults else list(tail_reader.headers())
    except RecordFormatError:
        batches = []
    read += tail_reader.bytes_read
    if not start and batches:
        first = batches[0]
    if first is None or not batches or tail_reader.faults or tail_reader.end_position != size:
        raise disagrees(f"the batches from byte {start} (its last entry's position) do not run whole to the "
                        f"end of the {size}-byte .log")
    if offsets.last is not None and not batches[0].base_offset <= offsets.last[0] <= batches[-1].last_offset:
        raise disagrees(f"its last entry says offset {offsets.last[0]} at byte {start}; the batches there hold "
                        f"{batches[0].base_offset}..{batches[-1].last_offset}")
    largest = times.last[0]
    for b in (first, *batches):
        if b.max_timestamp > largest:
            raise disagrees(f"last timestamp {largest} older than the batch at byte {b.position}'s "
                            f"{b.max_timestamp}", ".timeindex")
    if times.last[1] > batches[-1].last_offset:
        raise disagrees(f"last entry's offset {times.last[1]} past the segment's last, {batches[-1].last_offset}",
                        ".timeindex")
    s = SegmentSummary(name, base_offset, size=size, mtime_ns=mtime_ns, inode=inode, end_position=size,
                       headers_pending=True, first_batch_max_timestamp=first.max_timestamp, max_timestamp=largest,
                       next_offset=batches[-1].last_offset + 1)
    s.tail_position, s.tail_crc = tail(batches[-1])
    return s, read


def read_detail(s: SegmentSummary, take: Callable[[int], None] | None = None,
                stop: Callable[[], bool] | None = None) -> tuple[SegmentSummary, int]:
    """The record-level pass over what the header pass read (``detail_position`` to ``end_position``):
    tombstones, keyless and empty values, batch by batch, each charged to ``take`` once read; ``stop()``
    True ends it at a batch boundary (read on from there next time: the summary stays mergeable). A
    fault found here (a CRC that fails, records that do not decode: what headers cannot show) makes the
    segment be read again whole (``summarize``), so its figures are those of a full read, fault included.
    A file replaced or shrunk since its headers were read is left for the next header pass."""
    path = Path(s.path)
    try:
        size, _, inode = _stat(path)
    except OSError:
        return s, 0
    if inode != s.inode or size < s.end_position:
        return s, 0
    if s.headers_pending:  # summarised from its indexes: headers and records read together from here
        return _read_pending(s, path, take, stop)
    reader = _record_pass(s, path, take, stop, headers=False)
    if reader.faults:
        return _read_again_whole(s, path, take, reader)
    return s, reader.bytes_read


def _record_pass(s: SegmentSummary, path: Path, take, stop, headers: bool) -> SegmentReader:
    """Records folded batch by batch from ``detail_position`` (and each header too when ``headers``: a
    segment summarised from its indexes), each batch charged to ``take``, until the end or ``stop()``; the
    reader, for its faults and bytes read."""
    reader = SegmentReader(path, start=s.detail_position, skip_corrupt=True, stop=s.end_position)
    try:
        for batch, c in reader.decoded(columns=True):
            if headers:
                _fold_batch(s, batch, c.keys[0] if batch.is_control and len(c) else None)
            if not batch.is_control:
                _fold_records(s, batch, c)
            s.detail_position = batch.position + batch.size
            if take is not None:
                take(batch.size)
            if stop is not None and stop():
                break
    except RecordFormatError as exc:
        reader.faults.append(exc)
    return reader


def _read_again_whole(s: SegmentSummary, path: Path, take, reader: SegmentReader) -> tuple[SegmentSummary, int]:
    """A fault found by the record pass: the segment read again whole, its figures a full read's."""
    fresh, read = summarize(s.path, s.base_offset, None, take)  # its path string kept (the reader's key)
    return fresh, reader.bytes_read + read


def _read_pending(s: SegmentSummary, path: Path, take, stop) -> tuple[SegmentSummary, int]:
    """The record pass over a segment summarised from its indexes (``from_indexes``): headers and records
    folded together from ``detail_position``, at the budget's pace, until done or ``stop()``. Until the end the
    figures the page shows stay the indexes' (next offset, largest timestamp, last batch); the per-batch ones
    grow but stay pending (``headers_pending``: the compaction fold leaves its transactions out, the markers
    are unknown). At the end every figure is the batches' own, as a whole read's. A fault: read again whole."""
    known = (s.next_offset, s.tail_position, s.tail_crc, s.max_timestamp)
    s.max_timestamp = s.pending_max_timestamp
    reader = _record_pass(s, path, take, stop, headers=True)
    if reader.faults:
        return _read_again_whole(s, path, take, reader)
    s.pending_max_timestamp = s.max_timestamp
    if s.detail_position >= s.end_position:
        s.headers_pending, s.pending_max_timestamp = False, -1
        fold_end(s)
    else:
        s.next_offset, s.tail_position, s.tail_crc, s.max_timestamp = known
    return s, reader.bytes_read


def fold_header(s: SegmentSummary, batch) -> None:
    """Fold one batch's header into the segment's Kafka facts, in file order: the collector's read
    (``summarize``) and the audit's header scan (``spark_analysis.partition_audit``) both use this one.
    As LogSegment has them: the first batch's max timestamp (``rollingBasedTimestamp``, loaded from the
    file's first batch: ``loadFirstBatchTimestamp``, what ``getFirstBatchTimestamp`` and so
    maxCompactionDelay read), the largest timestamp (min.compaction.lag.ms), the next offset (the last
    batch's last offset + 1, ``readNextOffset``). An incremental read continues from ``s.batches`` > 0,
    so the first batch stays the file's."""
    if s.batches == 0:
        s.first_batch_max_timestamp = batch.max_timestamp
    s.batches += 1
    if batch.max_timestamp > s.max_timestamp:
        s.max_timestamp = batch.max_timestamp
    s.next_offset = batch.last_offset + 1


def fold_end(s: SegmentSummary) -> None:
    """After a segment's batches: a segment without one has its base offset as its next offset (Kafka's
    LogSegment.readNextOffset: ``baseOffset`` when the segment holds no batch; an empty active segment's
    base is the log end offset, LogLoader)."""
    if s.next_offset is None:
        s.next_offset = s.base_offset


def _control_key(batch) -> bytes | None:
    """A control batch's first record's key (its type: COMMIT, ABORT), from the body the header pass read."""
    if not batch.is_control or not batch.records_count:
        return None
    try:
        keys = batch.columns().keys
    except (ValueError, CodecError):  # records that do not decode: the detail read reports the fault
        return None
    return keys[0] if keys else None


def _fold_batch(s: SegmentSummary, batch, control_key: bytes | None) -> None:
    """What a batch's header (and a control batch's key) tells: the one fold of the header pass and the
    full read, so that both give the same figures."""
    fold_header(s, batch)
    s.tail_position, s.tail_crc = tail(batch)
    if batch.is_transactional:
        s.transactional_batches += 1
        e = txn_event(batch, control_key)
        if e is not None:
            s.add_txn_event(e)
    s.records += batch.records_count
    if batch.is_control:
        s.control_records += batch.records_count
    horizon = batch.delete_horizon_ms
    if horizon is not None and (s.earliest_delete_horizon < 0 or horizon < s.earliest_delete_horizon):
        s.earliest_delete_horizon = horizon
    markers = batch.records_count if batch.is_control and control_type_code(control_key) in (ABORT, COMMIT) else 0
    if horizon is None:
        s.markers_unstamped += markers
    else:
        _note_horizon(s, horizon, batch.position, batch.max_timestamp, markers)


HORIZON_FIELDS = ("horizon", "position", "max_timestamp", "markers")
_LOOK_BACK = 8  # entries searched for the same horizon: constant work a batch, whatever a file holds


def _note_horizon(s: SegmentSummary, horizon: int, position: int, max_timestamp: int, markers: int) -> None:
    """Add a stamped batch to ``delete_horizons``: to its horizon's entry among the last few, else a new one."""
    h, n = own(s, "delete_horizons"), len(HORIZON_FIELDS)
    for i in range(len(h) - n, max(len(h) - _LOOK_BACK * n, 0) - 1, -n):
        if h[i] == horizon:
            if max_timestamp > h[i + 2]:
                h[i + 1], h[i + 2] = position, max_timestamp
            h[i + 3] += markers
            return
    h.extend((horizon, position, max_timestamp, markers))


def horizon_entries(s: SegmentSummary) -> list[tuple[int, int, int, int]]:
    """``delete_horizons`` as ``HORIZON_FIELDS`` tuples."""
    h, n = s.delete_horizons, len(HORIZON_FIELDS)
    return [tuple(h[i:i + n]) for i in range(0, len(h), n)]


def _fold_records(s: SegmentSummary, batch, c) -> None:
    """What only a data batch's records tell: tombstones (with their batch's delete horizon), records
    without a key, values of length 0."""
    horizon = batch.delete_horizon_ms
    hz = -1 if horizon is None else horizon
    s.keyless_records += c.keys.count(None)
    s.empty_value_records += c.value_sizes.count(0)
    if getattr(batch, "magic", 0) == 2 and batch.codec and len(c.buf) > s.max_decompressed_record_bytes:
        s.max_decompressed_record_bytes = max(s.max_decompressed_record_bytes, largest_record(c.buf, len(c)))
    rows = None
    for off, ts, vs in zip(c.offsets, c.timestamps, c.value_sizes):
        if vs < 0:
            if rows is None:
                rows = own(s, "tombstone_rows")
            rows.extend((off, ts, hz))


def add_tombstone(s: SegmentSummary, offset: int, timestamp: int, horizon: int = -1) -> None:
    """One tombstone after those ``s`` holds (offset order), as a read folds it."""
    own(s, "tombstone_rows").extend((offset, timestamp, horizon))


def largest_record(buf, count: int) -> int:
    """The largest of a v2 batch's ``count`` records in its (decompressed) record data ``buf``: each
    record's length varint, the record skipped. Only a batch whose whole data exceeds the largest record
    so far is walked (no record of it can be larger otherwise)."""
    pos = top = 0
    for _ in range(count):
        length, pos = read_varint(buf, pos)
        if length > top:
            top = length
        pos += length
    return top


def largest_record_of_arrays(batch, arr) -> int:
    """``largest_record`` of a compressed v2 batch from the ``RecordArrays`` a columnar pass decoded (the
    audit's record pass), with no second decode where the arrays tell it: a CreateTime batch's records
    carry their timestamps, so each record's length field follows from its deltas and tail
    (``cleanarrays``, the rule the cleaner simulation sizes batches by). A LogAppendTime batch (the
    records' own timestamp deltas are not in the arrays) or a tail that is no copy: decoded again."""
    from monitor.model.cleanarrays import OPS

    if batch.timestamp_type == "create" and len(arr):
        got = OPS.largest_record(OPS.columns(arr), batch.base_offset, batch.base_timestamp)
        if got is not None:
            return got
    c = batch.columns()
    return largest_record(c.buf, len(c))


def _read_into(s: SegmentSummary, path: Path, start: int, take=None) -> int:
    """Headers and records together, from ``start`` (where both passes stopped) to the end."""
    reader = SegmentReader(path, start=start, skip_corrupt=True)
    try:
        for batch, c in reader.decoded(columns=True):
            _fold_batch(s, batch, c.keys[0] if batch.is_control and len(c) else None)
            if not batch.is_control:
                _fold_records(s, batch, c)
            if take is not None:
                take(batch.size)
    except RecordFormatError as exc:  # cannot-read errors (the file vanished, permissions)
        own(s, "faults").append(str(exc))
    fold_end(s)
    s.end_position = s.detail_position = reader.end_position
    _note_faults(s, reader)
    return reader.end_position - start


def _note_faults(s: SegmentSummary, reader: SegmentReader) -> None:
    """A read's faults into the summary, its cut tail apart (the read on from ``end_position`` sees it
    again, whole once the append is done)."""
    found = [str(f) for f in reader.log_faults(active=True)]
    if found:
        own(s, "faults").extend(found)
    tail = reader.cut_tail()
    s.cut_tail = "" if tail is None else str(tail)


def segment_faults(s: SegmentSummary, active: bool) -> list[str]:
    """A segment's read faults: ``faults``, and its cut tail when ``cut_tail_is_fault`` says so (it is
    not its partition's active segment)."""
    return [*s.faults, s.cut_tail] if s.cut_tail and cut_tail_is_fault(active) else list(s.faults)


def partition_faults(segments) -> list[str]:
    """The read faults of a partition's segment summaries (offset order, the last one active)."""
    return [f for i, s in enumerate(segments) for f in segment_faults(s, i == len(segments) - 1)]


def txn_event(batch, control_key: bytes | None) -> TxnEvent | None:
    """A transactional batch as an event, from its header and (for a control batch) its record's key;
    None for other control types and empty control batches (whose transaction the cleaner removed)."""
    kind = DATA
    if batch.is_control:
        kind = control_type_code(control_key)
        if kind not in (ABORT, COMMIT):
            return None
    return TxnEvent(batch.producer_id, batch.producer_epoch, batch.base_offset, batch.last_offset, kind,
                    batch.max_timestamp)

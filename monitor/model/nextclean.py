"""What the broker's cleaner leaves of a partition: the next clean, and the settled log, counted in bytes.

``project_partition`` runs Kafka's ``Cleaner.doClean`` over one partition's segment files, in offset
order, in two passes, never holding the partition:

1. the offset map (``offsetmap``) as ``buildOffsetMap`` builds it: the dirty segments (those holding
   offsets in [first_dirty, upper)), each record with a key at or past ``first_dirty`` outside aborted
   transactions, its key hash -> latest offset; past ``upper`` the records a later clean would map
   (``settled``, below). As Kafka does, the map's latest offset is fast-forwarded to ``upper - 1``
   (``updateLatestOffset(nextSegmentStartOffset - 1)``), so the clean covers the segments below
   ``endOffset = latestOffset + 1`` (``logSegments(0, endOffset)``), and nothing when the dirty
   section is empty;
2. each batch through the rounds (``cleanround``): its fate from the decoder's arrays in numpy, its
   rewritten batch (one that loses records or is stamped) sized as ``filterTo`` writes it from the same
   arrays: uncompressed by varint arithmetic (``cleanarrays`` ``records_size``), compressed by splicing the
   kept records' bytes and running the codec once; records decoded (``encode.retained_batch_size``) only
   where the arrays cannot tell (``_rewritten_size``). A batch kept whole and unstamped keeps its
   size; a dropped one has none; segments past the cleaned range count as they are.

Pass 1 may be a caller's own read (``Projector``): the audit's record pass hands it each batch's arrays
as it folds the keys, so a partition's records are decoded once.

**Next clean**: one clean starting at ``now_ms``.

**Settled**: what a clean after every horizon leaves of today's records. KIP-534 gave Kafka no clean
triggered by a horizon alone (``LogCleanerManager`` picks a log by its dirty bytes), so a later
clean happens when new records arrive; settled assumes they carry keys of their own, and that the
segments past ``upper`` have rolled by then. So: round 1 is the next clean; round 2 maps today's
records from ``upper`` on (they are its dirty section) and cleans the whole of today's log; later
rounds map none of today's keys. Each round starts as soon as every horizon in the log has passed
(the second at max(now + ``delete.retention.ms``, the log's latest horizon), then one
``delete.retention.ms`` apart: the horizon a later clean stamps, and so the bytes of a batch it keeps,
follow from that time), keeps its own transaction state (an aborted transaction whose marker an earlier
round removed is gone from its ``.txnindex``), and reads what the round before it wrote, in offset
order (a COMMIT marker is discardable only in the round after its transaction's data went, stamped
then, removed one round later). The rounds run pipelined, a batch through all of them before the
next. Producers stay active (their last batches stay), and no batch of today's log ends at a later
round's upper bound.

Speed: pass 1 keeps the columns it decoded (up to ``CACHE_RECORDS``), so pass 2 decompresses and
decodes a batch once; a dirty record's fate needs no lookup (the map says which put was each key's
last); each batch's records are decided, and a rewritten batch sized, in a few numpy operations
(``cleanarrays``), no ``Record`` object built.

Unknown, with the reason (file and byte position where there is one), never a guess: a decode fault,
a horizon ``monitor.model.horizon.problem`` rejects, a magic < 2 tombstone (its delete horizon is the
segment file's last-modified time), a legacy compressed message set that loses part of its records
or one the clean would keep empty (Kafka's ``filterTo`` fails there), more keys than Kafka's default
offset map holds, aborted transactions not all known. A read fault or a rejected horizon leaves the
horizon states unknown too; the other reasons still count them. Checked against a real broker's
cleans in tests/monitor/model/test_nextclean_kafka.py (data this project writes) and
tests/monitor/model/test_nextclean_streams.py (a Kafka Streams exactly_once_v2 application, the Java
producer, librdkafka transactions), batch by batch (``trace``).

The bytes are for a clean starting at ``now_ms``: a stamped batch's base timestamp is that clean's
``currentTime + delete.retention.ms`` (``MemoryRecords.filterTo``) and its records' timestamp deltas are
written against it (``MemoryRecordsBuilder``), so a clean starting later writes other varints (a few
bytes a partition uncompressed; docs/internals.md).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import NamedTuple

from monitor.kafka.kafkanames import offset_file
from monitor.kafka.record import SegmentReader
from monitor.kafka.record.reader import CONTROL_BODIES, cut_tail_is_fault
from monitor.kafka.record.codecs import CodecError
from monitor.kafka.record.codecs import NONE, decompress
from monitor.kafka.record.encode import (
    EMPTY_BATCH_SIZE, base_timestamp, compressed_size, retained_batch_size, splice_records,
)
from monitor.kafka.record.v2 import HEADER_SIZE
from monitor.kafka.record.errors import RecordFormatError, TruncatedBatchError
from monitor.kafka.record.model import control_type_code
from monitor.model import cleanarrays, horizon
from monitor.model.cleanround import Flow, Later, Round, Unknown, Unreadable
from monitor.model.offsetmap import DEFAULT_MAX_KEYS, MapFull, new_map
from monitor.model.transactions import ABORT, COMMIT
from monitor.model.txncleaner import CleanedTransactions

CACHE_RECORDS = 4 << 20  # records whose columns (36 bytes each) pass 1 keeps for pass 2: about 150 MB
CACHE_BODY_BYTES = 64 << 20  # compressed batch bodies a fed pass 1 keeps, so a rewritten one is not read again
SETTLE_ROUNDS = 6
DEFER_RECORDS = 1 << 20  # records of batches a settled clean stamps, held until its time is known  # the longest chain (tombstone stamped, removed, batch gone, marker stamped, removed) takes 4
TOMBSTONE, MARKER = "tombstone", "marker"


@dataclass(frozen=True)
class Projection:
    """One partition's projection. Bytes are of the whole partition's ``.log`` files."""

    next_clean_bytes: int | None
    settled_bytes: int | None
    unknown_reason: str | None
    log_bytes: int
    removable_records: int = 0  # records the next clean removes
    batches_dropped: int = 0
    batches_rewritten: int = 0
    batches_stamped: int = 0
    # (kind, state) -> tombstones or markers (kind ``tombstone``/``marker``, state ``monitor.model.horizon``'s)
    # of the log as it is, the records a clean would drop for other reasons too
    horizon_counts: dict = field(default_factory=dict)
    # the earliest time a clean may remove one of them (``horizon.earliest_removal_ms``): in the past
    # when some already may; None when there is none
    next_removable_ms: int | None = None

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "horizon_counts"}
        d["horizon_counts"] = {f"{kind}_{st}": n for (kind, st), n in sorted(self.horizon_counts.items())}
        return d


class BatchLeft(NamedTuple):
    """One batch as the next clean leaves it (``project_partition``'s ``trace``): the fields
    ``kafka-dump-log`` prints for it. A batch emptied to a bare header has no horizon
    (``DefaultRecordBatch.writeEmptyHeader``); its producer fields are the original batch's."""

    base_offset: int
    last_offset: int
    size: int
    records: int
    delete_horizon_ms: int | None
    producer_id: int
    producer_epoch: int
    is_control: bool


def _segment_base(uri: str) -> int:
    found = offset_file(posixpath.basename(uri))
    if found is None or found[1] != ".log":
        raise Unreadable(f"{uri}: not a segment file name Kafka writes (its base offset is its name)")
    return found[0]


def _walk(files, opener, ops, *, start=0, cache=None, need=None, first_position=0, headers=frozenset()):
    """(file index, file base, batch, its columns or None, its control key or None) for every batch of
    ``files`` from index ``start``; columns come from ``cache`` ((file index, position) -> columns, taken
    out as used) where pass 1 left them; none for a data batch ``need`` refuses (not decoded). A fault
    becomes ``Unreadable`` naming file and byte position. The first file is read from ``first_position``
    (a batch boundary); a file in ``headers`` (pass 1 cached every data batch of it) only for its batch
    headers and control batches (``_Bodies`` reads a body when a batch is rewritten)."""
    for i, (uri, _size) in enumerate(files[start:], start):
        base = _segment_base(uri)
        try:
            fh = opener(uri)
        except OSError as exc:
            raise Unreadable(f"{uri}: cannot read: {exc}") from exc
        with fh:
            reader = SegmentReader(fh, name=uri, start=first_position if i == start else 0)
            try:
                for b in reader.batches(bodies=CONTROL_BODIES if i in headers else True):
                    try:
                        if b.is_control:
                            recs = b.records()
                            yield i, base, b, None, (recs[0].key if recs else None)
                            continue
                        if need is not None and not need(b):
                            yield i, base, b, None, None
                            continue
                        cols = cache.pop((i, b.position), None) if cache else None
                        yield i, base, b, (ops.columns(b.arrays()) if cols is None else cols), None
                    except (ValueError, CodecError) as exc:  # RecordDecodeError, LegacyDecodeError
                        raise Unreadable(f"{uri}: byte {b.position}: {exc}") from exc
            except TruncatedBatchError as exc:
                if i == len(files) - 1 and not cut_tail_is_fault(active=True):
                    return  # the last segment, the active one: a batch being appended (the one cut-tail rule)
                raise Unreadable(str(exc)) from exc
            except RecordFormatError as exc:
                raise Unreadable(str(exc)) from exc


def _position_of(uri: str, opener, offset: int) -> int:
    """The byte position of the first batch of a segment reaching ``offset``, from its headers alone
    (Kafka looks it up in the offset index, which a copy may not have): pass 1 reads from there."""
    try:
        with opener(uri) as fh:
            for b in SegmentReader(fh, name=uri).batches(bodies=False):
                if b.last_offset >= offset:
                    return b.position
    except (OSError, RecordFormatError):
        return 0  # the full read from the start reports it
    return 0


def _resolve_aborted(aborted, files, opener, first_dirty_index, log_start):
    """The aborted transactions with a first offset. One folded from segments before the dirty
    section's has none (``transactions.aborted_transactions``); its transaction began after its
    producer's previous marker, which a header walk of those segments finds (Kafka's cleaner only
    needs the transaction's first batch to come after that point and after no other batch of it)."""
    if not aborted.complete:
        raise Unknown(f"aborted transactions not all known ({aborted.dropped} left out of a segment summary)")
    todo = {(a.producer_id, a.last_offset) for a in aborted.aborted if a.first_offset is None}
    known = [a for a in aborted.aborted if a.first_offset is not None]
    if not todo:
        return known
    pids = {p for p, _ in todo}
    markers: dict[int, list[int]] = {}
    for uri, _size in files[:max(first_dirty_index, 0) + 1]:
        with opener(uri) as fh:
            try:
                for b in SegmentReader(fh, name=uri).batches(bodies=False):
                    if b.is_control and b.producer_id in pids:
                        markers.setdefault(b.producer_id, []).append(b.last_offset)
            except RecordFormatError as exc:
                raise Unreadable(str(exc)) from exc
    out = list(known)
    for a in aborted.aborted:
        if a.first_offset is None:
            before = [m for m in markers.get(a.producer_id, ()) if m < a.last_offset]
            out.append(a._replace(first_offset=(max(before) + 1) if before else (log_start or 0)))
    return out


def _count_horizons(f: Flow, ops, counts: dict, now_ms: int, dr_ms: int, soonest: list) -> None:
    b = f.batch
    why = horizon.problem(has_horizon=b.has_delete_horizon, magic=b.magic, horizon_ms=b.delete_horizon_ms,
                          max_timestamp=b.max_timestamp, now_ms=now_ms, delete_retention_ms=dr_ms)
    if why:
        raise Unreadable(f"{b.file}: byte {b.position}: {why}")
    if b.is_control:
        n = int(control_type_code(f.control_key) in (ABORT, COMMIT)) if f.control_key is not None else 0
        kind = MARKER
    else:
        # a magic < 2 tombstone has no KIP-534 horizon (never stamped; removed by the segment's mtime)
        n = ops.tombstones(f.cols) if b.records_count and b.magic >= 2 else 0
        kind = TOMBSTONE
    if n:
        h = b.delete_horizon_ms
        key = (kind, horizon.state(h, now_ms))
        counts[key] = counts.get(key, 0) + n
        t = horizon.earliest_removal_ms(h, now_ms, dr_ms)
        soonest[0] = t if soonest[0] is None else min(soonest[0], t)


class _Bodies:
    """A batch's bytes read again when pass 2 walked its file by headers and the batch is rewritten:
    one open file at a time, its batches asked for in file order; or the compressed body a fed pass 1
    kept (``kept``: (file, position) -> body), not read again."""

    def __init__(self, opener, kept=None):
        self.opener, self.uri, self.fh = opener, None, None
        self.kept = kept or {}

    def body(self, b):
        if b._body is not None:
            return b._body
        kept = self.kept.pop((b.file, b.position), None)
        return kept if kept is not None else self.batch(b)._body

    def batch(self, b):
        if b.file != self.uri:
            self.close()
            self.fh, self.uri = self.opener(b.file), b.file
        try:
            return next(iter(SegmentReader(self.fh, name=b.file, start=b.position, stop=b.position + b.size).batches()))
        except (RecordFormatError, StopIteration) as exc:
            raise Unreadable(f"{b.file}: byte {b.position}: read again: {exc or 'gone'}") from exc

    def close(self):
        if self.fh is not None:
            self.fh.close()
        self.uri = self.fh = None


def _size(f: Flow, ops, bodies: _Bodies, deferred: list | None = None) -> int:
    """The bytes a flow's batch takes as the rounds left it."""
    b = f.batch
    if f.gone:
        return 0
    if f.empty:
        return EMPTY_BATCH_SIZE if b.records_count else b.size
    if f.keep is None and f.horizon == b.delete_horizon_ms:
        return b.size
    if b.magic < 2:
        raise Unknown(f"{b.file}: byte {b.position}: a magic-{b.magic} compressed message set losing part of "
                      "its records: its re-encoding is not modelled")
    if isinstance(f.horizon, Later):  # its value is known at the end of pass 2
        n = b.records_count if f.keep is None else ops.count(f.keep)
        if deferred is None or deferred[0] + n > DEFER_RECORDS:
            raise Unknown(f"{b.file}: byte {b.position}: more records kept under a later clean's stamp than "
                          f"the {DEFER_RECORDS} held until that clean's time is known")
        deferred[0] += n
        if b.codec != NONE and f.cols is not None and f.cols.tails is not None and f.section is None:
            f.section = _section(b, bodies)  # read now, in file order
        deferred.append((f, f.keep, int(f.horizon)))
        return 0
    return _rewritten_size(f, f.keep, ops, bodies, f.horizon)


def _section(b, bodies: _Bodies) -> bytes:
    body = bodies.body(b)
    try:
        return bytes(decompress(b.codec, body))
    except CodecError as exc:
        raise Unreadable(f"{b.file}: byte {b.position}: {exc}") from exc


def _rewritten_size(f: Flow, keep, ops, bodies: _Bodies, horizon) -> int:
    """The bytes ``filterTo`` writes for a magic-2 batch keeping ``keep`` (None: every record) under
    ``horizon``: from the arrays (``cleanarrays.records_size``: the deltas' and lengths' varints, each
    record's tail copied) when uncompressed; the kept records spliced from the decompressed section and
    compressed once when compressed; through decoded records (``retained_batch_size``) only where the
    arrays cannot tell (a C decoder without tail sizes, a header key that is not UTF-8)."""
    b, cols = f.batch, f.cols
    stamp = None if b.has_delete_horizon else horizon
    if cols is not None and cols.tails is not None:
        base_ts = base_timestamp(b, ops.first_timestamp(cols, keep), stamp)[0]
        if b.codec == NONE:
            n = ops.records_size(cols, keep, b.base_offset, base_ts)
            if n is not None:
                return HEADER_SIZE + n
        else:
            if f.section is None:
                f.section = _section(b, bodies)
            data = ops.splice(f.section, cols, keep, b.base_offset, base_ts, b.base_timestamp)
            if data is None:
                data = splice_records(f.section, None if keep is None else ops.flags(keep), ops.flags(cols.offsets),
                                      ops.flags(cols.timestamps), ops.flags(cols.tails), b.base_offset, base_ts)
            if data is not None:
                return HEADER_SIZE + compressed_size(b.codec, data)
    if f.records is None:
        f.records = (b if b._body is not None else bodies.batch(b)).records()
    recs = f.records
    kept = recs if keep is None else [r for r, k in zip(recs, ops.flags(keep)) if k]
    return retained_batch_size(b, kept, delete_horizon_ms=stamp)


def project_partition(files, opener, *, first_dirty: int, upper: int, log_start: int | None, now_ms: int,
                      delete_retention_ms: int, aborted, last_records: dict, name: str,
                      max_map_keys: int = DEFAULT_MAX_KEYS, ops=None, trace: list | None = None) -> Projection:
    """The next-clean and settled projections of one partition (module docstring). ``files`` =
    [(uri, size)] in offset order, ``opener(uri)`` a binary file object, ``aborted`` the
    ``transactions.AbortedRanges``, ``last_records`` producer id -> (last data offset or None, epoch).
    ``max_map_keys``: the offset map's bound (Kafka's default); ``ops``: ``cleanarrays.NumpyOps`` or
    ``PureOps`` (default: numpy where installed). ``trace``: a list that gets a ``BatchLeft`` for every
    batch the next clean leaves, in offset order (what ``kafka-dump-log`` of the cleaned log prints
    batch by batch; left as it was when the projection is unknown). Its own pass 1; ``Projector``
    takes one from a caller's read."""
    p = Projector(files, opener, first_dirty=first_dirty, upper=upper, log_start=log_start, now_ms=now_ms,
                  delete_retention_ms=delete_retention_ms, aborted=aborted, last_records=last_records, name=name,
                  max_map_keys=max_map_keys, ops=ops, trace=trace)
    p.read()
    return p.finish()


class Projector:
    """``project_partition`` in steps, so that its pass 1 can be the pass a caller makes anyway: the audit
    folds the keys from each batch's arrays (``spark_analysis.partition_audit``) and hands the same
    batches here (``batch``), in file order, so the partition is decoded once. Either ``read`` (pass 1
    from the files) or ``batch`` for every batch of ``files`` (others are ignored), then ``finish``.
    A fed read that saw a fault (``fault``) or missed a file is done again by ``read`` at ``finish``: the
    reason then names file and byte as the projection's own read does."""

    def __init__(self, files, opener, *, first_dirty: int, upper: int, log_start: int | None, now_ms: int,
                 delete_retention_ms: int, aborted, last_records: dict, name: str,
                 max_map_keys: int = DEFAULT_MAX_KEYS, ops=None, trace: list | None = None):
        self.args = dict(first_dirty=first_dirty, upper=upper, log_start=log_start, now_ms=now_ms,
                         delete_retention_ms=delete_retention_ms, aborted=aborted, last_records=last_records,
                         name=name, max_map_keys=max_map_keys, ops=ops, trace=trace)
        self.trace = trace
        self.ops = ops = ops or cleanarrays.OPS
        self.was_read = False
        self.files, self.opener, self.name = list(files), opener, name
        self.first_dirty, self.upper, self.now_ms, self.dr_ms = first_dirty, upper, now_ms, delete_retention_ms
        self.last_records = last_records
        self.log_bytes = sum(int(s) for _, s in self.files)
        self.index = {uri: i for i, (uri, _) in enumerate(self.files)}
        self.failed = None  # the Unknown (or MapFull) pass 1 raised
        self.fed = set()  # files whose batches a caller handed in (``batch``)
        self.faulty = False
        self.txns = None
        bases = self.bases = []
        try:
            bases += [_segment_base(u) for u, _ in self.files]
            # logSegments(first_dirty, upper): from the segment holding first_dirty to the last starting below upper
            dirty = [i for i, base in enumerate(bases)
                     if base < upper and (i + 1 == len(bases) or bases[i + 1] > first_dirty)]
            self.dirty = bool(dirty)
            self.txns = txns = _resolve_aborted(aborted, self.files, opener, dirty[0] if dirty else len(self.files),
                                                log_start)
        except (Unknown, MapFull) as exc:
            self.failed = exc
            return
        # pass 1: the offset map of [first_dirty, upper), and of [upper, end) for the settled round 2
        vectors = ops is cleanarrays.NumpyOps
        self.map1, self.map2 = new_map(max_map_keys, vectors), new_map(max_map_keys, vectors)
        self.t1 = CleanedTransactions([a for a in txns if a.last_offset >= first_dirty and a.first_offset < upper])
        self.t2 = CleanedTransactions([a for a in txns if a.last_offset >= upper])
        self.lo = min(first_dirty, upper)
        self.cache, self.cached = {}, 0  # pass 1's columns, so that pass 2 decompresses and decodes a batch once
        self.puts: dict = {}  # (file index, position) -> {id(offset map): (its first put, which records were put)}
        self.whole: dict = {}  # file index -> pass 1 cached every data batch of it: pass 2 reads its headers only
        self.bodies: dict = {}  # (file, position) -> a compressed batch's body a fed pass 1 read (rewritten: no re-read)
        self.body_bytes = 0

    def read(self) -> None:
        """Pass 1 from the files: from the segment holding the lower of first dirty and upper, the batches
        below it by their headers only."""
        self.was_read = True
        if self.failed is not None or not self.files:
            return
        files, ops, lo = self.files, self.ops, self.lo
        start = max([i for i, base in enumerate(self.bases) if base <= lo], default=0)
        first_position = _position_of(files[start][0], self.opener, lo)
        try:
            for i, base, b, cols, key in _walk(files, self.opener, ops, start=start, need=lambda x: x.last_offset >= lo,
                                               first_position=first_position):
                self._add(i, base, b, cols, key)
        except (Unknown, MapFull) as exc:
            self.failed = exc

    def batch(self, uri: str, b, arr) -> None:
        """One batch of the caller's read, with its ``RecordArrays`` (in file order, every batch of a file)."""
        i = self.index.get(uri)
        if i is None or self.failed is not None or self.faulty:
            return
        self.fed.add(i)
        if b.is_control:
            cols, key = None, (bytes(arr.keys) if len(arr) else None)
        else:
            cols, key = self.ops.columns(arr), None
            if b.codec and b._body is not None and self.body_bytes + len(b._body) <= CACHE_BODY_BYTES:
                self.bodies[(b.file, b.position)] = b._body
                self.body_bytes += len(b._body)
        try:
            self._add(i, self.bases[i], b, cols, key)
        except (Unknown, MapFull) as exc:
            self.failed = exc

    def read_whole(self, uri: str) -> None:
        """The caller read every batch of ``uri`` (with none, an empty segment: a clean can leave one), so
        a file that handed in no batch does not make ``finish`` read the partition again."""
        i = self.index.get(uri)
        if i is not None:
            self.fed.add(i)

    def fault(self, uri: str) -> None:
        """The caller's read of ``uri`` skipped bytes it could not read: the projection reads for itself."""
        if uri in self.index:
            self.faulty = True

    def _add(self, i, base, b, cols, key) -> None:
        if i not in self.whole:
            self.whole[i] = b.position == 0
        if cols is None and not b.is_control:
            self.whole[i] = False
        if b.last_offset < self.lo:
            if cols is not None and self.cached < CACHE_RECORDS:  # pass 2 reads it again otherwise
                self.cache[(i, b.position)] = cols
                self.cached += b.records_count
            elif not b.is_control:
                self.whole[i] = False
            return
        entry = None
        if cols is not None and self.cached < CACHE_RECORDS:
            self.cache[(i, b.position)] = cols
            entry = self.puts[(i, b.position)] = {}
            self.cached += b.records_count
        elif not b.is_control:
            self.whole[i] = False
        mapped = []  # (offset map, its transaction state, the first offset it maps)
        if base < self.upper and b.last_offset >= self.first_dirty:
            mapped.append((self.map1, self.t1, self.first_dirty))
        if b.last_offset >= self.upper:
            mapped.append((self.map2, self.t2, self.upper))
        for m, t, first in mapped:
            if b.is_control:
                t.on_control(b.last_offset, b.producer_id, key)
            elif not t.on_batch(b.last_offset, b.is_transactional, b.producer_id) and b.records_count:
                hashes, offsets, sel = self.ops.keyed_from(cols, first)
                first_put = m.put(hashes, offsets)
                if entry is not None:
                    entry[id(m)] = (first_put, sel)

    def _refeed(self) -> bool:
        """A fed pass 1 that cannot stand (a fault, a file not handed in): redone by ``read``."""
        if self.was_read or self.txns is None:
            return False
        lo_index = max([i for i, base in enumerate(self.bases) if base <= self.lo], default=0)
        return self.faulty or any(i not in self.fed for i in range(lo_index, len(self.files)))

    def finish(self) -> Projection:
        """Pass 2 and the projection (unknown with the reason where it cannot be known)."""
        if self._refeed():
            fresh = Projector(self.files, self.opener, **self.args)
            fresh.read()
            return fresh.finish()
        files, ops, now_ms, dr_ms, name = self.files, self.ops, self.now_ms, self.dr_ms, self.name
        counts: dict = {}
        soonest: list = [None]
        try:
            if self.failed is not None:
                raise self.failed
            return self._pass2(counts, soonest)
        except Unreadable as exc:  # the files themselves: nothing about them is counted
            return Projection(None, None, f"{name}: {exc}", self.log_bytes)
        except (Unknown, MapFull) as exc:  # the bytes a clean leaves; the horizon states are still counted
            why = f"{name}: {exc}"
        counts, soonest = {}, [None]
        try:
            for _i, base, b, cols, key in _walk(files, self.opener, ops):
                _count_horizons(Flow(b, base, cols, key), ops, counts, now_ms, dr_ms, soonest)
        except Unknown:
            counts, soonest = {}, [None]
        return Projection(None, None, why, self.log_bytes, horizon_counts=counts, next_removable_ms=soonest[0])

    def _pass2(self, counts, soonest) -> Projection:
        ops, now_ms, dr_ms, upper, txns = self.ops, self.now_ms, self.dr_ms, self.upper, self.txns
        map1, map2 = self.map1, self.map2
        map1.finish()
        map2.finish()
        maps = {id(map1): map1, id(map2): map2}
        end_offset = upper if self.dirty else 0  # offsetMap.latestOffset + 1
        later = dict(ops=ops, time_ms=None, aborted=txns, last_records=self.last_records, upper=None,
                     cleaned_below=None)
        r1 = Round(ops=ops, offset_map=map1, latest_offset=end_offset - 1, cleaned_below=end_offset, upper=upper,
                   time_ms=now_ms, stamp=now_ms + max(dr_ms, 0), aborted=txns, last_records=self.last_records)
        rounds = [r1, Round(offset_map=map2, latest_offset=float("inf"), stamp=Later(2), **later)]
        rounds += [Round(offset_map=None, latest_offset=float("inf"), stamp=Later(k), **later)
                   for k in range(3, SETTLE_ROUNDS + 1)]
        bodies = _Bodies(self.opener, self.bodies)
        try:
            return _clean(self.files, self.opener, ops, self.cache, self.puts,
                          {i for i, ok in self.whole.items() if ok}, maps, r1, rounds, bodies, now_ms, dr_ms,
                          self.log_bytes, counts, soonest, self.trace)
        finally:
            bodies.close()


def _clean(files, opener, ops, cache, puts, headers, maps, r1, rounds, bodies, now_ms, dr_ms, log_bytes, counts,
           soonest, trace=None) -> Projection:
    """Pass 2: every batch through the rounds, in offset order."""
    next_bytes = settled = 0
    left = [] if trace is not None else None
    deferred: list = [0]  # records held, then (flow, its kept mask, the settled clean that stamped it)
    latest_horizon = None
    for _i, base, b, cols, key in _walk(files, opener, ops, cache=cache, headers=headers):
        if b.delete_horizon_ms is not None:
            latest_horizon = max(latest_horizon or b.delete_horizon_ms, b.delete_horizon_ms)
        f = Flow(b, base, cols, key)
        for m, (start, sel) in puts.pop((_i, b.position), {}).items():
            if maps[m].is_last is not None:  # the map knows which put was each key's last: no lookup
                last = maps[m].is_last[start:start + int(sel.sum())]
                f.found[m] = ops.found_from_puts(cols, sel, last, maps[m].latest)
        _count_horizons(f, ops, counts, now_ms, dr_ms, soonest)
        r1.clean(f)
        size = _size(f, ops, bodies)
        next_bytes += size
        if left is not None and not f.gone:
            n = 0 if f.empty else (b.records_count if f.keep is None else ops.count(f.keep))
            left.append(BatchLeft(b.base_offset, b.last_offset, size, n, f.horizon,
                                  b.producer_id, b.producer_epoch, b.is_control))
        moved = False
        for r in rounds[1:]:
            r.clean(f)
            moved = moved or f.changed
        if f.changed:
            raise Unknown(f"{b.file}: byte {b.position}: still changing after {SETTLE_ROUNDS} cleans")
        settled += _size(f, ops, bodies, deferred) if moved else size
    # the settled cleans' times: the second as soon as every horizon in the log has passed, then one
    # delete.retention.ms apart (each removes what the one before stamped)
    second = max(now_ms + max(dr_ms, 0), latest_horizon or 0)
    for f, keep, k in deferred[1:]:
        settled += _rewritten_size(f, keep, ops, bodies, second + (k - 2) * max(dr_ms, 0) + max(dr_ms, 0))
    if trace is not None:
        trace.extend(left)
    return Projection(next_bytes, settled, None, log_bytes, r1.removed_records, r1.dropped, r1.rewritten, r1.stamped,
                      counts, soonest[0])

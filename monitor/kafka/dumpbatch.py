"""Batches and records assembled from dump lines: ``DumpBatch`` and ``DumpRecord``, the binary
reader's model as the dump text gives it (``monitor.kafka.record.model``).

Apart from the line grammar (``monitor.kafka.dumplines``) and the streaming parser (``monitor.kafka.dump``):
this is where the dump's own fields become the v2 header's, where a record line without its batch line
gets a batch made from what it says (``from_records``, every other field unknown), and where a key and
payload are cut apart by their printed sizes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from monitor.fileio.excerpt import excerpt
from monitor.kafka.dumplines import (FIELD, TIMESTAMP_LABELS, bool_field, codec_name, horizon_field, int_field,
                                     timestamp_label)
from monitor.kafka.record.model import Record

CONTROL = re.compile(r"^ endTxnMarker: (?P<type>\w+) coordinatorEpoch: (?P<epoch>-?\d+)")
# what a control record's line holds after its fields (4.3 DumpLogSegments.java's format strings)
CONTROL_CONTENT = ("endTxnMarker: ", "controlType: ", "SnapshotHeader ", "SnapshotFooter ", "KRaftVersion ",
                   "KRaftVoters ")


class DumpRecord(Record):
    """A record read from dump text: the key is the printed text, its size is the dump's ``keySize``."""

    __slots__ = ("_key_size", "sequence", "control_text")

    def __init__(self, offset, timestamp, key, key_size, value_size, header_keys, batch, value, sequence,
                 control_text=None):
        super().__init__(offset, timestamp, key, value_size, [(k, None) for k in header_keys], batch, value=value)
        self._key_size = key_size
        self.sequence = sequence
        self.control_text = control_text

    @property
    def key_size(self) -> int:
        return self._key_size

    @property
    def control_type(self) -> str | None:
        if not self.batch.is_control:
            return None
        if self.control_text:
            m = CONTROL.match(" " + self.control_text)
            if m:
                return m.group("type")
        return super().control_type


@dataclass
class DumpBatch:
    """One batch of a dump, with the v2 header's attribute names.

    ``from_records``: the dump held no batch line for these records (grep output, or Kafka before 2.2
    with ``--deep-iteration``); the batch is what the record lines say, and a field they do not print
    is None (unknown), e.g. ``size`` and ``delete_horizon_ms`` of grepped ``| offset:`` lines."""

    file: str
    line: int
    base_offset: int | None
    last_offset: int | None
    records_count: int | None
    position: int | None
    size: int | None
    magic: int | None
    compression: str | None
    timestamp_type: str
    max_timestamp: int | None
    crc: int | None
    is_valid: bool | None
    producer_id: int | None = -1
    producer_epoch: int | None = -1
    base_sequence: int | None = -1
    last_sequence: int | None = -1
    partition_leader_epoch: int | None = -1
    is_transactional: bool | None = False
    is_control: bool | None = False
    delete_horizon_ms: int | None = None
    from_records: bool = False
    _records: list = field(default_factory=list, repr=False)
    _key: tuple = field(default=(), repr=False)  # what the record lines of a from_records batch share

    @property
    def has_delete_horizon(self) -> bool:
        return self.delete_horizon_ms is not None

    @property
    def next_offset(self) -> int | None:
        return None if self.last_offset is None else self.last_offset + 1

    @property
    def last_offset_delta(self) -> int | None:
        if self.last_offset is None or self.base_offset is None:
            return None
        return self.last_offset - self.base_offset

    def records(self) -> list[Record]:
        return self._records



def batch_from_line(file: str, no: int, line: str) -> DumpBatch:
    f = dict(FIELD.findall(line))
    ts_label = next((k for k in TIMESTAMP_LABELS if k in f), None)
    legacy = "baseOffset" not in f
    magic = int(f.get("magic", 2 if not legacy else 1))
    count = f.get("count")
    return DumpBatch(
        file=file, line=no,
        base_offset=int(f["offset"] if legacy else f["baseOffset"]),
        last_offset=int(f["offset"] if legacy else f["lastOffset"]),
        records_count=int(count) if count is not None else (1 if legacy else None),
        position=int(f["position"]), size=int(f["size"]), magic=magic,
        compression=codec_name(f.get("compresscodec", "none")),
        timestamp_type=TIMESTAMP_LABELS[ts_label] if ts_label else "none",
        max_timestamp=int(f[ts_label]) if ts_label else -1,
        crc=int_field(f.get("crc")), is_valid=bool_field(f.get("isvalid", "true")),
        producer_id=int(f.get("producerId", -1)), producer_epoch=int(f.get("producerEpoch", -1)),
        base_sequence=int(f.get("baseSequence", -1)), last_sequence=int(f.get("lastSequence", -1)),
        partition_leader_epoch=int(f.get("partitionLeaderEpoch", -1)),
        is_transactional=bool_field(f.get("isTransactional", "false")),
        # not printed before 2.1: a v2 batch line alone cannot tell (its records' text can)
        is_control=bool_field(f["isControl"]) if "isControl" in f else (False if magic < 2 else None),
        delete_horizon_ms=horizon_field(f.get("deleteHorizonMs")),
    )

def record_from_fields(batch: DumpBatch, f: dict[str, str], content: str) -> tuple[DumpRecord, int]:
    if "offset" not in f:  # --skip-record-metadata
        key, value = _split_key_payload(content, -2, -2)
        ks = -1 if key is None else len(key)
        vs = -1 if value is None else len(value)
        return DumpRecord(-1, -1, key, ks, vs, [], batch, value, -1), 0
    offset = int_field(f["offset"])
    if offset is None:
        raise ValueError(f"record offset is not a number: {excerpt(f['offset'])}")
    ts_label = timestamp_label(f)
    ts = int_field(f[ts_label]) if ts_label else -1
    ks = int_field(f["keySize"] if "keySize" in f else f.get("keysize"))
    vs = int_field(f["valueSize"] if "valueSize" in f else f.get("valuesize"))
    ks = -2 if ks is None else ks
    vs = -2 if vs is None else vs
    seq = int_field(f.get("sequence"))
    hk = [h for h in f.get("headerKeys", "[]")[1:-1].split(",") if h]
    if content.startswith(CONTROL_CONTENT):
        if batch.is_control is None:  # a batch line before 2.1 does not say; its records do
            batch.is_control = True
    elif batch.is_control is None and ("offset" in f):
        batch.is_control = False
    if batch.is_control:
        rec = DumpRecord(offset, ts, None, ks, vs, hk, batch, None, -1 if seq is None else seq,
                         control_text=content.strip())
        return rec, 0
    if content and not content.startswith(("key: ", "payload: ")):
        raise ValueError(f"unrecognised text after the record's fields: {excerpt(content)}")
    key, value = _split_key_payload(content, ks, vs)
    if ks == -2:
        ks = -1 if key is None else len(key)
    if vs == -2:
        vs = -1 if value is None else len(value)
    rec = DumpRecord(offset, ts, key, ks, vs, hk, batch, value, -1 if seq is None else seq)
    pending = 0
    if value is not None and vs > len(value):
        pending = vs - len(value)
    return rec, pending



def belongs(batch: DumpBatch, file: str, f: dict[str, str], content: str) -> bool:
    """Whether a record line continues ``batch`` (else a batch of its own starts)."""
    if batch.file != file:
        return False
    if "offset" not in f:  # --skip-record-metadata: nothing to tell
        return True
    pos = int_field(f.get("position"))
    if pos is not None and batch.position is not None and pos != batch.position:
        return False
    if not batch.from_records:
        off = int_field(f["offset"])
        if batch.last_offset is not None and off is not None and off > batch.last_offset:
            return False  # grep output after a batch line: not this batch's
        if batch.magic == 2 and batch.base_offset is not None and off is not None and off < batch.base_offset:
            return False  # (a legacy wrapper's line prints its last offset only: no lower bound)
        return True
    return _record_batch_key(f, content) == batch._key


def _record_batch_key(f: dict[str, str], content: str) -> tuple:
    """What record lines without a batch line must share to be taken as one batch."""
    ts_label = timestamp_label(f)
    return (f.get("position"), f.get("baseOffset"), ts_label, content.startswith(CONTROL_CONTENT),
            f.get("magic"), "sequence" in f)


def batch_from_record(file: str, no: int, f: dict[str, str], content: str) -> DumpBatch:
    ts_label = next((k for k in TIMESTAMP_LABELS if k in f), None)
    control = content.startswith(CONTROL_CONTENT)
    magic = int_field(f.get("magic"))
    if magic is None and ("sequence" in f or "headerKeys" in f):
        magic = 2  # printed for magic 2 only
    txn = bool_field(f.get("isTransactional"))
    if txn is None and control and content.startswith("endTxnMarker: "):
        txn = True  # a transaction marker is written in a transactional batch only
    batch = DumpBatch(
        file=file, line=no,
        base_offset=int_field(f.get("baseOffset")), last_offset=int_field(f.get("lastOffset")), records_count=None,
        position=int_field(f.get("position")), size=int_field(f.get("batchSize")), magic=magic,
        compression=codec_name(f.get("compresscodec", f.get("compressType"))),
        timestamp_type=TIMESTAMP_LABELS[ts_label] if ts_label else "none", max_timestamp=None,
        crc=None, is_valid=None,
        producer_id=int_field(f.get("producerId")), producer_epoch=int_field(f.get("producerEpoch")),
        base_sequence=int_field(f.get("baseSequence")), last_sequence=int_field(f.get("lastSequence")),
        partition_leader_epoch=int_field(f.get("partitionLeaderEpoch")),
        is_transactional=txn, is_control=control,
        delete_horizon_ms=None, from_records=True,
    )
    batch._key = _record_batch_key(f, content)
    return batch



def key_cut_short(f: dict[str, str], content: str) -> bool:
    """Whether a record line ends inside its key: kafka-dump-log prints the key raw, so a key holding a
    line break goes on over the next lines. Known from the sizes: the key text (up to a ``payload:``
    marker past ``keySize`` bytes of it, or to the end when the record has no value) is shorter than
    ``keySize`` says. Without sizes (``--skip-record-metadata``) nothing can tell: False."""
    ks, vs = int_field(f.get("keySize", f.get("keysize"))), int_field(f.get("valueSize", f.get("valuesize")))
    if ks is None or ks <= 0 or not content.startswith("key: "):
        return False
    body = content[len("key: "):]
    if vs == -1:  # no payload printed: the key is the rest
        return len(body.encode("utf-8", "surrogateescape")) < ks
    return _key_end(body, ks) < 0


def _key_end(body: str, ks: int) -> int:
    """Where the key of ``body`` (the text after ``key: ``) ends: the first `` payload: `` marker with at
    least ``ks`` bytes of key text before it (a key may hold the marker itself), -1 when there is none."""
    start = 0
    while (i := body.find(" payload: ", start)) >= 0:
        if len(body[:i].encode("utf-8", "surrogateescape")) >= ks:
            return i
        start = i + 1
    return -1


def _split_key_payload(rest: str, ks: int, vs: int) -> tuple[bytes | None, bytes | None]:
    """Cut ``key: K payload: V`` using the sizes when the texts themselves contain the markers."""
    key = value = None
    has_key = rest.startswith("key: ") and ks != -1
    if has_key:
        body = rest[len("key: "):]
        if vs == -1 or " payload: " not in body:
            kt, vt = body, None
        elif ks >= 0:
            # prefer the split whose key text has exactly keySize UTF-8 bytes
            i = _key_end(body, ks)
            if i >= 0:
                kt, vt = body[:i], body[i + len(" payload: "):]
            else:
                kt, _, vt = body.partition(" payload: ")
        else:
            kt, _, vt = body.partition(" payload: ")
        key = kt.encode("utf-8", "surrogateescape")
        value = None if vt is None else vt.encode("utf-8", "surrogateescape")
    elif rest.startswith("payload: "):
        value = rest[len("payload: "):].encode("utf-8", "surrogateescape")
    return key, value


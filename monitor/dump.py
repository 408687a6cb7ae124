"""Parse what ``kafka-dump-log.sh --files X --print-data-log`` (or ``--deep-iteration``) prints.

Into the same model as the binary reader: batches with the v2 header's names
and ``Record`` objects, so every consumer (inspect, the audit) takes either.

Shapes handled (fields are matched by name, not position, both spellings):

* 4.x / 3.x::

    Dumping /data/orders-3/00000000000000001200.log
    Log starting offset: 1200
    baseOffset: 1200 lastOffset: 1204 count: 2 ... deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1763805600001 size: 86 magic: 2 compresscodec: none crc: 2807553961 isvalid: true
    | offset: 1200 CreateTime: 1763805600000 keySize: 3 valueSize: 5 sequence: -1 headerKeys: [] key: k17 payload: hello
    | offset: 1205 CreateTime: ... keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 0

* 2.x: ``Starting offset:``, ``keysize:``/``valuesize:``, codec names in capitals, no ``deleteHorizonMs``.
* legacy (magic 0/1) batches: ``offset: N position: ...`` instead of ``baseOffset: ...``;
  record lines with ``isValid: ... crc: ...`` after the sizes, before key and payload.
* ``--skip-record-metadata``: ``| key: ... payload: ...`` only.
* ``Found N invalid bytes at the end of F``, ``Non-consecutive offsets in F`` and its
  ``  A is followed by B`` lines (stderr, but often captured with ``2>&1``), and the lines of
  ``.index``/``.timeindex``/``.txnindex``/``.snapshot`` dumps are recognised and set aside.

Payloads are printed raw, so a value holding a newline continues on the next
line: such lines are joined back while the text is shorter than ``valueSize``.
Any other line is a problem reported with its line number, never dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from monitor.record.model import Record

FIELD = re.compile(r"(\w+): (\S+)")
TIMESTAMP_LABELS = {"CreateTime": "create", "LogAppendTime": "log_append", "NoTimestampType": "none"}
CODECS = {"none": "none", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd", "producer": "none"}
RECORD_META = re.compile(
    r"^offset: (?P<offset>-?\d+)"
    r"(?: (?P<tslabel>CreateTime|LogAppendTime|NoTimestampType): (?P<ts>-?\d+))?"
    r"(?: (?:keySize|keysize): (?P<ks>-?\d+))?"
    r"(?: (?:valueSize|valuesize): (?P<vs>-?\d+))?"
    r"(?: sequence: (?P<seq>-?\d+))?"
    r"(?: headerKeys: \[(?P<hk>.*?)\])?"
    r"(?P<rest>.*)$"
)
LEGACY_VALIDITY = re.compile(r"^ isValid: \S+ crc: \S+", re.I)  # legacy record lines, before key/payload
CONTROL = re.compile(r"^ endTxnMarker: (?P<type>\w+) coordinatorEpoch: (?P<epoch>-?\d+)")
SET_ASIDE = (
    re.compile(r"^Found \d+ invalid bytes at the end of "),
    re.compile(r"^Non-consecutive offsets in "),
    re.compile(r"^\s+\d+ is followed by \d+$"),
    re.compile(r"^offset: -?\d+ position: -?\d+$"),  # .index
    re.compile(r"^timestamp: -?\d+ offset: -?\d+$"),  # .timeindex
    re.compile(r"^version: \d+ producerId: "),  # .txnindex
    re.compile(r"^producerId: -?\d+ producerEpoch: "),  # .snapshot
    re.compile(r"^Found timestamp mismatch|^Found out of order timestamp|^\s+Index timestamp: |^Mismatches in :"),
    re.compile(r"^The following indexed offsets are not found|^Indexed offset: "),
    re.compile(r"^Snapshot end offset: |^KRaft bootstrap snapshot$"),
)


class DumpFormatError(ValueError):
    def __init__(self, file: str, line: int, reason: str):
        self.file, self.line, self.reason = file, line, reason
        super().__init__(f"{file}: line {line}: {reason}")


@dataclass
class DumpProblem:
    line: int
    text: str
    reason: str


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
    """One batch line of a dump, with the v2 header's attribute names."""

    file: str
    line: int
    base_offset: int
    last_offset: int
    records_count: int
    position: int
    size: int
    magic: int
    compression: str
    timestamp_type: str
    max_timestamp: int
    crc: int
    is_valid: bool
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    last_sequence: int = -1
    partition_leader_epoch: int = -1
    is_transactional: bool = False
    is_control: bool = False
    delete_horizon_ms: int | None = None
    _records: list = field(default_factory=list, repr=False)

    @property
    def has_delete_horizon(self) -> bool:
        return self.delete_horizon_ms is not None

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def last_offset_delta(self) -> int:
        return self.last_offset - self.base_offset

    def records(self) -> list[Record]:
        return self._records


def _bool(v: str) -> bool:
    return v.lower() == "true"


def _horizon(v: str | None) -> int | None:
    if not v or v.endswith(".empty") or v in ("-1", "None"):
        return None
    m = re.search(r"-?\d+", v)
    return int(m.group()) if m else None


class DumpParser:
    """Stream batches out of dump text lines. ``problems`` lists every line not understood."""

    def __init__(self, lines: Iterable[str], name: str = "<dump>", *, strict: bool = False):
        self._lines = lines
        self.name = name
        self.strict = strict
        self.problems: list[DumpProblem] = []
        self.set_aside = 0
        self.files: list[str] = []
        self.invalid_bytes: dict[str, int] = {}

    def _problem(self, no: int, text: str, reason: str) -> None:
        if self.strict:
            raise DumpFormatError(self.name, no, f"{reason}: {text[:120]!r}")
        self.problems.append(DumpProblem(no, text, reason))

    def batches(self) -> Iterator[DumpBatch]:
        current: DumpBatch | None = None
        file = self.name
        last_rec: DumpRecord | None = None
        pending = 0  # payload bytes still expected on continuation lines
        for no, raw in enumerate(self._lines, start=1):
            line = raw.rstrip("\r\n")
            if pending > 0 and last_rec is not None and not _looks_structural(line):
                text = "\n" + line
                last_rec._value = (last_rec._value or b"") + text.encode("utf-8", "surrogateescape")
                pending -= len(text.encode("utf-8", "surrogateescape"))
                continue
            pending = 0
            if not line.strip():
                continue
            if line.startswith("Dumping "):
                if current is not None:
                    yield current
                    current = None
                file = line[len("Dumping "):].strip()
                self.files.append(file)
                continue
            if line.startswith(("Log starting offset:", "Starting offset:")):
                continue
            if line.startswith("baseOffset: ") or (line.startswith("offset: ") and " position: " in line and " size: " in line):
                if current is not None:
                    yield current
                try:
                    current = self._batch(file, no, line)
                except (KeyError, ValueError) as exc:
                    current = None
                    self._problem(no, line, f"batch line missing or bad field {exc}")
                last_rec = None
                continue
            if line.startswith("| "):
                if current is None:
                    self._problem(no, line, "record line before any batch line")
                    continue
                try:
                    last_rec, pending = self._record(current, line[2:])
                except ValueError as exc:
                    self._problem(no, line, str(exc))
                    last_rec = None
                    continue
                current._records.append(last_rec)
                continue
            m = re.match(r"^Found (\d+) invalid bytes at the end of (.*)$", line)
            if m:
                self.invalid_bytes[m.group(2).strip()] = int(m.group(1))
                self.set_aside += 1
                continue
            if any(p.match(line) for p in SET_ASIDE):
                self.set_aside += 1
                continue
            self._problem(no, line, "unrecognised line")
        if current is not None:
            yield current

    def _batch(self, file: str, no: int, line: str) -> DumpBatch:
        f = dict(FIELD.findall(line))
        ts_label = next((k for k in TIMESTAMP_LABELS if k in f), None)
        legacy = "baseOffset" not in f
        magic = int(f.get("magic", 2 if not legacy else 1))
        codec = f.get("compresscodec", "none").lower()
        batch = DumpBatch(
            file=file, line=no,
            base_offset=int(f["offset"] if legacy else f["baseOffset"]),
            last_offset=int(f["offset"] if legacy else f["lastOffset"]),
            records_count=int(f.get("count", 1 if legacy else 0)),
            position=int(f["position"]), size=int(f["size"]), magic=magic,
            compression=CODECS.get(codec, codec),
            timestamp_type=TIMESTAMP_LABELS[ts_label] if ts_label else "none",
            max_timestamp=int(f[ts_label]) if ts_label else -1,
            crc=int(f.get("crc", 0)), is_valid=_bool(f.get("isvalid", "true")),
            producer_id=int(f.get("producerId", -1)), producer_epoch=int(f.get("producerEpoch", -1)),
            base_sequence=int(f.get("baseSequence", -1)), last_sequence=int(f.get("lastSequence", -1)),
            partition_leader_epoch=int(f.get("partitionLeaderEpoch", -1)),
            is_transactional=_bool(f.get("isTransactional", "false")),
            is_control=_bool(f.get("isControl", "false")),
            delete_horizon_ms=_horizon(f.get("deleteHorizonMs")),
        )
        return batch

    def _record(self, batch: DumpBatch, text: str) -> tuple[DumpRecord, int]:
        if text.startswith(("key: ", "payload: ")):  # --skip-record-metadata
            key, value = _split_key_payload(text, -2, -2)
            ks = -1 if key is None else len(key)
            vs = -1 if value is None else len(value)
            rec = DumpRecord(-1, -1, key, ks, vs, [], batch, value, -1)
            return rec, 0
        m = RECORD_META.match(text)
        if not m:
            raise ValueError("record line does not start with 'offset:'")
        rest = m.group("rest")
        if batch.magic < 2:
            rest = LEGACY_VALIDITY.sub("", rest)
        ks = int(m.group("ks")) if m.group("ks") is not None else -2
        vs = int(m.group("vs")) if m.group("vs") is not None else -2
        hk = [h for h in (m.group("hk") or "").split(",") if h]
        ts = int(m.group("ts")) if m.group("ts") is not None else -1
        seq = int(m.group("seq")) if m.group("seq") is not None else -1
        if batch.is_control:
            rec = DumpRecord(int(m.group("offset")), ts, None, ks, vs, hk, batch, None, seq, control_text=rest.strip())
            return rec, 0
        key, value = _split_key_payload(rest.lstrip(" "), ks, vs)
        if ks == -2:
            ks = -1 if key is None else len(key)
        if vs == -2:
            vs = -1 if value is None else len(value)
        rec = DumpRecord(int(m.group("offset")), ts, key, ks, vs, hk, batch, value, seq)
        pending = 0
        if value is not None and vs > len(value):
            pending = vs - len(value)
        return rec, pending


def _looks_structural(line: str) -> bool:
    return line.startswith(("| ", "baseOffset: ", "Dumping ", "Log starting offset:", "Starting offset:")) or (
        line.startswith("offset: ") and " position: " in line)


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
            kt = vt = None
            start = 0
            while True:
                i = body.find(" payload: ", start)
                if i < 0:
                    break
                if len(body[:i].encode("utf-8", "surrogateescape")) >= ks:
                    kt, vt = body[:i], body[i + len(" payload: "):]
                    break
                start = i + 1
            if kt is None:
                kt, _, vt = body.partition(" payload: ")
        else:
            kt, _, vt = body.partition(" payload: ")
        key = kt.encode("utf-8", "surrogateescape")
        value = None if vt is None else vt.encode("utf-8", "surrogateescape")
    elif rest.startswith("payload: "):
        value = rest[len("payload: "):].encode("utf-8", "surrogateescape")
    return key, value


def parse_dump_text(text: str, name: str = "<dump>", **kw) -> tuple[list[DumpBatch], DumpParser]:
    parser = DumpParser(text.splitlines(), name, **kw)
    return list(parser.batches()), parser


def looks_like_dump(head: bytes) -> bool:
    """True when a file's first bytes are kafka-dump-log text rather than segment bytes."""
    return head.startswith((b"Dumping ", b"Log starting offset:", b"Starting offset:", b"baseOffset: ", b"| offset: "))

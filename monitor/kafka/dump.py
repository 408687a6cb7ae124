"""Parse what ``kafka-dump-log.sh --files X --print-data-log`` (or ``--deep-iteration``) prints,
as Kafka 0.11 to 4.x print it and as people paste it.

Into the same model as the binary reader: batches with the v2 header's names and ``Record``
objects, so every consumer (inspect, the audit) takes either.

The line shapes come from Kafka's own ``DumpLogSegments`` (core/src/main/scala/kafka/tools/
DumpLogSegments.scala up to 3.9, tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java
from 4.0; the spellings below were read from tags 0.11.0.0 .. 3.8.0 and the 4.3 jar's constants):

* batch line, 2.0 .. 4.x: ``baseOffset: B lastOffset: L count: N baseSequence: .. lastSequence: ..
  producerId: .. producerEpoch: .. partitionLeaderEpoch: .. isTransactional: .. isControl: ..
  deleteHorizonMs: OptionalLong.empty position: P CreateTime: T size: S magic: 2 compresscodec: none
  crc: C isvalid: true``. ``count`` arrived in 2.0, ``isControl`` in 2.1, ``isvalid`` moved from
  before ``size`` to the end in 2.2, ``deleteHorizonMs`` arrived in 3.2; ``compresscodec`` is the
  enum's name (``GZIP``) before 3.0 and ``CompressionType.name`` (``gzip``) from 3.0.
  A magic 0/1 batch prints ``offset: L position: P ...`` instead.
* record line, 2.2 .. 4.x (``--print-data-log`` or ``--deep-iteration``, after its batch line):
  ``| offset: O CreateTime: T keySize: K valueSize: V sequence: S headerKeys: [a,b] key: .. payload: ..``;
  ``keysize``/``valuesize`` before 2.8; magic 0/1: ``crc: C isvalid: B`` (2.2 .. 2.7) or
  ``isValid: B crc: C}`` (3.0 .. 3.8, the stray brace is Kafka's) after the sizes. 2.8.x printed
  the batch's fields on every record line (``| offset: O isValid: B crc: null keySize: .. baseOffset:
  .. batchSize: .. compressType: .. position: P ...``). Control records: ``endTxnMarker: COMMIT
  coordinatorEpoch: E``, ``controlType: T(id)``, ``SnapshotHeader {...}``...
* record line, 0.11 .. 2.1 (deep iteration printed records *instead of* batch lines):
  ``offset: O position: P CreateTime: T isvalid: B keysize: K valuesize: V magic: M compresscodec: C
  producerId: .. [producerEpoch: .. (1.0+)] sequence: .. isTransactional: .. headerKeys: [..] key: ..``.
* ``--skip-record-metadata`` (2.8+): ``| key: K payload: V`` (or `` payload: V`` with a null key).
* ``Starting offset:`` (before 3.3) / ``Log starting offset:``; ``Found N invalid bytes at the end
  of F``; stderr lines often captured with ``2>&1``: ``Non-consecutive offsets in F`` (``in :F``
  before 2.3) and ``  A is followed by B``, ``Mismatches in :F``...

As pasted from terminals and tickets: shell prompt lines (``$ bin/kafka-dump-log.sh ...``,
``user@host:~$ ...``) and ``#`` comments are skipped, indentation is ignored, several ``Dumping``
sections follow each other, Markdown fences and e-mail quote marks (``> ``) around them, and record
lines may come without their batch line (``grep '| offset:'``, with grep's ``file:`` and ``-n`` prefixes):
such records get a batch made from what their own line says (``from_records``), every other batch
field unknown (None). ``Dumping`` sections of ``.index``, ``.timeindex``, ``.txnindex`` and
``.snapshot`` files hold no records: they are skipped and listed in ``skipped_sections``.

Payloads are printed raw, so a value holding a newline continues on the next line: such lines are
joined back while the text is shorter than ``valueSize``. Any other line is a problem reported with
its line number, never dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from monitor.fileio.excerpt import excerpt
from monitor.kafka.record.model import Record

FIELD = re.compile(r"(\w+): (\S+)")
# one ``name: value`` of a record line's metadata; headerKeys' list is one value
META_FIELD = re.compile(r"(\w+): (\[[^\]]*\]|\S*)(?: |$)")
CONTENT_FIELDS = {"key", "payload", "endTxnMarker", "controlType"}  # where a record line's metadata ends
TIMESTAMP_LABELS = {"CreateTime": "create", "LogAppendTime": "log_append", "NoTimestampType": "none"}
CODECS = {"none": "none", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd", "producer": "none"}
CONTROL = re.compile(r"^ endTxnMarker: (?P<type>\w+) coordinatorEpoch: (?P<epoch>-?\d+)")
# what a control record's line holds after its fields (4.3 DumpLogSegments.java's format strings)
CONTROL_CONTENT = ("endTxnMarker: ", "controlType: ", "SnapshotHeader ", "SnapshotFooter ", "KRaftVersion ",
                   "KRaftVoters ")
# Kafka's DumpLogSegments picks the dumper by the text after the last "."; these hold no records
INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex", ".snapshot")
# a shell prompt before a command: "$ ", "user@host:~/kafka$ ", "[user@host kafka]$ ", "bash-5.1# ",
# "(venv) user@host:~$ ", "user@mac ~ % " (zsh), "> " (a continued command)
PROMPT = re.compile(r"^(?:\([^()\s]*\) )?(?:\[[^\]]*\]|[\w.\-]+@[\w.\-]+(?::\S*?| \S+)?|[\w.\-]+)? ?[$#%>](?: |$)")
FENCE = ("```", "~~~")  # a Markdown code block around a dump pasted into a ticket
# what grep puts before a matching line: the file's name (several files) and/or the line number (-n)
GREP_PREFIX = re.compile(r"^(?:[^\s|:]+:)?(?:\d+[:-])?(?=\| offset: |baseOffset: |offset: )")
SET_ASIDE = (
    re.compile(r"^Non-consecutive offsets in "),
    re.compile(r"^\d+ is followed by \d+$"),
    re.compile(r"^offset: -?\d+ position: -?\d+$"),  # .index
    re.compile(r"^timestamp: -?\d+ offset: -?\d+$"),  # .timeindex
    re.compile(r"^version: \d+ producerId: "),  # .txnindex
    re.compile(r"^producerId: -?\d+ producerEpoch: "),  # .snapshot
    re.compile(r"^Found timestamp mismatch|^Found out of order timestamp|^Index timestamp: |^Mismatches in :"),
    re.compile(r"^Index offset: -?\d+, log offset: "),
    re.compile(r"^The following indexed offsets are not found|^Indexed offset: "),
    re.compile(r"^Snapshot end offset: |^KRaft bootstrap snapshot$"),
    re.compile(r"^Ignoring unknown file |.* is empty\.$|.* passed sanity check\.$"),
    # what the tool's JVM and its logging libraries print on stderr, pasted with 2>&1
    re.compile(r"^SLF4J: |^log4j:WARN |^OpenJDK 64-Bit Server VM warning: |^Picked up _?JAVA_TOOL_OPTIONS: "),
)
INVALID_BYTES = re.compile(r"^Found (\d+) invalid bytes at the end of (.*)$")


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


def _bool(v: str | None) -> bool | None:
    return None if v is None else v.lower() == "true"


def _int(v: str | None) -> int | None:
    """A printed number; None for a field not printed, or printed as ``null`` (2.8's v2 record crc)."""
    if v is None:
        return None
    try:
        return int(v)
    except ValueError:
        try:
            return int(v.rstrip("}"))  # 3.0 .. 3.8 print a legacy record's crc as "crc: 123}"
        except ValueError:
            return None


def _horizon(v: str | None) -> int | None:
    if not v or v.endswith(".empty") or v in ("-1", "None"):
        return None
    m = re.search(r"-?\d+", v)
    return int(m.group()) if m else None


def _ts_label(f: dict[str, str]) -> str | None:
    """Which timestamp label a line prints (the batch's TimestampType's toString)."""
    if "CreateTime" in f:
        return "CreateTime"
    return "LogAppendTime" if "LogAppendTime" in f else ("NoTimestampType" if "NoTimestampType" in f else None)


def _codec(v: str | None) -> str | None:
    if v is None:
        return None
    v = v.lower()
    return CODECS.get(v, v)


# the record line of 3.0 .. 4.x for magic 2, by far the most common: matched at once
RECORD_V2 = re.compile(r"offset: (-?\d+) (CreateTime|LogAppendTime|NoTimestampType): (-?\d+) keySize: (-?\d+) "
                       r"valueSize: (-?\d+) sequence: (-?\d+) headerKeys: (\[[^\]]*\])(?: |$)")


def record_fields(text: str) -> tuple[dict[str, str], str]:
    """A record line (without ``| ``) cut into its metadata fields and the rest: ``key: ..``,
    ``payload: ..`` or a control record's text. Fields are matched by name, in any order."""
    m = RECORD_V2.match(text)
    if m:
        o, label, ts, ks, vs, seq, hk = m.groups()
        f = {"offset": o, label: ts, "keySize": ks, "valueSize": vs, "sequence": seq, "headerKeys": hk}
        pos = m.end()
    else:
        f = {}
        pos = 0
    while True:
        m = META_FIELD.match(text, pos)
        if not m or m.group(1) in CONTENT_FIELDS:
            break
        f.setdefault(m.group(1), m.group(2))
        pos = m.end()
    return f, text[pos:]


def clean_line(raw: str) -> tuple[str, str]:
    """(kind, text) of one pasted line (without its line end): ``blank``, ``comment`` (also a Markdown
    fence), ``prompt`` or ``text`` (indentation, e-mail quote marks and grep's ``file:line:`` removed)."""
    line = raw.lstrip().lstrip("\ufeff")  # not the right: a payload may end in spaces. A BOM is no text
    if not line.strip():
        return "blank", ""
    while line.startswith(">"):  # an e-mail quote ("> | offset: ..."), else a continued command
        rest = line[1:].lstrip()
        if classify(rest) == "other" and not rest.startswith(">"):
            break
        line = rest
    m = GREP_PREFIX.match(line)
    if m and m.end():
        line = line[m.end():]
    if line.startswith(FENCE):
        return "comment", line
    if line.startswith("#") and not PROMPT.match(line):
        return "comment", line
    m = PROMPT.match(line)
    if m:
        # "# comment" and "# cmd" (a root prompt) both match: skipped either way
        return ("comment" if line.startswith("# ") else "prompt"), line
    return "text", line


def classify(line: str) -> str:
    """What a cleaned line is: ``section``, ``start``, ``batch``, ``legacy_batch``, ``record``,
    ``bare_record`` (``--skip-record-metadata``), ``invalid_bytes``, ``set_aside`` or ``other``."""
    if line.startswith("Dumping "):
        return "section"
    if line.startswith(("Log starting offset:", "Starting offset:")):
        return "start"
    if line.startswith("baseOffset: "):
        return "batch"
    if line.startswith("| ") or line == "|":
        return "record"
    if line.startswith("offset: "):
        f, _ = record_fields(line)
        if "size" in f and "position" in f:
            return "legacy_batch"
        if "keysize" in f or "keySize" in f:
            return "record"  # 0.11 .. 2.1 deep iteration: no "| ", no batch line
    if line.startswith(("key: ", "payload: ")):
        return "bare_record"
    if INVALID_BYTES.match(line):
        return "invalid_bytes"
    if any(p.match(line) for p in SET_ASIDE):
        return "set_aside"
    return "other"


# (not ``bare_record``: ``key: x`` starts many a text; a --skip-record-metadata dump has its "Dumping")
DUMP_KINDS = {"section", "start", "batch", "legacy_batch", "record", "invalid_bytes"}


def is_dump_line(raw: str) -> bool:
    """True for a line only kafka-dump-log prints (not a blank, comment, prompt or stray line)."""
    kind, line = clean_line(raw)
    return kind == "text" and classify(line) in DUMP_KINDS


class DumpParser:
    """Stream batches out of dump text lines. ``problems`` lists every line not understood,
    ``skipped_sections`` the index sections passed over (file, line), ``set_aside`` counts lines known
    and without records (stderr lines, index entries), ``skipped_lines`` prompts and comments."""

    def __init__(self, lines: Iterable[str], name: str = "<dump>", *, strict: bool = False):
        self._lines = lines
        self.name = name
        self.strict = strict
        self.problems: list[DumpProblem] = []
        self.set_aside = 0
        self.skipped_lines = 0
        self.skipped_sections: list[tuple[str, int]] = []
        self.batchless_records = 0
        self.files: list[str] = []
        self.invalid_bytes: dict[str, int] = {}

    def _problem(self, no: int, text: str, reason: str) -> None:
        if self.strict:
            raise DumpFormatError(self.name, no, f"{reason}: {excerpt(text)}")
        self.problems.append(DumpProblem(no, text, reason))

    def batches(self) -> Iterator[DumpBatch]:
        current: DumpBatch | None = None
        file = self.name
        index_section = False
        last_rec: DumpRecord | None = None
        pending = 0  # payload bytes still expected on continuation lines
        for no, raw in enumerate(self._lines, start=1):
            raw = raw.rstrip("\r\n")
            if pending > 0 and last_rec is not None and not _looks_structural(raw):
                text = "\n" + raw
                last_rec._value = (last_rec._value or b"") + text.encode("utf-8", "surrogateescape")
                pending -= len(text.encode("utf-8", "surrogateescape"))
                continue
            pending = 0
            if raw.startswith("| offset: "):  # most lines: no need to look for prompts or indentation
                line, what = raw, "record"
            else:
                kind, line = clean_line(raw)
                if kind != "text":
                    self.skipped_lines += kind != "blank"
                    continue
                what = classify(line)
            if what == "section":
                if current is not None:
                    yield current
                    current = None
                last_rec = None
                file = line[len("Dumping "):].strip()
                self.files.append(file)
                index_section = file[file.rfind("."):] in INDEX_SUFFIXES
                if index_section:
                    self.skipped_sections.append((file, no))
                continue
            if index_section:
                if what in ("set_aside", "invalid_bytes"):
                    self.set_aside += 1
                else:
                    self._problem(no, line, f"not an index entry, in the index section of {file}")
                continue
            if what == "start":
                continue
            if what in ("batch", "legacy_batch"):
                if current is not None:
                    yield current
                try:
                    current = self._batch(file, no, line)
                except (KeyError, ValueError) as exc:
                    current = None
                    self._problem(no, line, f"batch line missing or bad field {exc}")
                last_rec = None
                continue
            if what in ("record", "bare_record"):
                text = line[2:] if line.startswith("| ") else ("" if line == "|" else line)
                f, content = record_fields(text)
                if "offset" not in f and not content.startswith(("key: ", "payload: ")):
                    self._problem(no, line, "record line without offset, key or payload")
                    last_rec = None
                    continue
                if current is None or not _belongs(current, file, f, content):
                    if current is not None:
                        yield current
                    current = _batch_from_record(file, no, f, content)
                if current.from_records:
                    self.batchless_records += 1
                try:
                    last_rec, pending = self._record(current, f, content)
                except ValueError as exc:
                    self._problem(no, line, str(exc))
                    last_rec = None
                    continue
                current._records.append(last_rec)
                continue
            if what == "invalid_bytes":
                m = INVALID_BYTES.match(line)
                self.invalid_bytes[m.group(2).strip()] = int(m.group(1))
                self.set_aside += 1
                continue
            if what == "set_aside":
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
        count = f.get("count")
        return DumpBatch(
            file=file, line=no,
            base_offset=int(f["offset"] if legacy else f["baseOffset"]),
            last_offset=int(f["offset"] if legacy else f["lastOffset"]),
            records_count=int(count) if count is not None else (1 if legacy else None),
            position=int(f["position"]), size=int(f["size"]), magic=magic,
            compression=_codec(f.get("compresscodec", "none")),
            timestamp_type=TIMESTAMP_LABELS[ts_label] if ts_label else "none",
            max_timestamp=int(f[ts_label]) if ts_label else -1,
            crc=_int(f.get("crc")), is_valid=_bool(f.get("isvalid", "true")),
            producer_id=int(f.get("producerId", -1)), producer_epoch=int(f.get("producerEpoch", -1)),
            base_sequence=int(f.get("baseSequence", -1)), last_sequence=int(f.get("lastSequence", -1)),
            partition_leader_epoch=int(f.get("partitionLeaderEpoch", -1)),
            is_transactional=_bool(f.get("isTransactional", "false")),
            # not printed before 2.1: a v2 batch line alone cannot tell (its records' text can)
            is_control=_bool(f["isControl"]) if "isControl" in f else (False if magic < 2 else None),
            delete_horizon_ms=_horizon(f.get("deleteHorizonMs")),
        )

    def _record(self, batch: DumpBatch, f: dict[str, str], content: str) -> tuple[DumpRecord, int]:
        if "offset" not in f:  # --skip-record-metadata
            key, value = _split_key_payload(content, -2, -2)
            ks = -1 if key is None else len(key)
            vs = -1 if value is None else len(value)
            return DumpRecord(-1, -1, key, ks, vs, [], batch, value, -1), 0
        offset = _int(f["offset"])
        if offset is None:
            raise ValueError(f"record offset is not a number: {excerpt(f['offset'])}")
        ts_label = _ts_label(f)
        ts = _int(f[ts_label]) if ts_label else -1
        ks = _int(f["keySize"] if "keySize" in f else f.get("keysize"))
        vs = _int(f["valueSize"] if "valueSize" in f else f.get("valuesize"))
        ks = -2 if ks is None else ks
        vs = -2 if vs is None else vs
        seq = _int(f.get("sequence"))
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


def _belongs(batch: DumpBatch, file: str, f: dict[str, str], content: str) -> bool:
    """Whether a record line continues ``batch`` (else a batch of its own starts)."""
    if batch.file != file:
        return False
    if "offset" not in f:  # --skip-record-metadata: nothing to tell
        return True
    pos = _int(f.get("position"))
    if pos is not None and batch.position is not None and pos != batch.position:
        return False
    if not batch.from_records:
        off = _int(f["offset"])
        if batch.last_offset is not None and off is not None and off > batch.last_offset:
            return False  # grep output after a batch line: not this batch's
        if batch.magic == 2 and batch.base_offset is not None and off is not None and off < batch.base_offset:
            return False  # (a legacy wrapper's line prints its last offset only: no lower bound)
        return True
    return _record_batch_key(f, content) == batch._key


def _record_batch_key(f: dict[str, str], content: str) -> tuple:
    """What record lines without a batch line must share to be taken as one batch."""
    ts_label = _ts_label(f)
    return (f.get("position"), f.get("baseOffset"), ts_label, content.startswith(CONTROL_CONTENT),
            f.get("magic"), "sequence" in f)


def _batch_from_record(file: str, no: int, f: dict[str, str], content: str) -> DumpBatch:
    ts_label = next((k for k in TIMESTAMP_LABELS if k in f), None)
    control = content.startswith(CONTROL_CONTENT)
    magic = _int(f.get("magic"))
    if magic is None and ("sequence" in f or "headerKeys" in f):
        magic = 2  # printed for magic 2 only
    txn = _bool(f.get("isTransactional"))
    if txn is None and control and content.startswith("endTxnMarker: "):
        txn = True  # a transaction marker is written in a transactional batch only
    batch = DumpBatch(
        file=file, line=no,
        base_offset=_int(f.get("baseOffset")), last_offset=_int(f.get("lastOffset")), records_count=None,
        position=_int(f.get("position")), size=_int(f.get("batchSize")), magic=magic,
        compression=_codec(f.get("compresscodec", f.get("compressType"))),
        timestamp_type=TIMESTAMP_LABELS[ts_label] if ts_label else "none", max_timestamp=None,
        crc=None, is_valid=None,
        producer_id=_int(f.get("producerId")), producer_epoch=_int(f.get("producerEpoch")),
        base_sequence=_int(f.get("baseSequence")), last_sequence=_int(f.get("lastSequence")),
        partition_leader_epoch=_int(f.get("partitionLeaderEpoch")),
        is_transactional=txn, is_control=control,
        delete_horizon_ms=None, from_records=True,
    )
    batch._key = _record_batch_key(f, content)
    return batch


def _looks_structural(line: str) -> bool:
    line = line.lstrip()
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

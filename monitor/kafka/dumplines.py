"""The line grammar of ``kafka-dump-log.sh`` output: what kind each pasted line is, and the fields it prints.

Kept apart from the batch assembly (``monitor.kafka.dumpbatch``) and the streaming parser
(``monitor.kafka.dump``) because it is the part that follows Kafka's releases: a new spelling is one
pattern here. ``monitor.kafka.sniff`` also asks it whether a text is a dump at all (``is_dump_line``).

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

As pasted (``clean_line``): a shell prompt, a ``#`` comment or a Markdown fence is no dump line;
indentation, e-mail quote marks and grep's ``file:``/``-n`` prefixes are removed (``monitor.kafka.dump``
says what the parser does with each).
"""

from __future__ import annotations

import re

FIELD = re.compile(r"(\w+): (\S+)")
# one ``name: value`` of a record line's metadata; headerKeys' list is one value
META_FIELD = re.compile(r"(\w+): (\[[^\]]*\]|\S*)(?: |$)")
CONTENT_FIELDS = {"key", "payload", "endTxnMarker", "controlType"}  # where a record line's metadata ends
TIMESTAMP_LABELS = {"CreateTime": "create", "LogAppendTime": "log_append", "NoTimestampType": "none"}
CODECS = {"none": "none", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd", "producer": "none"}
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


def bool_field(v: str | None) -> bool | None:
    return None if v is None else v.lower() == "true"


def int_field(v: str | None) -> int | None:
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


def horizon_field(v: str | None) -> int | None:
    if not v or v.endswith(".empty") or v in ("-1", "None"):
        return None
    m = re.search(r"-?\d+", v)
    return int(m.group()) if m else None


def timestamp_label(f: dict[str, str]) -> str | None:
    """Which timestamp label a line prints (the batch's TimestampType's toString)."""
    if "CreateTime" in f:
        return "CreateTime"
    return "LogAppendTime" if "LogAppendTime" in f else ("NoTimestampType" if "NoTimestampType" in f else None)


def codec_name(v: str | None) -> str | None:
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


def looks_structural(line: str) -> bool:
    line = line.lstrip()
    return line.startswith(("| ", "baseOffset: ", "Dumping ", "Log starting offset:", "Starting offset:")) or (
        line.startswith("offset: ") and " position: " in line)


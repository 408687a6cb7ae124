"""Parse what ``kafka-dump-log.sh --files X --print-data-log`` (or ``--deep-iteration``) prints,
as Kafka 0.11 to 4.x print it and as people paste it.

Into the same model as the binary reader: batches with the v2 header's names and ``Record``
objects, so every consumer (inspect, the audit) takes either.

The line shapes (``monitor.kafka.dumplines``, from Kafka's own ``DumpLogSegments``) and the batches
and records made of them (``monitor.kafka.dumpbatch``) have their modules; this one streams a dump
through them, keeping count of every line it did not take.

As pasted from terminals and tickets: shell prompt lines (``$ bin/kafka-dump-log.sh ...``,
``user@host:~$ ...``) and ``#`` comments are skipped, indentation is ignored, several ``Dumping``
sections follow each other, Markdown fences and e-mail quote marks (``> ``) around them, and record
lines may come without their batch line (``grep '| offset:'``, with grep's ``file:`` and ``-n`` prefixes):
such records get a batch made from what their own line says (``from_records``), every other batch
field unknown (None). ``Dumping`` sections of ``.index``, ``.timeindex``, ``.txnindex`` and
``.snapshot`` files hold no records: they are skipped and listed in ``skipped_sections``.

Keys and payloads are printed raw, so a key or a value holding a line break continues on the next
line: such lines are joined back while the text is shorter than ``keySize`` (the key) or ``valueSize``
(the value) says. Any other line is a problem reported with its line number, never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from monitor.fileio.excerpt import excerpt
from monitor.kafka.dumpbatch import (DumpBatch, DumpRecord, batch_from_line, batch_from_record, belongs,
                                     key_cut_short, record_from_fields)
from monitor.kafka.dumplines import INDEX_SUFFIXES, INVALID_BYTES, classify, clean_line, looks_structural, record_fields


class DumpFormatError(ValueError):
    def __init__(self, file: str, line: int, reason: str):
        self.file, self.line, self.reason = file, line, reason
        super().__init__(f"{file}: line {line}: {reason}")


@dataclass
class DumpProblem:
    line: int
    text: str
    reason: str


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

    def _lines_joined(self) -> Iterator[tuple[int, str]]:
        """(line number, line) with a record line whose key holds line breaks joined back with the lines
        that continue it (``key_cut_short``), numbered as its first; a structural line ends the join
        (what was joined is then parsed as it is, its fault reported)."""
        held: tuple[int, str] | None = None
        for no, raw in enumerate(self._lines, start=1):
            raw = raw.rstrip("\r\n")
            if held is not None:
                if not looks_structural(raw):
                    held = (held[0], held[1] + "\n" + raw)
                    if not key_cut_short(*record_fields(held[1][2:])):
                        yield held
                        held = None
                    continue
                yield held
                held = None
            if raw.startswith("| offset: ") and " key: " in raw and key_cut_short(*record_fields(raw[2:])):
                held = (no, raw)
                continue
            yield no, raw
        if held is not None:
            yield held

    def batches(self) -> Iterator[DumpBatch]:
        current: DumpBatch | None = None
        file = self.name
        index_section = False
        last_rec: DumpRecord | None = None
        pending = 0  # payload bytes still expected on continuation lines
        for no, raw in self._lines_joined():
            if pending > 0 and last_rec is not None and not looks_structural(raw):
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
                    current = batch_from_line(file, no, line)
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
                if current is None or not belongs(current, file, f, content):
                    if current is not None:
                        yield current
                    current = batch_from_record(file, no, f, content)
                if current.from_records:
                    self.batchless_records += 1
                try:
                    last_rec, pending = record_from_fields(current, f, content)
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


def parse_dump_text(text: str, name: str = "<dump>", **kw) -> tuple[list[DumpBatch], DumpParser]:
    parser = DumpParser(text.splitlines(), name, **kw)
    return list(parser.batches()), parser

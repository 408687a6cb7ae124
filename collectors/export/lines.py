"""Per-partition series kept as their exposition lines, formatted once per change of the partition.

Why (issue 43, the served page at 20,000 partitions): the partitions area built every family's samples
(a ``Sample`` and a label dict each, some 400 bytes) for every partition before the page was encoded, and
the render kept them for the formats asked for later; every render formatted every partition's lines
again, changed or not. Here a partition's series are a ``PartitionLines``: its rows (what the series
are: name, labels beyond the partition's, value) and, per family, its lines as bytes, the partition's
label text (``{broker="..",cluster="..",partition="..",topic=".."}``) built once for all its families.
``LinesCache`` keeps them from one render to the next: a partition whose rows are the same as last time
(same series, same values as written) keeps its lines, and a changed one keeps those of its families whose
series are the same (an age that moved with the clock is formatted alone), so a render formats only what
changed (``formatted`` and ``formatted_lines`` count what it formatted).

The lines are the same in text 0.0.4 and OpenMetrics 1.0 for these families (gauges and counters, no
timestamp or exemplar, names that need no escaping: ``LineFamily.plain`` checks it), and byte for byte what
``prometheus_client`` writes for the same samples: labels sorted by name, escaped with its own functions,
values by its ``floatToGoString``. ``LineFamily.samples`` gives those samples, made when asked for (by
``prometheus_client``'s own encoders: another escaping or format, a test), never kept.
"""

from __future__ import annotations

import math
import threading

from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics import exposition as om
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

UNDERSCORES = om.UNDERSCORES


def label_value(v: str) -> str:
    """A label value as both formats write it (backslash, newline, double quote escaped)."""
    return v.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')


_LABEL_NAMES: dict[str, str] = {}


def label_name(k: str) -> str:
    n = _LABEL_NAMES.get(k)
    if n is None:
        n = _LABEL_NAMES[k] = om.escape_label_name(k, UNDERSCORES)
    return n


def label_text(pairs) -> str:
    """``{k="v",...}`` of ``(name, value)`` pairs, sorted by name as both encoders sort them; "" for none."""
    if not pairs:
        return ""
    return "{" + ",".join(f'{label_name(k)}="{label_value(v)}"' for k, v in sorted(pairs)) + "}"


def _same_value(a, b) -> bool:
    """Whether two values are written the same (``floatToGoString``): equal, with the sign of a zero, or
    both NaN."""
    if a == b:
        return a != 0 or math.copysign(1.0, a) == math.copysign(1.0, b)
    return a != a and b != b


def same_rows(old, rows) -> bool:
    """Whether two sequences of rows write the same lines."""
    if len(old) != len(rows):
        return False
    for (n1, e1, v1), (n2, e2, v2) in zip(old, rows):
        if n1 != n2 or e1 != e2 or not _same_value(v1, v2):
            return False
    return True


class PartitionLines:
    """One partition's series: ``rows`` ``(family, label values beyond the partition's in the family's own
    order, value)`` and ``lines`` family -> its lines (bytes), formatted from them."""

    __slots__ = ("base", "rows", "lines")

    def __init__(self, base: tuple, rows: tuple, lines: dict):
        self.base, self.rows, self.lines = base, rows, lines

    @property
    def topic(self) -> str:
        return self.base[2]


class LinesCache:
    """The partitions' ``PartitionLines`` of the last render, by (cluster, broker, topic, partition):
    ``get`` returns the kept one when its rows are the same, else formats them (``formatted`` += 1).
    ``sample_names``: family -> its samples' name (a counter's with ``_total``); ``extras``: family -> the
    names of its labels beyond the partition's (``cluster, broker, topic, partition``), in its own order."""

    BASE = ("cluster", "broker", "topic", "partition")

    def __init__(self, sample_names: dict, extras: dict):
        self.sample_names, self.extras = sample_names, extras
        self.formatted = 0  # partitions with a line formatted (a changed or new partition)
        self.formatted_lines = 0  # lines formatted (a partition keeps the lines of a family whose rows are the same)
        self._last: dict = {}
        self._next: dict = {}
        self._lock = threading.Lock()

    def begin(self) -> None:
        """A render starts: what it does not ask for is dropped at ``end``."""
        self._lock.acquire()
        self._next = {}

    def end(self) -> None:
        self._last, self._next = self._next, {}
        self._lock.release()

    def get(self, base: tuple, rows: tuple) -> PartitionLines:
        old = self._last.get(base)
        if old is not None and same_rows(old.rows, rows):
            pl = old
        else:
            self.formatted += 1
            pl = PartitionLines(base, rows, self._format(base, rows, old))
        self._next[base] = pl
        return pl

    def _format(self, base: tuple, rows: tuple, old: PartitionLines | None) -> dict:
        """Each family's lines of the partition: the old ones where its rows of that family are the same
        (a clock-dependent series, an age, changes alone), else formatted here."""
        by_family: dict[str, list] = {}
        for row in rows:
            by_family.setdefault(row[0], []).append(row)
        was: dict[str, list] = {}
        if old is not None:
            for row in old.rows:
                was.setdefault(row[0], []).append(row)
        pairs = tuple(zip(self.BASE, base))
        plain = None  # the partition's label text, shared by every family without extra labels
        out: dict[str, bytes] = {}
        for name, fam_rows in by_family.items():
            if name in was and same_rows(was[name], fam_rows):
                out[name] = old.lines[name]
                continue
            lines = []
            for _, extra, v in fam_rows:
                if extra:
                    labels = label_text(pairs + tuple(zip(self.extras[name], extra)))
                else:
                    labels = plain = plain if plain is not None else label_text(pairs)
                lines.append(f"{self.sample_names[name]}{labels} {floatToGoString(v)}\n")
            self.formatted_lines += len(lines)
            out[name] = "".join(lines).encode("utf-8")
        return out


class LineFamily(Metric):
    """A gauge or counter family of per-partition series held as ``PartitionLines`` (``entries``, in the
    page's order). ``key``: its name in the rows (the declared one, ``collectors.export.metrics``);
    ``samples`` makes its ``Sample``s when asked for; ``lines()`` gives its page lines."""

    def __init__(self, key: str, name: str, documentation: str, typ: str, labels: tuple, sample_name: str):
        super().__init__(name, documentation, typ)
        self.key, self.labelnames, self.sample_name = key, tuple(labels), sample_name
        self.entries: list[PartitionLines] = []

    @property
    def samples(self) -> list:
        key, labelnames = self.key, self.labelnames
        return [Sample(self.sample_name, dict(zip(labelnames, e.base + extra)), v)
                for e in self.entries for n, extra, v in e.rows if n == key]

    @samples.setter
    def samples(self, value) -> None:  # Metric.__init__ sets an empty list: the entries are the samples
        if value:
            raise TypeError("a LineFamily's samples are its entries")

    @property
    def plain(self) -> bool:
        """Whether its lines are both formats' (the name needs no escaping in either)."""
        n = self.sample_name
        return om.escape_metric_name(n, UNDERSCORES) == n \
            and om._escape(n, UNDERSCORES, om._is_legacy_labelname_rune) == n

    def keep_topics(self, keep) -> None:
        """Only the entries of the topics ``keep`` (a ``TopicFilter``) leaves in."""
        self.entries = [e for e in self.entries if keep(e.topic)]

    def lines(self):
        key = self.key
        return (e.lines[key] for e in self.entries)

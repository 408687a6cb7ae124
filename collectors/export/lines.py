"""Per-partition series kept as their exposition lines, formatted once per change of the partition.

Why (issue 43, the served page at 20,000 partitions): the partitions area built every family's samples
(a ``Sample`` and a label dict each, some 400 bytes) for every partition before the page was encoded, and
the render kept them for the formats asked for later; every render formatted every partition's lines
again, changed or not. Here a partition's series are a ``PartitionLines``: their ``Shape`` (what the
series are: family, labels beyond the partition's; one object shared by every partition with the same
series), their values, and one bytes object holding their lines, family after family, the partition's
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
from array import array

from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics import exposition as om
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

UNDERSCORES = om.UNDERSCORES


def label_value(v: str) -> str:
    """A label value as both formats write it (backslash, newline, double quote escaped)."""
    return v.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')


_LABEL_NAMES: dict[str, str] = {}  # the declared label names (collectors.export.metrics): a few dozen


def label_name(k: str) -> str:
    """A label name as both formats write it (escaped once a name)."""
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


def same_values(old, new) -> bool:
    """Whether two sequences of values are written the same."""
    return len(old) == len(new) and all(_same_value(a, b) for a, b in zip(old, new))


class Shape:
    """What a partition's series are, without their values: ``rows`` ``(family, label values beyond the
    partition's)`` in order, ``families`` in the order of their first row, ``of`` family -> its rows'
    indexes. One object for every partition with the same series (``LinesCache`` interns them)."""

    __slots__ = ("rows", "families", "index", "of")

    def __init__(self, rows: tuple):
        self.rows = rows
        of: dict[str, list] = {}
        for i, (name, _) in enumerate(rows):
            of.setdefault(name, []).append(i)
        self.families = tuple(of)
        self.index = {n: i for i, n in enumerate(self.families)}
        self.of = {n: tuple(ix) for n, ix in of.items()}

    def family_rows(self, name: str) -> tuple:
        return tuple(self.rows[i] for i in self.of.get(name, ()))


class PartitionLines:
    """One partition's series: its labels ``base`` (cluster, broker, topic, partition), ``shape`` (what the
    series are), ``values`` (one per row) and ``text``, the lines of each family of ``shape.families`` in
    that order, the one ending at ``ends[i]``: one bytes object a partition, not one per family or sample.
    A line is kept without its sample name (``{labels} value``): ``LineFamily.lines`` writes it before."""

    __slots__ = ("base", "shape", "values", "text", "ends")

    def __init__(self, base: tuple, shape: Shape, values: tuple, text: bytes, ends: array):
        self.base, self.shape, self.values, self.text, self.ends = base, shape, values, text, ends

    @property
    def topic(self) -> str:
        return self.base[2]

    def lines(self, name: str) -> bytes:
        """The family's lines of this partition (b"" when it has none)."""
        i = self.shape.index.get(name)
        if i is None:
            return b""
        return self.text[self.ends[i - 1] if i else 0:self.ends[i]]

    def family_values(self, name: str) -> tuple:
        return tuple(self.values[i] for i in self.shape.of.get(name, ()))


class LinesCache:
    """The partitions' ``PartitionLines`` of the last render, by (cluster, broker, topic, partition):
    ``get`` returns the kept one when its rows are the same, else formats them (``formatted`` += 1).
    ``extras``: family -> the names of its labels beyond the partition's (``cluster, broker, topic,
    partition``), in its own order."""

    BASE = ("cluster", "broker", "topic", "partition")
    MAX_SHAPES = 10_000  # distinct shapes kept (a few hundred in practice: causes x reasons x families)

    def __init__(self, extras: dict):
        self.extras = extras
        self.formatted = 0  # partitions with a line formatted (a changed or new partition)
        self.formatted_lines = 0  # lines formatted (a partition keeps the lines of a family whose rows are the same)
        self._last: dict = {}
        self._next: dict = {}
        self._shapes: dict = {}
        self._lock = threading.Lock()

    def begin(self) -> None:
        """A render starts: what it does not ask for is dropped at ``end``."""
        self._lock.acquire()
        self._next = {}

    def end(self) -> None:
        self._last, self._next = self._next, {}
        self._lock.release()

    def get(self, base: tuple, rows) -> PartitionLines:
        """The partition's lines for ``rows`` ``(family, extra label values, value)``."""
        key = tuple((n, e) for n, e, _ in rows)
        shape = self._shapes.get(key)
        if shape is None:
            if len(self._shapes) >= self.MAX_SHAPES:
                self._shapes.clear()
            shape = self._shapes[key] = Shape(key)
        values = tuple(v for _, _, v in rows)
        old = self._last.get(base)
        if old is not None and (old.shape is shape or old.shape.rows == shape.rows) \
                and same_values(old.values, values):
            pl = old
        else:
            self.formatted += 1
            pl = self._format(base, shape, values, old)
        self._next[base] = pl
        return pl

    def keep(self, base: tuple, pl: PartitionLines) -> bool:
        """The partition's lines of the last render kept as they are, when ``pl`` is them (its caller knows its
        rows are the same: ``collectors.export.partitions``, for a report unchanged); False: call ``get``."""
        if self._last.get(base) is not pl:
            return False
        self._next[base] = pl
        return True

    def _format(self, base: tuple, shape: Shape, values: tuple, old: PartitionLines | None) -> PartitionLines:
        """Each family's lines of the partition: the old ones where its rows of that family are the same
        (a clock-dependent series, an age, changes alone), else formatted here."""
        pairs = tuple(zip(self.BASE, base))
        plain = None  # the partition's label text, shared by every family without extra labels
        chunks, ends, at = [], array("I"), 0
        same_shape = old is not None and old.shape is shape  # (interned: the same series, row for row)
        for name in shape.families:
            idx = shape.of[name]
            if same_shape:
                kept = all(_same_value(old.values[i], values[i]) for i in idx)
            else:
                kept = old is not None and name in old.shape.index \
                    and old.shape.family_rows(name) == shape.family_rows(name) \
                    and same_values(old.family_values(name), tuple(values[i] for i in idx))
            if kept:
                chunk = old.lines(name)
            else:
                lines = []
                for i in idx:
                    v = values[i]
                    extra = shape.rows[i][1]
                    if extra:
                        labels = label_text(pairs + tuple(zip(self.extras[name], extra)))
                    else:
                        labels = plain = plain if plain is not None else label_text(pairs)
                    lines.append(f"{labels} {floatToGoString(v)}\n")
                self.formatted_lines += len(lines)
                chunk = "".join(lines).encode("utf-8")
            chunks.append(chunk)
            at += len(chunk)
            ends.append(at)
        return PartitionLines(base, shape, values, b"".join(chunks), ends)


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
        return [Sample(self.sample_name, dict(zip(labelnames, e.base + e.shape.rows[i][1])), e.values[i])
                for e in self.entries for i in e.shape.of.get(key, ())]

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
        """Its lines, partition after partition: the sample name is not kept in them (half a line's bytes;
        every line of a family has it) but put before each as they are written."""
        key, name = self.key, self.sample_name.encode("utf-8")
        between = b"\n" + name
        for e in self.entries:
            kept = e.lines(key)  # '{labels} value\n' per line: a label value has no newline (escaped)
            yield name + kept[:-1].replace(b"\n", between) + b"\n"

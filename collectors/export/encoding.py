"""The two wire formats Prometheus asks for (text 0.0.4 and OpenMetrics 1.0, ``underscores`` escaping),
encoded byte for byte as ``prometheus_client`` encodes them, several times faster.

Why: the exposition is encoded in the collector's own process, under the GIL its scrapes need.
``prometheus_client``'s OpenMetrics encoder escapes every sample's name character by character; at
5,000 partitions in every detail (about 200,000 samples) that is over 9 s of CPU per render, during
which 200 concurrent scrapes wait for the interpreter. Here each distinct name, label set and help
text is escaped once per encoding, with ``prometheus_client``'s own escaping functions.

Only the shapes the collector's families have are encoded here (gauges and counters, no timestamp,
exemplar, unit or native histogram); any other family, and any other format or escaping, is encoded by
``prometheus_client`` itself (``fast`` returns its encoder). A test compares both byte for byte.
"""

from __future__ import annotations

from functools import partial

from prometheus_client import exposition as text_exposition
from prometheus_client.openmetrics import exposition as om
from prometheus_client.utils import floatToGoString

from collectors.export.lines import LineFamily, label_name, label_value

UNDERSCORES = om.UNDERSCORES
_KINDS = ("gauge", "counter")


def _labels_cache():
    sets: dict = {}

    def labelstr(labels: dict) -> str:
        if not labels:
            return ""
        key = tuple(labels.items())
        s = sets.get(key)
        if s is None:
            parts = []
            for k, v in sorted(labels.items()):
                parts.append(f'{label_name(k)}="{label_value(v)}"')
            s = sets[key] = "{" + ",".join(parts) + "}"
        return s

    return labelstr


class _Format:
    """What differs between the two formats; the walk over families and samples is ``_encode``'s."""

    def __init__(self, fallback, family_name, doc, sample_name, value, end=""):
        self.fallback = fallback  # prometheus_client's own encoder, for a page this module does not encode
        self.family_name = family_name  # metric -> its name in HELP and TYPE (escaped)
        self.doc = doc  # help text -> escaped
        self.sample_name = sample_name  # (metric, sample name) -> escaped
        self.value = value  # sample value -> text
        self.end = end  # what ends the page


def _text_sample_name(metric, name: str) -> str:
    return om.escape_metric_name(name, UNDERSCORES)


TEXT = _Format(
    fallback=text_exposition.generate_latest,
    family_name=lambda m: om.escape_metric_name(m.name + "_total" if m.type == "counter" else m.name, UNDERSCORES),
    doc=lambda d: d.replace("\\", r"\\").replace("\n", r"\n"),
    sample_name=_text_sample_name,
    value=floatToGoString,
)
OPENMETRICS = _Format(
    fallback=om.generate_latest,
    family_name=lambda m: om.escape_metric_name(m.name, UNDERSCORES),
    doc=lambda d: om._escape(d, om.ALLOWUTF8, None),
    sample_name=lambda m, n: om._escape(n, UNDERSCORES, om._is_legacy_labelname_rune),
    value=lambda v: floatToGoString(v) if v is not None else "",
    end="# EOF\n",
)


def encode_text(registry) -> bytes:
    """``prometheus_client.exposition.generate_latest(registry)`` for the collector's families (as a
    bytearray when written here: a page of tens of MB is not copied into a bytes object)."""
    return _encode_registry(TEXT, registry)


def encode_openmetrics(registry) -> bytes:
    """``prometheus_client.openmetrics.exposition.generate_latest(registry)`` for the collector's families."""
    return _encode_registry(OPENMETRICS, registry)


def _encode_registry(fmt: _Format, registry) -> bytes:
    families = list(registry.collect())
    if not _ours(families):
        return fmt.fallback(_Fixed(families))
    return _encode(fmt, families)


def pieces(encoder, registry):
    """The page ``encoder`` (one ``fast`` returns) writes for ``registry``, in pieces as they are written:
    this module's formats family by family (a gzip of it never holds the plain page), any other whole."""
    fmt = _FORMATS.get(encoder)
    if fmt is None:
        return iter((encoder(registry),))
    families = list(registry.collect())
    if not _ours(families):
        return iter((fmt.fallback(_Fixed(families)),))
    return _pieces(fmt, families)


def _ours(families) -> bool:
    """Whether this module writes these families (else prometheus_client writes the whole page)."""
    for metric in families:
        if metric.type not in _KINDS or metric.unit:
            return False
        if isinstance(metric, LineFamily):
            if not metric.plain:
                return False
            continue
        for s in metric.samples:
            if s.timestamp is not None or s.exemplar is not None or s.native_histogram is not None \
                    or s.name in (metric.name + "_created", metric.name + "_gsum", metric.name + "_gcount"):
                return False
    return True


def _encode(fmt: _Format, families) -> bytearray:
    """The page in one buffer (a bytearray: no copy of a page that may be tens of MB; bytes-like wherever the
    page goes: the server's socket, gzip, a comparison with bytes)."""
    out = bytearray()
    for piece in _pieces(fmt, families):
        out += piece
    return out


def _pieces(fmt: _Format, families):
    """The page, written family by family as the families come (``_ours`` checked them): a ``LineFamily``'s
    lines as they are kept (``collectors.export.lines``), another family's samples formatted here."""
    labelstr = _labels_cache()
    for metric in families:
        name = fmt.family_name(metric)
        head = f"# HELP {name} {fmt.doc(metric.documentation)}\n# TYPE {name} {metric.type}\n"
        if isinstance(metric, LineFamily):
            yield head.encode("utf-8")
            yield from metric.lines()
            continue
        lines = [head]
        sample_names: dict = {}
        for s in metric.samples:
            n = sample_names.get(s.name)
            if n is None:
                n = sample_names[s.name] = fmt.sample_name(metric, s.name)
            lines.append(f"{n}{labelstr(s.labels)} {fmt.value(s.value)}\n")
        yield "".join(lines).encode("utf-8")
    yield fmt.end.encode("utf-8")


class _Fixed:
    def __init__(self, families):
        self.families = families

    def collect(self):
        return iter(self.families)


_FORMATS = {encode_text: TEXT, encode_openmetrics: OPENMETRICS}


def fast(encoder):
    """The fast equivalent of an encoder ``choose_encoder`` picked, or that encoder when there is none."""
    if encoder is text_exposition.generate_latest:
        return encode_text
    if isinstance(encoder, partial) and not encoder.args \
            and encoder.keywords.get("escaping", UNDERSCORES) == UNDERSCORES:
        if encoder.func is text_exposition.generate_latest:
            return encode_text
        if encoder.func is om.generate_latest:  # the version changes native histograms only: none here
            return encode_openmetrics
    return encoder

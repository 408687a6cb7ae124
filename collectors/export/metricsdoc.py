"""The metrics reference page's list (``docs/reference/metrics.md``), generated from the registry (``collectors/export/metrics.py``), so that each
metric's meaning is stated once: in its help, which Prometheus shows too. Its unit is read from its name, as
Prometheus' naming conventions put it there (``unit``): a unit the name does not say is a unit no one can rely on.

``python -m collectors.export.metricsdoc`` prints the table; ``--write docs/reference/metrics.md`` replaces the table between
the two markers in place (``python -m cli.docgen --write`` regenerates every reference page). ``tests/test_layout.py``
and ``tests/docs/test_reference_pages.py`` fail when the page's table is not this one (and rewrite it with
``DOCS_UPDATE=1``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from collectors.export.metrics import METRICS, stability

BEGIN = ("<!-- the metrics table: generated from collectors/export/metrics.py "
         "(python -m collectors.export.metricsdoc --write docs/reference/metrics.md) -->")
END = "<!-- end of the generated metrics table -->"


def exported_name(name: str, kind: str) -> str:
    """The name Prometheus sees: prometheus_client adds ``_total`` to a counter's samples."""
    return name + ("_total" if kind == "counter" else "")


# The unit a name's suffix states (Prometheus' naming conventions: base units, the unit last, ``_total`` after it
# on a counter), the longest suffix first: ``_timestamp_seconds`` is a point in time, not a duration.
UNIT_SUFFIXES = (
    ("_timestamp_seconds", "Unix time (s)"),
    ("_bytes_per_second", "bytes/s"),
    ("_seconds", "seconds"),
    ("_bytes", "bytes"),
    ("_ratio", "ratio (0..1)"),
    ("_load_factor", "ratio (0..1)"),
    ("_records", "records"),
    ("_offset", "offset"),
    ("_info", "info (1; the labels say)"),
    ("_up", "1 up / 0 down"),
)
# A gauge whose name states no unit is a flag when its help says what 1 means ("1 when ...", "log.cleaner.enable:
# 1 when ...", "1 for each ..."), else a count of what its name ends with (threads, partitions, tombstones).
FLAG_HELP = re.compile(r"^(?:[\w.]+: )?1 (?:when|while|for)\b")


def unit(name: str, kind: str, help_: str) -> str:
    """The unit of a metric's samples, from its exported name (``exported_name``): a counter's is the unit before
    ``_total`` (``..._bytes_total``: bytes), else a count of events."""
    base = name[:-len("_total")] if kind == "counter" and name.endswith("_total") else name
    for suffix, word in UNIT_SUFFIXES:
        if base.endswith(suffix):
            return word
    if kind != "counter" and FLAG_HELP.match(help_):
        return "1 / 0 (flag)"
    return "count"


def markdown_table() -> str:
    """One entry per metric, in the registry's order: its name as the term, then its type, unit, labels and
    stability (``stable``: name, type and labels change only through a deprecation cycle), and its help. A
    definition list (mkdocs' def_list), not a table: a five-column table squeezed the names letter by letter
    and pushed the meaning off a laptop's window; a name as the term keeps its full width, the meaning below
    it has the page's."""
    out = []
    for name, (kind, help_, labels) in METRICS.items():
        shown = exported_name(name, kind)
        out += [entry(shown, kind, unit(shown, kind, help_), labels, help_, stability(name)), ""]
    return "\n".join(out)


def entry(shown: str, kind: str, unit_: str, labels, help_: str, stability_: str) -> str:
    """One metric's entry of the page."""
    return f"`{shown}`\n:   *{kind}, {unit_}; labels: {', '.join(labels) or 'none'}; {stability_}.* {help_}"


def with_table(readme: str, where: str = "docs/reference/metrics.md") -> str:
    """``readme`` with the text between the markers replaced by the generated table; a ValueError
    naming the file when either marker is missing or they are out of order."""
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{where}: the markers of the generated metrics table are missing ({BEGIN} ... {END})")
    return readme[:start] + BEGIN + "\n" + markdown_table() + readme[end:]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--write"] and len(argv) == 2:
        path = Path(argv[1])
        path.write_text(with_table(path.read_text(), str(path)))
        return 0
    if argv:
        print("usage: python -m collectors.export.metricsdoc [--write docs/reference/metrics.md]", file=sys.stderr)
        return 2
    sys.stdout.write(markdown_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

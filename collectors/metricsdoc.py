"""The metrics reference page's table (``docs/reference/metrics.md``), generated from the registry (``collectors/metrics.py``), so that each
metric's meaning is stated once: in its help, which Prometheus shows too.

``python -m collectors.metricsdoc`` prints the table; ``--write docs/reference/metrics.md`` replaces the table between
the two markers in place. ``tests/test_layout.py`` fails when the page's table is not this one (and
rewrites it with ``DOCS_UPDATE=1``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from collectors.metrics import METRICS

BEGIN = ("<!-- the metrics table: generated from collectors/metrics.py "
         "(python -m collectors.metricsdoc --write docs/reference/metrics.md) -->")
END = "<!-- end of the generated metrics table -->"


def exported_name(name: str, kind: str) -> str:
    """The name Prometheus sees: prometheus_client adds ``_total`` to a counter's samples."""
    return name + ("_total" if kind == "counter" else "")


def markdown_table() -> str:
    """One row per metric, in the registry's order: name, type, labels, help."""
    rows = ["| metric | type | labels | meaning |", "|---|---|---|---|"]
    for name, (kind, help_, labels) in METRICS.items():
        cell = help_.replace("|", "\\|")
        rows.append(f"| `{exported_name(name, kind)}` | {kind} | {', '.join(labels)} | {cell} |")
    return "\n".join(rows) + "\n"


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
        print("usage: python -m collectors.metricsdoc [--write docs/reference/metrics.md]", file=sys.stderr)
        return 2
    sys.stdout.write(markdown_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

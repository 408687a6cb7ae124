"""pyproject.toml's dependencies as the tests need them: the distributions of the core install or of an
extra (self-references such as ``all = ["kafka-compaction-monitor[audit,dashboard]"]`` resolved), and the
top-level modules those distributions install, read from the installed distributions' own records
(``importlib.metadata``), so that the tests compare imports with what pip really installs."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]["name"]


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _parse(requirement: str) -> tuple[str, list[str]]:
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", requirement)
    assert m, f"pyproject.toml: cannot read the requirement {requirement!r}"
    return normalize(m.group(1)), [e.strip() for e in (m.group(2) or "").split(",") if e.strip()]


def distributions(extra: str | None = None) -> set[str]:
    """The distributions pyproject.toml names for the core install (``extra`` None) or for ``extra`` alone
    (without the core's), self-referencing extras expanded."""
    if extra is None:
        reqs = PYPROJECT["project"]["dependencies"]
    else:
        reqs = PYPROJECT["project"]["optional-dependencies"][extra]
    out: set[str] = set()
    for req in reqs:
        name, extras = _parse(req)
        if name == normalize(PROJECT):
            for e in extras:
                out |= distributions(e)
        else:
            out.add(name)
    return out


def modules(dists: set[str]) -> set[str]:
    """The top-level modules the installed ``dists`` provide (each must be installed here)."""
    by_dist: dict[str, set[str]] = {}
    for module, names in importlib.metadata.packages_distributions().items():
        for d in names:
            by_dist.setdefault(normalize(d), set()).add(module)
    missing = sorted(d for d in dists if d not in by_dist)
    assert not missing, f"not installed in this venv, so their modules are unknown: {missing} (run ./dev setup)"
    return {m for d in dists for m in by_dist[d] if not m.startswith("_") and "." not in m}

"""Which subcommand needs which pip extra, and the one-line answer when it is not installed.

The core install (``pip install .`` in a clone of the project) is the collector and the file tools
(``inspect``, ``logdir``, ``explain``, ``config check``, ``rules render``); PySpark, pandas, pyarrow and
Streamlit come only with the extras of pyproject.toml. The distribution is not published on PyPI, so the
answer names what a user can run: the clone this code was installed from (an editable install, as
``./dev setup`` makes), else a clone or the wheel ``pip wheel --no-deps .`` builds in one (``install_command``). The import names below are those extras' distributions as Python imports
them (tests/cli/test_extras.py checks that they agree with pyproject.toml), looked up with
``importlib.util.find_spec``: nothing is imported before the subcommand runs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

DISTRIBUTION = "kafka-compaction-monitor"
SOURCE = Path(__file__).resolve().parent.parent  # a clone when installed editable; site-packages otherwise

# extra -> the top-level modules its requirements install (pyproject.toml [project.optional-dependencies])
EXTRAS: dict[str, tuple[str, ...]] = {
    "audit": ("pyspark", "pyarrow", "numpy", "pandas", "plotly"),
    "dashboard": ("streamlit", "plotly", "pandas", "pyarrow"),
}
EXTRAS["all"] = tuple(dict.fromkeys(m for extra in ("audit", "dashboard") for m in EXTRAS[extra]))

# subcommand -> the extra it needs; a subcommand not named here needs only the core install
SUBCOMMANDS: dict[str, str] = {
    "audit": "audit",
    "dashboard": "dashboard",
    "demo": "all",  # the demo runs the audit and serves the dashboard
}


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that this interpreter cannot import (by name; none is imported)."""
    return [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]


def check(command: str) -> str | None:
    """None when ``command`` can run here; else the one line that says which extra to install."""
    extra = SUBCOMMANDS.get(command)
    if extra is None:
        return None
    absent = missing(extra)
    if not absent:
        return None
    return f"{command} needs the [{extra}] extra ({', '.join(absent)} not installed): {install_command(extra)}"


def install_command(extra: str, source: Path = SOURCE) -> str:
    """What installs ``extra``: ``pip install -e 'CLONE[extra]'`` when this code runs from a clone (its
    pyproject.toml beside the packages: the path is known, so the command runs as printed); else the
    two forms a user without PyPI can run, from a clone or from the wheel built in one."""
    if (source / "pyproject.toml").is_file():
        return f"pip install -e '{source}[{extra}]'"
    wheel = DISTRIBUTION.replace("-", "_")
    return (f"from a clone of the project: pip install '.[{extra}]' (or, with the wheel `pip wheel --no-deps .` "
            f"builds there: pip install './{wheel}-<version>-<tags>.whl[{extra}]')")

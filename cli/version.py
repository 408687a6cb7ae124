"""``compaction-monitor --version``: the installed distribution's version (its metadata), else, run from
a checkout that was never installed (``python -m cli`` with the folder on ``PYTHONPATH``), the version
``pyproject.toml`` beside the packages says. Looked up only when asked: no other command pays for it."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from cli.extras import DISTRIBUTION

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:
        return checkout_version(PYPROJECT) or "unknown (not installed, and no pyproject.toml beside the packages)"


def checkout_version(pyproject: Path) -> str | None:
    """``[project] version`` of ``pyproject``, when it is this distribution's; None otherwise. (A line
    match, not a TOML parser: tomllib is Python 3.11's, and the file's two lines are all it needs.)"""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if project is None or not re.search(rf'^name\s*=\s*"{re.escape(DISTRIBUTION)}"', project.group(1), re.M):
        return None
    found = re.search(r'^version\s*=\s*"([^"]+)"', project.group(1), re.M)
    return found.group(1) if found else None


class VersionAction(argparse.Action):
    """``--version``: ``compaction-monitor 0.1.0`` on stdout, exit 0 (argparse's ``version`` action, with
    the version looked up when the flag is given, not whenever the parser is built)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"{parser.prog} {version()}\n")
        parser.exit(0)

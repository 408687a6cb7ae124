"""What every subcommand's handler shares: argparse with a one-line usage error (``cli.parsing``), and how
a message or a config's problems reach stderr (``compaction-monitor: ...``, exit code 2 for a usage or
config error).

Why apart from ``cli/main.py``: the handlers live in one module per command family (``broker_cmd``,
``render_cmd``, ``audit_cmd``, ``dashboard_cmd``, ``inspect_cmd``), all of which report the same way.
"""

from __future__ import annotations

import sys

from cli.parsing import Parser  # noqa: F401 - the handlers' modules take it from here


def err(msg: str) -> None:
    print(f"compaction-monitor: {msg}", file=sys.stderr)


def config_error(exc) -> int:
    """Every problem of a config, one a line; 2, the exit code of a usage or config error."""
    for line in exc.lines:
        err(f"config error: {line}")
    return 2

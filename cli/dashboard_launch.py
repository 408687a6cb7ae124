"""The one command that serves the Streamlit dashboard: ``compaction-monitor dashboard``
(``cli.dashboard_cmd``) and the demo (``cli.demo``) both run it.

Why a module of its own: the demo runs the dashboard, and ``dashboard_cmd`` runs the demo; with the
command in either of them each would import the other. Both import it from here, one way.
"""

from __future__ import annotations

import sys
from pathlib import Path

VIEWER = ["--client.toolbarMode", "viewer"]  # an SRE's dashboard: no "Deploy" button, no developer menu
ROOT = Path(__file__).resolve().parent.parent


def dashboard_command(port: int, address: str, log_level: str = "warning") -> list[str]:
    """The one command that serves the dashboard (``compaction-monitor dashboard`` and the demo). Streamlit
    logs at ``log_level`` (``--log-level``, whose default is warning for any command but a serving
    ``collect``): its info lines say nothing an operator acts on, and a log kept for days (the demo's
    dashboard.log) should hold what went wrong, not the server's chatter."""
    return [sys.executable, "-m", "streamlit", "run", str(ROOT / "dashboards" / "app.py"),
            "--server.port", str(port), "--server.address", address, "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--theme.base", "light", "--logger.level", log_level, *VIEWER]

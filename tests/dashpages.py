"""A dashboard page run headless (Streamlit's AppTest), as the dashboard tests open one: no
auto-refresh, and only the settings the test gives (every COMPACTION_MONITOR_* the page reads is
cleared first, so a developer's own environment cannot leak into a test)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

VIEWS = Path(__file__).resolve().parents[1] / "dashboards" / "views"
SETTINGS = ("CONFIG", "PROMETHEUS_URL", "COLLECTOR_URL", "AUDIT_DIR")  # COMPACTION_MONITOR_<name>


def page(name: str, monkeypatch, **env) -> AppTest:
    """The page ``dashboards/views/<name>.py`` run once, with ``env`` as its settings (``audit_dir=...``
    sets COMPACTION_MONITOR_AUDIT_DIR); it must run without an exception."""
    from streamlit.testing.v1 import AppTest  # here, not at the top: collecting the fast tier skips its 0.4 s

    monkeypatch.setenv("COMPACTION_MONITOR_NO_AUTOREFRESH", "1")
    for var in SETTINGS:
        monkeypatch.delenv(f"COMPACTION_MONITOR_{var}", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(f"COMPACTION_MONITOR_{k.upper()}", str(v))
    at = AppTest.from_file(str(VIEWS / f"{name}.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at

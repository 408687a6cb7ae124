"""The dashboard served by its own launch command (``cli.dashboard_launch.dashboard_command``) in headless Chromium
shows no Streamlit "Deploy" button; the same command without the viewer toolbar mode shows one on
this loopback address (Streamlit's "auto" mode is the developer's on localhost): so the check can fail."""

from __future__ import annotations

import pytest

from cli.dashboard_launch import dashboard_command
from procs import free_port, process
from tests_support_browser import browser
from waiting import wait_for

pytestmark = pytest.mark.slow  # two Streamlit servers and a browser

DEPLOY = "return Array.from(document.querySelectorAll('button')).filter(b => b.innerText.trim() === 'Deploy').length;"
MENU = "return document.querySelector('[data-testid=\"stMainMenu\"]') !== null;"
TITLE = "return (document.querySelector('h1') || {}).innerText || '';"


def deploy_buttons(cmd: list[str], log) -> int:
    port = int(cmd[cmd.index("--server.port") + 1])
    with process(cmd, log, f"http://127.0.0.1:{port}/_stcore/health", timeout=90,
                 env={"COMPACTION_MONITOR_NO_AUTOREFRESH": "1"}), browser() as d:
        d.get(f"http://127.0.0.1:{port}/audit")  # a page with a title whatever the sources
        wait_for(lambda: d.execute_script(TITLE), 60, "the dashboard's Audit page")
        # the Deploy button is drawn with the app's main menu, in the same header: wait for the menu
        wait_for(lambda: d.execute_script(MENU), 30, "Streamlit's main menu")
        return d.execute_script(DEPLOY)


def test_the_dashboard_has_no_deploy_button(tmp_path):
    cmd = dashboard_command(free_port(), "127.0.0.1")
    assert deploy_buttons(cmd, tmp_path / "viewer.log") == 0
    i = cmd.index("--client.toolbarMode")
    developer = cmd[:i] + cmd[i + 2:] + ["--client.toolbarMode", "auto"]
    developer[developer.index("--server.port") + 1] = str(free_port())
    assert deploy_buttons(developer, tmp_path / "auto.log") == 1

"""``./dev screenshots``' plumbing (tests/screenshots.py), without the demo: the files it writes are
the pages' and the widths' of the browser test, and ``./dev`` and CONTRIBUTING.md name the command."""

from __future__ import annotations

import re

import pytest

import screenshots
from tests_support_browser import PAGES, WIDTHS

ROOT = screenshots.ROOT


def test_it_writes_every_page_at_both_widths():
    assert sorted(screenshots.file_names()) == sorted(
        f"{page}-{width}.png" for page in ("overview", "brokers", "partitions", "tombstones", "config-review", "audit")
        for width in (1366, 1920))
    app = (ROOT / "dashboards" / "app.py").read_text()  # its pages: st.Page("views/FILE.py", title=...)
    assert [(p.path or "overview", p.title) for p in PAGES] == re.findall(r'"views" / "(\w+)\.py"\), title="([^"]+)"', app)
    assert WIDTHS == (1366, 1920)


def test_dev_runs_it_and_says_so():
    dev = (ROOT / "dev").read_text()
    assert re.search(r'^\s*screenshots\) setup; exec "\$VENV/bin/python" tests/screenshots\.py "\$@" ;;$', dev, re.M)
    assert "|screenshots" in next(line for line in dev.splitlines() if "usage: ./dev" in line)
    assert "./dev screenshots" in (ROOT / "CONTRIBUTING.md").read_text()


def test_its_help_names_the_command(capsys):
    with pytest.raises(SystemExit) as exit_:
        screenshots.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ./dev screenshots") and "--check" in out and "docs/screenshots" in out

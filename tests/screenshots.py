"""``./dev screenshots``: the documentation's screenshots, made from the running demo (issue #41, item 3)
so that they show today's pages. Starts ``compaction-monitor demo --fast`` in a scratch folder, waits
until every page has its data (the demo's audits are done: its Audit page compares two of them), opens
every page in headless Chromium at 1366 and 1920 pixels, writes docs/screenshots/PAGE-WIDTH.png, and
stops the demo and everything it started. ``--check`` also prints what the browser test would object to
on each page (tests/browsercheck.py).

Lives with the tests because it drives the browser as the browser test does, through the same page list
and the same visit (tests/tests_support_browser.py): one definition of what a page is and when it is
rendered. Usage: ``./dev screenshots [--out DIR] [--check]``."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # run as a script: the checkout's packages and test helpers

from browsercheck import log_problems, page_problems  # noqa: E402
from tests_support_browser import PAGES, WIDTHS, browser, screenshot, visit  # noqa: E402
from waiting import wait_for  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
DASHBOARD_LINE = re.compile(r"^\s*Dashboard\s+(http://\S+)", re.MULTILINE)
# cli/demo.py's lines once its audits are over, the second compared with the first or given up
AUDITS_OVER = ("the Audit page shows it per partition", "no second audit", "the second audit failed",
               "the first audit failed", "the audits stopped")


def file_names() -> list[str]:
    """The screenshots' file names, PAGE-WIDTH.png, in the order they are made."""
    return [f"{page.name}-{width}.png" for width in WIDTHS for page in PAGES]


def _log(log: Path, demo) -> str:
    text = log.read_text(errors="replace") if log.exists() else ""
    if demo.poll() is not None:
        raise RuntimeError(f"the demo exited with {demo.returncode}:\n{text[-3000:]}")
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="./dev screenshots", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=OUT, help=f"where the PNG files go (default: {OUT.relative_to(ROOT)})")
    p.add_argument("--check", action="store_true", help="also print the browser checks' problems, page by page")
    p.add_argument("--timeout", type=float, default=900, help="seconds to wait for the demo's audits (default: 900)")
    args = p.parse_args(argv)

    from localkafka import broker
    from localkafka.processes import spawn, stop

    work = Path(tempfile.mkdtemp(prefix="compaction-monitor-screenshots-"))
    log = work / "demo.log"
    os.chdir(ROOT)  # `python -m cli` of this checkout
    print(f"starting the demo in {work} (its log: {log}) ...", file=sys.stderr)
    demo = spawn([sys.executable, "-m", "cli", "demo", "--fast", "--dir", str(work / "demo")], log)
    problems: list[str] = []
    try:
        url = wait_for(lambda: DASHBOARD_LINE.search(_log(log, demo)), 600, "the demo's dashboard",
                       interval=1).group(1)
        print(f"dashboard at {url}; waiting for the demo's audits ...", file=sys.stderr)
        wait_for(lambda: any(line in _log(log, demo) for line in AUDITS_OVER), args.timeout,
                 "the end of the demo's audits", interval=2)
        total = 0
        with browser() as d:
            for width in WIDTHS:
                for page in PAGES:
                    visit(d, url, page, width)
                    shot = screenshot(d, args.out / f"{page.name}-{width}.png")
                    total += shot.stat().st_size
                    print(f"{shot} ({shot.stat().st_size // 1024} KiB)")
                    if args.check:
                        problems += page_problems(d, f"{page.title} ({width} px)")
        if args.check:
            problems += log_problems(work / "demo" / "run" / "dashboard.log")
            print("\n".join(problems) or "the browser checks found no problem")
        print(f"{len(PAGES) * len(WIDTHS)} screenshots, {total / 2**20:.1f} MiB in all, in {args.out}")
    finally:
        print("stopping the demo ...", file=sys.stderr)
        stop(demo, grace=120)  # the demo stops what it started, its broker last
        state = broker.read_state(work / "demo" / "broker")
        if state is not None and broker.is_alive(state.pid):  # killed before it could
            broker.stop(work / "demo" / "broker", progress=lambda *_: None)
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

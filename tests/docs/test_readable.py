"""The reference pages read on a laptop (1366 px, the site's navigation beside them, about 80 columns of
code): the command-line reference's code blocks (usage, examples) are no wider than the generator's width,
so none scrolls sideways; the metrics reference gives each metric's name a line of its own (a definition
list, not a five-column table that broke names letter by letter); the site's stylesheet keeps the names in
tables whole, and mkdocs.yml loads it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from cli import clidoc
from collectors.export.metrics import METRICS
from collectors.export.metricsdoc import exported_name

ROOT = Path(__file__).resolve().parents[2]


def code_lines(markdown: str) -> list[str]:
    return [ln for block in re.findall(r"^```text\n(.*?)^```", markdown, re.M | re.S) for ln in block.splitlines()]


def test_the_cli_reference_code_blocks_fit_a_laptop():
    lines = code_lines((ROOT / "docs" / "reference" / "cli.md").read_text())
    assert len(lines) > 100
    wide = [ln for ln in lines if len(ln) > clidoc.WIDTH]
    assert wide == [], wide
    assert clidoc.WIDTH <= 80


def test_a_long_usage_is_filled_with_short_continuations():
    import argparse

    p = argparse.ArgumentParser(prog="compaction-monitor some-long-subcommand-name")
    for i in range(12):
        p.add_argument(f"--option-number-{i}", metavar="VALUE", choices=None)
    lines = clidoc.usage(p)
    assert len(lines) > 2 and all(len(ln) <= clidoc.WIDTH for ln in lines), lines
    assert all(ln.startswith("    [--option") for ln in lines[1:]), lines  # an option and its argument together


def test_a_long_example_is_continued_as_a_shell_continues_it():
    text = "examples:\n  compaction-monitor explain --log-dir /var/lib/kafka/data --bootstrap-server localhost:9092 orders"
    lines = clidoc.wrapped(text)
    assert lines == ["examples:", "  compaction-monitor explain --log-dir /var/lib/kafka/data \\",
                     "      --bootstrap-server localhost:9092 orders"]


def test_each_metric_name_is_a_term_of_its_own():
    page = (ROOT / "docs" / "reference" / "metrics.md").read_text()
    for name, (kind, _help, _labels) in METRICS.items():
        assert re.search(rf"^`{exported_name(name, kind)}`\n:   ", page, re.M), name
    assert not re.search(r"^\| `kafka_compaction_", page, re.M)  # no metric table row left


def test_the_site_loads_the_stylesheet_that_keeps_names_whole():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    sheets = config.get("extra_css") or []
    assert sheets, "mkdocs.yml has no extra_css"
    css = "\n".join((ROOT / config.get("docs_dir", "docs") / s).read_text() for s in sheets)
    rules = dict(re.findall(r"([^{}]+)\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", css, flags=re.S)))
    cells = [body for sel, body in rules.items() if "td" in sel and "code" in sel]
    terms = [body for sel, body in rules.items() if "dt" in sel and "code" in sel]
    assert cells and all("white-space: nowrap" in b and "word-break: normal" in b for b in cells), rules
    assert terms and all("white-space: nowrap" in b for b in terms), rules

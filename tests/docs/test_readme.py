"""The README a user reads in five minutes, and the hand-written pages behind it (issue 33): the README stays
short and points at pages that exist; contributor set-up lives in CONTRIBUTING.md; no page is a stub; what the
pages state about the alerts and the version is what the code has. mkdocs checks links between the pages of
docs/ (tests/docs/test_site.py); this checks the README's, CONTRIBUTING's and every page's links to files,
which mkdocs does not see (a link out of docs/ fails its build, a link from the README it never reads)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_README_LINES = 220

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five".split())}


def _prose(text: str) -> str:
    """The text without code blocks and inline code: a `[x](y)` or a count inside code is no link or claim."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def relative_links(text: str) -> list[str]:
    """The link and image targets of a Markdown text that name a file of the repository (no URL, no bare
    anchor), each without its #anchor."""
    out = []
    for target in _LINK.findall(_prose(text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        out.append(target.split("#", 1)[0])
    return out


def broken_links(path: Path) -> list[str]:
    return [t for t in relative_links(path.read_text()) if not (path.parent / t).exists()]


def _pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _hand_written_pages() -> list[Path]:
    """The pages of mkdocs.yml's nav that are written by hand (docs/reference/ is generated)."""
    def walk(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for n in node:
                yield from walk(n)
        elif isinstance(node, dict):
            for v in node.values():
                yield from walk(v)

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    return [ROOT / "docs" / p for p in walk(nav) if not p.startswith("reference/")]


def _alerts() -> set[str]:
    from monitor.contract.rules import RULES

    return {r.alert for r in RULES}


def test_the_readme_is_short():
    lines = README.read_text().count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; keep it under {MAX_README_LINES} " \
                                      f"and move the detail to a page under docs/"


def test_every_relative_link_points_at_a_file_that_exists():
    for path in _pages():
        assert not broken_links(path), f"{path.relative_to(ROOT)}: links to nothing: {broken_links(path)}"


def test_the_link_check_can_fail(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("x")
    page.write_text("[a](there.md#top) ![b](gone.png) [c](https://example.com) [d](#anchor) `[e](f.md)`\n"
                    "```\n[g](h.md)\n```\n")
    assert broken_links(page) == ["gone.png"]


def test_the_readme_quick_start_and_its_links():
    text = README.read_text()
    for needed in ("./dev demo", "./dev test", "pip install .", "collect --bootstrap-server",
                   "kafka_exporter", "kminion", "Burrow"):
        assert needed in text, needed
    assert re.search(r"^(podman|docker) (build|run)", text, re.M), "a quick start with the container image"
    links = set(relative_links(text))
    assert "docs/screenshots/overview-1366.png" in links and "CONTRIBUTING.md" in links
    assert {"docs/getting-started.md", "docs/deployment.md", "docs/configuration.md", "docs/security.md",
            "docs/command-line.md", "docs/troubleshooting.md", "docs/architecture.md"} <= links


def test_contributor_set_up_is_in_contributing_not_the_readme():
    readme, contributing = README.read_text(), (ROOT / "CONTRIBUTING.md").read_text()
    for dev_only in ("TEST_SEED", '-m "not slow"', "conftest"):
        assert dev_only not in readme and dev_only in contributing, dev_only
    assert not re.findall(r"[\w/]+\.py\b", readme), "the README cites no source file: the pages say what it does"


def test_no_hand_written_page_is_a_stub():
    pages = _hand_written_pages()
    assert len(pages) >= 14, pages
    for page in pages:
        text = page.read_text()
        assert "(to be written)" not in text and text.count("\n") >= 20, f"{page.relative_to(ROOT)} is a stub"


def test_the_alerts_page_names_every_alert_of_the_rule_table():
    text = (ROOT / "docs" / "alerts.md").read_text()
    missing = sorted(a for a in _alerts() if not re.search(rf"\b{a}\b", text))
    assert not missing, f"docs/alerts.md does not say what these alerts watch: {missing}"


def test_a_count_of_alerts_in_the_pages_is_the_rule_tables():
    """A page that counts the alerts says as many as ship (the README once said thirteen while 19 shipped)."""
    n = len(_alerts())
    for path in _pages():
        for word in re.findall(r"\b([\w-]+) (?:alerts|alert rules)\b", _prose(path.read_text()), re.I):
            count = int(word) if word.isdigit() else _NUMBER_WORDS.get(word.lower())
            assert count in (None, n), f"{path.relative_to(ROOT)} says {word} alerts; the rule table has {n}"


def test_the_changelog_has_unreleased_and_this_version_with_the_renames():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text and f"## [{version}]" in text
    unreleased = text[text.index("## [Unreleased]"):text.index(f"## [{version}]")]
    for said in ("`check-config`", "`topics lint", "`--bootstrap-servers`", "--bootstrap-server HOST:PORT",
                 "--format text|json", "`--log-dir PATH`", "--version", "--log-level"):
        assert said in unreleased, said
    for path in _pages():
        assert f"since {version}" not in path.read_text(), \
            f"{path.relative_to(ROOT)}: changes since {version}, the current version, belong in the CHANGELOG"

"""Every command line the hand-written docs show parses with the real parser (issue 33): a page that says
``compaction-monitor explain --log-dir PATH`` is a page a user copies, so a flag renamed in the code and not
in the docs is a failed command in the user's terminal. This reads README.md, CONTRIBUTING.md and the
hand-written docs/*.md (docs/reference/ is generated from the parser itself), takes each
``compaction-monitor ...`` in a code block or inline code, and parses it (``cli.main.build_parser`` through
``cli.parsing.parse_args``; ``audit``'s flags through ``cli.audit_cmd.audit_parser``), running nothing.

It holds the docs to the names the help shows: a hidden alias (``--bootstrap-servers``, ``check-config``,
``--format table``) parses, but a page that teaches it teaches the old name, so it fails unless that page
line says it is the old name. A synopsis (``inspect PATH... [--format text|json]``) or a command cut short
(``audit --master spark://HOST:7077 ...``) is not a whole command: its subcommands, flags and choices are
checked to be shown ones. A failure names the page and line."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest

from cli.audit_cmd import audit_parser
from cli.parsing import subparsers

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = re.compile(r"^(?:\$\s+)?(?:\S*bin/)?compaction-monitor(?=\s|$)")
IMAGE = re.compile(r"^(?:\$\s+)?(?:podman|docker) run\b.*?\bkafka-compaction-monitor:\S+(?=\s|$)")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE = re.compile(r"`([^`\n]+)`")
SHELL_END = {"|", "||", "&&", ";", "&", ">", ">>", "<"}
# what a placeholder or a shell variable stands for, by the flag it is given to (a value of the right kind)
PLACEHOLDER_VALUES = {"--bootstrap-server": "localhost:9092", "--bootstrap-servers": "localhost:9092",
                      "--port": "9690", "--jmx-url": "http://localhost:7071/metrics",
                      "--jolokia-url": "http://localhost:8778/jolokia", "--prometheus-url": "http://localhost:9090"}
OLD_NAME = re.compile(r"old name|hidden alias|alias|0\.1\.0|still accepted", re.I)
HIDDEN_OK_SUBCOMMANDS = {"check-config"}


@dataclass(frozen=True)
class DocCommand:
    page: str
    line: int
    text: str  # the command as the page has it (continuations joined)
    source: str  # the page's line(s), for the "it says it is the old name" exception
    inline: bool = False  # in running text: `compaction-monitor audit` may name a subcommand, not run it

    def where(self) -> str:
        return f"{self.page}:{self.line}: {self.text.split('  #')[0].rstrip()}"


def hand_written_pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _command_text(snippet: str) -> str | None:
    """The arguments after the program of one shell line, or None when it runs no compaction-monitor (an
    output line such as ``compaction-monitor collect: error: ...`` is no command either)."""
    snippet = snippet.strip()
    m = PROGRAM.match(snippet) or IMAGE.match(snippet)
    if m is None:
        return None
    rest = snippet[m.end():].strip()
    first = rest.split(None, 1)[0] if rest else ""
    if first.endswith(":"):  # "compaction-monitor: config error: ..." / "compaction-monitor SUB: error"
        return None
    return rest


def doc_commands(text: str, page: str) -> list[DocCommand]:
    """Each ``compaction-monitor ...`` of a Markdown text: a line of a code block (with its ``\\``
    continuations), or an inline code span that starts with the program."""
    out: list[DocCommand] = []
    lines = text.splitlines()
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if FENCE.match(line):
            in_fence = not in_fence
            i += 1
            continue
        if in_fence:
            start, joined, source = i, line.rstrip(), line
            while joined.endswith("\\") and i + 1 < len(lines):
                i += 1
                joined = joined[:-1].rstrip() + " " + lines[i].strip()
                source += "\n" + lines[i]
            args = _command_text(joined)
            if args is not None:
                out.append(DocCommand(page, start + 1, args, source))
        else:
            for span in INLINE.findall(line):
                args = _command_text(span)
                if args:  # the program's name alone is no command
                    out.append(DocCommand(page, i + 1, args, line, inline=True))
        i += 1
    return out


# ---------------------------------------------------------------- the parsers


@lru_cache(maxsize=1)
def main_parser() -> argparse.ArgumentParser:
    from cli.main import build_parser

    return build_parser()


def _shown_flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {o: a for a in parser._actions if a.help is not argparse.SUPPRESS for o in a.option_strings}


def _all_flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {o: a for a in parser._actions for o in a.option_strings}


def _resolve(words: list[str]) -> tuple[list[list[str]], list[argparse.ArgumentParser], list[str]]:
    """The subcommand path of ``words`` (after the top-level options): each step's names (a synopsis may
    give ``start|stop``), the parsers they lead to, and the problems (unknown or hidden names)."""
    from cli.parsing import visible_choices

    parsers, path, problems = [main_parser()], [], []
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] == "--log-level" else 1
    while i < len(words):
        sub = subparsers(parsers[-1])
        if sub is None:
            break
        names = words[i].split("|")
        if any(n not in sub.choices for n in names):
            if re.fullmatch(r"[A-Z][A-Z_-]*", words[i]):  # SUBCOMMAND: a placeholder
                return path, [], problems
            problems.append(f"unknown subcommand {words[i]!r} (shown: {', '.join(visible_choices(sub))})")
            return path, [], problems
        hidden = [n for n in names if n not in visible_choices(sub)]
        if hidden:
            problems.append(f"{' '.join(hidden)} is a hidden alias; the help shows another name")
        path.append(names)
        if path == [["audit"]]:
            return path, [audit_parser()], problems
        parsers = [sub.choices[n] for n in names]
        i += 1
        if len(parsers) > 1:
            break
    return path, parsers, problems


def _flag_problems(words: list[str], parsers: list[argparse.ArgumentParser]) -> list[str]:
    """Each ``--flag`` of ``words`` a shown flag of one of ``parsers`` (or a top-level one), and each
    value of a flag with choices one of its shown choices (not an alias its type maps)."""
    shown = dict(_shown_flags(main_parser()))
    known = dict(_all_flags(main_parser()))
    for p in parsers:
        shown.update(_shown_flags(p))
        known.update(_all_flags(p))
    problems = []
    for i, word in enumerate(words):
        if not word.startswith("-") or word in ("-", "--") or re.match(r"-[A-Z]", word):  # TOPIC[-PARTITION]
            continue
        name, _, inline = word.partition("=")
        if name not in known:
            problems.append(f"{name}: no such flag")
        elif name not in shown:
            problems.append(f"{name} is a hidden alias; the help shows "
                            f"{', '.join(o for o, a in shown.items() if a.dest == known[name].dest) or 'none'}")
        action = known.get(name)
        value = inline or (words[i + 1] if i + 1 < len(words) else None)
        if action is not None and action.choices and value is not None and action.nargs is None:
            for v in value.split("|"):
                if v not in [str(c) for c in action.choices]:
                    problems.append(f"{name} {v}: not one of {', '.join(map(str, action.choices))}")
    return problems


def _placeholders(words: list[str]) -> list[str]:
    """Shell variables and HOST:PORT-like placeholders as a value of the kind their flag takes."""
    out = []
    for i, word in enumerate(words):
        flag = words[i - 1] if i else ""
        if ("$" in word or re.fullmatch(r"[A-Z][A-Z_]*(:[A-Z]+)?", word)) and flag in PLACEHOLDER_VALUES:
            word = PLACEHOLDER_VALUES[flag]
        elif "$" in word:
            word = re.sub(r"\$\{?\w+\}?", "x", word)
        out.append(word)
    return out


def _parse(words: list[str], path: list[list[str]]) -> str | None:
    """The usage error the real parser gives ``words``, or None when it takes them."""
    from cli.parsing import command_position, parse_args

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if path[:1] == [["audit"]]:
                at = command_position(words)
                main_parser().parse_args(words[: at + 1])  # the options before audit
                audit_parser().parse_args(words[at + 1:])
            else:
                parse_args(main_parser(), words)
    except SystemExit as exc:
        if exc.code not in (0, None):
            return err.getvalue().strip() or f"exit {exc.code}"
    return None


def is_synopsis(text: str, words: list[str]) -> bool:
    """A usage line or a command cut short: brackets, alternatives, ``PATH...`` or a trailing ``...``."""
    return bool(re.search(r"\[[^\]]*\]|\.\.\.", text)) or any("|" in w and not w.startswith(("'", '"'))
                                                              for w in text.split())


def command_problems(cmd: DocCommand) -> list[str]:
    """What is wrong with one doc command, as the page and line and the reason."""
    try:
        words = shlex.split(cmd.text, comments=True)
    except ValueError as exc:
        return [f"{cmd.where()}: cannot split as a shell line ({exc})"]
    cut = next((i for i, w in enumerate(words) if w in SHELL_END or re.match(r"\d?>", w)), len(words))
    words = words[:cut]
    synopsis = is_synopsis(cmd.text.split(" #")[0], words)
    if synopsis:
        words = [w for w in re.sub(r"[\[\]]", " ", " ".join(words)).split() if w != "..."]
        words = [w[:-3] if w.endswith("...") else w for w in words]
    path, parsers, problems = _resolve(words)
    if not parsers:  # SUBCOMMAND or an unknown one
        return [f"{cmd.where()}: {p}" for p in problems]
    problems += _flag_problems(words, parsers)
    named = cmd.inline and len(words) == len(path)  # nothing but the subcommand's name
    if not synopsis and not problems and not named:  # (`compaction-monitor audit` in a sentence names it)
        error = _parse(_placeholders(words), path)
        if error:
            problems.append(error)
    if OLD_NAME.search(cmd.source):  # the page says it shows the old name
        problems = [p for p in problems if "hidden alias" not in p]
    return [f"{cmd.where()}: {p}" for p in problems]


def all_doc_commands() -> list[DocCommand]:
    return [c for page in hand_written_pages()
            for c in doc_commands(page.read_text(), str(page.relative_to(ROOT)))]


# ---------------------------------------------------------------- the tests


def test_the_docs_show_commands():
    """The extraction finds the commands (a regex gone wrong would pass every page vacuously)."""
    found = all_doc_commands()
    assert len(found) >= 40, [c.where() for c in found]
    pages = {c.page for c in found}
    assert {"README.md", "docs/command-line.md", "docs/getting-started.md", "docs/audit.md"} <= pages, pages


def test_every_doc_command_parses():
    problems = [p for c in all_doc_commands() for p in command_problems(c)]
    assert not problems, "doc command lines the parser refuses or that use hidden names:\n" + "\n".join(problems)


@pytest.mark.parametrize("line, wanted", [
    ("compaction-monitor collect --bootstrap-servers kafka-1:9092", "--bootstrap-servers is a hidden alias"),
    ("compaction-monitor explain --log-dirs /data", "--log-dirs: no such flag"),
    ("compaction-monitor check-config --bootstrap-server kafka-1:9092", "check-config is a hidden alias"),
    ("compaction-monitor inspect /data/t-0 --format jsonl", "--format jsonl: not one of text, json"),
    ("compaction-monitor logdr /data", "unknown subcommand 'logdr'"),
    ("compaction-monitor collect --port 70000", "--port"),
    ("compaction-monitor audit --input /data", "--out"),
    ("compaction-monitor audit --inptu /data --out /x", "--inptu: no such flag"),
    ("compaction-monitor inspect PATH... [--format text|table]", "--format table: not one of"),
])
def test_a_wrong_command_fails_naming_page_and_line(line, wanted):
    page = f"Intro.\n\n```sh\n# a comment\n{line}\n```\n"
    found = doc_commands(page, "docs/x.md")
    assert len(found) == 1
    problems = command_problems(found[0])
    assert problems and problems[0].startswith(f"docs/x.md:5: {found[0].text}"), problems
    assert any(wanted in p for p in problems), problems


def test_what_is_read_as_a_command():
    text = ("Run `compaction-monitor explain --log-dir PATH` and see `compaction-monitor: config error: x`.\n"
            "```text\ncompaction-monitor collect: error: argument --port: ...\n```\n"
            "```sh\n$ .venv/bin/compaction-monitor logdir \\\n    --log-dir /data --format json | jq .\n"
            "podman run --rm kafka-compaction-monitor:0.1.0 \\\n  collect --bootstrap-server k:9092\n```\n")
    found = doc_commands(text, "p.md")
    assert [(c.line, c.text) for c in found] == [
        (1, "explain --log-dir PATH"), (6, "logdir --log-dir /data --format json | jq ."),
        (8, "collect --bootstrap-server k:9092")]
    assert all(not command_problems(c) for c in found), [command_problems(c) for c in found]


def test_a_page_that_names_the_old_name_may_show_it():
    text = "`compaction-monitor check-config` is the old name of `topics lint`, still accepted.\n"
    (cmd,) = doc_commands(text, "CHANGELOG.md")
    assert command_problems(cmd) == []

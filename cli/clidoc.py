"""The command-line reference (``docs/reference/cli.md``), generated from the parsers themselves: the command
line's (``cli.main.build_parser``) and the audit's own (``spark_analysis.job.build_parser``, which ``audit``
hands every argument to).

Why walk the parsers rather than write the page: a flag renamed, added or given a new default changes the
page at the next ``python -m cli.docgen --write``, and ``tests/docs/test_reference_pages.py`` fails until then.
Nothing here knows a subcommand or a flag by name: every subcommand ``--help`` lists, with its usage, its
description and epilog (the examples), and every argument with its help (as ``--help`` expands it) and its
default. What ``--help`` hides (``help=argparse.SUPPRESS``: the old spellings kept as aliases) is left out
here too. Usage lines are wrapped at a fixed width (``COLUMNS``), so the page does not depend on the terminal.
"""

from __future__ import annotations

import argparse
import os
import re
import textwrap
from contextlib import contextmanager

from cli.audit_cmd import audit_parser
from cli.parsing import subparsers

WIDTH = 100  # the width argparse wraps usage and help at while the page is generated


@contextmanager
def _columns(width: int = WIDTH):
    """argparse's formatters read the terminal's width (``shutil.get_terminal_size``, which honours
    ``COLUMNS``): fixed while the page is made, restored after."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _subcommands(parser: argparse.ArgumentParser):
    """(name, help, parser) of each subcommand ``--help`` lists, in its order; none for a parser without."""
    action = subparsers(parser)
    for choice in (action._choices_actions if action is not None else ()):
        if choice.help is not argparse.SUPPRESS:
            yield choice.dest, choice.help or "", action.choices[choice.dest]


def walk(parser: argparse.ArgumentParser, delegated: dict):
    """(parser, its help line) of ``parser`` and of every subcommand under it, depth first; a subcommand in
    ``delegated`` (name -> a function giving the parser that really reads its arguments) is that parser."""
    yield parser, parser.description or ""
    for name, help_, sub in _subcommands(parser):
        if name in delegated:
            sub = delegated[name]()
        for inner, line in walk(sub, {}):
            yield inner, (help_ if inner is sub else line)


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc gives a heading (its default ``slugify``)."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default(action: argparse.Action) -> str:
    """The default as the reader would type it; nothing for a switch, an empty list or no default."""
    d = action.default
    if d is None or d is argparse.SUPPRESS or isinstance(action, (argparse._StoreTrueAction,
                                                                  argparse._StoreFalseAction)):
        return ""
    if isinstance(d, (list, tuple)):
        return " ".join(map(str, d)) if d else ""
    return f"`{d}`"


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if action.help is argparse.SUPPRESS or isinstance(action, (argparse._SubParsersAction,
                                                                   argparse._HelpAction)):
            continue
        invocation = formatter._format_action_invocation(action)
        help_ = formatter._expand_help(action) if action.help else ""
        rows.append(f"| `{_cell(invocation)}` | {_default(action)} | {_cell(help_)} |")
    if not rows:
        return []
    return ["| argument | default | what it does |", "|---|---|---|", *rows, ""]


def _section(parser: argparse.ArgumentParser, line: str) -> list[str]:
    out = [f"## {parser.prog}", ""]
    if line:
        out += [_cell(line), ""]
    if parser.description and parser.description != line:
        out += [_cell(parser.description), ""]
    out += ["```text", parser.format_usage().rstrip(), "```", ""]
    if parser.epilog:
        out += ["```text", textwrap.dedent(parser.epilog).strip("\n"), "```", ""]
    out += _arguments(parser)
    subs = list(_subcommands(parser))
    if subs:
        out += ["| command | what it does |", "|---|---|"]
        out += [f"| [`{name}`](#{slug(f'{parser.prog} {name}')}) | {_cell(help_)} |" for name, help_, _ in subs]
        out.append("")
    return out


def markdown_page(parser: argparse.ArgumentParser | None = None, delegated: dict | None = None) -> str:
    """``docs/reference/cli.md``: a section per command and subcommand, from the parsers."""
    if parser is None:
        from cli.main import build_parser

        parser = build_parser()
    delegated = {"audit": audit_parser} if delegated is None else delegated
    lines = ["# Command-line reference", "",
             "<!-- generated from the parsers (cli/main.py, spark_analysis/job.py) by "
             "`python -m cli.docgen --write`: do not edit -->", "",
             "Every command, its usage and every argument with its default, generated from the command line's "
             "parsers. A test fails when this page and the parsers differ. Every command also takes "
             "`-h`/`--help`.", ""]
    with _columns():
        for sub, line in walk(parser, delegated):
            lines += _section(sub, line)
    return "\n".join(lines).rstrip("\n") + "\n"

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

# The width argparse wraps usage and help at while the page is generated, and the examples are wrapped at:
# a code block of 78 columns fits a laptop's window beside the site's navigation, with no sideways scroll.
WIDTH = 78


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


def usage(parser: argparse.ArgumentParser, width: int = WIDTH) -> list[str]:
    """argparse's usage, filled to ``width`` with the continuation lines indented four: argparse aligns
    them under the command's name, which leaves a long subcommand's options no room (past ``width``)."""
    text = " ".join(ln.strip() for ln in parser.format_usage().splitlines())
    parts, depth, cur = [], 0, ""
    for ch in text:  # split at spaces outside [...], (...) and {...}: an option and its argument stay together
        depth += (ch in "[({") - (ch in "])}")
        if ch == " " and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    lines = [" ".join(parts[:2])]  # "usage:" and the command
    for part in parts[2:]:
        if part and len(lines[-1]) + 1 + len(part) <= width:
            lines[-1] += " " + part
        elif part:
            lines.append("    " + part)
    return lines


def wrapped(text: str, width: int = WIDTH) -> list[str]:
    """The lines of an epilog at most ``width`` wide: a command line too long is continued as a shell
    continues it (`` \\`` at the end, the rest indented four more), breaking before an option; a line of
    prose is wrapped at words, keeping its indent."""
    out: list[str] = []
    for line in text.splitlines():
        indent = line[:len(line) - len(line.lstrip())]
        if len(line) <= width:
            out.append(line)
        elif line.lstrip().startswith("compaction-monitor") and line.rfind(" -", 0, width - 1) > len(indent):
            while len(line) > width and (cut := line.rfind(" -", len(indent) + 1, width - 1)) > len(indent):
                out.append(line[:cut] + " \\")  # before an option, room for " \\"
                line = indent + "    " + line[cut + 1:]
            out.append(line)
        else:
            out += textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_on_hyphens=False,
                                 break_long_words=False)
    return out


def _section(parser: argparse.ArgumentParser, line: str) -> list[str]:
    out = [f"## {parser.prog}", ""]
    if line:
        out += [_cell(line), ""]
    if parser.description and parser.description != line:
        out += [_cell(parser.description), ""]
    out += ["```text", *usage(parser), "```", ""]
    if parser.epilog:
        out += ["```text", *wrapped(textwrap.dedent(parser.epilog).strip("\n")), "```", ""]
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

"""The command line's conventions, in one place: how a usage error reads, how a help reads, and the flags
every subcommand gives the same way.

Kafka's tools are the model where they have one (``--bootstrap-server HOST:PORT``); the rest is one
vocabulary for every subcommand (``--log-dir PATH`` repeatable, ``--format text|json``, ``--log-level``),
so a user who learnt one subcommand knows the others. The old spellings stay as hidden aliases (an action
with ``help=SUPPRESS``: accepted, never shown), so scripts written against them go on working.

A usage error is one line, exit 2, that names what was wrong, says what was meant when a known name is
close (``difflib``: a mistyped subcommand, flag or choice) and points at the help of the subcommand that
was given (``see compaction-monitor explain --help``), not at the top-level one.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import Callable

from cli import flags

LOG_LEVELS = ("debug", "info", "warning", "error")
BOOTSTRAP_METAVAR = "HOST:PORT[,HOST:PORT...]"
FORMATS = ("text", "json")
FORMAT_ALIASES = {"table": "text", "jsonl": "json"}  # the spellings of 0.1.0's inspect and logdir


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples as written (``RawDescription``); every flag's default said, once: a
    flag whose help does not say it gets `` (default: X)``, unless it has none to say (None, off, empty)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, [], argparse.SUPPRESS):
            return text
        if not action.option_strings and action.nargs not in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return text
        return f"{text} (default: %(default)s)" if text else "default: %(default)s"


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line, exit 2, a "did you mean" when a known name is close, and
    the help of the subcommand given to read next. Help is written by ``HelpFormatter``."""

    def __init__(self, *args, **kwargs):
        if kwargs.get("formatter_class") in (None, argparse.HelpFormatter, argparse.RawDescriptionHelpFormatter):
            kwargs["formatter_class"] = HelpFormatter  # (the audit's parser asks for RawDescription under spark-submit)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        if "(see " not in message:
            message = f"{message} (see {self.prog} --help)"
        self.exit(2, f"{self.prog}: error: {message}\n")

    def _check_value(self, action: argparse.Action, value) -> None:
        if action.choices is None or value in action.choices:
            return
        shown = visible_choices(action)
        guess = close_match(str(value), shown) or _hidden_target(action, str(value))
        msg = f"invalid choice: {value!r}"
        if guess is not None:
            msg += f"; did you mean {guess!r}?"
        msg += f" (choose from {', '.join(shown)})"
        if isinstance(action, argparse._SubParsersAction):  # a mistyped subcommand: the help of the one meant
            msg += f" (see {self.prog}{' ' + guess if guess else ''} --help)"
        raise argparse.ArgumentError(action, msg)

    def parse_known_args(self, args=None, namespace=None):
        """A subcommand's flag it does not know is said here, with the one meant, before argparse would
        say that a required flag is missing (``audit --inptu x`` is a typo of ``--input``, not a missing
        ``--input``)."""
        args = sys.argv[1:] if args is None else list(args)
        if self._is_leaf():
            given = args
            given = given[:given.index("--")] if "--" in given else given
            unknown = [a for a in given if a.startswith("--") and not self._knows(a)]
            if unknown:
                unknown_arguments_error(self, unknown)
        return super().parse_known_args(args, namespace)

    def _is_leaf(self) -> bool:
        return not any(isinstance(a, argparse._SubParsersAction) or a.nargs == argparse.REMAINDER
                       for a in self._actions)

    def _knows(self, arg: str) -> bool:
        name = arg.split("=", 1)[0]
        return name in self._option_string_actions or (
            self.allow_abbrev and any(o.startswith(name) for o in self._option_string_actions))

    def _get_option_tuples(self, option_string: str):
        """An abbreviation that matches a flag and its hidden alias (``--bootstrap``) is the flag's, not an
        "ambiguous option" that shows the alias."""
        found = super()._get_option_tuples(option_string)
        if len(found) > 1:
            shown = [t for t in found if t[0].help is not argparse.SUPPRESS]
            if len({t[0].dest for t in found}) == 1 and shown:
                return shown[:1]
        return found


def subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    """A parser's subcommands (argparse keeps them as one action among its flags); None for a leaf."""
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def close_match(word: str, names) -> str | None:
    """The known name ``word`` is closest to, if one is close enough to be a typo of it."""
    got = difflib.get_close_matches(word, list(names), n=1, cutoff=0.6)
    return got[0] if got else None


def visible_choices(action: argparse.Action) -> list[str]:
    """A choice list as the help shows it: a subcommand without help (a hidden alias) left out."""
    if isinstance(action, argparse._SubParsersAction):
        return [a.dest for a in action._choices_actions]
    return [str(c) for c in action.choices]


def _hidden_target(action: argparse.Action, word: str) -> str | None:
    """A word close to a hidden alias (``check-confg``): the name the alias stands for."""
    if not isinstance(action, argparse._SubParsersAction):
        return None
    hidden = [name for name in action.choices if name not in visible_choices(action)]
    alias = close_match(word, hidden)
    return ALIASES.get(alias) if alias else None


ALIASES = {"check-config": "topics lint"}  # hidden subcommand -> the (visible) one it stands for


def suggestion(parser: argparse.ArgumentParser, unknown: str) -> str | None:
    """The flag of ``parser`` an unknown ``--flag`` (or ``--flag=value``) is a typo of; hidden aliases
    are matched too but named by their visible flag."""
    word = unknown.split("=", 1)[0]
    shown, hidden = {}, {}
    for action in parser._actions:
        for option in action.option_strings:
            (hidden if action.help is argparse.SUPPRESS else shown)[option] = action
    guess = close_match(word, shown)
    if guess is None and (alias := close_match(word, hidden)) is not None:
        visible = [o for a in parser._actions if a.dest == hidden[alias].dest and a.help is not argparse.SUPPRESS
                   for o in a.option_strings if o.startswith("--")]
        guess = visible[0] if visible else None
    return guess


def unknown_arguments_error(parser: argparse.ArgumentParser, unknown: list[str]):
    """The one line for flags ``parser`` (the subcommand's own) does not know: each with what was meant."""
    guesses = [g for g in (suggestion(parser, u) for u in unknown if u.startswith("-")) if g]
    msg = f"unrecognized arguments: {' '.join(unknown)}"
    if guesses:
        msg += f"; did you mean {' '.join(dict.fromkeys(guesses))}?"
    parser.error(msg)


# ---------------------------------------------------------------- reading a command line

FILE_ARGUMENTS = ("files", "paths", "topics")  # the positional lists of subcommands that take files


def parse_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parse_args``, except that a subcommand's files may stand anywhere among its options
    (argparse alone takes one run of positionals: ``dump-log A --dir D B`` would refuse ``B``), and that
    a flag the subcommand does not know is named with the one meant, and that subcommand's help."""
    args, extra = parser.parse_known_args(argv)
    target = next((name for name in FILE_ARGUMENTS if isinstance(getattr(args, name, None), list)), None)
    unknown = [a for a in extra if a.startswith("-") and a != "-"] if target else extra
    own = chosen(parser, args)
    if unknown:
        unknown_arguments_error(own, unknown)
    if target and extra:
        getattr(args, target).extend(checked(own, target, extra))
    return args


def chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the subcommand (and action) ``args`` ran: the one whose flags and help are meant."""
    while (sub := subparsers(parser)) is not None:
        name = getattr(args, sub.dest, None)
        if name not in sub.choices:
            break
        parser = sub.choices[name]
    return parser


def checked(parser: argparse.ArgumentParser, dest: str, values: list[str]) -> list:
    """Files that stood after an option, through their positional's type (an empty path refused)."""
    action = next(a for a in parser._actions if a.dest == dest)
    if action.type is None:
        return values
    try:
        return [action.type(v) for v in values]
    except argparse.ArgumentTypeError as exc:
        parser.error(f"argument {action.metavar or dest}: {exc}")


def command_position(argv: list[str]) -> int:
    """Where the subcommand stands: after the top-level options (``--log-level LEVEL``)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] == "--log-level" else 1
    return i


# ---------------------------------------------------------------- the flags every subcommand gives alike


def example(*lines: str) -> str:
    """A help's epilog: the example(s), as they are typed."""
    return "example:\n" + "\n".join(f"  {line}" for line in lines) if len(lines) == 1 else \
        "examples:\n" + "\n".join(f"  {line}" for line in lines)


def add_log_level(parser: argparse.ArgumentParser, command: str | None = None, *, top: bool = False) -> None:
    """``--log-level``: on the top-level parser (before the subcommand) and on every subcommand (after
    it). A subcommand's has no default (``SUPPRESS``), so it does not overwrite one given before; its
    help says the command's own (``cli.logsetup``)."""
    from cli.logsetup import SERVICES, said_default

    said = (f"warning; {', '.join(f'{c}: {lv}' for c, lv in SERVICES.items())}" if top
            else said_default(command))
    parser.add_argument("--log-level", choices=LOG_LEVELS, type=str.lower,
                        default=None if top else argparse.SUPPRESS,
                        help=f"what is logged on stderr (default: {said})")


def leaf(subparsers, name: str, handler: Callable | None, *, help: str | None, epilog: str,
         description: str | None = None, **kwargs) -> argparse.ArgumentParser:
    """A subcommand (or action) a user runs: its help, its example, its handler (``--log-level`` is added
    to every leaf once the tree is built, after the leaf's own flags). ``help=None``: a hidden alias
    (accepted, not listed)."""
    extra = {"help": help} if help is not None else {}
    p = subparsers.add_parser(name, description=description or help, epilog=epilog, **extra, **kwargs)
    if handler is not None:
        p.set_defaults(func=handler)
    return p


def add_bootstrap(parser: argparse.ArgumentParser, help: str, dest: str = "bootstrap_server") -> None:
    """``--bootstrap-server`` (Kafka's tools' name), and the plural of 0.1.0's collect and audit, hidden."""
    parser.add_argument("--bootstrap-server", dest=dest, type=flags.bootstrap, metavar=BOOTSTRAP_METAVAR, help=help)
    parser.add_argument("--bootstrap-servers", dest=dest, type=flags.bootstrap, help=argparse.SUPPRESS)


def add_log_dirs(parser: argparse.ArgumentParser, help: str) -> None:
    """``--log-dir PATH``, repeatable, the same in every subcommand that reads log dirs."""
    parser.add_argument("--log-dir", type=flags.path, action="append", metavar="PATH", help=f"{help} (repeatable)")


def _format(text: str) -> str:
    return FORMAT_ALIASES.get(text, text)


_format.__name__ = "format"


def add_format(parser: argparse.ArgumentParser, json_help: str = "JSON, base units (bytes, ms or s as each "
                                                                  "field's name says)") -> None:
    """``--format text|json``: text for people (the default), json for programs; 0.1.0's ``table`` and
    ``jsonl`` are taken as text and json."""
    parser.add_argument("--format", choices=FORMATS, default="text", type=_format,
                        help=f"text: for people; json: {json_help} (default: %(default)s)")

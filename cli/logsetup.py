"""Where the log lines go and from which level: configured once, here, by ``cli.main`` (the composition
root), for every subcommand; the collectors and the core only ever ``logging.getLogger(name)``.

``--log-level debug|info|warning|error`` (before or after the subcommand). Its default is ``warning``
for a one-shot command (its report is on stdout; stderr carries what went wrong; ``collect --once`` is
one) and ``info`` for a serving ``collect``, a service whose refreshes and sources' ups and downs are
its log.

A one-shot command's warnings read as its other stderr lines do, the message alone (as Python's
last-resort handler printed them before); below warning each line says its level and logger. The
collector's lines carry their time, level and logger, as a service's log does.
"""

from __future__ import annotations

import logging
import sys

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
SERVICES = {"collect": "info"}  # subcommand -> its default level serving (not --once), when not "warning"
SERVICE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
DETAIL_FORMAT = "%(levelname)s %(name)s: %(message)s"


def default_level(command: str | None, once: bool = False) -> str:
    return "warning" if once else SERVICES.get(command or "", "warning")


def said_default(command: str | None) -> str:
    """The default as a subcommand's help says it."""
    return f"{SERVICES[command]}; with --once, warning" if command in SERVICES else "warning"


class _Stderr(logging.StreamHandler):
    """A handler on whatever ``sys.stderr`` is when a line is written (a test's capture, a redirect made
    after start-up), as Python's last-resort handler does."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value):
        pass


class _OneShotFormatter(logging.Formatter):
    """The message alone from warning up; level and logger below (``--log-level info|debug``)."""

    def __init__(self):
        super().__init__(DETAIL_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        return record.getMessage() if record.levelno >= logging.WARNING else super().format(record)


def configure(level: str | None, command: str | None, once: bool = False) -> None:
    """The root logger at ``level`` (default: the command's), with one handler of ours on stderr; called
    again (tests run ``main`` several times in one process) it replaces its own handler, never adds one.
    ``once``: a service's command run once (``collect --once``), logged as a one-shot command is."""
    name = (level or default_level(command, once)).lower()
    serving = command in SERVICES and not once
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _Stderr)]:
        root.removeHandler(handler)
    handler = _Stderr()
    handler.setFormatter(logging.Formatter(SERVICE_FORMAT) if serving else _OneShotFormatter())
    root.addHandler(handler)
    root.setLevel(LEVELS[name])

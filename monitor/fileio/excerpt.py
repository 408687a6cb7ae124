"""What an error message may quote of a bad file or value: a short, escaped excerpt, never the thing whole.

A power loss leaves a checkpoint full of NUL bytes, a broken disk a line of megabytes; an error that
quoted them whole would be one line of megabytes of control characters (a terminal garbles it, a log
pipeline drops it). So every message that quotes content (a checkpoint's line, a cleaner log line, a
``meta.properties`` value, a dump line, a flag's or a key's value) quotes ``excerpt(...)``: at most
``EXCERPT_CHARS`` characters, each that is not printable written as its escape (``\\x00``, ``\\n``,
``\\u200b``), in quotes, and when cut, how long the whole was. Only the head of the content is
looked at, so the cost is the same for 4 bytes and 4 GB.
"""

from __future__ import annotations

EXCERPT_CHARS = 60  # a message stays one readable line with a path and a reason around it


def _escaped(ch: str, quote: str = "'") -> str:
    if "\udc80" <= ch <= "\udcff":  # a byte that is no UTF-8 (surrogateescape): as the byte
        return f"\\x{ord(ch) - 0xdc00:02x}"
    if ch == "\\":
        return "\\\\"
    if ch == quote:
        return "\\" + ch
    if ch.isprintable():
        return ch
    return repr(ch)[1:-1]  # \x00, \n, \t, \u200b, \U0001f600 ...


def _head(content, limit: int) -> tuple[str, bool, str]:
    """(the escaped head of ``content``, at most ``limit`` characters, whole escapes only; whether it
    is all of it; the unit of its length)."""
    head = content[: limit + 1]
    if isinstance(head, (bytes, bytearray, memoryview)):
        head, unit = bytes(head).decode("utf-8", "surrogateescape"), "bytes"
    else:
        unit = "characters"
    out, used = [], 0
    for c in head:
        e = _escaped(c)
        if used + len(e) > limit:
            break
        out.append(e)
        used += len(e)
    return "".join(out), len(out) == len(content), unit


def excerpt(content: str | bytes | bytearray | memoryview, limit: int = EXCERPT_CHARS, *, more: bool = False) -> str:
    """``content`` quoted for a message: its first characters, escaped, at most ``limit`` of them in
    all (escapes count with their length), in single quotes; cut content ends ``...'`` and says how
    long the whole is (``(4096 bytes)``, ``(268435456 characters)``); ``more``: ``content`` is the
    head of something longer (``'...' (more follows)``). Bytes are read as UTF-8, an undecodable byte
    shown as ``\\xNN``."""
    text, whole, unit = _head(content, limit)
    if whole and not more:
        return f"'{text}'"
    return f"'{text}...' ({'more follows' if more else f'{len(content)} {unit}'})"


def escaped(content: str | bytes | bytearray | memoryview, limit: int | None = None) -> str:
    """The one display rule for content that is not ours (a record key, a file or topic name read from
    disk), everywhere it is shown (the dashboard, the audit report, ``inspect``, a log line): printable
    characters as they are, each other one as its escape (``\\n``, ``\\x00``, ``\\u200b``), a byte that
    is no UTF-8 as ``\\xNN``, a backslash doubled so that an escape is never ambiguous; no quotes. Cut
    at ``limit`` characters with ``…``."""
    if isinstance(content, (bytes, bytearray, memoryview)):
        content = bytes(content).decode("utf-8", "surrogateescape")
    out = "".join(_escaped(c, quote="") for c in content)
    return out if limit is None or len(out) <= limit else out[:limit - 1] + "…"


MESSAGE_CHARS = 200  # a message taken from a file (an exception's, in a log) is prose: a little longer


def shortened(text: str, limit: int = MESSAGE_CHARS) -> str:
    """A message read from a file (a Java exception's first line in log-cleaner.log), to be shown as a
    message rather than quoted: escaped as ``excerpt`` does, without quotes, cut with ``... (N
    characters)``."""
    head, whole, unit = _head(text, limit)
    return head if whole else f"{head}... ({len(text)} {unit})"

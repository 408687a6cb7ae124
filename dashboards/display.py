"""Every figure a page shows, as text made by the one formatter (``monitor.contract.units``): a table's cells
are strings, so no grid ever shows ``None``, ``nan``, ``1e+06`` or a raw count of bytes or seconds, and a cell
without a figure says why ("pending", "unknown (why)") instead of being empty or 0.

Why strings rather than a number format per column: Streamlit's grid formats a number column with a printf
pattern, which knows neither IEC units nor durations, and shows an empty cell for a missing value.
Pure (no Streamlit): tested without a page.
"""

from __future__ import annotations

import heapq
import math
from typing import Callable

import pandas as pd

from monitor.contract import units
from monitor.fileio.excerpt import excerpt

NOT_EXPORTED = units.unknown("not exported")  # a healthy partition's detail at granularity topic (the default)
NOT_EXPORTED_WHY = ("Pending: the collector reads a partition's batch headers first, its records (tombstones, "
                    "duplicates) after. Unknown (not exported): at granularity topic (the collector's default) a "
                    "healthy partition's detail is not exported; granularity: partition exports it for all.")
PENDING = "pending"  # the partition's records are still to be read (partition_detail_pending)


def text(v, fmt: Callable[[float], str], missing: str = units.unknown()) -> str:
    """``v`` through ``fmt``, or ``missing`` (why there is no figure) when it is None or NaN."""
    return missing if units.missing(v) else fmt(v)


def column(values, fmt: Callable[[float], str], missing: str | list[str] = units.unknown()) -> list[str]:
    """A column's cells as text; ``missing``: one reason for every missing cell, or one per row."""
    reasons = missing if isinstance(missing, list) else [missing] * len(values)
    return [text(v, fmt, why) for v, why in zip(values, reasons)]


def elapsed(seconds: float) -> str:
    """How long something has been so, for a person: whole seconds and up ("3 min 12 s"); under a second,
    "under 1 s". The pages' clocks (Prometheus' rule evaluation, a refresh) tick in seconds, so "985 ms"
    or "0 ms" was precision nobody had."""
    return "under 1 s" if seconds < 1 else units.duration_s(int(seconds))


def ago_utc(seconds_since_epoch: float | None, now: float) -> str:
    """A past time for a person: its UTC time and how long ago ("2026-12-07T11:32:53.000Z, 3 min 12 s
    ago")."""
    if units.missing(seconds_since_epoch):
        return units.unknown()
    return f"{units.timestamp_utc(seconds_since_epoch * 1000)}, {elapsed(max(now - seconds_since_epoch, 0))} ago"


def as_text(frame: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """``frame``'s columns ``labels`` names (in that order), renamed to the label's words, every cell a
    string: a cell already text is kept, a missing one reads "unknown", a number goes through
    ``units.count``. Columns with their own unit are formatted by the caller before."""
    out = pd.DataFrame(index=frame.index)
    for col, label in labels.items():
        out[label] = [c if isinstance(c, str) else units.yes_no(bool(c)) if pd.api.types.is_bool(c)
                      else units.unknown() if units.missing(c) else units.count(c) for c in frame[col]]
    return out.reset_index(drop=True)


def link(url: str) -> str:
    """A link in a page's Markdown: clickable when it is a URL; a path (``thresholds.runbook_base``'s default,
    ``alerts/RUNBOOK.md``, relative to the project, not to the dashboard) shown as the path to open."""
    return f"[{url}]({url})" if url.startswith(("http://", "https://")) else f"`{url}`"


def key(k: bytes | bytearray | memoryview | None) -> str:
    """A record key for a page: the project's one escaping of content for a person (``monitor.fileio.excerpt``:
    printable characters as they are, any other byte as its escape, ``\\x00``, never a font's □), quoted
    so an empty key ('') is seen, cut with its length when long; a null key "(null)"."""
    return "(null)" if k is None else excerpt(bytes(k))


# The widest a table may be: the page's content column in a 1366-pixel window (904 px beside the sidebar),
# less the grid's borders; a cell's padding, in pixels; the narrowest a column is cut to
TABLE_PX, CELL_PAD_PX, MIN_COLUMN_PX = 880, 18, 60
# A character of the grid's font (Source Sans, 14 px) by kind, in pixels, measured on the pages' screenshots
# and rounded up (on the safe side: a column a little wide wastes space, one too narrow cuts a cell with an
# ellipsis): a lowercase name runs 6.1 to 6.6 px a character, dots and i/l/t about half that, a character
# beyond ASCII (CJK) up to the font's size. One width for every character (8 px) cut the Config review's
# longest check name beside a long topic while "min.cleanable.dirty.ratio" took 80 px more than it drew.
NARROW_PX, LOWER_PX, UPPER_PX, OTHER_PX = 3.8, 7.2, 9.0, 14.0
CHAR_WIDTHS = {**{ch: NARROW_PX for ch in ".,:;'|!iljft()[] "}, "m": 10.5, "w": 10.5, "M": 12.5, "W": 12.5}
MEASURED = 20  # a column's texts measured for its width: its longest this many (a grid can have 20,000 rows)


def text_px(text: str) -> int:
    """How wide ``text`` draws in a grid cell, in pixels (on the safe side)."""
    px = 0.0
    for ch in text:
        px += CHAR_WIDTHS.get(ch) or (UPPER_PX if "A" <= ch <= "Z" else LOWER_PX if ch.isascii() else OTHER_PX)
    return int(px + 0.999)


HEADER_KEEP_PX = 96  # the least a header wider than its column's cells keeps before a cell is cut (~12 letters)


def fit_widths(natural: dict[str, int], budget: int = TABLE_PX,
               cells: dict[str, int] | None = None) -> dict[str, int] | None:
    """Column widths (pixels) so that a table of these natural widths fits ``budget``; None when it fits
    as it is. First the headers wider than their cells give way (``cells``: each column's widest cell, the
    header left out), each by its share of what is to be given, down to ``HEADER_KEEP_PX``: a header cut
    short ("Tombstones unst…") costs less than a cell (a topic's name). Then max-min fair: the narrow columns
    (what identifies a row: a partition, a state) keep their width, the widest share what is left equally,
    never below ``MIN_COLUMN_PX``; a cell longer than its column ends in an ellipsis and shows whole when
    hovered, the table never scrolls sideways."""
    if sum(natural.values()) <= budget:
        return None
    cells = cells or natural
    floor = {c: min(w, max(cells.get(c, w), HEADER_KEEP_PX)) for c, w in natural.items()}
    room, over = sum(natural.values()) - sum(floor.values()), sum(natural.values()) - budget
    if room >= over:  # the headers alone give enough: each gives its share, no cell is cut
        return {c: w - math.ceil((w - floor[c]) * over / room) for c, w in natural.items()}
    out, left, todo = {}, budget, sorted(floor, key=floor.get)
    while todo:
        share = left // len(todo)
        c = todo[0]
        if floor[c] > share:  # every column from here on is wider than its share: they split what is left
            for c in todo:
                out[c] = max(share, MIN_COLUMN_PX)
            break
        out[c] = floor[c]
        left -= floor[c]
        todo.pop(0)
    return out


def cell_widths(frame: pd.DataFrame) -> dict[str, int]:
    """Each column's width in pixels as the grid would draw its widest cell whole, the header left out."""
    def widest(values) -> int:  # measured on the longest few texts: width follows length closely enough
        return max(map(text_px, heapq.nlargest(MEASURED, {str(v) for v in values}, key=len)), default=0)
    return {str(c): CELL_PAD_PX + widest(frame[c]) for c in frame.columns}


def natural_widths(frame: pd.DataFrame, cells: dict[str, int] | None = None) -> dict[str, int]:
    """Each column's width in pixels as the grid would draw it whole: its longest cell or header."""
    cells = cells if cells is not None else cell_widths(frame)
    return {str(c): max(CELL_PAD_PX + text_px(str(c)), cells[str(c)]) for c in frame.columns}

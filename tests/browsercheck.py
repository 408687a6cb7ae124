"""What a person would object to on a rendered dashboard page, read the way they read it: in headless
Chromium (issue #41, item 6). ``page_problems(driver, page)`` returns the problems of the page the
driver shows, one readable sentence each ("Partitions page, table 'Dirty partitions', row 3 (demo.x),
column 'age': 'nan'"); ``log_problems(path)`` those of the dashboard's log. The browser test and
``./dev screenshots`` both use them; the text rules are checked without a browser by
tests/test_browsercheck.py.

The data grids: Streamlit's ``st.dataframe`` draws its cells on a canvas (glide-data-grid); the text a
person sees is also in the canvas's accessibility table (``<table role="grid">``, its rows and columns
numbered by ``aria-rowindex`` / ``aria-colindex``), which holds only the cells in view. So each grid is
scrolled through, a view at a time, and its cells collected by their numbers. A missing value is drawn
as a grey ``None`` on the canvas and is an empty cell in that table: an empty cell is reported as such
(the issue: a figure not known yet says "pending" or "unknown (why)", never an empty cell)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# --------------------------------------------------------------------------- text

# A value that was never formatted for a person, as it shows in text. Each pattern stands alone (not
# inside a word, a dotted name such as the topic ``demo.none``, a version or a hex number): what
# comes before and after it is neither a letter, a digit, ``_``, ``.`` nor ``-``.
_ALONE_BEFORE = r"(?<![\w.\-])"
_ALONE_AFTER = r"(?![\w\-]|\.\w)"
TEXT_RULES: dict[str, re.Pattern] = {
    # Python's None (the English word starting a sentence is let through by ``_english``)
    "None": re.compile(_ALONE_BEFORE + r"None" + _ALONE_AFTER),
    # pandas' and numpy's missing values and infinities
    "not a number": re.compile(_ALONE_BEFORE + r"(?:nan|NaN|NAN|NaT|<NA>|[-+]?inf|[-+]?Infinity)" + _ALONE_AFTER),
    # a float printed by %g or repr: 1.34218e+08, 1e-05, 2.5E7
    "scientific notation": re.compile(_ALONE_BEFORE + r"[-+]?\d+(?:\.\d+)?[eE][-+]?\d+" + _ALONE_AFTER),
}

# A column label that is a Python name (snake_case), not words: "obsolete_bytes".
SNAKE_CASE = re.compile(r"^[A-Za-z]+(?:_[A-Za-z0-9]+)+$")

# What Streamlit and Python log for a deprecated call: Streamlit's "Please replace `st.x` with `st.y`.
# ... will be removed after DATE" (streamlit.deprecation_util), Python's DeprecationWarning and
# FutureWarning.
DEPRECATION = re.compile(r"deprecat|will be removed|please replace|FutureWarning", re.IGNORECASE)


def _english(m: re.Match) -> bool:
    """"None of the partitions ...": the word None opening a sentence (at a line's start or after a
    full stop) and followed by a lower-case word, not Python's None."""
    before, after = m.string[:m.start()].rstrip(" "), m.string[m.end():m.end() + 2]
    return m.group(0) == "None" and (not before or before[-1] in "\n.!?") and re.match(r" [a-z]", after) is not None


def _raw(text: str):
    for rule, pattern in TEXT_RULES.items():
        for m in pattern.finditer(text):
            if not _english(m):
                yield rule, m


def text_problems(text: str, context: int = 30) -> list[str]:
    """Each raw value in ``text``, named with its rule and the text around it."""
    out = []
    for rule, m in _raw(text):
        a, b = max(0, m.start() - context), min(len(text), m.end() + context)
        around = " ".join(text[a:b].split())
        out.append(f"{rule} {m.group(0)!r} in '{'…' if a else ''}{around}{'…' if b < len(text) else ''}'")
    return out


def cell_problems(text: str) -> list[str]:
    """The problems of one grid cell's text: a raw value, or nothing at all."""
    if not text.strip():
        return ["empty (a missing value, drawn as a grey None)"]
    return [f"{rule} {m.group(0)!r}" for rule, m in _raw(text)]


def label_problems(label: str) -> list[str]:
    return [f"column label {label!r} is a Python name, not words"] if SNAKE_CASE.match(label.strip()) else []


def log_problems(path: Path) -> list[str]:
    """Every distinct deprecation line of a log, with how often it appears."""
    if not path.exists():
        return [f"no log at {path}"]
    counts = Counter(" ".join(line.split()) for line in path.read_text(errors="replace").splitlines()
                     if DEPRECATION.search(line))
    # Streamlit's log lines start with a time stamp: the same message at another time is the same line
    counts = Counter(re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[.,]\d+ ", "", k) for k in counts.elements())
    return [f"{path.name}: {n} x {line!r}" for line, n in counts.most_common()]


# --------------------------------------------------------------------------- the page

PAGE_STATE = """
const label = el => {
  // the heading or expander nearest before an element, for messages
  let best = '';
  const all = document.querySelectorAll('h1, h2, h3, h4, h5, h6, summary');
  for (const h of all) {
    // an expander's label starts with its Material icon's name (keyboard_arrow_right): not its words
    if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)
      best = h.innerText.replace(/\\bkeyboard_arrow_\\w+/g, '').trim();
  }
  return best.split('\\n')[0].slice(0, 80);
};
const grids = Array.from(document.querySelectorAll('[data-testid="stDataFrame"]'));
const wide = [];
for (const el of document.querySelectorAll('[data-testid="stMain"] *')) {
  const s = getComputedStyle(el);
  if (!['auto', 'scroll'].includes(s.overflowX) || el.scrollWidth <= el.clientWidth + 1 || !el.clientWidth) continue;
  const grid = el.closest('[data-testid="stDataFrame"]');
  wide.push({grid: grid ? grids.indexOf(grid) : -1, what: grid ? '' : (el.getAttribute('data-testid') || el.tagName.toLowerCase()),
             text: (el.innerText || '').trim().split('\\n')[0].slice(0, 60), label: label(el),
             scroll: el.scrollWidth, client: el.clientWidth});
}
const doc = document.documentElement;
return {
  text: document.body.innerText,
  exceptions: Array.from(document.querySelectorAll('[data-testid="stException"]')).map(e => e.innerText.trim().slice(0, 300)),
  charts: Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => ({
    label: ((p.querySelector('.gtitle') || {}).textContent || label(p)),
    text: Array.from(p.querySelectorAll('text')).map(t => t.textContent).join('\\n')})),
  grids: grids.map(label),
  wide, viewport: window.innerWidth, page_width: doc.scrollWidth,
};
"""

# One view of grid ``arguments[0]``: scrolled to (arguments[1], arguments[2]); once glide-data-grid has
# redrawn its accessibility table for the new position (a frame or more after the scroll: polled, up to
# 5 s; at once when the grid did not move; the views are far enough apart that each shows other cells),
# its cells in view.
GRID_VIEW = """
const [i, left, top, done] = arguments;
const g = document.querySelectorAll('[data-testid="stDataFrame"]')[i];
if (!g) { done(null); return; }  // gone: the page's refresh rerun drew it no more
const sc = g.querySelector('.dvn-scroller');
const table = () => g.querySelector('table[role="grid"]');
const sign = () => { const t = table(); return t ? Array.from(t.querySelectorAll('[aria-rowindex]'))
  .map(r => r.getAttribute('aria-rowindex') + ':' + Array.from(r.querySelectorAll('[aria-colindex]'))
  .map(c => c.getAttribute('aria-colindex')).join(',')).join(';') : ''; };
const before = sign();
const moved = sc && (sc.scrollLeft !== left || sc.scrollTop !== top);
if (sc) { sc.scrollLeft = left; sc.scrollTop = top; }
const deadline = Date.now() + 5000;
const read = () => {
  if (moved && sign() === before && Date.now() < deadline) { setTimeout(read, 20); return; }
  const t = table();
  if (!t) { done(null); return; }
  const cells = [];
  for (const c of t.querySelectorAll('th[aria-colindex], td[aria-colindex]')) {
    cells.push([+c.closest('tr').getAttribute('aria-rowindex'), +c.getAttribute('aria-colindex'), c.innerText]);
  }
  done({rows: +t.getAttribute('aria-rowcount'), cols: +t.getAttribute('aria-colcount'), cells,
        scroll: sc ? [sc.scrollWidth, sc.clientWidth, sc.scrollHeight, sc.clientHeight] : [0, 0, 0, 0]});
};
requestAnimationFrame(read);
"""


@dataclass
class Grid:
    """The text of one data grid: ``cells[(row, col)]``, rows and columns numbered from 1 as
    aria-rowindex and aria-colindex are (row 1: the column labels)."""
    label: str
    drawn: bool = False
    rows: int = 0
    cols: int = 0
    cells: dict[tuple[int, int], str] = field(default_factory=dict)

    def missing(self) -> int:
        return self.rows * self.cols - len(self.cells)


def read_grid(driver, index: int, label: str, attempts: int = 3) -> Grid:
    """Every cell of the ``index``-th grid on the page, scrolled through a view at a time. The dashboard
    reruns its script every few seconds, and a grid whose rows changed meanwhile leaves cells unread:
    it is read again, up to ``attempts`` times; what still is not read is reported (``grid_problems``)."""
    for _ in range(attempts):
        grid = _read_grid(driver, index, label)
        if not grid.drawn or not grid.missing():
            break
    return grid


def _read_grid(driver, index: int, label: str, max_views: int = 400) -> Grid:
    first = driver.execute_async_script(GRID_VIEW, index, 0, 0)
    grid = Grid(label, drawn=first is not None)
    if first is None:
        return grid
    grid.rows, grid.cols = first["rows"], first["cols"]
    sw, cw, sh, ch = first["scroll"]
    lefts, tops = _spread(sw - cw, max(int(cw * 0.75), 40)), _spread(sh - ch, max(int(ch * 0.75), 30))
    views = [(x, y) for y in tops for x in lefts]
    for n, (x, y) in enumerate(dict.fromkeys(views)):
        view = first if n == 0 and (x, y) == (0, 0) else driver.execute_async_script(GRID_VIEW, index, x, y)
        if view is None:  # the cells not read yet are reported as such
            break
        for r, c, text in view["cells"]:
            grid.cells[(r, c)] = text
        if n >= max_views:
            break
    driver.execute_async_script(GRID_VIEW, index, 0, 0)  # back where a person finds it (and the screenshot)
    return grid


def _spread(scroll_range: int, step: int) -> list[int]:
    """Scroll positions from 0 to ``scroll_range`` (the last one shows the grid's end), evenly spaced, no two
    more than ``step`` apart: the views overlap (a row half in view may be left out of the table), and none
    lands a few pixels from the one before. A view that shows the same cells as the last one would make
    ``GRID_VIEW`` wait its whole 5 s for a redraw that never comes (it did: 19 px before the end of a grid
    of 2,205 px, 10 s of the browser test)."""
    if scroll_range <= 0:
        return [0]
    n = -(-scroll_range // step)  # views after the first, each step at most ``step``
    return [round(i * scroll_range / n) for i in range(n + 1)]


def grid_problems(grid: Grid, where: str) -> list[str]:
    """The grid's problems; one that recurs down a column is said once for the column, with its first rows."""
    if not grid.drawn:
        return [f"{where}: not drawn, its cells could not be read"]
    out = []
    labels = {c: grid.cells.get((1, c), "") for c in range(1, grid.cols + 1)}
    # an index column (no label) is drawn by Streamlit, its cells are row numbers: not a finding
    index_col = 1 if labels.get(1) == "" else None
    for c, name in labels.items():
        out += [f"{where}: {p}" for p in label_problems(name)]
    found: dict[tuple[int, str], list[str]] = {}
    for r in range(2, grid.rows + 1):
        first = next((grid.cells.get((r, c), "") for c in labels if c != index_col), "")
        for c in labels:
            if c != index_col and (r, c) in grid.cells:
                for p in cell_problems(grid.cells[(r, c)]):
                    found.setdefault((c, p), []).append(f"row {r - 1} ({first[:40]})")
    for (c, p), rows in found.items():
        if len(rows) <= 2:
            out += [f"{where}, {row}, column {labels[c]!r}: {p}" for row in rows]
        else:
            out.append(f"{where}, column {labels[c]!r}: {p}, in {len(rows)} of {grid.rows - 1} rows "
                       f"({', '.join(rows[:2])}, ...)")
    if grid.missing():
        out.append(f"{where}: {grid.missing()} of {grid.rows * grid.cols} cells could not be read")
    return out


def page_problems(driver, page: str) -> list[str]:
    """Everything ``page`` (its name, for the messages) shows that a person should not see."""
    s = driver.execute_script(PAGE_STATE)
    out = [f"{page} page: exception box: {e!r}" for e in s["exceptions"]]
    out += [f"{page} page, text: {p}" for p in text_problems(s["text"])]
    for chart in s["charts"]:
        out += [f"{page} page, chart {chart['label']!r}: {p}" for p in text_problems(chart["text"], context=15)]
    names = []
    for i, label in enumerate(s["grids"]):
        where = f"{page} page, table {i + 1} {label!r}"
        names.append(where)
        out += grid_problems(read_grid(driver, i, label), where)
    for w in s["wide"]:
        what = names[w["grid"]] if w["grid"] >= 0 else f"{page} page, {w['what']} {w['text']!r} (under {w['label']!r})"
        out.append(f"{what}: scrolls sideways at {s['viewport']} px ({w['scroll']} px of content in {w['client']} px)")
    if s["page_width"] > s["viewport"] + 1:
        out.append(f"{page} page: {s['page_width']} px wide in a {s['viewport']} px window")
    return out

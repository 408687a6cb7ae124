"""The exposition rendered once per refresh, and the same bytes served to every scrape.

Why: building the metric families reads every partition's state (causes, forecasts); at thousands of
partitions that is a second or more of CPU, and done per scrape (as ``prometheus_client``'s WSGI app
does) 200 concurrent scrapes queued behind each other (issue 14: p99 11 s). Here:

- the families are collected once after a source's refresh changed the ``Store`` (the ``Runner``
  calls ``invalidate``), by one background thread; refreshes that land while it renders, or within
  ``RENDER_GAP_FACTOR`` times its duration after it, are folded into the next render (a render of
  5,000 partitions in every detail is seconds of CPU: it must not take the core the scrapes need);
- each wire format (text 0.0.4, OpenMetrics, the escapings ``prometheus_client.exposition.choose_encoder``
  negotiates, a ``name[]`` selection; gzip or not) is encoded from those families at most once per
  render: lazily for a format first asked for, and before a new render is published for every format
  scraped in the last ``WANTED_SECONDS``, so a Prometheus scraping steadily never waits on a render or
  an encoding, only on copying bytes;
- a scrape never waits on a source: it gets the latest published render, whatever a source is doing.
  A render that raises keeps the previous one served (the error is printed once per kind).

What this changes: values that depend on the clock (``partition_eligible_seconds``, ages) are as of the
render (at most a refresh interval and a render old), not as of the scrape. The collector has no per-scrape series
(no scrape counter): everything in the page is per refresh, so the same bytes are right for every scrape.
"""

from __future__ import annotations

import gzip
import sys
import threading
import time
import traceback
import zlib
from dataclasses import dataclass

from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.metrics_core import Metric

from collectors.export.encoding import fast, pieces
from collectors.export.lines import LineFamily

MAX_PAGES = 32  # formats x selections x gzip kept per render; a client inventing more gets them uncached
WANTED_SECONDS = 600.0  # a format asked for within this is encoded before a new render is published
RENDER_GAP_FACTOR = 1.0  # after a render of d seconds the next starts >= d * this later: at most half a core
GZIP_LEVEL = 6  # zlib's default: most of level 9's size at a fraction of its time
GZIP_CHUNK = 1 << 18  # bytes of the plain page handed to zlib at once


@dataclass(frozen=True)
class Page:
    content_type: str
    gzip: bool
    body: bytes


class _Families:
    """What the encoders read (they take anything with ``collect()``)."""

    def __init__(self, families):
        self.families = families

    def collect(self):
        return iter(self.families)


def _select(families, names: frozenset) -> tuple:
    """The samples named in ``names`` (``?name[]=``, as prometheus_client's restricted registry)."""
    out = []
    for f in families:
        if isinstance(f, LineFamily):  # one sample name: the whole family or none of it
            if f.sample_name in names:
                out.append(f)
            continue
        samples = [s for s in f.samples if s.name in names]
        if samples:
            m = Metric(f.name, f.documentation, f.type, f.unit)
            m.samples = samples
            out.append(m)
    return tuple(out)


def _gzip(parts) -> bytes:
    """A gzip member of the page's pieces, compressed as they come (a buffer of at most ``GZIP_CHUNK``)."""
    z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
    out, buf = [], bytearray()
    for part in parts:
        buf += part
        if len(buf) >= GZIP_CHUNK:
            out.append(z.compress(buf))
            buf.clear()
    out.append(z.compress(buf))
    out.append(z.flush())
    return b"".join(out)


class _Render:
    """One collect's families and the pages encoded from them (each at most once)."""

    def __init__(self, families: tuple, at: float, duration: float):
        self.families, self.at, self.duration = families, at, duration
        self._pages: dict[tuple, Page] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[tuple, threading.Lock] = {}
        self.encodings = 0

    def page(self, key: tuple, encoder) -> Page:
        page = self._pages.get(key)
        if page is not None:
            return page
        with self._lock:
            full = len(self._key_locks) >= MAX_PAGES and key not in self._key_locks
            lock = None if full else self._key_locks.setdefault(key, threading.Lock())
        if lock is None:
            return self._encode(key, encoder)  # bounded memory: not kept
        with lock:  # the first asker encodes; the others for the same key wait for its bytes
            page = self._pages.get(key)
            if page is None:
                page = self._pages[key] = self._encode(key, encoder)
            return page

    def _encode(self, key: tuple, encoder) -> Page:
        content_type, names, gz = key
        plain = self._pages.get((content_type, names, False))
        if gz and plain is not None:  # gzip of the very bytes an identity scrape gets
            body = gzip.compress(plain.body, GZIP_LEVEL)
        else:
            families = _Families(self.families if names is None else _select(self.families, names))
            # the plain page is not kept unless asked for (Prometheus always asks for gzip), nor made whole
            # for a gzip of it: compressed as it is written (at 20,000 partitions in every detail, some 130 MB)
            body = _gzip(pieces(encoder, families)) if gz else encoder(families)
        with self._lock:
            self.encodings += 1
        return Page(content_type, gz, body)


class RenderedExposition:
    """The registry's exposition, rendered once per ``invalidate`` (background thread: ``start``) or per
    ``render()`` call, served by ``page()``."""

    def __init__(self, registry, clock=time.time, err=None, after_render=None):
        self.registry = registry
        self.after_render = after_render  # called once the families are collected (FactsCache.release)
        self.clock = clock
        self.err = err
        self.renders = 0  # collects done
        self.published = 0  # renders published (served from then on)
        self.render_errors = 0
        self._current: _Render | None = None
        self._lock = threading.Lock()
        self._render_lock = threading.Lock()
        self._wanted: dict[tuple, tuple] = {}  # key -> (encoder, when last asked, monotonic)
        self.monotonic = time.monotonic
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reported: set[str] = set()

    # ---------------------------------------------------------------- rendering

    def invalidate(self) -> None:
        """A source's refresh changed the store: render again (in the background thread, once for any
        number of calls made while it renders)."""
        self._wake.set()

    def render(self) -> bool:
        """Collect the families now and publish them, with the formats scraped in the last
        ``WANTED_SECONDS`` already encoded; False (the previous render kept) when a collector raised."""
        with self._render_lock:
            t0 = time.perf_counter()
            at = self.clock()
            try:
                families = tuple(self.registry.collect())
            except Exception as exc:  # noqa: BLE001 - a bug in one family must not stop /metrics
                self.render_errors += 1
                self._report(exc)
                return False
            finally:
                if self.after_render is not None:
                    self.after_render()
            r = _Render(families, at, time.perf_counter() - t0)
            now = self.monotonic()
            with self._lock:
                self.renders += 1
                self._wanted = {k: w for k, w in self._wanted.items() if now - w[1] <= WANTED_SECONDS}
                wanted = list(self._wanted.items())
            for key, (encoder, _) in wanted:
                try:
                    r.page(key, encoder)
                except Exception as exc:  # noqa: BLE001 - that format is encoded (and fails) when asked
                    self._report(exc)
            r.duration = time.perf_counter() - t0
            self._current = r
            self.published += 1
            return True

    def _report(self, exc: BaseException) -> None:
        kind = f"{type(exc).__name__}: {exc}"
        if kind not in self._reported and len(self._reported) < 100:  # bounded: messages may carry numbers
            self._reported.add(kind)
            print("collect: rendering /metrics failed (the previous page is served):\n"
                  + "".join(traceback.format_exception(exc)), file=self.err or sys.stderr, flush=True)

    def start(self) -> None:
        """Render now (so the first scrape has a page), then after every ``invalidate``."""
        if self._current is None:
            self.render()
        self._thread = threading.Thread(target=self._loop, name="metrics-render", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            self._wake.wait()
            if self._stop.is_set():
                return
            self._wake.clear()
            self.render()
            r = self._current
            if r is not None and self._stop.wait(r.duration * RENDER_GAP_FACTOR):
                return

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    # ---------------------------------------------------------------- serving

    def page(self, accept: str | None = None, accept_encoding: str | None = None,
             names: list[str] | None = None) -> Page:
        """The page for these request headers (format by ``Accept``, gzip when ``Accept-Encoding``
        allows it, ``names``: ``?name[]=``) from the latest render; rendered here only before any
        render was published."""
        r = self._current
        if r is None:
            self.render()
            r = self._current
            if r is None:  # the very first render failed: an empty page rather than an error loop
                r = self._current = _Render((), self.clock(), 0.0)
        encoder, content_type = choose_encoder(accept or "")
        encoder = fast(encoder)  # the same bytes as prometheus_client's, for the formats Prometheus asks for
        key = (content_type, frozenset(names) if names else None, gzip_accepted(accept_encoding or ""))
        with self._lock:
            if key in self._wanted or len(self._wanted) < MAX_PAGES:
                self._wanted[key] = (encoder, self.monotonic())
        return r.page(key, encoder)

"""Sources refreshed in the background, each on its own thread and interval, into one store.

A source is anything with ``refresh() -> snapshot``. A slow or dead source
blocks only its own thread; the HTTP answer reads the store's latest
snapshots and never waits for a refresh. A failed refresh keeps the last good
snapshot out of the exposition (``up`` goes to 0) and is counted by kind.
After every refresh, failed or not, the Runner calls its ``on_refresh`` hooks (the served exposition
is rendered again: ``collectors.export.exposition``). Serving, each source's state changes are logged
(``StateLog``: up -> down with the error, down -> up), at most twice per ``STATE_LOG_SECONDS`` each;
every source keeps its last error's kind and text (redacted) for ``source_last_error_info``.
Sources may be added and removed while serving (``Runner.add``/``remove``): a broker found in the log dirs
after the start gets its JMX source then (``collectors.jmx.template``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from boundedhttp import FetchError
from monitor.settings.redact import redact_url
from monitor.contract.sourcekinds import ADMIN, GROUPS, LOG_DIRS

log = logging.getLogger("compaction_monitor.sources")
# a source's state changes are logged at most STATE_LOG_BURST times per this many seconds: a source
# flapping every refresh says so twice a minute, with the count of changes in between, not every refresh
STATE_LOG_SECONDS = 60.0

@dataclass
class SourceStatus:
    name: str
    kind: str  # jmx | jolokia | log_dirs | cleaner_log | admin | consumer_groups
    cluster: str
    broker: str | None = None
    snapshot: Any = None
    up: bool = False
    last_success: float | None = None
    last_duration: float | None = None
    last_error: str | None = None
    errors: Counter = field(default_factory=Counter)
    endpoint: str | None = None  # what it reads (bootstrap servers, a URL without its password, a path)
    # the last error, kept after the source recovers: a failed refresh's, or a part's of a refresh that
    # succeeded with some calls failed (the snapshot's first error); its text redacted
    last_error_kind: str | None = None
    last_error_message: str | None = None
    refreshes: int = 0  # refreshes ended (succeeded or failed) since start: collectors.serving.refresh_log's rounds


def error_kind(exc: BaseException) -> str:
    if isinstance(exc, FetchError):
        return exc.kind
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, OSError):
        return "io"
    name = type(exc).__name__
    if name == "KafkaException":
        return "kafka"
    return "error"


class Store:
    """The latest snapshot and health of every source; read by the exposers at scrape time."""

    def __init__(self):
        self._lock = threading.Lock()
        self._status: dict[str, SourceStatus] = {}

    def register(self, name: str, kind: str, cluster: str, broker: str | None = None,
                 endpoint: str | None = None) -> None:
        with self._lock:
            self._status.setdefault(name, SourceStatus(name, kind, cluster, broker,
                                                       endpoint=redact_url(endpoint) if endpoint else None))

    def success(self, name: str, snapshot, duration: float, now: float) -> None:
        with self._lock:
            s = self._status.get(name)
            if s is None:  # removed during its refresh (Runner.remove)
                return
            s.snapshot, s.up, s.last_success, s.last_duration, s.last_error = snapshot, True, now, duration, None
            s.refreshes += 1
            # a part of the source that failed while the rest succeeded (a log dir down) is counted too
            # (kind, message) pairs where the snapshot has them (log dirs, the cleaner log); else its kinds and
            # the first of its errors by what failed (the admin sources: {what: why})
            details = tuple(getattr(snapshot, "error_details", ()) or ())
            kinds = tuple(k for k, _ in details) or tuple(getattr(snapshot, "error_kinds", ()) or ())
            s.errors.update(kinds)
            if kinds:
                errors = getattr(snapshot, "errors", None)
                first = next(iter(errors.items()), None) if isinstance(errors, dict) else None
                s.last_error_kind = kinds[0]
                s.last_error_message = redact_url(details[0][1] if details else f"{first[0]}: {first[1]}" if first
                                                  else kinds[0])

    def failure(self, name: str, exc: BaseException, duration: float) -> None:
        with self._lock:
            s = self._status.get(name)
            if s is None:
                return
            # printed by collect and kept for status: any URL's password masked, whatever raised it
            s.up, s.last_duration, s.last_error = False, duration, redact_url(f"{type(exc).__name__}: {exc}")
            s.snapshot = None  # a down source publishes nothing rather than stale numbers
            s.errors[error_kind(exc)] += 1
            s.last_error_kind, s.last_error_message = error_kind(exc), s.last_error
            s.refreshes += 1

    def unregister(self, name: str) -> None:
        """A source that is gone (a broker no longer found: ``Runner.remove``): its series go with it."""
        with self._lock:
            self._status.pop(name, None)

    def statuses(self) -> list[SourceStatus]:
        with self._lock:
            return [SourceStatus(**{**s.__dict__, "errors": Counter(s.errors)}) for s in self._status.values()]

    def snapshot(self, name: str):
        with self._lock:
            s = self._status.get(name)
            return s.snapshot if s else None


@dataclass
class _Logged:
    up: bool | None = None  # the state last logged (None: nothing yet)
    at: tuple = ()  # when the last STATE_LOG_BURST lines were logged
    seen: bool | None = None  # the state of the last refresh
    changes: int = 0  # changes since the last line


STATE_LOG_BURST = 2  # lines per source within STATE_LOG_SECONDS: a down and its recovery go out at once


class StateLog:
    """Logs each source's state changes (serving mode): up -> down with the error text (already redacted
    by the store), down -> up. A source's first refresh is logged only when it is down. At most
    ``STATE_LOG_BURST`` lines per source per ``interval`` seconds (a down and the up after it at once; a
    source flapping every refresh no more often than that): a change beyond them is logged once the
    interval allows, if the state still differs from the one last logged, with the count of changes in
    between."""

    def __init__(self, interval: float = STATE_LOG_SECONDS, clock=time.monotonic, logger: logging.Logger = log):
        self.interval, self.clock, self.log = interval, clock, logger
        self._logged: dict[str, _Logged] = {}
        self._lock = threading.Lock()

    def observe(self, st: SourceStatus) -> None:
        now = self.clock()
        with self._lock:
            r = self._logged.setdefault(st.name, _Logged())
            if r.seen is not None and st.up != r.seen:
                r.changes += 1
            r.seen = st.up
            if r.up is None and st.up:  # a first refresh that works is no change
                r.up = True
                r.changes = 0
                return
            if st.up == r.up or (len(r.at) >= STATE_LOG_BURST and now - r.at[0] < self.interval):
                return
            between = r.changes - 1 if r.up is not None else 0
            r.up, r.at, r.changes = st.up, (r.at + (now,))[-STATE_LOG_BURST:], 0
        more = f" ({between} state changes since the last line not logged)" if between > 0 else ""
        where = f" ({st.endpoint})" if st.endpoint and st.endpoint not in (st.last_error or "") else ""
        if st.up:
            self.log.warning("source %s%s is up again%s", st.name, where, more)
        else:
            self.log.warning("source %s%s is down: %s%s", st.name, where, st.last_error, more)


@dataclass
class Source:
    name: str
    kind: str
    cluster: str
    refresh: Callable[[], Any]
    interval: float
    broker: str | None = None
    endpoint: str | None = None
    # True while the source has work left that its next refresh does (a log-dir scanner's records still to
    # read, headers first): that refresh starts after BUSY_PAUSE_SECONDS, not after the interval
    busy: Callable[[], bool] | None = None
    # work of its own beside its refreshes (a log-dir scanner's record pass on its own thread): started with
    # the source's thread when serving (never by refresh_all: the one-shot commands read synchronously), given
    # the call that ends the source's pause at once (that work done: its next refresh puts it on the page),
    # stopped and joined when the runner stops or the source is removed
    start: Callable[[Callable[[], None]], None] | None = None
    stop: Callable[[], None] | None = None


BUSY_PAUSE_SECONDS = 0.5


def refresh_once(store: Store, source: Source, clock=time.time, gone: threading.Event | None = None) -> bool:
    """One refresh into the store; none when the source was removed meanwhile (``gone``: a source of the
    same name a hook put in its place keeps its own status)."""
    t0 = time.monotonic()
    try:
        snap = source.refresh()
    except Exception as exc:  # noqa: BLE001 - one bad source must never stop the collector
        if gone is None or not gone.is_set():
            store.failure(source.name, exc, time.monotonic() - t0)
        return False
    if gone is not None and gone.is_set():
        return False
    store.success(source.name, snap, time.monotonic() - t0, clock())
    return True


class Runner:
    def __init__(self, store: Store, sources: list[Source], on_refresh: list[Callable[[], None]] | None = None,
                 state_log: StateLog | None = None):
        self.store = store
        self.state_log = state_log or StateLog()  # serving (start) only: collect --once prints its own
        self.sources = sources
        self.on_refresh = list(on_refresh or ())  # called after each refresh updated the store
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()  # sources added and removed by a hook (collectors.jmx.template)
        self._stops: dict[str, threading.Event] = {}  # a source removed while serving: its thread's own stop
        self._wakes: dict[str, threading.Event] = {}  # ends a source's pause: stop, remove, its own work done
        self._started = False
        for s in sources:
            store.register(s.name, s.kind, s.cluster, s.broker, s.endpoint)

    def add(self, source: Source) -> None:
        """A source found after the start (a broker the log-dir discovery found: ``collectors.jmx.template``):
        registered, and refreshed on its own thread when serving (by ``refresh_all`` when not)."""
        with self._lock:
            if any(s.name == source.name for s in self.sources):
                return
            self.sources.append(source)
            self.store.register(source.name, source.kind, source.cluster, source.broker, source.endpoint)
            if self._started:
                self._spawn(source)

    def remove(self, name: str) -> None:
        """A source that is gone: its thread stops after its current refresh, its status leaves the store."""
        with self._lock:
            gone = [s for s in self.sources if s.name == name]
            self.sources = [s for s in self.sources if s.name != name]
            stop, wake = self._stops.pop(name, None), self._wakes.pop(name, None)
            if stop is not None:
                stop.set()
                wake.set()
            self.store.unregister(name)
        for s in gone:
            if s.stop is not None:
                s.stop()

    def refresh_all(self) -> bool:
        """Each source once, in order (``collect --once``); True when all succeeded. A source a hook adds
        (after the log dirs' refresh found its broker) is refreshed too, then the hooks run again."""
        done, ok = set(), True  # by the source itself: one a hook put in place of another of its name is new
        while todo := [s for s in list(self.sources) if id(s) not in done]:
            ok = all([refresh_once(self.store, s) for s in todo]) and ok
            done.update(id(s) for s in todo)
            self._refreshed()
        return ok

    def _refreshed(self) -> None:
        for hook in self.on_refresh:
            hook()

    # sources that read the admin source's snapshot (topic configs, offsets): their first refresh waits
    # for the cluster's admin source's first, up to FIRST_ADMIN_WAIT seconds, rather than find no topic
    # config (unknown until the next refresh: monitor.model.topicconfig never puts Kafka's defaults in its place)
    ADMIN_READERS = (LOG_DIRS, GROUPS)
    FIRST_ADMIN_WAIT = 60.0

    def start(self) -> None:
        with self._lock:
            self._started = True
            firsts = {s.name: threading.Event() for s in self.sources if s.kind == ADMIN}
            for s in list(self.sources):
                waits = [firsts[o.name] for o in self.sources if o.kind == ADMIN and o.cluster == s.cluster] \
                    if s.kind in self.ADMIN_READERS else []
                self._spawn(s, firsts.get(s.name), waits)

    def _spawn(self, s: Source, first_done: threading.Event | None = None, waits=()) -> None:
        own = self._stops[s.name] = threading.Event()
        wake = self._wakes[s.name] = threading.Event()
        if s.start is not None:
            s.start(wake.set)
        t = threading.Thread(target=self._loop, args=(s, first_done, waits, own, wake), name=f"source-{s.name}",
                             daemon=True)
        t.start()
        self._threads.append(t)

    def _loop(self, source: Source, first_done: threading.Event | None = None, waits=(),
              own: threading.Event | None = None, wake: threading.Event | None = None) -> None:
        deadline = time.monotonic() + self.FIRST_ADMIN_WAIT
        own, wake = own or threading.Event(), wake or threading.Event()
        for w in waits:  # each in slices, so that stop() is not held up
            while not w.is_set() and not self._stop.is_set() and time.monotonic() < deadline:
                w.wait(0.2)
        while not self._stop.is_set() and not own.is_set():
            t0 = time.monotonic()
            wake.clear()
            refresh_once(self.store, source, gone=own)
            st = next((x for x in self.store.statuses() if x.name == source.name), None)
            if st is not None:
                self.state_log.observe(st)
            if first_done is not None:
                first_done.set()
            if own.is_set():  # removed during its refresh: the store no longer holds it
                return
            self._refreshed()
            pause = max(source.interval - (time.monotonic() - t0), BUSY_PAUSE_SECONDS)
            if source.busy is not None and source.busy():
                pause = BUSY_PAUSE_SECONDS
            wake.wait(pause)  # set by stop, remove, or the source's own work done

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._lock:
            for wake in self._wakes.values():
                wake.set()
        for t in self._threads:
            t.join(timeout)
        with self._lock:
            own = [s.stop for s in self.sources if s.stop is not None]
        for stop in own:
            stop()

"""What the collector says of its own work at INFO (issue 33): at start-up one line of what it watches, then
one line per refresh round, so that a running collector's log shows it alive, what is down and how much it
reads, between the source state changes ``collectors.serving.runner.StateLog`` warns of.

A round: every source refreshes on its own thread and interval (``collectors.serving.runner``), so the collector
has no refresh of its own; a round ends when every source has ended at least one refresh (succeeded or
failed) since the last line, and at least the shortest source interval has passed since it (a log-dir
scanner reading records after headers refreshes every ``BUSY_PAUSE_SECONDS``: that is not a line each
time). ``collect --once`` is one round.

Nothing here is secret: the start-up line names bootstrap servers and log-dir paths (URLs through
``redact_url``), and counts JMX and Jolokia pages rather than print their URLs; a down source is named
with its error's kind, not its text (``StateLog`` has the text, redacted)."""

from __future__ import annotations

import logging
import threading
import time

from monitor.settings.redact import redact_url

from monitor.contract.units import bytes_iec, duration_ms, rate
from monitor.contract.sourcekinds import ADMIN, CLEANER_LOG, GROUPS, JMX, JOLOKIA, LOG_DIRS

log = logging.getLogger("compaction_monitor.collect")

NAMED_AT_MOST = 5  # down sources and log dirs named in a refresh line; more are counted ("and 3 more")

# a source kind as the start-up line counts it: (one, several)
KIND_NAMES = {JMX: ("JMX page", "JMX pages"), JOLOKIA: ("Jolokia page", "Jolokia pages"),
              LOG_DIRS: ("log-dir scanner", "log-dir scanners"), CLEANER_LOG: ("cleaner log", "cleaner logs"),
              ADMIN: ("admin API source", "admin API sources"),
              GROUPS: ("consumer-groups source", "consumer-groups sources")}


def _count(n: int, kind: str) -> str:
    one, many = KIND_NAMES.get(kind, (kind, kind))
    return f"{n} {one if n == 1 else many}"


def _rate(v: float | None) -> str:
    return "unlimited" if not v else rate(v)


def startup_line(config, sources, *, state_dir: str | None, listening: str | None) -> str:
    """What the collector watches: per cluster its sources by kind and count, the admin API's bootstrap
    servers and protocol, the log-dir paths and the JMX URL template; then the role, granularity, state
    dir, log-dir I/O budget and where /metrics is served (``listening`` None: ``--once``)."""
    clusters = []
    for c in config.clusters:
        kinds: dict[str, int] = {}
        for s in sources:
            if s.cluster == c.name:
                kinds[s.kind] = kinds.get(s.kind, 0) + 1
        parts = [_count(n, k) for k, n in kinds.items()] or ["no source"]
        if c.bootstrap_servers:
            parts.append(f"bootstrap {redact_url(c.bootstrap_servers)} "
                         f"({c.client.get('security.protocol', 'PLAINTEXT')})")
        paths = [p for b in c.brokers for p in b.log_dirs]
        if paths:
            parts.append("log dirs under " + ", ".join(map(str, paths)))
        if c.jmx_url_template:
            parts.append(f"JMX URL template {redact_url(c.jmx_url_template)}")
        clusters.append(f"cluster {c.name}: " + ", ".join(parts))
    budgets = sorted({config.io_budget_for(b) or 0 for c in config.clusters for b in c.brokers if b.log_dirs})
    tail = [f"role {config.role}", f"granularity {config.granularity}",
            f"state dir {state_dir}" if state_dir else "no state dir (every segment read at start)"]
    if budgets:
        tail.append("log-dir I/O budget " + " to ".join(_rate(v) for v in budgets) + " per broker")
    tail.append(f"serving {listening}" if listening else "once (no listener)")
    return "watching " + "; ".join(clusters + tail)


class RefreshLog:
    """A runner hook (``Runner.on_refresh``, called on each source's thread after each of its refreshes):
    one INFO line per round (the module's rule). ``attach`` gives it the runner, whose sources' intervals
    set the shortest time between lines. ``clock``: monotonic seconds, injectable for tests."""

    def __init__(self, store, clock=time.monotonic, logger: logging.Logger = log):
        self.store, self.clock, self.log = store, clock, logger
        self.runner = None
        self._lock = threading.Lock()
        self._at_line: dict[str, int] = {}  # source -> its refreshes when the last line was logged
        self._counted: dict[str, int] = {}  # log-dir source -> its refreshes whose bytes are in _bytes
        self._bytes = 0  # log-dir bytes read since the last line
        self._last: float | None = None  # when the last line was logged

    def attach(self, runner) -> None:
        self.runner = runner

    def __call__(self) -> None:
        with self._lock:
            statuses = self.store.statuses()
            for st in statuses:  # each refresh's bytes once, whichever thread's call sees it first
                if st.kind == LOG_DIRS and st.refreshes > self._counted.get(st.name, 0):
                    self._counted[st.name] = st.refreshes
                    self._bytes += getattr(st.snapshot, "bytes_read", 0) or 0
            if not statuses or any(st.refreshes <= self._at_line.get(st.name, 0) for st in statuses):
                return
            now = self.clock()
            if self._last is not None and now - self._last < self._shortest_interval():
                return
            line = refresh_line(statuses, self._bytes)
            self._at_line = {st.name: st.refreshes for st in statuses}
            self._counted = {k: v for k, v in self._counted.items() if k in self._at_line}
            self._bytes, self._last = 0, now
        self.log.info("%s", line)

    def _shortest_interval(self) -> float:
        sources = list(self.runner.sources) if self.runner is not None else []
        return min((s.interval for s in sources), default=0.0)


def refresh_line(statuses, bytes_read: int) -> str:
    """One round: sources up of all (the down ones named, with their error's kind), log dirs down,
    partitions read from log dirs and compacted partitions the admin API lists, the log-dir bytes read in
    the round and the record bytes still to read, and the slowest source's last refresh."""
    down = [st for st in statuses if not st.up]
    named = _named([f"{st.name} ({st.last_error_kind or 'error'})" for st in down])
    parts = [f"{len(statuses) - len(down)} of {len(statuses)} sources up" + (f" (down: {named})" if down else "")]
    dirs = [st.snapshot for st in statuses if st.kind == LOG_DIRS and st.snapshot is not None]
    dirs_down = [d for snap in dirs for d in getattr(snap, "down", {})]
    if dirs_down:
        parts.append(f"{len(dirs_down)} log dir(s) down: {_named(dirs_down)}")
    if dirs:
        seen = sum(len({(r.state.topic, r.state.partition) for r in snap.partitions} | set(snap.partition_errors))
                   for snap in dirs)
        unknown = sum(len(snap.unknown_reasons) for snap in dirs)
        parts.append(f"{seen:,} partitions in log dirs" + (f" ({unknown:,} unknown)" if unknown else ""))
    admins = [st.snapshot for st in statuses if st.kind == ADMIN and st.snapshot is not None]
    if admins:
        listed = sum(len(t.partitions) for snap in admins for t in snap.topics.values())
        parts.append(f"{listed:,} compacted partitions listed by the admin API")
    if dirs:
        pending = sum(snap.io.pending_bytes for snap in dirs if snap.io is not None)
        parts.append(f"{bytes_iec(bytes_read)} read from log dirs"
                     + (f", {bytes_iec(pending)} of records still to read" if pending else ""))
    timed = [st for st in statuses if st.last_duration is not None]
    if timed:
        slow = max(timed, key=lambda st: st.last_duration)
        parts.append(f"slowest {slow.name} {duration_ms(slow.last_duration * 1000)}")
    return "refresh: " + "; ".join(parts)


def _named(names: list[str]) -> str:
    shown = ", ".join(names[:NAMED_AT_MOST])
    return shown + (f" and {len(names) - NAMED_AT_MOST} more" if len(names) > NAMED_AT_MOST else "")

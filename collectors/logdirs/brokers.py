"""The log-dir sources follow the brokers found under their paths, after each refresh: a runner hook.

Why: a broker-role DaemonSet reads ``/var/lib/kubelet/pods``; a broker pod scheduled on the node after
the collector started, or a volume mounted later, is found by the next refresh of the log dirs
(``collectors.logdirs.paths``: every node.id under the paths, in the snapshot's ``nodes``). Its log dirs
then get their own scanner, labelled with its node.id (``Runner.add``), with its own summary cache file
and I/O budget (``collectors.app.scanner_source``: the one definition the sources built at the start use
too); a broker whose log dirs are no longer found (its pod moved away) loses its source (``Runner.remove``):
its series are withdrawn, said once in the log. Which scanners the node.ids found make, and their labels
(a path holding no broker: none, unless the config names the broker), is ``split_nodes``' rule, the one
the start uses. The templated JMX sources (``collectors.jmx.template``) follow the log-dir sources this
hook leaves: it runs before them.

The no-broker source keeps every log dir (as a one-broker path's does); the refresh that finds the
first broker reads none of it (``LogDirScanner(serves=...)``: split_nodes' rule again, on the node.ids it
found), and this hook, run before the page is rendered, replaces it by the broker's own source, which
reads it at once: each segment is read once. Likewise a broker's source keeping every log dir that finds
a second broker beside it hands both over unread.

A path whose listing fails (not "no log dir there": unreadable) is no broker gone: while one of the paths
is down for that reason, brokers are added, never removed.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable

from collectors.logdirs.paths import split_nodes
from monitor.kafka.discovery import IO
from monitor.contract.sourcekinds import LOG_DIRS

log = logging.getLogger("compaction_monitor.collect")


@dataclass
class _Followed:
    cluster: object  # monitor.settings.config.ClusterConfig
    broker: object  # the BrokerConfig whose log_dirs these sources read
    make: Callable  # (cluster, broker config, label, node filter) -> Source
    sources: dict = field(default_factory=dict)  # label -> Source
    nodes: dict = field(default_factory=dict)  # label -> its scanner's node filter (collectors.logdirs.paths.resolve)
    seen: float = float("-inf")  # the taken_at of the snapshot last followed


class FollowedBrokers:
    """The runner hook (``attach`` it to the runner first). ``scanners``: ``collectors.app.build_sources``'
    (cluster name, broker config id) -> (make, {label: Source built at the start})."""

    def __init__(self, config, store, scanners: dict):
        clusters = {c.name: c for c in config.clusters}
        self.store, self.runner = store, None
        self._lock = threading.Lock()  # the hook runs on every source's thread
        self._followed = [_Followed(clusters[c], next(b for b in clusters[c].brokers if b.id == bid), make,
                                    {label: src for label, (src, _) in found.items()},
                                    {label: node for label, (_, node) in found.items()})
                          for (c, bid), (make, found) in scanners.items()]

    def attach(self, runner) -> "FollowedBrokers":
        self.runner = runner
        return self

    def __call__(self) -> None:
        if self.runner is None:
            return
        with self._lock:
            snaps = {s.name: s.snapshot for s in self.store.statuses() if s.kind == LOG_DIRS and s.snapshot}
            for f in self._followed:
                mine = [snaps[s.name] for s in f.sources.values() if s.name in snaps]
                latest = max(mine, key=lambda s: s.taken_at, default=None)
                if latest is None or latest.taken_at <= f.seen:
                    continue
                f.seen = latest.taken_at
                listed = not any(kind == IO for kind, _ in latest.unresolved.values())
                self._follow(f, latest.nodes, listed)

    def _follow(self, f: _Followed, nodes, listed: bool) -> None:
        want = dict(split_nodes(f.broker.id, nodes))
        where = ", ".join(f.broker.log_dirs)
        for label, src in list(f.sources.items()):
            if label in want and f.nodes.get(label) != want[label]:
                # another broker beside it now: a scanner of its own log dirs only, in place of the one whose
                # last page holds the other's too (its summary cache file is the same: what it read is kept)
                self.runner.remove(src.name)
                src = f.sources[label] = f.make(f.cluster, f.broker, label, want[label])
                f.nodes[label] = want[label]
                self.runner.add(src)
            elif label not in want and listed:
                self.runner.remove(src.name)
                del f.sources[label], f.nodes[label]
                if label is None:
                    log.warning("cluster %s: a broker's log dirs found under %s: the source %s (no broker) is "
                                "replaced by each broker's own", f.cluster.name, where, src.name)
                else:
                    log.warning("cluster %s: broker %s's log dirs are no longer found under %s: its source %s is "
                                "removed and its series withdrawn", f.cluster.name, label, where, src.name)
        for label, node in want.items():
            if label not in f.sources:
                src = f.sources[label] = f.make(f.cluster, f.broker, label, node)
                f.nodes[label] = node
                self.runner.add(src)
                if label is None:
                    log.warning("cluster %s: no broker's log dirs under %s now: the paths are down under source %s "
                                "(no broker label) until one is found", f.cluster.name, where, src.name)
                else:
                    log.warning("cluster %s: broker %s's log dirs found under %s: read by source %s from now on",
                                f.cluster.name, label, where, src.name)

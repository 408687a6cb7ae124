"""Each broker found in the log dirs gets its JMX source from the cluster's ``jmx_url_template``
(``monitor.settings.jmxtemplate``), as the log-dir discovery finds it: a runner hook.

Why a hook and not a source list fixed at the start: a broker-role DaemonSet finds its brokers by their
files (meta.properties' node.id, ``monitor.kafka.discovery``), at each refresh of the log dirs; a broker
pod scheduled on the node later, or a volume mounted after the collector started, is found then, and its
JMX page is read from then on (``Runner.add``). A broker whose log dirs are no longer found (its pod moved
away) loses its JMX source (``Runner.remove``): its gauges would otherwise be exported by two collectors;
so does a broker whose log-dir source is gone (``collectors.logdirs.brokers`` removed it: one view of the
brokers found now, the log-dir sources').
A log-dir source that is down keeps its broker's JMX source: a failed listing is no broker gone.

The JMX source is labelled as the log dirs' series are (the scanner's ``broker``), so the partition's
causes that weigh the broker's cleaner gauges (``cleaner_dead``, ``throttled_cleaner``) find them.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from monitor.settings.jmxtemplate import expand
from monitor.contract.sourcekinds import JMX, JOLOKIA, LOG_DIRS

log = logging.getLogger("compaction_monitor.collect")


class TemplatedJmx:
    """The runner hook (``attach`` it to the runner first). ``make(cluster, broker config, label, url)``
    builds the JMX source (``collectors.jmx.pages.jmx_source``: the same fetch as a configured ``jmx_url``)."""

    def __init__(self, config, store, make: Callable):
        self.clusters = {c.name: c for c in config.clusters if c.jmx_url_template}
        self.store, self.make, self.runner = store, make, None
        self._lock = threading.Lock()
        self._added: dict[str, str] = {}  # source name -> the node.id its URL was made for
        self._owner: dict[str, tuple] = {}  # source name -> (cluster, label) of the log-dir source it follows
        self._said: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.clusters)

    def attach(self, runner) -> "TemplatedJmx":
        self.runner = runner
        return self

    def __call__(self) -> None:
        if self.runner is None or not self.clusters:
            return
        with self._lock:  # the hook runs on every source's thread
            statuses = self.store.statuses()
            # brokers whose page the config gives (jmx_url or jolokia_url): that one is read
            configured = {(s.cluster, s.broker) for s in statuses if s.kind in (JMX, JOLOKIA)
                          and s.name not in self._added}
            for st in statuses:
                cluster = self.clusters.get(st.cluster)
                if st.kind != LOG_DIRS or cluster is None or st.snapshot is None or st.broker is None:
                    continue  # (no broker label: paths holding none, replaced once one is found: logdir_brokers)
                name = f"jmx:{cluster.name}:{st.broker}"
                if (st.cluster, st.broker) in configured:
                    continue
                nodes = sorted({f.node_id for f in st.snapshot.found.values()
                                if f.node_id is not None and f.problem is None}, key=str)
                if st.broker in nodes:  # the scanner is labelled by its node.id: that broker's page
                    nodes = [st.broker]
                elif len(nodes) > 1:
                    self._say(f"{name} (several)", "broker %s of cluster %s: its log dirs name node.ids %s: no JMX "
                              "page read for it from jmx_url_template (restart the collector to read each under its "
                              "own)", st.broker, cluster.name, ", ".join(nodes))
                    nodes = []
                node = nodes[0] if nodes else None
                if self._added.get(name) not in (None, node):  # gone, or another broker under the label now
                    self.runner.remove(name)
                    del self._added[name], self._owner[name]
                if node is not None and name not in self._added:
                    self._add(cluster, st.broker, name, node)
            scanned = {(st.cluster, st.broker) for st in statuses if st.kind == LOG_DIRS}
            for name in [n for n, owner in self._owner.items() if owner not in scanned]:
                self.runner.remove(name)  # its broker's log-dir source is gone (collectors.logdirs.brokers)
                del self._added[name], self._owner[name]

    def _add(self, cluster, label: str, name: str, node: str) -> None:
        from monitor.settings.secrets import SecretError, resolve_string

        b = next((b for b in cluster.brokers if b.id == label and b.log_dirs), None) \
            or next(b for b in cluster.brokers if b.log_dirs)
        try:
            url = resolve_string(expand(cluster.jmx_url_template, node))
        except SecretError as exc:
            self._say(f"{name} (secret)", "cluster %s: jmx_url_template: %s", cluster.name, exc)
            return
        self.runner.add(self.make(cluster, b, label, url))
        self._added[name] = node
        self._owner[name] = (cluster.name, label)
        log.info("cluster %s: broker %s (node.id %s) found in the log dirs: reading its JMX page from "
                 "jmx_url_template", cluster.name, label, node)

    def _say(self, key: str, *args) -> None:
        if key not in self._said:
            self._said.add(key)
            log.warning(*args)

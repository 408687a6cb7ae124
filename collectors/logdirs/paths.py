"""The configured log-dir paths, resolved to log dirs at each refresh (``monitor.kafka.discovery``).

Why at each refresh: a path may be a broker's volume or the kubelet's pod volumes, where log dirs come
and go with the pods (a broker rescheduled here, a volume mounted after the collector started); a path
that yields no log dir now may yield one later. A path that yields none, and a log dir found with a
problem (its meta.properties unreadable, its broker claimed by another cluster's log dir), is down with
the reason (``log_dir_up 0``, ``log_dir_down_info{reason}``), never up with zero partitions; the other
log dirs go on.

Which broker label a log dir's series carry is its meta.properties' node.id: ``split_nodes`` gives
one scanner per broker found under the configured paths when they hold several (a DaemonSet on a node
that runs two broker pods), each keeping only its broker's log dirs (``resolve(..., node=...)``); at
build (``split_by_broker``) and again after each refresh (``collectors.logdirs.brokers``: a broker pod
scheduled on the node later gets its own scanner, one gone loses it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from monitor.kafka.discovery import FoundLogDir, LogDirNotFound, check_cluster_ids, discover_log_dirs

ANY = object()  # a scanner that keeps every log dir found (one broker's paths: the config names it)


@dataclass
class Resolved:
    log_dirs: list[str] = field(default_factory=list)  # the log dirs to read, each folder once
    down: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (kind, reason)
    unresolved: dict[str, tuple[str, str]] = field(default_factory=dict)  # configured paths that yield no log dir
    found: dict[str, FoundLogDir] = field(default_factory=dict)  # every log dir found, with or without a problem
    said: dict[str, str] = field(default_factory=dict)  # what to say once while it lasts (the scanner's notify)
    # the node.ids of every log dir found under the paths, this scanner's or not (None: a log dir naming none)
    nodes: frozenset = frozenset()

    @property
    def every(self) -> list[str]:
        """Every path with a log_dir_up series: the log dirs read, those down, the paths that yield none."""
        return self.log_dirs + [d for d in self.down if d not in self.log_dirs]


def resolve(paths, node=ANY) -> Resolved:
    """The log dirs under ``paths`` (each folder once: the same one given twice, or found under two
    paths, is one log dir); with ``node``, only those whose meta.properties name that node.id (None:
    those that name none)."""
    out, real = Resolved(), set()
    found: list[FoundLogDir] = []
    for p in map(str, paths):
        try:
            disc = discover_log_dirs(p)
        except LogDirNotFound as exc:
            out.unresolved[p] = out.down[p] = (exc.kind, exc.reason)
            continue
        for f in disc.log_dirs:
            r = os.path.realpath(f.path)
            if r not in real:
                real.add(r)
                found.append(f)
                if f.path != p:
                    rel = os.path.relpath(f.path, p)
                    out.said[f"{f.path} (found)"] = f"{p}: found log dir {rel} in it ({f.describe()})"
        for d, why in disc.skipped:
            out.said[f"{d} (unlisted)"] = f"{d}: cannot list ({why}), skipped while looking for log dirs under {p}"
        if disc.cut:
            out.said[f"{p} (cut)"] = (f"{p}: stopped looking for log dirs after {disc.entries} entries: give a path "
                                      "closer to the log dirs")
    checked = check_cluster_ids(found)  # across the paths too
    out.nodes = frozenset(f.node_id for f in checked)
    for f in checked:
        if node is not ANY and f.node_id != node:
            out.said[f"{f.path} (other broker)"] = (
                f"{f.path}: log dir of node.id {f.node_id}, not read here (this scanner reads node.id {node}'s; "
                "each broker found under the paths is read by its own scanner)")
            continue
        out.found[f.path] = f
        if f.note:
            out.said[f"{f.path} (eras)"] = f.note
        if f.problem is not None:
            out.down[f.path] = f.problem
        else:
            out.log_dirs.append(f.path)
    return out


UNNAMED = "local"  # the broker label of log dirs that name no node.id (the flags' one broker: configflags)


def split_by_broker(broker_id: str, paths) -> list[tuple[str | None, object]]:
    """``split_nodes`` of the brokers whose log dirs are under ``paths`` now (the collector's build)."""
    return split_nodes(broker_id, resolve(paths).nodes)


def split_nodes(broker_id: str, nodes) -> list[tuple[str | None, object]]:
    """(broker label, node filter for ``resolve``) of each scanner over paths whose log dirs name ``nodes``
    (node.ids; None for a log dir naming none): one, labelled ``broker_id``, keeping every log dir,
    unless they name several node.ids; then one per node.id, labelled with it (log dirs that name none,
    or whose meta.properties cannot be read, go with ``broker_id``).

    ``broker_id`` ``UNNAMED`` is no broker the config names (the flags' ``--log-dir`` found none at the
    start): its scanner takes the one node.id found as its label, and while the paths hold no log dir at
    all it is labelled with no broker (None). Why none rather than "local": a DaemonSet's collectors
    all start with the same path on every node; a path holding no broker yet is down on each of them,
    and "local" would be one broker name claimed by every node (and, once a broker is found, a second
    label for its series). The configured broker id, when the config gives one, labels it as it is."""
    real = sorted((n for n in nodes if n is not None), key=int)
    if len(real) > 1:
        return [(n, n) for n in real] + ([(broker_id, None)] if None in nodes else [])
    if broker_id != UNNAMED:
        return [(broker_id, ANY)]
    if real:
        return [(real[0], ANY)]
    return [(UNNAMED if None in nodes else None, ANY)]

"""Finding the Kafka log dirs under any path: what ``--log-dir``, ``logdir PATH`` and ``log_dirs`` take.

Why: operators know where their broker's *volume* is, rarely which folder in it is the entry of
``log.dirs``. Strimzi keeps a broker's log dir at ``/var/lib/kafka/data/kafka-log<N>`` (JBOD:
``/var/lib/kafka/data-<id>/kafka-log<N>``), Bitnami at ``/bitnami/kafka/data``, Confluent Platform and the
apache/kafka image at ``/var/lib/kafka/data`` (``/tmp/kraft-combined-logs`` by default), and a DaemonSet
sees every broker volume of its node under the kubelet's
``/var/lib/kubelet/pods/<uid>/volumes/<plugin>/<pv>/mount/kafka-log<N>``. Read as a log dir, the parent
of one shows no partition and looked healthy; this walk finds the log dirs below it instead, or says in
one line naming the path what was expected.

A folder is a log dir when it holds ``meta.properties`` or one of Kafka's offset checkpoint files
(``monitor.kafka.checkpoint.CHECKPOINT_FILES``: every broker writes them into each of its log dirs), or a
``<topic>-<partition>`` folder holding files Kafka writes there (a copy of partitions, as tests and
``logdir`` on a backup have). The walk is breadth first, to ``max_depth`` levels below the path (the
kubelet's pod volumes put a Strimzi log dir 6 below ``/var/lib/kubelet/pods``, 7 below
``/var/lib/kubelet``: the default reaches both), and it never descends into a log dir or a partition
folder, never visits a folder twice (a symlink loop, a volume mounted in two pods), and lists at most
``max_entries`` entries in all. Which broker a log dir belongs to is its ``meta.properties``
(``monitor.kafka.logdir.load_meta_properties``/``meta_node_id``); a log dir whose meta.properties cannot
be read, and two that claim one broker with different cluster ids, are found with their ``problem``:
the caller reports them down with it, never guesses their broker.
"""

from __future__ import annotations

import os
import re
import stat
from collections import deque
from dataclasses import dataclass, replace

from monitor.fileio.regularfile import os_reason
from monitor.kafka.checkpoint import CHECKPOINT_FILES
from monitor.kafka.kafkanames import offset_file, partition_name
from monitor.kafka.logdir import MetaPropertiesError, load_meta_properties, meta_node_id

DEFAULT_MAX_DEPTH = 7  # /var/lib/kubelet/<pods>/<uid>/volumes/<plugin>/<pv>/mount/kafka-log<N>: 7 below the kubelet's
DEFAULT_MAX_ENTRIES = 100_000  # directory entries listed per walk: well under a second, whatever the path
PEEK = 3  # <topic>-<partition> folders looked into per folder before it is taken for no log dir
PEEK_ENTRIES = 64  # entries of each looked into
MARKERS = ("meta.properties",) + CHECKPOINT_FILES
PARTITION_FILES = ("partition.metadata", "leader-epoch-checkpoint")  # a partition folder's own files, besides segments
# Kubernetes volumes of secrets and config, never a broker's data: not walked (their file names are not read either)
NOT_DATA_VOLUMES = ("kubernetes.io~secret", "kubernetes.io~projected", "kubernetes.io~configmap",
                    "kubernetes.io~downward-api")
KUBELET_POD = re.compile(r"/pods/(?P<uid>[^/]+)/volumes/(?P<plugin>[^/]+)/(?P<pv>[^/]+)")
EXPECTED = ("a Kafka log dir (meta.properties or Kafka's offset checkpoint files beside <topic>-<partition> "
            "folders) or a folder holding one")

# the reason kinds a path or log dir is down with (log_dir_down_info{reason}); a scan's own are io and checkpoint
NOT_FOUND, PARTITION_DIR, IO, META, CLUSTER_CONFLICT = ("not_found", "partition_dir", "io", "meta_properties",
                                                          "cluster_conflict")
WRONG_PATH = (NOT_FOUND, PARTITION_DIR, IO)  # the path given yields no log dir at all: a usage error (exit 2)


class LogDirNotFound(Exception):
    """No log dir under ``path``: ``reason`` is one line naming the path and what was expected; ``kind``
    one of ``WRONG_PATH``."""

    def __init__(self, path, reason: str, kind: str = NOT_FOUND):
        self.path, self.reason, self.kind = str(path), reason, kind
        super().__init__(reason)


@dataclass(frozen=True)
class FoundLogDir:
    """One log dir found: its path (under the path given, as given), its layout in words, and whose it is."""

    path: str
    layout: str
    node_id: str | None = None
    cluster_id: str | None = None
    problem: tuple[str, str] | None = None  # (kind: meta_properties | cluster_conflict, one line naming the file)
    note: str | None = None  # something to say once while it lasts, the log dir read all the same (mixed eras)

    def describe(self) -> str:
        who = f"node.id {self.node_id}" if self.node_id else "no meta.properties"
        return who + (f", cluster.id {self.cluster_id}" if self.cluster_id else "") + f"; {self.layout}"


@dataclass(frozen=True)
class Discovery:
    path: str
    log_dirs: tuple[FoundLogDir, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (folder, why): could not be listed; a log dir may be there
    entries: int = 0  # directory entries listed
    cut: bool = False  # max_entries reached: the walk stopped before it was done


def discover_log_dirs(path, max_depth: int = DEFAULT_MAX_DEPTH, max_entries: int = DEFAULT_MAX_ENTRIES) -> Discovery:
    """The log dirs at or below ``path`` (see the module docstring), in walk order; ``LogDirNotFound``
    when there is none: a partition folder given (its log dir is the parent), a path that cannot be read,
    or nothing of Kafka's within ``max_depth`` levels."""
    root = os.fspath(path)
    try:
        st = os.stat(root)
    except OSError as exc:
        raise LogDirNotFound(root, f"cannot read log dir: {root}: {os_reason(exc)}", IO) from None
    if not stat.S_ISDIR(st.st_mode):
        raise LogDirNotFound(root, f"cannot read log dir: {root}: not a directory; expected {EXPECTED}", IO)
    if _has_marker(root):  # the log dir itself (no partition folder holds these): nothing listed
        return Discovery(root, (_found(root, root),))
    walk = _Walk(max_entries)
    try:
        names = walk.list(root)
    except OSError as exc:
        raise LogDirNotFound(root, f"cannot read log dir: {root}: {os_reason(exc)}", IO) from None
    part = partition_name(os.path.basename(os.path.normpath(root)))  # (a -delete/-future/-stray folder is none)
    if part is not None and _kafka_files(names):
        parent = os.path.dirname(os.path.normpath(root)) or "."
        raise LogDirNotFound(root, f"{root}: a partition folder ({part.topic}-{part.partition}), not a log dir: its "
                             f"log dir is the parent, {parent}", PARTITION_DIR)
    found: list[str] = []
    root_names = names
    seen = {(st.st_dev, st.st_ino)}
    queue = deque([(root, 0, names)])
    while queue:
        d, depth, names = queue.popleft()
        if names is None and _has_marker(d):
            found.append(d)
            continue
        if names is None:
            try:
                names = walk.list(d)
            except OSError as exc:
                walk.skipped.append((d, os_reason(exc)))
                continue
        subdirs = _subdirs(d, names)
        if _is_log_dir(d, names, subdirs, walk):
            found.append(d)
            continue
        if depth >= max_depth or walk.cut:
            continue
        for sub in subdirs:
            if os.path.basename(sub) in NOT_DATA_VOLUMES:
                continue
            try:
                s = os.stat(sub)
            except OSError as exc:
                walk.skipped.append((sub, os_reason(exc)))
                continue
            if (s.st_dev, s.st_ino) not in seen:  # a link back up, or one volume seen twice: once
                seen.add((s.st_dev, s.st_ino))
                queue.append((sub, depth + 1, None))
    if not found:
        raise LogDirNotFound(root, _nothing_found(root, root_names, walk, max_depth), NOT_FOUND)
    return Discovery(root, tuple(check_cluster_ids([_found(root, d) for d in found])), tuple(walk.skipped),
                     walk.entries, walk.cut)


def check_cluster_ids(found: list[FoundLogDir]) -> list[FoundLogDir]:
    """Two log dirs that claim one broker (node.id) with different cluster.ids cannot both be that broker's:
    each gets the problem, naming the other, and neither is read as the broker's."""
    ids: dict[str, dict[str, str]] = {}
    for f in found:
        if f.problem is None and f.node_id is not None and f.cluster_id is not None:
            ids.setdefault(f.node_id, {}).setdefault(f.cluster_id, f.path)
    out = []
    for f in found:
        claims = ids.get(f.node_id or "", {})
        if f.problem is None and len(claims) > 1:
            rest = [f"{p} (cluster.id {c})" for c, p in sorted(claims.items()) if c != f.cluster_id]
            others = ", ".join(rest[:2]) + (f" and {len(rest) - 2} more" if len(rest) > 2 else "")
            f = replace(f, problem=(CLUSTER_CONFLICT, f"{f.path}: claims node.id {f.node_id} of cluster.id "
                                    f"{f.cluster_id}, and so does {others}: two clusters' volumes under one path? "
                                    "give each cluster's log dirs to its own collector"))
        out.append(f)
    return out


class _Walk:
    """The entries budget, and the folders that could not be listed."""

    def __init__(self, max_entries: int):
        self.max_entries, self.entries, self.cut = max_entries, 0, False
        self.skipped: list[tuple[str, str]] = []

    def list(self, d: str, limit: int | None = None) -> list[tuple[str, bool]]:
        """(name, is a folder) of ``d``'s entries, within the budget (and ``limit``)."""
        out = []
        with os.scandir(d) as it:
            for entry in it:
                if self.entries >= self.max_entries:
                    self.cut = True
                    break
                if limit is not None and len(out) >= limit:
                    break
                self.entries += 1
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                out.append((entry.name, is_dir))
        return out


def _subdirs(d: str, names) -> list[str]:
    return [os.path.join(d, n) for n, is_dir in sorted(names) if is_dir]


def _kafka_files(names) -> bool:
    """Whether a folder's entries hold a file Kafka writes into a partition folder."""
    return any(not is_dir and (offset_file(n) is not None or n in PARTITION_FILES) for n, is_dir in names)


def _has_marker(d: str) -> bool:
    """meta.properties or an offset checkpoint in ``d``: a few stats, so a log dir of 100,000 partitions
    is known for one without being listed."""
    return any(os.path.isfile(os.path.join(d, m)) for m in MARKERS)


def _is_log_dir(d: str, names, subdirs: list[str], walk: _Walk) -> bool:
    if any(n in MARKERS and not is_dir for n, is_dir in names):
        return True
    candidates = [s for s in subdirs if partition_name(os.path.basename(s)) is not None][:PEEK]
    for sub in candidates:
        try:
            if _kafka_files(walk.list(sub, PEEK_ENTRIES)):
                return True
        except OSError:
            continue
    return False


def _found(root: str, d: str) -> FoundLogDir:
    meta_path = os.path.join(d, "meta.properties")
    try:
        meta = load_meta_properties(meta_path)
    except MetaPropertiesError as exc:
        return FoundLogDir(d, layout_of(d), problem=(META, f"{exc}; which broker this log dir belongs to is unknown, "
                                                          "none of it read"))
    node = meta_node_id(meta)
    if meta and node is None:
        return FoundLogDir(d, layout_of(d), cluster_id=meta.get("cluster.id"),
                           problem=(META, f"{meta_path}: no node.id or broker.id (an int) in it: which broker this "
                                          "log dir belongs to is unknown, none of it read"))
    return FoundLogDir(d, layout_of(d), node, meta.get("cluster.id") or None, note=_mixed_eras(d, meta_path, meta))


METADATA_LOG = "__cluster_metadata-0"  # KRaft's metadata log (a folder of the log dir, Kafka 3.3+ in KRaft, 4.x)


def _mixed_eras(d: str, meta_path: str, meta: dict) -> str | None:
    """A version-0 meta.properties (a ZooKeeper-mode broker's) beside KRaft's metadata log: files of both eras
    in one log dir (a KRaft broker rewrites its meta.properties as version 1 at its first start). Said in one
    line naming both; the log dir is read as its meta.properties says."""
    if meta.get("version") == "0" and os.path.isdir(os.path.join(d, METADATA_LOG)):
        return (f"{meta_path}: version=0 (ZooKeeper mode) beside {METADATA_LOG} (KRaft's metadata log): two eras' "
                "files mixed; expected one era's (KRaft writes version=1); read as meta.properties says")
    return None


def layout_of(d: str) -> str:
    """The deployment a log dir's path looks like, in words (said with what was found, never relied on)."""
    p = os.path.normpath(os.path.abspath(d))
    name, parent = os.path.basename(p), os.path.basename(os.path.dirname(p))
    where = " in a pod volume" if KUBELET_POD.search(p) else ""
    if re.fullmatch(r"kafka-log\d+", name):
        jbod = re.fullmatch(r"data-(\d+)", parent)
        return (f"Strimzi JBOD volume {jbod[1]}" if jbod else "Strimzi") + where
    if p.endswith("/bitnami/kafka/data"):
        return "Bitnami"
    if p.endswith("/var/lib/kafka/data"):
        return "Confluent Platform or apache/kafka image"
    if name == "kraft-combined-logs":
        return "apache/kafka image"
    return "a pod volume" if where else "a log.dirs entry"


def _nothing_found(root: str, names, walk: _Walk, max_depth: int) -> str:
    p = os.path.normpath(os.path.abspath(root))
    pod = KUBELET_POD.search(p + "/")
    if pod:
        what = f"{root}: the volume of a pod that is not Kafka: expected {EXPECTED}, within {max_depth} levels"
    elif os.path.basename(p) == "pods" and "kubelet" in p:
        what = f"{root}: no Kafka broker volume among the pods' volumes: expected {EXPECTED}, within {max_depth} levels"
    elif not names:
        what = f"{root}: an empty folder; expected {EXPECTED}"
    else:
        what = f"{root}: no Kafka log dir; expected {EXPECTED}, within {max_depth} levels"
    if walk.skipped:
        d, why = walk.skipped[0]
        what += f"; {len(walk.skipped)} folder(s) could not be listed ({d}: {why}): a log dir may be there"
    if walk.cut:
        what += f"; the walk stopped after {walk.entries} entries: give a path closer to the log dir"
    return what

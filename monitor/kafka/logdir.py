"""The on-disk layout of a broker log dir: partition folders, segments, checkpoint files.

A log dir (one entry of ``log.dirs``) holds one folder per replica named
``<topic>-<partition>`` (topic names may contain ``-``, so the split is on the
last one), plus broker-level files: the four offset checkpoints and
``meta.properties``. Folders ending ``-delete`` (pending deletion), ``-future``
(being moved between dirs) and ``-stray`` (KRaft strays) are not live replicas:
they are listed apart, with the reason, never read as partitions.

Which names are partitions and segments is Kafka's rule, defined once in ``monitor.kafka.kafkanames``: a
folder Kafka's loader would refuse (an illegal topic, a partition outside int32) and a file with a
segment or snapshot suffix but a name Kafka never writes (``5.log``, ``².snapshot``) are ignored, each
kept in ``LogDir.ignored`` / ``PartitionDir.stray`` with the reason; two folders that Kafka loads as
one partition (``orders-3`` and ``orders-03``) are ``LogDir.duplicates``, neither read as the partition.

Nothing here reads record bytes: this is the cheap directory walk that the
collector repeats on every refresh.

Kafka's temporary files (``LogFileUtils``: a ``.cleaned``, ``.swap`` or ``.deleted`` suffix after the
normal one, e.g. ``00000000000000000000.log.cleaned``) are kept per partition as ``Leftover``s. On a
running broker each is short-lived: the cleaner writes ``.cleaned``, renames it ``.swap`` and swaps it in
(``Cleaner.cleanSegments`` / ``LocalLog.replaceSegments``); replaced and expired segments are renamed
``.deleted`` and removed after ``file.delete.delay.ms`` (default 60000). On start, ``LogLoader
.removeTempFilesAndCollectSwapFiles`` deletes ``.deleted`` and ``.cleaned`` files and completes valid
``.swap`` files. So only a file nobody has touched for longer than ``file.delete.delay.ms`` is a
leftover (``Leftover.stale``). The age is the inode's change time (``st_ctime``), not ``st_mtime``:
a rename keeps the mtime (and the cleaner sets a cleaned segment's mtime back to its source's), while
the rename, and every write of a ``.cleaned`` file in progress, moves the change time.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from monitor.kafka.checkpoint import CHECKPOINT_FILES, CheckpointError, read_checkpoint
from monitor.kafka.kafkanames import (SEGMENT_SUFFIXES, SNAPSHOT_SUFFIX, TEMP_SUFFIXES, offset_file, offset_prefix,
                                partition_name, stray_reason)
from monitor.fileio.regularfile import NotRegularFile, PathError, check_regular, open_regular, os_reason
from monitor.fileio.excerpt import excerpt

KAFKA_OWN_DIRS = ("remote-log-index-cache",)  # RemoteIndexCache.DIR_NAME: LogManager skips it, so do we
NOT_LIVE = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)\.(?P<id>[0-9a-zA-Z_-]+)-(?P<kind>delete|future|stray)$")


@dataclass(frozen=True, slots=True)
class Segment:
    """One segment: its base offset and the files that exist for it. Sizes are the ``.log`` file's."""

    base_offset: int
    # the .log's path as a string: the readers' key (and their summaries' path) as it is, no ``Path`` made and
    # kept a segment at each listing (issue 43: ~0.4 KB and a parse each; ``log`` makes one when asked)
    path: str
    size: int
    mtime_ns: int
    has_index: bool = False
    has_timeindex: bool = False
    has_txnindex: bool = False
    ino: int = 0  # the .log's inode: a file swapped in under the same name, size and mtime is another file

    @property
    def log(self) -> Path:
        """The ``.log`` file as a ``Path``."""
        return Path(self.path)

    @property
    def key(self) -> tuple[str, int, int]:
        """What identifies unchanged content: name, size, mtime (used for incremental reads)."""
        return (self.path, self.size, self.mtime_ns)


LEFTOVER_KINDS = {x: x[1:] for x in TEMP_SUFFIXES}  # LogFileUtils' suffixes: cleaned | swap | deleted


@dataclass(frozen=True)
class Leftover:
    """One of Kafka's temporary files in a partition folder (see the module docstring)."""

    name: str  # the file name, e.g. 00000000000000000000.log.swap
    kind: str  # cleaned | swap | deleted
    size: int
    changed_ns: int  # st_ctime_ns: when the file was last renamed or written

    def unchanged_ms(self, now_ms: int) -> int:
        return max(now_ms - self.changed_ns // 1_000_000, 0)

    def stale(self, now_ms: int, file_delete_delay_ms: int) -> bool:
        """Untouched for longer than file.delete.delay.ms: no clean or delayed delete is still at it."""
        return self.unchanged_ms(now_ms) > file_delete_delay_ms

    def as_dict(self, now_ms: int) -> dict:
        return {"file": self.name, "kind": self.kind, "bytes": self.size, "unchanged_ms": self.unchanged_ms(now_ms)}


def leftover_kind(name: str) -> str | None:
    for suffix, kind in LEFTOVER_KINDS.items():
        if name.endswith(suffix):
            return kind
    return None


@dataclass(slots=True)
class PartitionDir:
    topic: str
    partition: int
    path: Path
    segments: list[Segment] = field(default_factory=list)
    snapshots: list[int] = field(default_factory=list)
    leftovers: list[Leftover] = field(default_factory=list)  # .cleaned / .swap / .deleted files, by name
    unreadable: list[str] = field(default_factory=list)  # segment files that exist but cannot be stat'ed or are no regular file
    stray: list[tuple[str, str]] = field(default_factory=list)  # (file name, why): not a name Kafka writes; ignored
    # base offsets with an .index or .timeindex and no .log: a segment mid-rename (Kafka renames a segment's
    # .log before its indexes, to .deleted or from .swap), or a listing that raced it
    unlogged: list[int] = field(default_factory=list)
    # the folder's (inode, mtime) stat'ed before it was listed: what ``scan_log_dir`` compares to take it again
    folder_key: tuple[int, int] | None = None

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)

    @property
    def active_segment(self) -> Segment | None:
        return self.segments[-1] if self.segments else None


@dataclass
class LogDir:
    path: Path
    partitions: list[PartitionDir] = field(default_factory=list)
    not_live: list[tuple[str, str]] = field(default_factory=list)  # (folder, kind)
    unrecognised: list[str] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (folder, why) for each of unrecognised
    # (topic, partition) -> its folders, when Kafka would load more than one as it: "Duplicate log
    # directories", the broker refuses to start; none of them is read as the partition
    duplicates: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    checkpoints: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)
    checkpoint_errors: dict[str, str] = field(default_factory=dict)
    checkpoint_lines: dict[str, dict] = field(default_factory=dict)  # file name -> {(topic, partition): line}
    meta: dict[str, str] = field(default_factory=dict)
    listed_ns: int = 0  # the wall clock when its listing began (time.time_ns): see relisted
    # folder name -> its partition's listing (the partitions', by the name listed): what the next listing takes
    # again (relisted), its name not parsed again
    by_name: dict[str, "PartitionDir"] = field(default_factory=dict)
    # checkpoint file name -> what its stat said when read (_checkpoint_key): taken again unread while the same
    checkpoint_keys: dict[str, tuple] = field(default_factory=dict)

    def partition(self, topic: str, partition: int) -> PartitionDir | None:
        for p in self.partitions:
            if p.topic == topic and p.partition == partition:
                return p
        return None


def parse_partition_dir_name(name: str) -> tuple[str, int] | None:
    """``orders.v2-eu-3`` -> ``("orders.v2-eu", 3)``, ``orders-03`` too (Kafka's loader reads it as
    partition 3: ``monitor.kafka.kafkanames.partition_name``); None for anything that is not a live replica."""
    if NOT_LIVE.fullmatch(name):
        return None
    p = partition_name(name)
    # interned: a topic's name is parsed from each of its partition folders at every listing and kept in
    # every listing, summary key and report; one string per topic, not one per partition and refresh (issue 43)
    return (sys.intern(p.topic), p.partition) if p is not None else None


def unrecognised_reason(name: str) -> str:
    """Why a folder in a log dir is no partition, for the one line that names it."""
    topic, dash, rest = name.rpartition("-")
    if not dash:
        return "not <topic>-<partition>: not a partition folder"
    if not partition_name(f"t-{rest}"):
        return f"partition {rest!r} is not a partition number (0..2147483647, an int32): not a partition folder"
    return f"topic {topic!r} is not a legal topic name: not a partition folder"


def scan_partition(path: str | Path) -> PartitionDir:
    """The segments of one partition folder, in offset order, with their sizes and mtimes."""
    path = Path(path)
    folder = str(path)
    parsed = parse_partition_dir_name(path.name)
    topic, partition = parsed if parsed else (path.name, -1)
    part = PartitionDir(topic, partition, path)
    files: dict[int, dict[str, os.stat_result]] = {}
    with os.scandir(path) as it:
        for entry in it:
            name = entry.name
            parsed_name = offset_file(name)
            if parsed_name is None:
                why = stray_reason(name)
                if why is not None:
                    part.stray.append((name, why))
                continue
            offset, suffix = parsed_name
            if suffix == ".log":  # only .log sizes matter; the others are noted, not stat'ed
                try:
                    files.setdefault(offset, {})[suffix] = check_regular(entry.path, entry.stat())
                except FileNotFoundError:
                    if entry.is_symlink():  # a dangling link is broken, not deleted
                        part.unreadable.append(f"{entry.path}: dangling symlink")
                    continue  # else deleted by the broker while we listed
                except NotRegularFile as exc:
                    part.unreadable.append(str(exc))
                    continue
                except OSError as exc:
                    part.unreadable.append(f"{entry.path}: {os_reason(exc)}")
                    continue
            elif suffix in SEGMENT_SUFFIXES:
                files.setdefault(offset, {})[suffix] = None
            elif suffix == SNAPSHOT_SUFFIX:
                part.snapshots.append(offset)
            elif (kind := leftover_kind(name)) is not None:
                try:
                    st = entry.stat()
                except FileNotFoundError:  # its delayed delete or the swap finished while we listed
                    continue
                except OSError as exc:
                    part.unreadable.append(f"{entry.path}: {os_reason(exc)}")
                    continue
                part.leftovers.append(Leftover(name, kind, st.st_size, st.st_ctime_ns))
    for base in sorted(files):
        f = files[base]
        st = f.get(".log")
        if st is None:
            if ".index" in f or ".timeindex" in f:
                part.unlogged.append(base)
            continue
        part.segments.append(Segment(
            base_offset=base, path=os.path.join(folder, f"{offset_prefix(base)}.log"), size=st.st_size, mtime_ns=st.st_mtime_ns,
            has_index=".index" in f, has_timeindex=".timeindex" in f, has_txnindex=".txnindex" in f, ino=st.st_ino,
        ))
    part.snapshots.sort()
    part.leftovers.sort(key=lambda x: x.name)
    part.stray.sort()
    return part


# How long before the last listing a folder's mtime must lie for that listing's names to be taken again: a file
# created, removed or renamed in it sets its mtime to the time of the change, but a filesystem's timestamps may
# be coarse (a jiffy) and the clock step between the change and the listing small, so a folder changed just
# before or while it was listed is listed again (the "racy" case, as git treats an index entry).
RACY_NS = 2_000_000_000


def relisted(previous: PartitionDir | None, key: tuple[int, int], listed_ns: int) -> PartitionDir | None:
    """A partition folder's last listing taken again when no name in it can have changed since (its folder's
    inode and mtime the same, that mtime ``RACY_NS`` before the last listing began, no leftover or unreadable
    file, whose state is more than a name), with each ``.log`` stat'ed again: the same object when none moved,
    else a copy with the moved segments' sizes, mtimes and inodes (an append: the active segment grew). None: list
    it whole (a name may have changed, or a segment is gone or no longer a regular file). Why: an unchanged
    partition's listing then costs a stat of its folder and one of each segment, and makes no object
    (issue 43: a refresh costs what changed)."""
    if (previous is None or previous.folder_key != key or key[1] >= listed_ns - RACY_NS or previous.leftovers
            or previous.unreadable):
        return None
    segments = None
    for i, seg in enumerate(previous.segments):
        try:
            st = os.stat(seg.path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        if (st.st_size, st.st_mtime_ns, st.st_ino) != (seg.size, seg.mtime_ns, seg.ino):
            if segments is None:
                segments = list(previous.segments)
            segments[i] = Segment(seg.base_offset, seg.path, st.st_size, st.st_mtime_ns, seg.has_index,
                                  seg.has_timeindex, seg.has_txnindex, st.st_ino)
    if segments is None:
        return previous
    return PartitionDir(previous.topic, previous.partition, previous.path, segments, previous.snapshots,
                        previous.leftovers, previous.unreadable, previous.stray, previous.unlogged, key)


MAX_META_BYTES = 64 * 1024  # Kafka's meta.properties is a few lines; more is a damaged or foreign file


class MetaPropertiesError(OSError):
    """A log dir's meta.properties that exists but cannot be read as one: ``str()`` names the file and why."""


def load_meta_properties(path: str | Path) -> dict[str, str]:
    """A log dir's meta.properties, at most ``MAX_META_BYTES`` of it: {} when there is none;
    ``MetaPropertiesError`` when it is there and cannot be read (permissions, no regular file, larger than
    a meta.properties is, not UTF-8): which broker the log dir belongs to is then unknown, not guessed."""
    try:
        with open_regular(path) as fh:
            raw = fh.read(MAX_META_BYTES + 1)
    except FileNotFoundError:
        if os.path.islink(path):
            raise MetaPropertiesError(f"{path}: dangling symlink") from None
        return {}
    except NotRegularFile as exc:
        raise MetaPropertiesError(str(exc)) from None
    except OSError as exc:
        raise MetaPropertiesError(f"{path}: cannot be read: {os_reason(exc)}") from None
    if len(raw) > MAX_META_BYTES:
        raise MetaPropertiesError(f"{path}: larger than {MAX_META_BYTES} bytes: not a meta.properties Kafka wrote")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MetaPropertiesError(f"{path}: byte {exc.start}: not UTF-8 text") from None
    meta = parse_properties(text)
    _check_meta_version(path, meta)
    return meta


# meta.properties' versions (Kafka's MetaPropertiesVersion) and the key each names its broker by: 0 is a
# ZooKeeper-mode broker's (Kafka 3.x and older), 1 a KRaft node's (3.x in KRaft, every 4.x), which also
# carries its directory.id (3.7+). A file without ``version`` (hand-written, very old) goes by the key it has.
META_VERSIONS = {"0": ("broker.id", "ZooKeeper mode"), "1": ("node.id", "KRaft")}
META_EXPECTED = "version=0 (ZooKeeper mode: broker.id) or version=1 (KRaft: node.id, directory.id)"


def _check_meta_version(path, meta: dict[str, str]) -> None:
    """A version this reader does not know, or a broker id under the other version's key (ZooKeeper-era and
    KRaft-era keys mixed): ``MetaPropertiesError``, one line naming the file and what was expected: which
    broker the log dir belongs to is then not guessed."""
    version = meta.get("version")
    if version is None:
        return
    if version not in META_VERSIONS:
        raise MetaPropertiesError(f"{path}: version={excerpt(version)}: a meta.properties version this reader does "
                                  f"not know; expected {META_EXPECTED}")
    key, mode = META_VERSIONS[version]
    other = next(k for v, (k, _) in META_VERSIONS.items() if v != version)
    if key not in meta and other in meta:
        raise MetaPropertiesError(f"{path}: version={version} ({mode}) names its broker by {other}, the other "
                                  f"version's key (ZooKeeper-era and KRaft-era keys mixed); expected {META_EXPECTED}")


def read_meta_properties(path: str | Path) -> dict[str, str]:
    """A log dir's meta.properties (``load_meta_properties``); {} when there is none or it cannot be read."""
    try:
        return load_meta_properties(path)
    except MetaPropertiesError:
        return {}


def meta_node_id(meta: dict[str, str]) -> str | None:
    """The broker's id in a log dir's meta.properties: ``node.id`` (v1), ``broker.id`` (v0)
    (Kafka's MetaProperties); None unless it is an int, as Kafka reads it (a damaged file's bytes never
    become a broker label)."""
    nid = meta.get("node.id") or meta.get("broker.id") or None
    return nid if nid is None or (nid.isascii() and nid.lstrip("-").isdigit() and len(nid) <= 11) else None


def parse_properties(text: str) -> dict[str, str]:
    """A Java properties file's ``key=value`` lines (comments and blank lines skipped)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")) and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def scan_log_dir(path: str | Path, previous: LogDir | None = None) -> LogDir:
    """Walk one log dir: partitions, not-live folders, checkpoints (errors kept, not raised). ``previous``: its
    last listing, whose partitions are taken again where their folders did not change (``relisted``)."""
    path = Path(path)
    listed_ns = time.time_ns()
    before = {} if previous is None else previous.by_name
    try:  # a symlink loop says so (PathError: os.strerror), never "not a directory" or "no such file"
        if not stat.S_ISDIR(os.stat(path).st_mode):
            raise FileNotFoundError(f"{path}: not a directory")
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except FileNotFoundError as exc:
        raise exc if not exc.errno else PathError(path, exc) from None
    except OSError as exc:
        raise PathError(path, exc) from None
    ld = LogDir(path, listed_ns=listed_ns)
    folders: dict[tuple[str, int], list[str]] = {}
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError as exc:  # a folder entry that cannot be followed (a symlink loop): that partition's fault
            if (parsed := parse_partition_dir_name(entry.name)) is not None:
                ld.partitions.append(PartitionDir(*parsed, Path(entry.path),
                                                  unreadable=[f"{entry.path}: {os_reason(exc)}"]))
            continue
        if not is_dir:
            continue
        last = before.get(entry.name)
        if last is not None:  # a name the last listing read as this partition's: not parsed again
            tp = (last.topic, last.partition)
        elif m := NOT_LIVE.fullmatch(entry.name):
            ld.not_live.append((entry.name, m.group("kind")))
            continue
        else:
            tp = parse_partition_dir_name(entry.name)
        if tp is None:
            ld.unrecognised.append(entry.name)
            if entry.name not in KAFKA_OWN_DIRS:
                ld.ignored.append((entry.name, unrecognised_reason(entry.name)))
            continue
        folders.setdefault(tp, []).append(entry.name)
        if len(folders[tp]) > 1:  # Kafka's "Duplicate log directories": none is the partition
            ld.duplicates[tp] = folders[tp]
            continue
        try:
            st = entry.stat()  # before its listing: a change while it is listed shows at the next
            key = (st.st_ino, st.st_mtime_ns)
            part = relisted(last, key, previous.listed_ns) if previous is not None else None
            if part is None:
                part = scan_partition(entry.path)
                part.folder_key = key
            ld.partitions.append(part)
            ld.by_name[entry.name] = part
        except FileNotFoundError:  # partition deleted while we walked
            ld.not_live.append((entry.name, "vanished"))
        except OSError as exc:  # a partition folder that cannot be listed (permissions): its own fault
            ld.partitions.append(PartitionDir(*tp, Path(entry.path),
                                              unreadable=[f"{entry.path}: {os_reason(exc)}"]))
    if ld.duplicates:
        ld.partitions = [p for p in ld.partitions if (p.topic, p.partition) not in ld.duplicates]
        for names in ld.duplicates.values():
            for name in names:
                ld.by_name.pop(name, None)
    for name in CHECKPOINT_FILES:
        if _checkpoint_kept(ld, path / name, name, previous):
            continue
        try:
            ld.checkpoint_lines[name] = {}
            ld.checkpoints[name] = read_checkpoint(path / name, ld.checkpoint_lines[name])
        except CheckpointError as exc:
            ld.checkpoints[name] = {}
            ld.checkpoint_errors[name] = str(exc)
    ld.meta = read_meta_properties(path / "meta.properties")
    return ld


def _checkpoint_key(st: os.stat_result) -> tuple:
    """What a checkpoint file's stat says of its content: Kafka writes ``<file>.tmp`` and renames it (a new inode),
    and any write in place moves its size, mtime or ctime."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _checkpoint_kept(ld: LogDir, file: Path, name: str, previous: LogDir | None) -> bool:
    """The last listing's entries of checkpoint ``name`` taken into ``ld`` unread when the file is the same (its
    ``_checkpoint_key``), last read without a fault, and changed ``RACY_NS`` or more before that listing began (as
    ``relisted``: a write in the same tick as the read could leave its stat as it was). Why: the cleaner's and the
    log-start checkpoints hold a line per partition, and parsing them was a tenth of a steady refresh (issue 43).
    False: read it (a file missing or not regular is read, which says so)."""
    try:
        st = os.stat(file)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    key = ld.checkpoint_keys[name] = _checkpoint_key(st)
    if (previous is None or previous.checkpoint_keys.get(name) != key or name in previous.checkpoint_errors
            or name not in previous.checkpoints or st.st_mtime_ns >= previous.listed_ns - RACY_NS):
        return False
    ld.checkpoints[name], ld.checkpoint_lines[name] = previous.checkpoints[name], previous.checkpoint_lines[name]
    return True

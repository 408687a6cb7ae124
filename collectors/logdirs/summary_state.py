"""The collector's summary cache on disk: a restart trusts what it read before instead of reading the log again.

At start a ``SummaryState`` loads its file (``monitor.model.summarystore`` decodes it) and hands the
log-dir reader (``collectors.logdirs.read.PartitionReader``) and scanner only the entries whose file is
still the one summarised: same inode, size and mtime now (a ``__consumer_offsets`` segment's commits:
inode and size, all they record), or the same inode grown with the last batch read still where it was
(``monitor.model.tailcheck``: a segment summary, an active segment's keys), read on from where it
stopped. Everything else is read again, as at a cold start: a segment the cleaner swapped in under the
same name (new inode), one truncated in place (and perhaps grown again), one deleted. After a refresh that changed
what the reader holds it writes the file again, atomically (a temp file in the same dir, fsync,
rename, fsync of the dir), so a crash leaves the old file or the new one, never half of one.

Nothing here may make a figure wrong or stop the collector: a file of another version, truncated,
edited by hand, foreign, or unreadable is discarded with one log line and the collector reads
everything; a state dir that cannot be written (read-only, not a directory, full) leaves it working
without a cache, said in one log line when that starts and when it ends, and exported
(``log_dir_state_cache_up`` with the reason: ``status``).
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Callable

from monitor.fileio.regularfile import open_regular, os_reason
from monitor.kafka.offsetgroups import SegmentCommits
from monitor.model.activekeys import ActiveKeys
from monitor.model.summarystore import MAGIC, CacheRejected, decode, encode
from monitor.model.tailcheck import intact

log = logging.getLogger("compaction_monitor.state")

HOST_STATE_DIR = "/var/lib/compaction-monitor"
APP = "compaction-monitor"
OK, UNWRITABLE, FULL, IO_ERROR = "ok", "unwritable", "full", "io_error"
STATUS_REASONS = (OK, UNWRITABLE, FULL, IO_ERROR)  # log_dir_state_cache_up's reason label
_FULL = (errno.ENOSPC, errno.EDQUOT)
_UNWRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.ENOENT, errno.EISDIR, errno.EEXIST)
MAX_SHOWN = 3  # paths named in the line about entries no longer matching their file
# A save is due again only after this many times its own duration: writing the cache takes at most 1/SPACING
# of the collector's time (about 40 us an entry here: 100,000 segments take 4 s, then saved at most every
# 80 s). On a live broker every refresh changes something (the active segments grow): what is not written
# yet costs a restart only the reading of what changed since.
SPACING = 20


def default_state_dir(environ=None, host_dir: str = HOST_STATE_DIR) -> str:
    """Where the cache lives without ``state_dir``: systemd's ``$STATE_DIRECTORY`` when a unit sets
    ``StateDirectory=`` (the service's own, writable, kept across restarts: the first of a colon list);
    else ``/var/lib/compaction-monitor`` when it is, or can be made, writable (a host install run as
    root or given that dir; a container image that declares it as a volume); else the user's
    ``$XDG_STATE_HOME/compaction-monitor`` (``~/.local/state/...`` by the XDG base-dir spec: state kept
    across restarts, not a cache a cleaner may delete), which an unprivileged container also has."""
    environ = os.environ if environ is None else environ
    if environ.get("STATE_DIRECTORY"):
        return environ["STATE_DIRECTORY"].split(":")[0]
    probe = host_dir
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)  # the nearest existing parent: can it be made there?
    if os.path.isdir(probe) and os.access(probe, os.W_OK | os.X_OK):
        return host_dir
    base = environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, APP)


def cache_name(cluster: str, broker: str, log_dirs) -> str:
    """One file per broker's scanner: its cluster and broker in the name (readable), and a digest of
    its log dirs (two collectors sharing a state dir never load each other's file)."""
    digest = hashlib.sha256("\0".join(os.path.realpath(d) for d in log_dirs).encode()).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{cluster}-{broker}")[:80]
    return f"summaries-{safe}-{digest}.cache"


def _unchanged(entry) -> tuple[bool, int]:
    """(whether the file an entry summarises is still the one summarised, or that one grown; bytes read
    to tell). Unchanged: inode, size, and mtime where the entry records it. Grown (a summary or an active
    segment's keys: same inode, larger now): only once its last batch read is found where it was
    (``monitor.model.tailcheck``: not truncated in place and grown again since)."""
    try:
        st = os.stat(entry.path)
    except OSError:
        return False, 0
    if isinstance(entry, SegmentCommits):
        return (st.st_ino, st.st_size) == (entry.inode, entry.size), 0
    if isinstance(entry, ActiveKeys):
        if entry.over_bound is not None:
            return st.st_ino == entry.inode, 0  # a bound hit stays hit for this file (monitor.model.activekeys)
        if st.st_ino != entry.inode or st.st_size < entry.end_position:
            return False, 0
        return intact(entry.path, entry.tail_position, entry.tail_crc, entry.end_position)
    if (st.st_ino, st.st_size, st.st_mtime_ns) == (entry.inode, entry.size, entry.mtime_ns):
        return True, 0
    if st.st_ino != entry.inode or st.st_size <= entry.size or entry.faults:
        return False, 0
    return intact(entry.path, entry.tail_position, entry.tail_crc, entry.end_position)


class SummaryState:
    """One scanner's cache file ``state_dir/name``. ``status``: (up, reason) for the series;
    ``restored``: segments trusted at start (summaries, commits: not the active segments' keys); a save is ``due`` by ``SPACING``. ``write``: ``os.write``,
    replaced only by a test that injects a full disk (the one fault a test cannot make a real
    filesystem show here)."""

    def __init__(self, state_dir: str | os.PathLike, name: str, notify: Callable[[str], None] = log.warning,
                 write: Callable[[int, bytes], int] = os.write, clock: Callable[[], float] = time.monotonic):
        self.dir = Path(state_dir)
        self.path = self.dir / name
        self.notify = notify
        self._write = write
        self.status = (True, OK)
        self.restored = 0
        self.checked_bytes = 0  # read at load to tell grown files from files truncated and grown again
        self.clock = clock
        self._due = float("-inf")  # the clock's time from which a save is due (SPACING)

    def load(self) -> list:
        """The entries a restart may trust; none (after one line saying why) when the file is not sound.
        The state dir is made now if missing: one that cannot be is said at start, not at the first save."""
        try:
            return self._trusted()
        finally:
            self._usable()

    def _trusted(self) -> list:
        try:
            with open_regular(self.path) as fh:
                data = fh.read(len(MAGIC))
                if data == MAGIC:  # anything else is refused on its first bytes, never read whole
                    data += fh.read()
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):  # else no cache yet (or no state dir: _usable)
                self.notify(f"state cache {self.path}: cannot read it ({os_reason(exc)}): discarded, every "
                            "segment is read")
            return []
        try:
            _, entries = decode(data)
        except CacheRejected as exc:
            self.notify(f"state cache {self.path}: discarded ({exc.reason}: {exc.detail}); every segment is read")
            return []
        kept, gone = [], []
        for e in entries:
            ok, read = _unchanged(e)
            self.checked_bytes += read
            (kept if ok else gone).append(e)
        if gone:
            shown = ", ".join(e.path for e in gone[:MAX_SHOWN]) + (", ..." if len(gone) > MAX_SHOWN else "")
            self.notify(f"state cache {self.path}: {len(gone)} of {len(entries)} entries discarded, their file "
                        f"changed since written (inode, shrunk, or its last batch read no longer there: the "
                        f"cleaner's swap, deletes, a truncation in place), read again: {shown}")
        self.restored = sum(not isinstance(e, ActiveKeys) for e in kept)  # segments (the series' name)
        return kept

    def _usable(self) -> None:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            if not self.dir.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "not a directory")
        except OSError as exc:
            self._failed(exc)

    def due(self) -> bool:
        return self.clock() >= self._due

    def save(self, entries: list) -> bool:
        """Write the entries atomically; False (said once, and in ``status``) when it cannot be done,
        the previous file left as it was and no temp file left behind."""
        tmp, started = None, self.clock()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            # a name of its own (O_EXCL): two collectors on one state dir (a pod's old and new copy, both pid 1)
            # never write into one temp file
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=f".{self.path.name}.", suffix=".tmp")
            try:
                for piece in encode(entries):
                    view = memoryview(piece)
                    while view:
                        view = view[self._write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
            tmp = None
            dfd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError as exc:
            self._failed(exc)
            return False
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        if not self.status[0]:
            self.notify(f"state cache {self.path}: written again; a restart reads only what changed")
        self.status = (True, OK)
        now = self.clock()
        self._due = now + SPACING * (now - started)
        return True

    def _failed(self, exc: OSError) -> None:
        reason = FULL if exc.errno in _FULL else UNWRITABLE if exc.errno in _UNWRITABLE else IO_ERROR
        if self.status != (False, reason):
            self.notify(f"state cache {self.path}: cannot write it ({os_reason(exc)}): the collector goes on "
                        "without a cache (a restart reads every segment again)")
        self.status = (False, reason)

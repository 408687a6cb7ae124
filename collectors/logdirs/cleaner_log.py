"""Following a broker's ``log-cleaner.log`` as a source: new bytes only, through rotation.

Each ``refresh`` reads what was appended since the last one (in chunks, so memory stays bounded
whatever the backlog) and feeds whole lines to the core's ``CleanerLogParser``, which keeps the
state (uncleanable partitions, thread deaths, recent cleans). Nothing is read twice:

* rename-and-create (log4j2's RollingFile): the path names another file (device, inode) than the
  one open; the open one is read to its end first, then the new one from its start;
* copytruncate (logrotate): the file is shorter than where reading stopped, or its first bytes are
  no longer those seen at its start; it is read again from its start. Lines written between the
  last read and the copy are in the copy only, and are missed.

The first refresh reads the file from its start: the uncleanable set holds since the last broker
start, which may be long ago. A line too long (over ``max_line`` bytes) is cut; a malformed line
is counted (``error_kinds``: the store counts them as ``source_errors_total{error="malformed_line"}``)
and named in the snapshot, never fatal.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from monitor.kafka.cleanerlog import CleanerLogParser, CleanerLogState
from monitor.fileio.regularfile import NotRegularFile, PathError, open_regular

HEAD_BYTES = 128  # the start of the file, to recognise it after a copytruncate


@dataclass(frozen=True)
class CleanerLogSnapshot:
    path: str
    taken_at: float
    state: CleanerLogState
    bytes_read: int = 0  # this refresh
    rotations: int = 0  # files switched or truncations seen, since the follower started
    new_malformed: tuple = field(default=())  # malformed lines found in this refresh

    @property
    def error_details(self) -> list[tuple[str, str]]:
        """(kind, message) per malformed line of this refresh: its "file:line: reason"."""
        return [("malformed_line", str(m)) for m in self.new_malformed]

    @property
    def error_kinds(self) -> list[str]:
        return [kind for kind, _ in self.error_details]


class CleanerLogFollower:
    def __init__(self, path: str, *, chunk: int = 1 << 20, max_line: int = 1 << 16, max_cleans: int = 256,
                 clock=time.time):
        self.path = str(path)
        self.chunk, self.max_line, self.clock = chunk, max_line, clock
        self.parser = CleanerLogParser(self.path, max_cleans=max_cleans)
        self._fh = None
        self._id: tuple[int, int] | None = None
        self._offset = 0
        self._head = b""
        self._partial = b""
        self._lineno = 0
        self.rotations = 0

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def refresh(self) -> CleanerLogSnapshot:
        before = self.parser.state().malformed_total
        read = 0
        if self._fh is None:
            self._open()  # PathError names the path: the source is down until it exists
        else:
            try:
                st = os.stat(self.path)
                moved = (st.st_dev, st.st_ino) != self._id
            except FileNotFoundError:
                st, moved = None, False  # renamed away, the new one not created yet: drain the old one
            if moved:
                read += self._drain()
                self._switch()
            elif self._truncated():
                self._restart_file()
        read += self._drain()
        state = self.parser.state()
        new = state.malformed[-min(state.malformed_total - before, len(state.malformed)):] \
            if state.malformed_total > before else ()
        return CleanerLogSnapshot(self.path, self.clock(), state, read, self.rotations, tuple(new))

    # --- internals

    def _open(self) -> None:
        try:
            fh = open_regular(self.path)
        except (NotRegularFile, PathError):
            raise
        except OSError as exc:  # the path and the errno as the system names it, never "[Errno 2] ...: 'path'"
            raise PathError(self.path, exc) from exc
        st = os.fstat(fh.fileno())
        self._fh, self._id, self._offset, self._head, self._partial, self._lineno = (
            fh, (st.st_dev, st.st_ino), 0, b"", b"", 0)

    def _switch(self) -> None:
        self._flush_partial()
        self.close()
        self.rotations += 1
        self.parser.file_changed(self.path)
        self._open()

    def _truncated(self) -> bool:
        size = os.fstat(self._fh.fileno()).st_size
        if size < self._offset:
            return True
        if self._head:
            return os.pread(self._fh.fileno(), len(self._head), 0) != self._head
        return False

    def _restart_file(self) -> None:
        self._partial = b""  # the rest of a cut line went with the copy
        self.rotations += 1
        self.parser.file_changed(self.path)
        self._offset, self._head, self._lineno = 0, b"", 0

    def _drain(self) -> int:
        """Read from where reading stopped to the end, feeding whole lines."""
        total = 0
        fd = self._fh.fileno()
        while True:
            data = os.pread(fd, self.chunk, self._offset)
            if not data:
                return total
            if len(self._head) < HEAD_BYTES and self._offset < HEAD_BYTES:
                self._head = (self._head + data[: HEAD_BYTES - self._offset])[:HEAD_BYTES]
            self._offset += len(data)
            total += len(data)
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()
            if len(self._partial) > self.max_line:
                self._partial = self._partial[: self.max_line]  # cut; the rest of the line is dropped
            for raw in lines:
                self._feed(raw)

    def _flush_partial(self) -> None:
        if self._partial:
            self._feed(self._partial)
            self._partial = b""

    def _feed(self, raw: bytes) -> None:
        self._lineno += 1
        self.parser.feed(raw[: self.max_line].decode("utf-8", errors="replace"), self._lineno)

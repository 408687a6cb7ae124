"""The record model shared by the binary reader and the ``kafka-dump-log`` text parser.

One ``Record`` per Kafka record (or legacy message), carrying what its batch
says about it (codec, flags, producer) so consumers need no second object.
``value`` is kept as a size plus a lazy accessor: scans that only count bytes
do not copy values.
"""

from __future__ import annotations

COMPRESSION_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
TIMESTAMP_TYPES = ("create", "log_append")

# Control record types (ControlRecordType.java)
CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}


def control_type_code(key: bytes | None) -> int | None:
    """The type of a control record from its key (int16 version, int16 type); None when too short."""
    if key is None or len(key) < 4:
        return None
    return int.from_bytes(key[2:4], "big", signed=True)


class Record:
    """One record as stored: offset, timestamp, key, value size, headers, and its batch's facts."""

    __slots__ = (
        "offset", "timestamp", "key", "value_size", "headers", "batch",
        "_buf", "_vpos", "_value",
    )

    def __init__(self, offset, timestamp, key, value_size, headers, batch, buf=None, vpos=-1, value=None):
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value_size = value_size
        self.headers = headers
        self.batch = batch
        self._buf = buf
        self._vpos = vpos
        self._value = value

    @property
    def value(self) -> bytes | None:
        if self.value_size < 0:
            return None
        if self._value is None and self._buf is not None:
            self._value = bytes(self._buf[self._vpos : self._vpos + self.value_size])
        return self._value

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def is_tombstone(self) -> bool:
        """A null value on a data record (control records are never tombstones)."""
        return self.value_size < 0 and not self.batch.is_control

    @property
    def header_keys(self) -> list[str]:
        return [k for k, _ in self.headers]

    @property
    def control_type(self) -> str | None:
        """ABORT/COMMIT/... for a control record (key = int16 version, int16 type)."""
        t = control_type_code(self.key) if self.batch.is_control else None
        return None if t is None else CONTROL_TYPES.get(t, "UNKNOWN")

    def __repr__(self) -> str:
        return f"Record(offset={self.offset}, key={self.key!r}, value_size={self.value_size})"

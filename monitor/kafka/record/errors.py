"""One exception family for everything wrong with record bytes, each naming file and byte position.

A reader that meets one of these has already yielded every valid batch before
it; with ``skip_corrupt`` it records the error and goes on where it can.
"""

from __future__ import annotations


class RecordFormatError(ValueError):
    """Bytes that are not a valid Kafka record batch / message set at ``position`` of ``file``.

    ``resumable`` says whether the batch's own length could be trusted, so a
    reader can skip just this batch; when it is False the rest of the file is
    unreadable.
    """

    kind = "corrupt"
    resumable = False

    def __init__(self, file: str, position: int, reason: str, *, length: int | None = None):
        self.file = str(file)
        self.position = position
        self.reason = reason
        self.length = length
        super().__init__(f"{self.file}: byte {position}: {reason}")

    def as_dict(self) -> dict:
        return {"file": self.file, "position": self.position, "kind": self.kind, "reason": self.reason}


class TruncatedBatchError(RecordFormatError):
    """The batch runs past the end of the file: a segment still being appended, or cut short."""

    kind = "truncated"


class CrcMismatchError(RecordFormatError):
    """The stored CRC does not match the bytes: the batch length is sane, so the next batch can be read."""

    kind = "crc"
    resumable = True


class UnknownMagicError(RecordFormatError):
    """A magic byte other than 0, 1 or 2."""

    kind = "magic"


class CorruptBatchError(RecordFormatError):
    """A header or record that does not parse (bad length, bad varint, records past the batch end)."""

    kind = "corrupt"

    def __init__(self, file, position, reason, *, length=None, resumable=False):
        super().__init__(file, position, reason, length=length)
        self.resumable = resumable


class UnsupportedCodecError(RecordFormatError):
    """A compression codec this reader cannot decode, or data the codec rejects."""

    kind = "codec"
    resumable = True


class OversizeBatchError(RecordFormatError):
    """A batch larger than a reader holds in memory (``monitor.kafka.readbound.MAX_BATCH_BYTES``), on disk or
    once decompressed, whose CRC holds: its records are unknown; its length is sane, so the next batch
    is read."""

    kind = "oversize"
    resumable = True


class ZeroFillError(RecordFormatError):
    """Zero bytes where a batch should start (a preallocated or zero-filled tail)."""

    kind = "zeros"


class HorizonError(RecordFormatError):
    """A delete horizon no clean could have written (``monitor.kafka.record.horizon.problem``): the flag on
    a legacy message, or a horizon before the batch's own records. The batch's length holds: the next
    batch is read."""

    kind = "horizon"
    resumable = True


class ControlRecordError(RecordFormatError):
    """A control batch that claims records whose first one is no control record Kafka can read: its key
    null, shorter than 4 bytes or of a negative version (``ControlRecordType.parseTypeId`` throws
    ``InvalidRecordException``). An *empty* control batch is not one: Kafka's cleaner leaves those
    (``CleanedTransactionMetadata``: "An empty control batch was already cleaned"). The next batch is read."""

    kind = "control"
    resumable = True

"""Kafka's on-disk record format: magic 2 record batches and legacy magic 0/1 message sets.

Layers, bottom up: ``varint`` and ``codecs`` (helpers), ``v2`` and ``legacy``
(one batch class per magic, struct layouts declared once at the top),
``reader`` (a lazy walk over a segment that picks the class from the magic
byte, checks CRCs at the batch and reports faults with file and position).
"""

from monitor.kafka.record.errors import (
    ControlRecordError,
    CorruptBatchError,
    CrcMismatchError,
    HorizonError,
    OversizeBatchError,
    RecordFormatError,
    TruncatedBatchError,
    UnknownMagicError,
    UnsupportedCodecError,
    ZeroFillError,
)
from monitor.kafka.record.model import COMPRESSION_NAMES, Record
from monitor.kafka.record.reader import SegmentReader, read_segment

__all__ = [
    "COMPRESSION_NAMES",
    "ControlRecordError",
    "CorruptBatchError",
    "CrcMismatchError",
    "HorizonError",
    "OversizeBatchError",
    "Record",
    "RecordFormatError",
    "SegmentReader",
    "TruncatedBatchError",
    "UnknownMagicError",
    "UnsupportedCodecError",
    "ZeroFillError",
    "read_segment",
]

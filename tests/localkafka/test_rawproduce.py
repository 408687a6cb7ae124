"""The demo's hand-encoded transactional batch (localkafka.rawproduce) is byte for byte what kafka-python's
record builder writes for the same records (tests/recordfixtures.py), and our reader reads it back."""

from __future__ import annotations

import struct

from crc32c import crc32c

from localkafka.rawproduce import transactional_batch
from monitor.kafka.record import SegmentReader
from recordfixtures import V2_CRC_AT, V2_LEADER_EPOCH_AT, Rec, v2

TS = 1_700_000_123_456


def test_transactional_batch_matches_kafka_pythons_builder(tmp_path):
    records = [(f"key-{i}".encode(), f"value {i}".encode() * (i + 1)) for i in range(7)]
    ours = transactional_batch(records, producer_id=1_000_000_000_000, producer_epoch=3, timestamp_ms=TS)
    theirs = bytearray(v2([Rec(i, TS, k, v) for i, (k, v) in enumerate(records)], producer_id=1_000_000_000_000,
                          producer_epoch=3, base_sequence=0, transactional=True).data)
    struct.pack_into(">i", theirs, V2_LEADER_EPOCH_AT, -1)  # the fixture stamps a leader's epoch 0; ours leaves -1
    assert ours == bytes(theirs)
    assert struct.unpack_from(">I", ours, V2_CRC_AT)[0] == crc32c(ours[V2_CRC_AT + 4:])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(ours)
    [(batch, cols)] = list(SegmentReader(path).decoded(columns=True))
    assert (batch.is_transactional, batch.producer_id, batch.producer_epoch, batch.last_offset) == (
        True, 1_000_000_000_000, 3, 6)
    assert list(cols.offsets) == list(range(7)) and list(cols.timestamps) == [TS] * 7

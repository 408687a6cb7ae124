"""A segment with tombstones and transaction markers in each delete-horizon state (KIP-534), built byte for
byte as a broker stores it (tests/recordfixtures.py) and stamped as a clean stamps a batch: attribute bit 6,
the horizon in the base timestamp. For tests/monitor/model/test_horizoncount.py and the verdicts' tests."""

from __future__ import annotations

import struct

from monitor.model import horizon as hz
from monitor.model.compaction import partition_state
from monitor.model.topicconfig import TopicConfig
from recordfixtures import T0, V2_FIRST_TS_AT, _restamp_v2, control, items, v2, write

DELETE_HORIZON_BIT = 0x40
NOW = T0 + 100_000
DAY = 86_400_000
CFG = TopicConfig(cleanup_policy=("compact",), delete_retention_ms=DAY)


def stamped(w, when: int):
    data = bytearray(w.data)
    struct.pack_into(">q", data, V2_FIRST_TS_AT, when)
    w.data = _restamp_v2(data, w.records[0].offset, 0, attrs=DELETE_HORIZON_BIT)
    return w


def tombs(lo, hi):  # every third record a tombstone
    return v2(items(range(lo, hi), tombstone_every=3))


def segment(tmp_path, far=False):
    batches = [tombs(0, 6),                                    # 2 unstamped
               stamped(tombs(6, 15), NOW + 5_000),             # 3 pending
               stamped(tombs(15, 18), NOW - 5_000),            # 1 passed
               control(18, "COMMIT", 7, 0, T0 + 200),          # marker unstamped
               stamped(control(19, "ABORT", 8, 0, T0 + 300), NOW + 2_000),  # marker pending
               stamped(control(20, "COMMIT", 9, 0, T0 + 400), NOW - 1)]     # marker passed
    if far:  # a horizon no clean starting now could set with a delete.retention.ms of one day
        batches.append(stamped(tombs(21, 27), NOW + DAY + hz.TIMESTAMP_AFTER_MAX_MS + 1))
    return write(tmp_path / "00000000000000000000.log", batches)


def state_of(summaries):
    return partition_state("t", 0, summaries, CFG, NOW)

"""Each key's latest record in one replica's copy of a partition, read from its segments: what
``monitor.model.replicasafety.resurrected`` compares between a leader's and a follower's copy.

Every segment is read whole, in offset order (the latest record of a key wins, as the cleaner's offset
map does: ``OffsetMap.put`` keeps the highest offset). Control batches (transaction markers) carry no
data key and are skipped. A batch that cannot be read is a fault naming the file and byte position: the
copy is then not wholly known, and the caller says so rather than compare part of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from monitor.kafka.logdir import scan_partition
from monitor.kafka.record import RecordFormatError, SegmentReader
from monitor.kafka.record.codecs import CodecError
from monitor.kafka.record.v2 import RecordDecodeError


@dataclass
class ReplicaKeys:
    path: Path
    latest: dict = field(default_factory=dict)  # key -> (offset, is_tombstone)
    # the first segment's base offset: the log's start as far as its files tell (compaction keeps it; retention
    # and DeleteRecords move it), not the first record's offset, which a clean moves up. -1: no segment
    log_start: int = -1
    log_end: int = 0  # one past the last offset read
    faults: list = field(default_factory=list)  # "file at byte N: reason"

    @property
    def whole(self) -> bool:
        return not self.faults


def read_keys(partition_dir: str | Path) -> ReplicaKeys:
    """Each key's latest (offset, tombstone) in the partition folder ``partition_dir``."""
    part = scan_partition(partition_dir)
    out = ReplicaKeys(Path(partition_dir))
    out.faults.extend(part.unreadable)
    if part.segments:
        out.log_start = part.segments[0].base_offset
    for seg in part.segments:
        reader = SegmentReader(seg.log)
        try:
            for batch in reader.batches():
                if batch.is_control:
                    out.log_end = max(out.log_end, batch.last_offset + 1)
                    continue
                try:
                    records = batch.records()
                except (RecordDecodeError, CodecError) as exc:
                    out.faults.append(f"{seg.log} at byte {reader.end_position}: {exc}")
                    continue
                for r in records:
                    out.latest[r.key] = (r.offset, r.value_size < 0)
                    out.log_end = max(out.log_end, r.offset + 1)
        except RecordFormatError as exc:
            out.faults.append(str(exc))
        out.faults.extend(str(f) for f in reader.faults)
    return out

"""A batch the next-clean projection cannot size (issue 45's bad input): a compression codec id Kafka
does not know, a record that does not decode although the batch's CRC holds, a compressed body that
does not decompress. Kafka's cleaner fails on such a batch (``CompressionType.forId``: "Unknown
compression type id"; ``DefaultRecord.readFrom``: InvalidRecordException), so the partition's
projection is unknown, its reason naming the file and the batch's byte position and what is wrong,
never a guess; a partition beside it keeps its figures, in the model and in the audit's facts."""

from __future__ import annotations

import struct
import zlib

import pyarrow as pa
import pytest

import recordfixtures as rf
from monitor.model.nextclean import project_partition
from monitor.model.topicconfig import TopicConfig
from monitor.model.transactions import AbortedRanges
from spark_analysis.partition_audit import PartitionTask, audit_partition
from spark_analysis.rows import rows_of

NOW = rf.T0 + 3_600_000
CONFIG = {"cleanup.policy": "compact", "delete.retention.ms": "1000"}
CODEC_BITS = 0x07


def recs(offsets, prefix="k"):
    return [rf.Rec(o, rf.T0 + o, f"{prefix}{o % 3}".encode(), f"value {o} ".encode() * 4) for o in offsets]


def resealed(data: bytes, edit) -> bytes:
    """A v2 batch changed by ``edit(bytearray)`` inside its CRC's range, the CRC-32C computed again: a
    batch that passes Kafka's checksum and still cannot be read."""
    out = bytearray(data)
    edit(out)
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, rf.V2_CRC_AT, rf.calc_crc32c(bytes(out[rf.V2_ATTRS_AT:])))
    return bytes(out)


def unknown_codec(data: bytearray) -> None:
    data[rf.V2_ATTRS_AT + 1] = (data[rf.V2_ATTRS_AT + 1] & ~CODEC_BITS) | 5  # ids 0-4 exist; 5 does not


def record_overruns(data: bytearray) -> None:
    data[rf.V2_HEADER_SIZE] += 2  # the first record's length varint (zigzag) one byte more than it holds


def body_does_not_inflate(data: bytearray) -> None:
    body = zlib.compress(b"not what the records section held")[2:]  # a deflate stream, but no gzip header
    data[rf.V2_HEADER_SIZE:] = body


CASES = {
    "unknown codec": (lambda: rf.v2(recs(range(3, 6))), unknown_codec, "codec id 5"),
    "record that does not decode": (lambda: rf.v2(recs(range(3, 6))), record_overruns, "declared end"),
    "body that does not decompress": (lambda: rf.v2(recs(range(3, 6)), "gzip"), body_does_not_inflate, "gzip"),
}


def partition(folder, middle: bytes | None = None):
    """Three batches, the second replaced by ``middle``, and an active segment: the files and the second
    batch's byte position."""
    first, second = rf.v2(recs(range(0, 3))), rf.v2(recs(range(3, 6)))
    seg = folder / f"{0:020d}.log"
    folder.mkdir(parents=True)
    seg.write_bytes(first.data + (middle or second.data) + rf.v2(recs(range(6, 9), "j")).data)
    active = folder / f"{9:020d}.log"
    active.write_bytes(rf.v2(recs(range(9, 10), "z")).data)
    return [(str(seg), seg.stat().st_size), (str(active), active.stat().st_size)], len(first.data)


def project(files, name):
    return project_partition(files, lambda u: open(u, "rb"), first_dirty=0, upper=9, log_start=0, now_ms=NOW,
                             delete_retention_ms=1000, aborted=AbortedRanges(()), last_records={}, name=name)


def facts(files, topic):
    task = PartitionTask(topic, 0, files, TopicConfig.from_strings(CONFIG), NOW)
    [row] = rows_of(pa.Table.from_batches(list(audit_partition(task, lambda u: open(u, "rb")))), "facts")
    return row


@pytest.mark.parametrize("case", CASES)
def test_a_batch_the_model_cannot_size_leaves_its_partition_unknown_and_the_others_counted(tmp_path, case):
    make, edit, says = CASES[case]
    bad_files, at = partition(tmp_path / "bad-0", resealed(make().data, edit))
    good_files, _ = partition(tmp_path / "good-0")

    bad, good = project(bad_files, "bad-0"), project(good_files, "good-0")
    assert (bad.next_clean_bytes, bad.settled_bytes) == (None, None)
    assert f"{bad_files[0][0]}: byte {at}" in bad.unknown_reason and says in bad.unknown_reason, bad.unknown_reason
    assert good.unknown_reason is None
    # the good partition: the first batch's three keys superseded by the second's, the third batch kept
    assert good.next_clean_bytes == good.log_bytes - at and good.batches_dropped == 1

    bad_row, good_row = facts(bad_files, "bad"), facts(good_files, "good")
    assert bad_row["next_clean_bytes"] is None and bad_row["settled_bytes"] is None
    assert f"byte {at}" in bad_row["projection_unknown_reason"], bad_row["projection_unknown_reason"]
    assert good_row["next_clean_bytes"] == good.next_clean_bytes and good_row["projection_unknown_reason"] is None



def test_the_trace_lists_each_batch_the_next_clean_leaves(tmp_path):
    """``trace``: the batches the next clean leaves, as kafka-dump-log would print them (the real-broker
    comparison, tests/monitor/model/test_nextclean_streams.py, reads it batch by batch): here the first
    batch's keys all superseded by the second's, so it goes; an unknown projection adds nothing."""
    files, at = partition(tmp_path / "good-0")
    trace: list = []
    p = project_partition(files, lambda u: open(u, "rb"), first_dirty=0, upper=9, log_start=0, now_ms=NOW,
                          delete_retention_ms=1000, aborted=AbortedRanges(()), last_records={}, name="good-0",
                          trace=trace)
    assert [(b.base_offset, b.last_offset, b.records, b.delete_horizon_ms) for b in trace] == [
        (3, 5, 3, None), (6, 8, 3, None), (9, 9, 1, None)]
    assert sum(b.size for b in trace) == p.next_clean_bytes == p.log_bytes - at
    bad_files, _ = partition(tmp_path / "bad-0", resealed(rf.v2(recs(range(3, 6))).data, unknown_codec))
    bad: list = []
    project_partition(bad_files, lambda u: open(u, "rb"), first_dirty=0, upper=9, log_start=0, now_ms=NOW,
                      delete_retention_ms=1000, aborted=AbortedRanges(()), last_records={}, name="bad-0", trace=bad)
    assert bad == []

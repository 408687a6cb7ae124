"""The dump input's Arrow rows when the dump's record lines came without their batch line (grep
output): the batch's bytes are unknown (null), each record counts its own key, value and framing."""

from __future__ import annotations

import io

from spark_analysis.arrow_rows import NOTE, RECORD_OVERHEAD, dump_batches

GREPPED = (
    "| offset: 7 CreateTime: 1763805600000 keySize: 3 valueSize: 5 sequence: -1 headerKeys: [] key: k17 payload: hello\n"
    "| offset: 9 CreateTime: 1763805600001 keySize: 3 valueSize: -1 sequence: -1 headerKeys: [] key: k18\n"
)


def test_grepped_record_lines_become_rows_with_unknown_batch_bytes():
    (batch,) = list(dump_batches("/data/orders-3/grep.txt", len(GREPPED), lambda uri: io.BytesIO(GREPPED.encode())))
    everything = batch.to_pylist()
    rows = [r for r in everything if r["fault_kind"] is None]
    # and one note for the summary (not a fault): the batch fields these lines do not print are unknown
    [note] = [r for r in everything if r["fault_kind"] == NOTE]
    assert "without their batch line" in note["fault_reason"]
    assert [r["offset"] for r in rows] == [7, 9]
    assert [r["record_bytes"] for r in rows] == [3 + 5 + RECORD_OVERHEAD, 3 + RECORD_OVERHEAD]
    assert [r["tombstone"] for r in rows] == [False, True]
    assert all(r["batch_bytes"] is None and r["batch_base_offset"] is None and r["fault_kind"] is None for r in rows)


def test_segment_base_is_the_walks_rule():
    from spark_analysis.arrow_rows import segment_base, topic_partition

    assert segment_base("/l/orders-0/00000000000000001200.log") == 1200
    for stray in ("5.log", "².log", "99999999999999999999999.log", "99999999999999999999.log"):
        assert segment_base(f"/l/orders-0/{stray}") is None  # was a ValueError for ².log
    assert topic_partition("/l/t-99999999999999999999/00000000000000000000.log") == (None, None)


MEASURE = r"""
import json, resource, sys
from spark_analysis.arrow_rows import segment_batches
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = [r for b in segment_batches(sys.argv[1], int(sys.argv[2]), lambda uri: open(uri, "rb")) for r in b.to_pylist()]
faults = [(r["fault_kind"], r["fault_position"], r["fault_reason"]) for r in rows if r["fault_kind"]]
print(json.dumps({"faults": faults, "growth": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024}))
"""


def test_a_segment_claiming_a_gigabyte_costs_the_audit_no_gigabyte(tmp_path):
    """The audit reads segments through the shared reader, so it has its bound (monitor.kafka.readbound): a 1 GiB
    sparse segment whose first batch header claims ~10^9 bytes becomes fault rows naming the byte, with
    the task's peak RSS growing by less than the bound (before it: by ~2 GiB)."""
    import json
    import struct
    import subprocess
    import sys

    from monitor.kafka import readbound

    part = tmp_path / "t-0"
    part.mkdir()
    seg = part / "00000000000000000000.log"
    with open(seg, "wb") as fh:
        fh.truncate(1 << 30)
        fh.write(struct.pack(">qiib", 0, 10**9, 0, 2))  # offset, length, leader epoch, magic 2
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(seg), str(1 << 30)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert [(k, p) for k, p, _ in got["faults"]] == [("crc", 0), ("zeros", 10**9 + 12)], got["faults"]
    assert got["growth"] < readbound.MAX_BATCH_BYTES, got

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

"""The audit's dump input reads a dump as ``inspect`` does (``monitor.kafka.sniff.text_encoding``: UTF-16 after
its byte order mark, as Windows PowerShell 5's ``>`` writes it) and says in the summary's notes which
index sections it skipped, none of them counted as a fault."""

from __future__ import annotations

BATCH = ("baseOffset: 1200 lastOffset: 1201 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 "
         "producerEpoch: -1 partitionLeaderEpoch: 4 isTransactional: false isControl: false deleteHorizonMs: "
         "OptionalLong.empty position: 0 CreateTime: 1763805600001 size: 86 magic: 2 compresscodec: none crc: 1 "
         "isvalid: true")
REC = "| offset: {o} CreateTime: 1763805600000 keySize: 3 valueSize: 5 sequence: -1 headerKeys: [] key: k{o} payload: hello"


def test_a_utf16_dump_with_an_index_section_is_audited_and_the_skip_noted(spark, tmp_path):
    from spark_analysis.audit import AuditInputs, run_audit
    from spark_analysis.inputs import load_records

    lines = ["Dumping /data/orders-0/00000000000000001200.log", BATCH, REC.format(o=1200), REC.format(o=1201),
             "Dumping /data/orders-0/00000000000000001200.index",  # line 5
             "offset: 1201 position: 0"]
    (tmp_path / "dumps").mkdir()
    p = tmp_path / "dumps" / "orders.txt"
    p.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-16"))
    records = load_records(spark, "dumps", [str(tmp_path / "dumps")])
    result = run_audit(spark, AuditInputs(kind="dumps", records=records, now_ms=1763805600000 + 1000))
    s = result.summary
    assert (s["records"], s["partitions"], s["faults"]) == (2, 1, 0), s["fault_list"]
    part = result.partitions.collect()[0]
    assert (part["topic"], part["partition"], part["distinct_keys"]) == ("orders", 0, 2)
    # a dump has records, not the batches' bytes a clean rewrites: the next clean's size is the labelled
    # estimate (two keys, nothing superseded: all of it), the settled size unknown with the reason
    assert (part["projection_method"], part["next_clean_bytes"], part["reclaimable_bytes"]) == ("estimated", 86, 0)
    assert part["settled_bytes"] is None and "settled size not counted" in part["projection_unknown_reason"]
    assert (s["settled_bytes"], s["settled_unknown_partitions"], s["projection_method"]) == (None, 1, "estimated")
    [note] = s["notes"]
    assert str(p) in note and note.endswith(": line 5: skipped the section of /data/orders-0/00000000000000001200"
                                            ".index (an index holds no records)")
    assert result.faults.count() == 0

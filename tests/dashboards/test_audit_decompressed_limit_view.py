"""The dashboard's Audit page says what a run's summary.json says of Kafka 4.4's max.decompressed.message.bytes
(``auditview.decompressed_limit``, among the run's conclusions): the partitions whose stored records exceed
it, in the config review's sentence the audit stored, and the unknown ones with why; nothing when no topic
sets a cap (no such key). Pure functions of the summary, no Streamlit."""

from __future__ import annotations

import pandas as pd

from dashboards.auditview import conclusions, decompressed_limit

OVER = {"topic": "capped", "partition": 0, "max_decompressed_record_bytes": 4100,
        "max_decompressed_message_bytes": 2048, "over": True, "unknown_reason": None,
        "summary": "max.decompressed.message.bytes=2048 (2.0 KiB) is below a stored record of 4100 bytes",
        "fix": "kafka-configs.sh --alter ..."}
FITS = {**OVER, "partition": 1, "max_decompressed_record_bytes": 1000, "over": False, "summary": None, "fix": None}
UNKNOWN = {**OVER, "topic": "t", "max_decompressed_message_bytes": None, "over": None, "summary": None, "fix": None,
           "unknown_reason": "max.decompressed.message.bytes unknown: the admin API did not answer"}


def _summary(*rows):
    return {"decompressed_limit": {"check": "decompressed_limit_below_records", "cause": "record_over_decompressed_limit",
                                   "partitions": list(rows), "over": sum(bool(r["over"]) for r in rows),
                                   "unknown": sum(bool(r["unknown_reason"]) for r in rows)}}


def test_a_record_above_the_limit_is_said_with_its_finding_and_fix_and_an_unknown_with_why():
    said = decompressed_limit(_summary(OVER, FITS, UNKNOWN))
    assert said == [
        "max.decompressed.message.bytes (Kafka 4.4): 1 partition holds a record above it "
        "(decompressed_limit_below_records; once the cleaner fails, record_over_decompressed_limit). capped-0: "
        "max.decompressed.message.bytes=2048 (2.0 KiB) is below a stored record of 4100 bytes. Fix: "
        "kafka-configs.sh --alter ...",
        "max.decompressed.message.bytes (Kafka 4.4): unknown for 1 partition: max.decompressed.message.bytes "
        "unknown: the admin API did not answer."]
    assert decompressed_limit(_summary(FITS)) == [
        "max.decompressed.message.bytes (Kafka 4.4): every stored record of the 1 partition of topics that set it "
        "fits."]
    assert decompressed_limit({}) == []


def test_the_run_s_conclusions_carry_it():
    sm = {"partitions": 2, "topics": 1, "bytes": 100, "reclaimable_bytes": 0, "next_clean_bytes": 100,
          "tombstones": 0, **_summary(OVER)}
    out = conclusions(sm, pd.DataFrame({"topic": [], "partition": []}))
    assert decompressed_limit(sm)[0] in out
    assert not any("max.decompressed" in line for line in conclusions({**sm, "decompressed_limit": None},
                                                                       pd.DataFrame({"topic": [], "partition": []})))

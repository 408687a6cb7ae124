"""The Audit page's reading rules (``dashboards.auditview``), on tables made here: every figure through the
units formatter (no ``None``, ``nan`` or scientific notation in a cell, headers in words), keys escaped by
the one escaping rule with their partition, the conclusions with units, a chart only with two or more
points (else a sentence why), what-if points labelled and axes with units."""

from __future__ import annotations

import math
import re

import pandas as pd

from dashboards import auditview as V
from dashboards import display
from dashboards import figures
from monitor.contract import units

BAD_CELL = re.compile(r"^(None|nan|NaN|NaT|<NA>)$|\d[eE][+-]?\d")


def bad_cells(df: pd.DataFrame) -> list[str]:
    return [v for col in df.columns for v in df[col].astype(str) if BAD_CELL.search(v)]


def test_a_key_is_escaped_by_the_one_rule_and_never_drawn_as_boxes():
    assert V.key_text(b"key-505") == "'key-505'" and V.key_text(b"") == "''"  # an empty key is seen
    binary = [bytes([0, 1, 0xFF, n]) for n in range(4)]
    shown = [V.key_text(k) for k in binary]
    assert shown[0] == "'\\x00\\x01\\xff\\x00'" and len(set(shown)) == 4  # four keys, four texts (not □□□□ each)
    assert all(s == display.key(k) for s, k in zip(shown, binary))  # the live pages' one rule
    assert V.key_text(None) == "(null)" and V.key_text(float("nan")) == "(null)"
    long = V.key_text(b"k" * 500)
    assert len(long) < 100 and long.endswith("...' (500 bytes)")


def test_cells_are_figures_a_person_reads():
    df = pd.DataFrame({"topic": ["orders", "accounts"], "obsolete_bytes": [2038.6105, None],
                       "records": [1_048_576, float("nan")], "estimated_clean_seconds": [1.23e-7, 234.0],
                       "max_cleanable_ratio": [0.4213, None], "config_source": ["admin", None]})
    out = V.shown(df, [V.Col("topic", "Topic"), V.Col("obsolete_bytes", "Obsolete bytes", V.BYTES),
                       V.Col("records", "Records", V.COUNT),
                       V.Col("estimated_clean_seconds", "Estimated cleaning time", V.SECONDS),
                       V.Col("max_cleanable_ratio", "Highest cleanable ratio", V.RATIO),
                       V.Col("config_source", "Config from"), V.Col("absent_in_old_runs", "Absent")])
    assert list(out.columns) == ["Topic", "Obsolete bytes", "Records", "Estimated cleaning time",
                                 "Highest cleanable ratio", "Config from"]  # a column the run lacks is left out
    assert out.iloc[0].tolist() == ["orders", "2.0 KiB", "1,048,576", "0 ms", "0.42", "admin"]
    assert out.iloc[1].tolist() == ["accounts", "unknown", "unknown", "3 min 54 s", "unknown", "unknown"]
    assert not bad_cells(out)


def partitions() -> pd.DataFrame:
    return pd.DataFrame([
        {"topic": "orders", "partition": 0, "eligible": True, "cleanable_ratio": 0.9, "min_cleanable_dirty_ratio": 0.5,
         "reclaimable_bytes": 3 * 2**20, "tombstones_past_retention": 12, "delete_retention_ms": 86_400_000},
        {"topic": "orders", "partition": 1, "eligible": False, "cleanable_ratio": 0.1,
         "min_cleanable_dirty_ratio": 0.5, "reclaimable_bytes": 0, "tombstones_past_retention": 0,
         "delete_retention_ms": 86_400_000},
        {"topic": "accounts", "partition": 0, "eligible": None, "cleanable_ratio": None,
         "min_cleanable_dirty_ratio": None, "reclaimable_bytes": None, "tombstones_past_retention": None,
         "delete_retention_ms": None}])


SUMMARY = {"partitions": 3, "topics": 2, "bytes": 10 * 2**20, "reclaimable_bytes": 3 * 2**20,
           "next_clean_bytes": 7 * 2**20, "settled_bytes": 5 * 2**20, "tombstones": 40,
           "tombstones_past_retention": 12, "faults": 0,
           "topic_configs": {"accounts": {"unknown": ["delete.retention.ms"], "reason": "the admin API refused"}}}


def test_the_conclusions_say_what_was_found_with_units():
    said = V.conclusions(SUMMARY, partitions(), None)
    assert said[0] == ("The next clean reclaims 3.0 MiB of the 10.0 MiB scanned (30 %) in 3 partitions of 2 topics; "
                       "what it leaves is 7.0 MiB, and 5.0 MiB once every delete horizon has passed and another "
                       "clean ran (settled).")
    assert said[1].startswith("2 partitions need attention. Dirty enough to clean: orders-0; Tombstones past "
                              "delete.retention.ms: orders-0; Config unknown: accounts-0.")
    assert said[2].startswith("Tombstone risk: 12 of the 40 tombstones on disk are older than delete.retention.ms")
    assert said[3].startswith("Projection accuracy: unknown (needs an earlier complete run")
    acc = {"run": "run-1", "totals": {"partitions": 2, "predicted_bytes": 2048.0, "actual_bytes": 3072,
                                      "error_bytes": 1024.0, "error_ratio": 0.5, "left_out": {}}}
    assert V.conclusions(SUMMARY, partitions(), acc)[3] == (
        "Projection accuracy: run run-1 predicted 2.0 KiB for the 2 partitions the cleaner has been over since; "
        "the broker reclaimed 3.0 KiB (error +1.0 KiB, +50 %).")
    acc["totals"]["left_out"] = {"not cleaned yet": 2, "written to between the runs": 1}
    assert V.conclusions(SUMMARY, partitions(), acc)[3].endswith(
        "(error +1.0 KiB, +50 %); 2 partitions left out, not cleaned yet; 1 partition left out, written to between "
        "the runs.")
    att = V.attention(partitions(), SUMMARY)
    assert att[["topic", "partition", "why"]].values.tolist() == [
        ["orders", 0, "dirty enough to clean"], ["orders", 0, "tombstones past delete.retention.ms"],
        ["accounts", 0, "config unknown"]]
    assert att["evidence"].tolist()[:2] == ["cleanable ratio 0.90 > 0.50; reclaims 3.0 MiB",
                                            "12 tombstones older than 1 d (delete.retention.ms)"]
    # eligible below its minimum: by max.compaction.lag.ms, said so (never "0.01 > 0.50")
    overdue = partitions().assign(cleanable_ratio=0.01)
    first = V.attention(overdue, SUMMARY).iloc[0]
    assert (first["why"], first["evidence"]) == ("past max.compaction.lag.ms", "cleanable ratio 0.01, not above 0.50: "
                                                 "a record is older than max.compaction.lag.ms; reclaims 3.0 MiB")
    calm = {**SUMMARY, "tombstones_past_retention": 0, "topic_configs": {}}
    quiet = partitions().iloc[1:2]
    assert V.conclusions(calm, quiet, None)[1].startswith("No partition needs attention")


def test_a_chart_needs_two_points_else_a_sentence_says_why():
    assert V.chart_or_why(2, "tombstones over time", "x") is None
    assert V.chart_or_why(1, "tombstones over time", "all were written in one minute") == \
        "No chart of tombstones over time: all were written in one minute."


def whatif_rows() -> pd.DataFrame:
    day = 86_400_000
    rows = [("current", None, 3 * 2**30, 40 * 2**30, 10 * 2**30), ("min.cleanable.dirty.ratio", 0.1, 2 * 2**30,
                                                                     80 * 2**30, 20 * 2**30),
            ("min.cleanable.dirty.ratio", 0.75, 3 * 2**30, 40 * 2**30, 10 * 2**30),  # the same as current
            ("segment.ms", 3.5 * day, None, None, None)]  # unknown
    return pd.DataFrame([{"topic": "orders", "setting": s, "value": v, "size_bytes": size,
                          "read_bytes_per_day": r, "written_bytes_per_day": w} for s, v, size, r, w in rows])


def test_what_if_points_are_labelled_and_settings_with_the_same_figures_share_one():
    pts = figures.whatif_points(whatif_rows())
    assert sorted(p["labels"] for p in pts) == [["current", "min.cleanable.dirty.ratio 0.75"],
                                                ["min.cleanable.dirty.ratio 0.1"]]
    fig = figures.audit_whatif(whatif_rows())
    [trace] = fig.data
    assert trace.mode == "markers+text" and list(trace.text) == [
        "current (and 1 more, same figures)", "min.cleanable.dirty.ratio 0.1"]
    assert list(trace.x) == [3.0, 2.0]  # GiB: the unit the largest figure needs
    assert fig.layout.xaxis.title.text == "steady size on disk (mean over a clean cycle), GiB"
    assert fig.layout.yaxis.title.text == "cleaner bytes read + written per day, GiB/day"


def test_byte_axes_take_the_iec_unit_the_largest_figure_needs():
    assert V.byte_scale(0) == (1.0, "B") and V.byte_scale(1023) == (1.0, "B")
    assert V.byte_scale(2038.6) == (1024.0, "KiB") and V.byte_scale(5 * 2**30) == (float(2**30), "GiB")
    assert units.IEC[1] == "KiB"


def test_an_accuracy_error_is_never_in_scientific_notation():
    from monitor.verdicts.accuracy import signed_ratio

    for r in (1.5, 12.0, -0.000_001_8, 3e-9):
        assert not re.search(r"\d[eE][+-]?\d", signed_ratio(r)), signed_ratio(r)
    assert not math.isnan(V.byte_scale(float("inf"))[0])


def test_what_if_charts_one_topic_at_a_time_the_one_a_setting_changes_most_first():
    other = whatif_rows().assign(topic="audit-log", size_bytes=lambda d: d["size_bytes"] / 1024)  # spread 1 MiB
    flat = whatif_rows().assign(topic="flat", size_bytes=float(2**30)).head(3)  # every setting the same size
    rows = pd.concat([other, flat, whatif_rows()], ignore_index=True)
    assert figures.whatif_topics(figures.whatif_points(rows)) == ["orders", "audit-log", "flat"]
    fig = figures.audit_whatif(rows[rows["topic"] == "orders"])
    assert fig.layout.title.text.endswith("<br><sup>orders</sup>") and not fig.layout.showlegend
    assert figures.audit_whatif(rows).layout.showlegend  # several topics drawn: the legend names them


def test_per_topic_bars_are_rows_named_across_the_largest_first_and_say_when_cut():
    n = figures.TOPICS_CHARTED + 5
    topics = pd.DataFrame({"topic": [f"a-rather-long-changelog-topic-name-{i:02d}" for i in range(n)],
                           "bytes": [float(i * 2**20) for i in range(n)],
                           "next_clean_bytes": [float(i * 2**19) for i in range(n)],
                           "reclaimable_bytes": [float(i * 2**19) for i in range(n)],
                           "estimated_clean_seconds": [float(i) for i in range(n)]})
    for fig in (figures.audit_sizes(topics), figures.audit_clean_time(topics)):
        bars = fig.data[0]
        assert bars.orientation == "h" and len(bars.y) == figures.TOPICS_CHARTED
        assert bars.y[0] == f"a-rather-long-changelog-topic-name-{n - 1:02d}"  # the largest on top (reversed axis)
        assert fig.layout.yaxis.autorange == "reversed"
        assert fig.layout.title.text.endswith(f"(the {figures.TOPICS_CHARTED} largest of {n} topics)")
        assert fig.layout.height >= 24 * figures.TOPICS_CHARTED
    gone = topics.assign(next_clean_bytes=[None] + [1.0] * (n - 1))  # its projection unknown: no bar
    [mark] = [d for d in figures.audit_sizes(gone.head(3)).data if d.type == "scatter" and d.mode == "text"]
    assert list(mark.y) == ["a-rather-long-changelog-topic-name-00"] and list(mark.text) == ["unknown"]
    assert not [d for d in figures.audit_sizes(topics.head(3)).data if d.type == "scatter" and d.mode == "text"]
    few = figures.audit_sizes(topics.head(3))
    assert "largest" not in few.layout.title.text and list(few.data[0].y)[0].endswith("02")
    assert few.layout.xaxis.title.text == "size on disk (MiB)"

"""spark_analysis.whatif: the model's inputs gathered from what the audit made (a partition's facts and
row), and the table's rows per compacted topic; unknown, with the reason, when an input is."""

import pytest

from monitor.model.topicconfig import TopicConfig, effective_config
from monitor.model.whatif import CURRENT, steady
from spark_analysis.whatif import current_settings, observed, whatif_rows

FACTS = {"topic": "t", "partition": 0, "write_bytes_per_second": 1_000.0, "write_offsets": 500,
         "write_rate_unknown_reason": None}
ROW = {"topic": "t", "partition": 0, "bytes": 10_000, "clean_bytes": 4_000, "cleanable_bytes": 5_000,
       "settled_bytes": 6_000, "retention_deleted_bytes": None, "tombstones_unstamped": 50,
       "projection_unknown_reason": None, "config_unknown_reason": None}


def test_live_bytes_are_the_settled_size_less_the_uncleanable_tail():
    o = observed(FACTS, ROW, backoff_ms=500)
    # the tail above the first uncleanable offset: 10000 - 4000 - 5000 = 1000, kept whole by the projection
    assert o.live_bytes == 5_000 and o.write_bytes_per_second == 1_000
    assert o.tombstone_share == pytest.approx(50 / 500)  # unstamped tombstones: written since the last clean
    assert o.backoff_ms == 500


@pytest.mark.parametrize("facts,row,why", [
    ({"topic": "t", "partition": 0}, ROW, "the input has records"),  # the records path: no such facts
    ({**FACTS, "write_bytes_per_second": None, "write_rate_unknown_reason": "too short"}, ROW, "too short"),
    (FACTS, {**ROW, "settled_bytes": None, "projection_unknown_reason": "a read fault"}, "a read fault"),
])
def test_an_unknown_input_leaves_the_partition_unknown(facts, row, why):
    o = observed(facts, row)
    assert o.write_bytes_per_second is None and why in o.unknown_reason and "t-0" in o.unknown_reason
    assert steady(o, current_settings(TopicConfig())).size_bytes is None


class Inputs:
    def __init__(self, configs: dict):
        self.configs = configs

    def effective(self, topic):
        return effective_config(topic, admin=self.configs.get(topic), compacted=True)


def test_rows_per_compacted_topic_with_the_grid():
    cfg = TopicConfig.from_strings({"cleanup.policy": "compact", "segment.ms": 60_000})
    rows = whatif_rows([FACTS, {**FACTS, "partition": 1}], [ROW, {**ROW, "partition": 1}], Inputs({"t": cfg}))
    cur = [r for r in rows if r["setting"] == CURRENT]
    assert len(cur) == 1 and cur[0]["partitions"] == 2 and cur[0]["value"] is None
    assert cur[0]["write_bytes_per_second"] == 2_000 and cur[0]["live_bytes"] == 10_000
    one = steady(observed(FACTS, ROW), current_settings(cfg))
    assert cur[0]["size_bytes"] == pytest.approx(2 * one.size_bytes)
    assert {r["setting"] for r in rows} == {CURRENT, "min.cleanable.dirty.ratio", "segment.ms", "segment.bytes",
                                            "delete.retention.ms"}
    seg = sorted(r["segment_ms"] for r in rows if r["setting"] == "segment.ms")
    assert seg == [30_000, 120_000] and all(isinstance(r["segment_ms"], int) for r in rows)
    # not compacted: no row
    plain = TopicConfig.from_strings({"cleanup.policy": "delete"})
    assert whatif_rows([FACTS], [ROW], Inputs({"t": plain})) == []


def test_the_report_section_has_the_assumptions_a_chart_and_the_table():
    from monitor.contract.whatif import ASSUMPTIONS
    from spark_analysis.report import whatif_html

    cfg = TopicConfig.from_strings({"cleanup.policy": "compact", "segment.ms": 60_000})
    rows = whatif_rows([FACTS], [ROW], Inputs({"t": cfg}))
    rows += whatif_rows([{"topic": "u", "partition": 0}], [{**ROW, "topic": "u"}], Inputs({"u": cfg}))
    out = whatif_html(rows)
    assert ASSUMPTIONS.split(":")[0] in out and "plotly" in out.lower()
    assert "min.cleanable.dirty.ratio 0.25" in out and "segment.ms 2 min" in out
    assert "write rate unknown" in out and "<td>unknown</td>" in out  # topic u: the records path
    assert "before the what-if table" in whatif_html(None)


def test_a_topic_whose_config_is_unknown_has_its_rows_unknown_with_the_reason():
    from monitor.model.topicconfig import REFUSED, AdminRefusal

    refusal = AdminRefusal(REFUSED, "no DescribeConfigs on TOPIC t")

    class Refused:
        def effective(self, topic):
            return effective_config(topic, compacted=True, refusal=refusal)

    rows = whatif_rows([FACTS], [ROW], Refused())
    assert rows and all(r["size_bytes"] is None and r["cleans_per_day"] is None for r in rows)
    assert "delete.retention.ms" in rows[0]["unknown_reason"] and refusal.text in rows[0]["unknown_reason"]

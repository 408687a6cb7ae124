"""The model's comparisons, and the rule table stating the model's comparison rather than one of its own."""

import pytest

from monitor.model import compaction
from monitor.contract import rules
from monitor.model.comparison import Comparison


def test_a_comparison_applies_its_operator_with_the_given_or_fixed_threshold():
    assert Comparison(">").holds(0.51, 0.5) and not Comparison(">").holds(0.5, 0.5)  # Kafka's strict test
    assert Comparison(">=", 0.9).holds(0.9) and not Comparison(">=", 0.9).holds(0.89)
    assert not Comparison(">=", 0.9).holds(0.95, 1.0)  # a threshold given wins over the fixed one


def test_a_comparison_without_a_threshold_or_with_an_unknown_operator_fails_loudly():
    with pytest.raises(ValueError, match="no fixed threshold"):
        Comparison("<").holds(1)
    with pytest.raises(ValueError, match="unknown comparison operator '=>'"):
        Comparison("=>")


def test_compaction_lagging_alerts_on_the_models_test_for_picking_a_log():
    (clause,) = rules.rule("CompactionLagging", "warning").clauses
    (compare,) = clause.compare
    assert compare == rules.CLEANABLE_RATIO_ABOVE_MIN
    assert compare.op == compaction.CLEANABLE_RATIO_ABOVE_MIN.op == ">"
    assert compare.threshold.metric == "kafka_compaction_partition_min_cleanable_dirty_ratio"

"""A comparison of a figure with a threshold, stated as data: the operator and, where the comparison fixes
one, the number.

Why data and not a function: a comparison the model makes on Kafka's figures is also stated to Prometheus
by the rule table (``monitor.contract.rules``), and the two must agree. Kafka's own test for picking a log to clean
(``monitor.model.compaction.CLEANABLE_RATIO_ABOVE_MIN``) belongs to the model: the model states it as a
``Comparison`` and the rule table refers to it, never the reverse, so the model depends neither on the
alerts nor on the configuration they read (``tests/test_layout.py``).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq,
       "!=": operator.ne}


@dataclass(frozen=True)
class Comparison:
    """``value op threshold``; ``number`` is the threshold where the comparison fixes one, else each call
    gives it (a topic's ``min.cleanable.dirty.ratio``, a partition's first dirty offset)."""

    op: str
    number: float | None = None

    def __post_init__(self):
        if self.op not in OPS:
            raise ValueError(f"unknown comparison operator {self.op!r} (one of {sorted(OPS)})")

    def holds(self, value: float, threshold: float | None = None) -> bool:
        limit = self.number if threshold is None else threshold
        if limit is None:
            raise ValueError(f"the comparison {self.op} has no fixed threshold: give one")
        return OPS[self.op](value, limit)

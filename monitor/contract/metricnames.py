"""The namespace of every series the collector exports, defined once for the core and the edges.

Why here: the rule table (``monitor.contract.rules``), the panels, the collector's registry
(``collectors/export/metrics.py``), the dashboard's readers and the Grafana template all name the same series;
each used to spell the prefix itself (``kafka_compaction`` with or without the ``_``), and a rename
would have had to find them all. ``tests/test_layout.py`` fails when an edge module spells it as a
literal instead of importing it from here.
"""

from __future__ import annotations

NAMESPACE = "kafka_compaction"  # Prometheus' namespace: the exported series are NAMESPACE_<name>
PREFIX = NAMESPACE + "_"
RECORDING_PREFIX = NAMESPACE + ":"  # recording rules: kafka_compaction:<name>:<aggregation>


def full_name(metric: str) -> str:
    """``metric`` with the prefix, whether or not it has it already."""
    return metric if metric.startswith(PREFIX) else PREFIX + metric

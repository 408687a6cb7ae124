"""The Streamlit pages' charts that Grafana draws too, taken from the one panel table
(``monitor.contract.panels``): the same PromQL (Grafana's variables substituted as for "All" clusters) and the
same threshold lines. A page never writes a Prometheus query of its own for these charts; a test
checks both forms agree (tests/alerts/test_grafana.py)."""

from __future__ import annotations

import re

from monitor.settings.config import Thresholds
from monitor.contract.metricnames import PREFIX
from monitor.contract.panels import instantiate, panel


def promql(key: str, query: int = 0, **narrow: str) -> str:
    """The panel's query as the pages send it to Prometheus: every cluster, optionally one partition."""
    return instantiate(panel(key).queries[query].expr, **narrow)


def metric(key: str) -> str:
    """The one metric a single-selector panel draws (for the pages' collector mode, which has no PromQL)."""
    (expr,) = [q.expr for q in panel(key).queries]
    m = re.fullmatch(re.escape(PREFIX) + r"(\w+)\{[^}]*\}", expr)
    if m is None:
        raise ValueError(f"panel {key} is not one metric: {expr}")
    return m.group(1)


def thresholds(key: str, t: Thresholds) -> list[float]:
    """The panel's threshold lines under ``t``, lowest first."""
    return [v for v, _ in panel(key).thresholds(t)]


def threshold(key: str, t: Thresholds) -> float | None:
    """The panel's one threshold line, or None when it has none."""
    found = thresholds(key, t)
    if len(found) > 1:
        raise ValueError(f"panel {key} has {len(found)} thresholds")
    return found[0] if found else None

"""What the audit's what-if table says, said once for the edges that show it (the HTML report,
``spark_analysis.report``; the dashboard's Audit page, ``dashboards.views.audit``): how the grid is
chosen, the model's assumptions (``monitor.model.whatif``), a row's setting for a person, and the
figure's axes."""

from __future__ import annotations

import math

from monitor.contract import units
from monitor.model.whatif import CURRENT


# Said the same way by the HTML report and the dashboard (and the docs page, docs/what-if.md)
GRID_TEXT = ("Each row changes one setting from the topic's own: min.cleanable.dirty.ratio at 0.1, 0.25, 0.5 and "
             "0.75; segment.ms, segment.bytes and delete.retention.ms halved and doubled.")
ASSUMPTIONS = ("A steady-state model, not a measurement: the write rate stays as observed over each partition's "
               "uncleaned tail; the key set is stable (as many live keys as the settled size holds: updates, not "
               "new keys); tombstones are written at the share the uncleaned tail shows and are as large as other "
               "records; a log is cleaned within log.cleaner.backoff.ms (Kafka's 15 s) of its dirty ratio passing "
               "the threshold, never waiting behind other logs; min.compaction.lag.ms, max.compaction.lag.ms and "
               "retention are left out. A clean reads the clean section once and the dirty one twice (offset map, "
               "copy) and writes the clean section again. Figures whose inputs are unknown are unknown.")


def label(setting: str, value) -> str:
    """A row's setting for a person: "current", "min.cleanable.dirty.ratio 0.25", "segment.ms 12 h"."""
    if setting == CURRENT or value is None or (isinstance(value, float) and math.isnan(value)):
        return CURRENT
    if setting == "min.cleanable.dirty.ratio":
        return f"{setting} {value:g}"
    if setting == "segment.bytes":
        return f"{setting} {units.bytes_iec(value)}"
    return f"{setting} {units.duration_ms(value)}"


def cleaner_bytes(row: dict) -> float | None:
    """What the cleaner reads and writes per day, together (the chart's axis); None when unknown."""
    r, w = row.get("read_bytes_per_day"), row.get("written_bytes_per_day")
    if r is None or w is None or any(isinstance(v, float) and math.isnan(v) for v in (r, w)):
        return None
    return r + w


CHART_TITLE = "What-if: steady size against the cleaner's bytes per day, per setting"
# the axes without their unit: the dashboard picks the IEC unit the figures need (``dashboards.auditview``)
X_AXIS = "steady size on disk (mean over a clean cycle)"
Y_AXIS = "cleaner bytes read + written per day"
X_TITLE = f"{X_AXIS}, MiB"
Y_TITLE = f"{Y_AXIS}, MiB"

"""How close an audit's prediction came to what the broker then reclaimed: two audit runs of the same log
dirs paired partition by partition, one taken before the cleaner ran (its ``reclaimable_bytes`` is the
prediction) and one after (the log's size then, ``bytes``: the ``.log`` files' sizes in the log dir).

Defined once here for every reader of audit runs (the dashboard's Audit page, the audit's HTML report,
the demo's summary line), with how an error is written and which rows are charted.
Rows are the audit's partition table rows (``spark_analysis.audit.tables.PARTITION_DDL``) as dicts.

What a partition's comparison can honestly say (``status``):
* ``cleaned``: the later run's cleaner checkpoint (``cleaner-offset-checkpoint``) is at or past the
  earlier run's first uncleanable offset, so the cleaner has been over everything the prediction
  covered; actual = size before - size after, error = actual - predicted;
* ``not cleaned yet``: the cleaner has not reached that offset: the actual figure is partial;
* ``written to between the runs``: the latest record's timestamp or the active segment moved, so the
  later size mixes what the cleaner removed with what producers added: no actual figure;
* ``not in the later run``: the partition is gone (deleted, or the later run read other log dirs);
* ``no prediction``: the earlier run had no reclaimable figure (its topic config unknown: the admin API
  did not give it, ``config_unknown_reason``), so there is nothing to compare.
Only ``cleaned`` rows carry an error and enter the totals.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

CLEANED = "cleaned"
NOT_CLEANED = "not cleaned yet"
WRITTEN = "written to between the runs"
MISSING = "not in the later run"
NO_PREDICTION = "no prediction"


@dataclass(frozen=True)
class PartitionAccuracy:
    topic: str
    partition: int
    status: str
    predicted_bytes: float | None  # the earlier run's reclaimable_bytes (None: it had none, NO_PREDICTION)
    bytes_before: int
    bytes_after: int | None
    actual_bytes: int | None  # bytes_before - bytes_after, when ``status`` is cleaned
    error_bytes: float | None  # actual - predicted: > 0 the broker reclaimed more than predicted
    error_ratio: float | None  # error / predicted; None when nothing was predicted (reason in ``detail``)
    detail: str

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Totals:
    partitions: int  # cleaned partitions, the ones the totals sum
    predicted_bytes: float
    actual_bytes: int
    error_bytes: float
    error_ratio: float | None
    left_out: dict  # status -> partitions not in the totals

    def as_dict(self) -> dict:
        return asdict(self)


def _moved(before: dict, after: dict) -> str | None:
    """Why the later run saw writes the earlier did not, or None."""
    a, b = before.get("last_timestamp"), after.get("last_timestamp")
    if a is not None and b is not None and b > a:
        return f"its latest record's timestamp moved from {a} to {b} ms"
    a, b = before.get("first_uncleanable_offset"), after.get("first_uncleanable_offset")
    if a is not None and b is not None and b > a:
        return f"its first uncleanable offset moved from {a} to {b}"
    return None


def compare_partition(before: dict, after: dict | None) -> PartitionAccuracy:
    if before.get("reclaimable_bytes") is None:  # no figure was predicted (the topic config was unknown)
        return PartitionAccuracy(topic=before["topic"], partition=int(before["partition"]), status=NO_PREDICTION,
                                 predicted_bytes=None, bytes_before=int(before["bytes"]), bytes_after=None,
                                 actual_bytes=None, error_bytes=None, error_ratio=None,
                                 detail=before.get("config_unknown_reason") or "the earlier run had no reclaimable figure")
    predicted = float(before["reclaimable_bytes"])
    base = dict(topic=before["topic"], partition=int(before["partition"]), predicted_bytes=predicted,
                bytes_before=int(before["bytes"]))
    if after is None:
        return PartitionAccuracy(**base, status=MISSING, bytes_after=None, actual_bytes=None, error_bytes=None,
                                 error_ratio=None, detail="the later run has no such partition")
    after_bytes = int(after["bytes"])
    why = _moved(before, after)
    if why:
        return PartitionAccuracy(**base, status=WRITTEN, bytes_after=after_bytes, actual_bytes=None, error_bytes=None,
                                 error_ratio=None, detail=why)
    target, reached = before.get("first_uncleanable_offset"), after.get("checkpoint_offset")
    if target and (reached is None or reached < target):  # target 0: nothing below the active segment
        return PartitionAccuracy(
            **base, status=NOT_CLEANED, bytes_after=after_bytes, actual_bytes=None, error_bytes=None, error_ratio=None,
            detail=f"the cleaner's checkpoint is at {'no offset' if reached is None else reached}, "
                   f"below {target}, the end of what the prediction covered")
    actual = int(before["bytes"]) - after_bytes
    error = actual - predicted
    return PartitionAccuracy(**base, status=CLEANED, bytes_after=after_bytes, actual_bytes=actual, error_bytes=error,
                             error_ratio=error / predicted if predicted > 0 else None,
                             detail="" if predicted > 0 else "nothing was predicted: no ratio")


def compare_runs(before: list[dict], after: list[dict]) -> list[PartitionAccuracy]:
    """Every partition of the earlier run against the later run's, in topic, partition order."""
    later = {(r["topic"], int(r["partition"])): r for r in after}
    return [compare_partition(r, later.get((r["topic"], int(r["partition"]))))
            for r in sorted(before, key=lambda r: (r["topic"], int(r["partition"])))]


def totals(rows: list[PartitionAccuracy]) -> Totals:
    cleaned = [r for r in rows if r.status == CLEANED]
    predicted = sum(r.predicted_bytes for r in cleaned)
    actual = sum(r.actual_bytes for r in cleaned)
    left: dict = {}
    for r in rows:
        if r.status != CLEANED:
            left[r.status] = left.get(r.status, 0) + 1
    return Totals(len(cleaned), predicted, actual, actual - predicted,
                  (actual - predicted) / predicted if predicted > 0 else None, left)


def charted(row: dict) -> bool:
    """Whether a comparison row (``PartitionAccuracy.as_dict``) goes on the chart: a partition the cleaner
    has been over where something was predicted or reclaimed (the rest only in the table)."""
    return row["status"] == CLEANED and ((row["predicted_bytes"] or 0) > 0 or (row["actual_bytes"] or 0) != 0)


def signed_bytes(v: float) -> str:
    """An error in bytes with its sign, in the units formatter's IEC sizes: "-1000 B", "+3.0 MiB"."""
    from monitor.contract.units import bytes_iec

    return ("-" if v < 0 else "+") + bytes_iec(abs(v))


def signed_ratio(r: float) -> str:
    """A relative error with its sign, two significant digits, never in scientific notation: "-0.0018 %",
    "+12 %", "+150 %"."""
    p = r * 100
    if p == 0:
        return "+0 %"
    digits = max(0, 1 - math.floor(math.log10(abs(p))))
    return f"{p:+,.{digits}f} %"


def baseline(runs: list[str], later: str) -> str | None:
    """The run a later one is compared with by default: the run just before it (run names sort by
    time, ``monitor.contract.auditrun``), or None when it is the first."""
    earlier = sorted(r for r in runs if r < later)
    return earlier[-1] if earlier else None

"""The Partitions and consumer-group tables the pages show, joined from the current samples
(``dashboards.sources``): one row per partition (or per group's partition) with its figures, its cause
and fix (``monitor.verdicts.causes``), and whether the rule table's alert is raised for it (``dashboards.alertrows``).

Why apart from the sources: these joins are the pages' view of the collector's series, the same from
Prometheus or from a collector; the sources only read them.
"""

from __future__ import annotations

import pandas as pd

from monitor.model.horizon import STATES

from dashboards import display
from dashboards.alertrows import alerting
from monitor.contract import units
from dashboards.sources import metric
from monitor.verdicts.fixes import fix_outline
from monitor.contract.rules import ALERT

PARTITION = ["cluster", "broker", "topic", "partition"]
# the active segment against its roll settings, and the duplicates stuck in it
ACTIVE_COLUMNS = ["active_segment_bytes", "active_segment_age_seconds", "segment_bytes", "max_segment_age_seconds",
                  "roll_seconds", "roll_unknown", "active_duplicate_records", "active_duplicate_bytes",
                  "held_by_min_compaction_lag_bytes"]


def stuck_in_active_segment(table: pd.DataFrame) -> pd.DataFrame:
    """The partitions whose active segment holds duplicates (records a later one of the same key in it
    supersedes), the most duplicated bytes first, with how far the segment is from its roll."""
    if table.empty or "active_duplicate_records" not in table:
        return table.iloc[:0]
    dup = table[table["active_duplicate_records"].fillna(0) > 0]
    return dup.sort_values("active_duplicate_bytes", ascending=False).reset_index(drop=True)


def _label_per_row(out: pd.DataFrame, series: pd.DataFrame, label: str, keys: list[str], default: str) -> list:
    """For each row of ``out``, the ``label`` of the first of ``series`` (a ``metric`` frame) with the
    same ``keys``, ``default`` where there is none (a reason or cause a partition's series names)."""
    if series.empty:
        return [default] * len(out)
    first = series.groupby(keys, as_index=False)[label].first().rename(columns={label: "_label"})
    return out[keys].merge(first, on=keys, how="left")["_label"].fillna(default).tolist()


def partitions_table(samples: pd.DataFrame, alerts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per partition with the figures the Partitions page shows; ``lagging`` where
    CompactionLagging is raised for it."""
    keys = PARTITION
    base = metric(samples, "partition_cleanable_ratio")
    if base.empty:
        return pd.DataFrame(columns=keys + ["lagging", "cleanable_ratio", "uncleaned_ratio", "threshold",
                                            "cleanable_bytes", "uncleaned_bytes", "log_bytes", "eligible_seconds",
                                            "tombstones", "oldest_tombstone_age_seconds",
                                            "tombstones_past_delete_horizon", "overdue_seconds", "blocked", "cause",
                                            "fix", "last_stable_offset", "open_transactions",
                                            "oldest_open_transaction_age_seconds", "first_dirty_offset",
                                            "first_uncleanable_offset", "log_end_offset", "detail_pending",
                                            *ACTIVE_COLUMNS])
    out = base[keys].copy()
    out["cleanable_ratio"] = base["value"].values

    def join(name: str, col: str, **where):
        nonlocal out
        m = metric(samples, name)
        for k, v in where.items():
            m = m[m[k] == v]
        if m.empty:
            out[col] = None
            return
        m = m.groupby(keys, as_index=False)["value"].sum().rename(columns={"value": col})
        out = out.merge(m, on=keys, how="left")

    join("partition_uncleaned_ratio", "uncleaned_ratio")
    join("partition_min_cleanable_dirty_ratio", "threshold")
    join("partition_cleanable_bytes", "cleanable_bytes")
    join("partition_uncleaned_bytes", "uncleaned_bytes")
    join("partition_log_bytes", "log_bytes")
    join("partition_eligible_seconds", "eligible_seconds")
    join("partition_tombstones", "tombstones")
    join("partition_oldest_tombstone_age_seconds", "oldest_tombstone_age_seconds")
    join("partition_tombstones_past_delete_horizon", "tombstones_past_delete_horizon")
    join("partition_compaction_delay_seconds", "overdue_seconds")
    for name in ("last_stable_offset", "open_transactions", "oldest_open_transaction_age_seconds",
                 "first_dirty_offset", "first_uncleanable_offset", "log_end_offset"):
        join(f"partition_{name}", name)
    join("partition_active_segment_bytes", "active_segment_bytes")
    join("partition_active_segment_age_seconds", "active_segment_age_seconds")
    join("partition_segment_bytes", "segment_bytes")
    join("partition_max_segment_age_seconds", "max_segment_age_seconds")
    join("partition_active_segment_roll_seconds", "roll_seconds")
    join("partition_active_segment_duplicate_records", "active_duplicate_records")
    join("partition_active_segment_duplicate_bytes", "active_duplicate_bytes")
    join("partition_not_yet_cleanable_bytes", "held_by_min_compaction_lag_bytes", held_by="min_compaction_lag")
    join("partition_detail_pending", "detail_pending")
    out["roll_unknown"] = _label_per_row(out, metric(samples, "partition_active_segment_roll_unknown"), "reason",
                                         keys, "")
    cause = metric(samples, "partition_compaction_cause")
    out["cause"] = _label_per_row(out, cause[cause["value"] == 1] if not cause.empty else cause, "cause", keys,
                                  "unknown")
    out["fix"] = [fix_outline(c, t, int(p), last_stable_offset=None if lso != lso or lso is None else int(lso))
                  for c, t, p, lso in zip(out["cause"], out["topic"], out["partition"], out["last_stable_offset"])]
    out["blocked"] = _label_per_row(out, metric(samples, "partition_compaction_blocked"), "reason", keys, "")
    lagging = {tuple(r) for r in alerting(alerts, ALERT.CompactionLagging, keys).astype(str).values}
    out["lagging"] = [tuple(str(v) for v in r) in lagging for r in out[keys].values]
    out["partition"] = out["partition"].astype(int)
    return out.sort_values(["topic", "partition"]).reset_index(drop=True)


GROUP = ["cluster", "group", "topic", "partition"]


def consumer_groups_table(samples: pd.DataFrame, alerts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per group and partition of a compacted topic: lag in records and in time, and
    ``may_miss_updates``: the reasons it may read an already compacted history (``monitor.model.consumers``),
    "latest value only" for a group declared so (no alert for it), "" when neither reason holds,
    "unknown" when neither could be told, "not exported" for a healthy group's partition at granularity
    topic (the collector's default sends its ``GROUP_DEFAULT`` series only: no lag in records either).
    ``alert``: ConsumerMayMissUpdates raised for it. ``lag_method``: how the time lag was told (exact,
    interpolated, extrapolated: the method label); ``lag_unknown``: the reason it could not be
    (consumer_group_lag_seconds_unknown), "" when it was."""
    cols = GROUP + ["lag_records", "lag_seconds", "lag_method", "lag_unknown", "may_miss_updates", "alert"]
    # one row per group's partition with any of its series: lag_records goes out for a healthy one at
    # granularity partition only, its time lag (or why unknown) and ratio at every granularity
    rows = [metric(samples, n) for n in ("consumer_group_lag_records", "consumer_group_lag_seconds",
                                         "consumer_group_lag_seconds_unknown", "consumer_group_lag_retention_ratio")]
    rows = [r[GROUP].astype(str) for r in rows if not r.empty]
    if not rows:
        return pd.DataFrame(columns=cols)
    out = pd.concat(rows).drop_duplicates().reset_index(drop=True)
    records = metric(samples, "consumer_group_lag_records")
    out = out.merge(records.astype({k: str for k in GROUP})[GROUP + ["value"]].rename(
        columns={"value": "lag_records"}), on=GROUP, how="left") if not records.empty else out.assign(
        lag_records=float("nan"))
    secs = metric(samples, "consumer_group_lag_seconds")
    if secs.empty:
        out["lag_seconds"], out["lag_method"] = None, None
    else:
        secs = secs.assign(method=secs["method"] if "method" in secs.columns else None).astype({k: str for k in GROUP})
        out = out.merge(secs[GROUP + ["value", "method"]].rename(columns={"value": "lag_seconds",
                                                                          "method": "lag_method"}),
                        on=GROUP, how="left")
    # consumer_group_lag_seconds_unknown{reason}: why a lagging group's time lag cannot be told
    unknown = metric(samples, "consumer_group_lag_seconds_unknown")
    unknown = unknown[unknown["value"] == 1] if not unknown.empty else unknown
    reasons = {tuple(str(r[k]) for k in GROUP): str(r.get("reason", "")) for r in unknown.to_dict("records")}
    out["lag_unknown"] = [reasons.get(tuple(str(v) for v in row), "") for row in out[GROUP].values]
    miss = metric(samples, "consumer_group_may_miss_updates")
    found: dict[tuple, list] = {}
    for r in miss.to_dict("records"):
        found.setdefault(tuple(str(r[k]) for k in GROUP), []).append(r)

    cut = {tuple(str(v) for v in row) for row, n in zip(out[GROUP].values, out["lag_records"]) if n != n}

    def why(key) -> str:
        rows = found.get(key)
        if not rows:
            return "not exported" if key in cut else "unknown"
        if any(r["latest_value_only"] == "true" for r in rows):
            return "latest value only"
        return ", ".join(sorted(r["reason"] for r in rows if r["value"] == 1))

    keys = [tuple(str(v) for v in row) for row in out[GROUP].values]
    out["may_miss_updates"] = [why(k) for k in keys]
    raised = {tuple(r) for r in alerting(alerts, ALERT.ConsumerMayMissUpdates, GROUP).astype(str).values}
    out["alert"] = [k in raised for k in keys]
    return out[cols].reset_index(drop=True)


HORIZON_KINDS = ("tombstone", "marker")
HORIZON_COLUMNS = [f"{k}s {st}" for k in HORIZON_KINDS for st in STATES]


def horizons_table(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per partition with a delete-horizon series (``partition_delete_horizon_records{kind,state}``):
    its tombstones and markers per state (``monitor.model.horizon.STATES``; a kind whose series are absent,
    tombstones while the records are unread, is empty: unknown, not 0) and ``next removal`` (UTC), the
    soonest first."""
    m = metric(samples, "partition_delete_horizon_records")
    cols = PARTITION + HORIZON_COLUMNS + ["next removal"]
    if m.empty:
        return pd.DataFrame(columns=cols)
    m = m.assign(column=m["kind"] + "s " + m["state"])
    out = m.pivot_table(index=PARTITION, columns="column", values="value", aggfunc="sum").reset_index()
    out.columns.name = None
    for c in HORIZON_COLUMNS:
        if c not in out:
            out[c] = None
    nxt = metric(samples, "partition_next_delete_horizon_timestamp_seconds")
    if nxt.empty:
        out["next removal"] = pd.NaT
    else:
        nxt = nxt.groupby(PARTITION, as_index=False)["value"].min()
        nxt["next removal"] = pd.to_datetime(nxt["value"], unit="s", utc=True)
        out = out.merge(nxt[PARTITION + ["next removal"]], on=PARTITION, how="left")
    out["partition"] = out["partition"].astype(int)
    return out[cols].sort_values(["next removal", "topic", "partition"], na_position="last").reset_index(drop=True)


# the figures read from a partition's records (its batch headers give the rest): pending until read
RECORD_LEVEL = ("tombstones", "oldest_tombstone_age_seconds", "tombstones_past_delete_horizon",
                "active_duplicate_records", "active_duplicate_bytes")


def missing_reasons(table: pd.DataFrame, column: str) -> list[str]:
    """Per row of ``partitions_table``, what its ``column`` reads when it has no figure: "pending" while the
    collector has still to read the partition's records (a record-level figure, ``partition_detail_pending``
    1), else "unknown (not exported ...)": a healthy partition's detail goes out at granularity partition only."""
    if column in RECORD_LEVEL and "detail_pending" in table:
        return [display.PENDING if p == 1 else display.NOT_EXPORTED for p in table["detail_pending"]]
    return [display.NOT_EXPORTED] * len(table)


def shown(table: pd.DataFrame, columns: dict[str, tuple[str, object]]) -> pd.DataFrame:
    """``table``'s rows as a page shows them: ``columns`` maps a column to (its label in words, the units
    formatter of its figures, or None for text); a missing figure says why (``missing_reasons``)."""
    out = pd.DataFrame(index=range(len(table)))
    for col, (label, fmt) in columns.items():
        values = list(table[col])
        if fmt is None:
            out[label] = [units.unknown() if units.missing(v) else str(v) for v in values]
        else:
            out[label] = display.column(values, fmt, missing_reasons(table, col))
    return out

"""Tombstones: where deletes pile up, which ones the cleaner missed, and who may miss them. Which
partitions and groups are flagged comes from the alerts; the warning line from the loaded monitor.yaml."""

import pandas as pd
import streamlit as st

from dashboards import alertrows, display, figures, panelqueries, sources, tables, ui
from monitor.contract import units
from monitor.contract.rules import ALERT
from monitor.model.consumers import REASON_WORDS


def _horizons(samples) -> None:
    """KIP-534: where each partition's tombstones and markers stand against their delete horizon, and when
    the next ones go."""
    st.subheader("Delete horizons")
    h = tables.horizons_table(samples)
    if h.empty:
        st.info("No partition's delete-horizon series: at granularity topic (the default) they are exported "
                "for unhealthy partitions only; granularity: partition exports them for all.")
        return
    # (the counts are numbers or None where pending: as numbers, None as nothing counted yet)
    if h[tables.HORIZON_COLUMNS].apply(pd.to_numeric, errors="coerce").fillna(0).to_numpy().sum() > 0:
        st.plotly_chart(figures.horizon_states(h), width="stretch", key="tombstones.horizons.chart")
    else:
        st.caption("Delete horizons: no chart, no tombstone or transaction marker is counted on any partition yet.")
    st.caption("A tombstone or marker is never stamped until a clean keeps it (it goes one delete.retention.ms "
               "after that clean at the earliest), stamped until its horizon, then past it: the next clean "
               "removes it. Tombstones read pending until the collector has read the partition's records. "
               "Next removal: the earliest a tombstone or marker still ahead of its horizon may go (the earliest "
               "pending horizon, or one delete.retention.ms after a clean starting now for unstamped ones).")
    counts = {c: (c[0].upper() + c[1:], units.count) for c in tables.HORIZON_COLUMNS}
    for c in tables.HORIZON_COLUMNS:  # a kind whose series are absent is unread (tombstones), not 0
        h[c] = display.column(list(h[c]), units.count, "pending"  # the caption says why: records not read yet
                              if c.startswith("tombstone") else units.unknown("no series"))
    h["next removal"] = [units.unknown("none ahead") if units.missing(v) or v is pd.NaT
                         else units.timestamp_utc(v.timestamp() * 1000) for v in h["next removal"]]
    ident = {"topic": ("Topic", None), "partition": ("Partition", None)}
    ui.show(tables.shown(h, {**ident, "next removal": ("Next removal (UTC)", None),
                             **{c: (counts[c][0], None) for c in tables.HORIZON_COLUMNS if c.startswith("tombstone")}}),
            details={"Each partition's transaction markers": tables.shown(
                h, {**ident, **{c: (counts[c][0], None) for c in tables.HORIZON_COLUMNS if c.startswith("marker")}})},
            key="tombstones.horizons")


s = ui.settings()
ui.header("Tombstones and consumers", s, "Deletes on compacted topics, and consumer groups that may never see them.")
samples, alerts = ui.load(s)
if samples is not None:
    if not ui.no_compacted_topics(samples):
        table = tables.partitions_table(samples, alerts)
        if s.mode == "prometheus":
            hist = ui.history(s, panelqueries.promql("tombstones"), 3 * 3600)
            if figures.enough_history(hist):
                st.plotly_chart(figures.tombstone_history(hist), width="stretch", key="tombstones.history")
            else:
                st.caption("Tombstones over time: no chart yet, Prometheus holds fewer than "
                           f"{figures.MIN_POINTS} samples of the tombstone count in the last 3 h.")
        known = table.dropna(subset=["tombstones"])
        if known.empty or known["tombstones"].sum() == 0:
            pending = int((table["detail_pending"] == 1).sum()) if "detail_pending" in table else 0
            st.caption("Tombstones per topic: no chart, no tombstone is on disk"
                       + (f" ({units.count(pending)} partition(s) still being read)." if pending else "."))
        else:
            st.plotly_chart(figures.tombstone_bars(known), width="stretch", key="tombstones.bars")
        flagged = alertrows.alerting(alerts, ALERT.TombstonesPastDeleteHorizon, tables.PARTITION,
                                     states=("pending", "firing", "active"))
        keyed = table.assign(partition=table["partition"].astype(str))
        missed = keyed.merge(flagged.astype(str), on=tables.PARTITION) if not flagged.empty else keyed.iloc[:0]
        if missed.empty:
            st.success("No tombstone is past its delete horizon.", icon=":material/check_circle:")
        else:
            st.warning(f"{units.count(missed['tombstones_past_delete_horizon'].sum())} tombstone(s) are past their "
                       f"delete horizon and still on disk, on {units.count(len(missed))} partition(s).")
            ui.show(tables.shown(missed, {"topic": ("Topic", None), "partition": ("Partition", None),
                                          "tombstones": ("Tombstones", units.count),
                                          "tombstones_past_delete_horizon": ("Past delete horizon", units.count),
                                          "oldest_tombstone_age_seconds": ("Oldest tombstone", units.duration_s)}),
                    key="tombstones.missed")
        _horizons(samples)
    st.subheader("Consumer groups on compacted topics")
    ratio = sources.metric(samples, "consumer_group_lag_retention_ratio")
    if ratio.empty:
        st.info("No consumer group reads a compacted topic (or the collector has no bootstrap servers).")
    else:
        keys = ["cluster", "group", "topic", "partition"]
        sev = (alerts[alerts["alert"] == ALERT.ConsumerMayMissTombstones][keys + ["severity"]].astype(str)
               if alerts is not None else None)
        if sev is not None and not sev.empty:
            sev = sev.assign(_o=sev["severity"].map({"critical": 0}).fillna(1)).sort_values("_o")
            ratio = ratio.astype({k: str for k in keys}).merge(sev.drop_duplicates(keys).drop(columns="_o"),
                                                              on=keys, how="left")
        else:
            ratio = ratio.assign(severity=None)
        warning, critical = panelqueries.thresholds("lag_retention", s.thresholds)  # Grafana's lines too
        st.plotly_chart(figures.consumer_risk(ratio, warning, critical), width="stretch", key="tombstones.risk")
        groups = tables.consumer_groups_table(samples, alerts).sort_values("lag_seconds", ascending=False,
                                                                          na_position="last")
        lag = [units.unknown(why or "not exported") if units.missing(v) else units.duration_s(v)
               for v, why in zip(groups["lag_seconds"], groups["lag_unknown"])]
        groups = groups.assign(lag_text=lag, lag_records=display.column(list(groups["lag_records"]), units.count,
                                                                         units.unknown("not exported")),
                               may_miss_updates=[", ".join(REASON_WORDS.get(w.strip(), w.strip()) for w in v.split(","))
                                                 if v else "no" for v in groups["may_miss_updates"]])
        st.caption("Time lag: how far behind the group's committed offset is, in time; told exactly (the committed "
                   "record's timestamp, read: needs Read on the topic), interpolated (between the collector's "
                   "log-end-offset samples) or extrapolated (older than every sample, along their trend). "
                   "May miss updates: why the group may read an already compacted history "
                   f"({ALERT.ConsumerMayMissUpdates}); "
                   "'latest value only': declared in latest_value_only_groups, so not alerted.")
        ui.show(tables.shown(groups, {"group": ("Group", None), "topic": ("Topic", None),
                                      "partition": ("Partition", None), "lag_text": ("Time lag", None),
                                      "lag_method": ("Told", None), "may_miss_updates": ("May miss updates", None)}),
                details={"Each group's lag in records": tables.shown(groups, {
                    "group": ("Group", None), "topic": ("Topic", None), "partition": ("Partition", None),
                    "lag_records": ("Lag", None)})}, key="tombstones.groups")
    ui.alerts_table(alerts, [ALERT.ConsumerMayMissTombstones, ALERT.ConsumerMayMissUpdates,
                             ALERT.TombstonesPastDeleteHorizon, ALERT.TombstonesPilingUp])
ui.auto_refresh()

"""Tombstones: where deletes pile up, which ones the cleaner missed, and who may miss them. Which
partitions and groups are flagged comes from the alerts; the warning line from the loaded monitor.yaml."""

import streamlit as st

from dashboards import alertrows, figures, panelqueries, sources, tables, ui
from monitor.contract.rules import ALERT


def _horizons(samples) -> None:
    """KIP-534: where each partition's tombstones and markers stand against their delete horizon, and when
    the next ones go."""
    st.subheader("Delete horizons")
    h = tables.horizons_table(samples)
    st.plotly_chart(figures.horizon_states(h), width="stretch")
    if h.empty:
        st.info("No partition's delete-horizon series: at granularity topic (the default) they are exported "
                "for unhealthy partitions only; granularity: partition exports them for all.")
        return
    st.caption("A tombstone or marker is never stamped until a clean keeps it (it goes one delete.retention.ms "
               "after that clean at the earliest), stamped until its horizon, then past it: the next clean "
               "removes it. Tombstones are unknown (empty) until the collector has read the partition's records.")
    st.dataframe(h, hide_index=True, width="stretch",
                 column_config={"next removal": st.column_config.DatetimeColumn(
                     help="the earliest a tombstone or marker still ahead of its horizon may go: the earliest "
                          "pending horizon, or one delete.retention.ms after a clean starting now for "
                          "unstamped ones (partition_next_delete_horizon_timestamp_seconds)")})


s = ui.settings()
ui.header("Tombstones and consumers", s, "Deletes on compacted topics, and consumer groups that may never see them.")
samples, alerts = ui.load(s)
if samples is not None:
    if not ui.no_compacted_topics(samples):
        table = tables.partitions_table(samples, alerts)
        if s.mode == "prometheus":
            hist = ui.history(s, panelqueries.promql("tombstones"), 3 * 3600)
            st.plotly_chart(figures.tombstone_history(hist), width="stretch")
        st.plotly_chart(figures.tombstone_bars(table), width="stretch")
        flagged = alertrows.alerting(alerts, ALERT.TombstonesPastDeleteHorizon, tables.PARTITION,
                                states=("pending", "firing", "active"))
        keyed = table.assign(partition=table["partition"].astype(str))
        missed = keyed.merge(flagged.astype(str), on=tables.PARTITION) if not flagged.empty else keyed.iloc[:0]
        if missed.empty:
            st.success("No tombstone is past its delete horizon.", icon=":material/check_circle:")
        else:
            st.warning(f"{int(missed['tombstones_past_delete_horizon'].sum())} tombstone(s) are past their delete "
                       f"horizon and still on disk, on {len(missed)} partition(s).")
            st.dataframe(missed[["topic", "partition", "tombstones", "tombstones_past_delete_horizon",
                                 "oldest_tombstone_age_seconds"]], hide_index=True, width="stretch")
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
        st.plotly_chart(figures.consumer_risk(ratio, warning, critical),
                        width="stretch")
        groups = tables.consumer_groups_table(samples, alerts)
        shown = groups[["group", "topic", "partition", "lag_seconds", "lag_method", "lag_unknown",
                        "may_miss_updates"]].rename(
            columns={"lag_seconds": "time lag (s)", "lag_method": "time lag method",
                     "lag_unknown": "time lag unknown because", "may_miss_updates": "may miss updates"})
        st.dataframe(shown.sort_values("time lag (s)", ascending=False), hide_index=True, width="stretch",
                     column_config={"may miss updates": st.column_config.TextColumn(
                         help="why the group may read an already compacted history and miss intermediate values "
                              f"({ALERT.ConsumerMayMissUpdates}); 'latest value only': declared in "
                              "latest_value_only_groups, so not alerted"),
                         "time lag method": st.column_config.TextColumn(
                             help="exact: the committed record's timestamp, read (needs Read on the topic); "
                                  "interpolated: between the collector's log-end-offset samples (no Read); "
                                  "extrapolated: older than every sample, along their trend"),
                         "time lag unknown because": st.column_config.TextColumn(
                             help="consumer_group_lag_seconds_unknown's reason: too_few_samples, no_writes_sampled")})
    ui.alerts_table(alerts, [ALERT.ConsumerMayMissTombstones, ALERT.ConsumerMayMissUpdates,
                             ALERT.TombstonesPastDeleteHorizon, ALERT.TombstonesPilingUp])
ui.auto_refresh()

"""Overview: cluster health at a glance, and the alerts that fire."""

import streamlit as st

from dashboards import data, ui

s = ui.settings()
ui.header("Compaction health", s, "Is Kafka's log cleaner keeping up, and will consumers miss deletes?")
samples, alerts = ui.load(s)
if samples is not None:
    table = data.partitions_table(samples)
    lagging = 0 if table.empty else int(((table["dirty_ratio"].fillna(table["cleanable_ratio"]) - table["threshold"])
                                          > 0).sum())
    overdue = 0 if table.empty else int((table["overdue_seconds"].fillna(0) > 0).sum())
    uncleanable = int(data.metric(samples, "broker_uncleanable_partitions")["value"].sum())
    dead = int(data.metric(samples, "broker_cleaner_dead_threads")["value"].sum())
    risk = data.metric(samples, "consumer_group_tombstone_risk")
    at_risk = int((risk["value"] == 1).sum())
    down = int((data.metric(samples, "source_up")["value"] == 0).sum())
    c = st.columns(6)
    c[0].metric("Dirty partitions", lagging, help="partitions whose dirty ratio is above min.cleanable.dirty.ratio")
    c[1].metric("Overdue", overdue, help="partitions past max.compaction.lag.ms")
    c[2].metric("Uncleanable", uncleanable, help="partitions the cleaner gave up on after an error")
    c[3].metric("Dead threads", dead, help="log cleaner threads that died")
    c[4].metric("Groups at risk", at_risk, help="consumer groups lagging more than delete.retention.ms")
    c[5].metric("Sources down", down, help="collector sources whose last refresh failed")
    firing = 0 if alerts is None else int((alerts["state"].isin(["firing", "active"])).sum())
    pending = 0 if alerts is None else int((alerts["state"] == "pending").sum())
    st.subheader(f"Alerts: {firing} firing, {pending} pending")
    ui.alerts_table(alerts)
    if not ui.no_compacted_topics(samples):
        from dashboards.figures import dirty_heatmap

        st.plotly_chart(dirty_heatmap(table), use_container_width=True)
ui.auto_refresh()

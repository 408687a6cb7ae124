"""Overview: cluster health at a glance, and the alerts that fire. The counts come from the alerts
(Prometheus', or the rule table evaluated on the collector's samples), not from thresholds of its own."""

import streamlit as st

from dashboards import alertrows, sources, tables, ui
from monitor.contract.rules import ALERT

s = ui.settings()
ui.header("Compaction health", s, "Is Kafka's log cleaner keeping up, and will consumers miss deletes?")
samples, alerts = ui.load(s)
if samples is not None:
    table = tables.partitions_table(samples, alerts)
    lagging = len(alertrows.alerting(alerts, ALERT.CompactionLagging, tables.PARTITION))
    overdue = len(alertrows.alerting(alerts, ALERT.CompactionOverdue, tables.PARTITION))
    held_back = int(table["blocked"].astype(bool).sum()) if not table.empty else 0
    uncleanable = int(sources.metric(samples, "broker_uncleanable_partitions")["value"].sum())
    dead = int(sources.metric(samples, "broker_cleaner_dead_threads")["value"].sum())
    at_risk = len(alertrows.alerting(alerts, ALERT.ConsumerMayMissTombstones, ["cluster", "group"]))
    down = int((sources.metric(samples, "source_up")["value"] == 0).sum())
    c = st.columns(7)
    c[0].metric("Lagging partitions", lagging,
                help=f"{ALERT.CompactionLagging}: Kafka's cleanable ratio has stayed above min.cleanable.dirty.ratio")
    c[1].metric("Overdue", overdue, help=f"{ALERT.CompactionOverdue}: partitions past max.compaction.lag.ms")
    c[2].metric("Held back", held_back,
                help="partitions whose uncleaned bytes min.compaction.lag.ms or an open transaction hold back")
    c[3].metric("Uncleanable", uncleanable, help="partitions the cleaner gave up on after an error")
    c[4].metric("Dead threads", dead, help="log cleaner threads that died")
    c[5].metric("Groups at risk", at_risk,
                help=f"{ALERT.ConsumerMayMissTombstones}: groups lagging a fraction of delete.retention.ms or more")
    c[6].metric("Sources down", down, help="collector sources whose last refresh failed")
    firing = 0 if alerts is None else int((alerts["state"].isin(alertrows.FIRING)).sum())
    pending = 0 if alerts is None else int((alerts["state"] == "pending").sum())
    st.subheader(f"Alerts: {firing} firing, {pending} pending")
    ui.alerts_table(alerts)
    if not ui.no_compacted_topics(samples):
        from dashboards.figures import cleanable_heatmap

        st.plotly_chart(cleanable_heatmap(table), width="stretch")
ui.auto_refresh()

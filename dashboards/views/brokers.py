"""Brokers: the log cleaner's own gauges per broker, over time, with the alert thresholds of the loaded
monitor.yaml (as the rule table applies them). The charts are monitor.contract.panels' (Grafana's too)."""

import streamlit as st

from dashboards import figures, panelqueries, sources, ui
from monitor.contract.panels import panel
from monitor.contract.rules import ALERT
from monitor.contract.sourcekinds import GAUGES

s = ui.settings()
ui.header("Log cleaner per broker", s, "Kafka's cleaner gauges (JMX), in base units.")
samples, alerts = ui.load(s)
PANELS = [  # monitor.contract.panels' broker panels (Grafana draws them too), with the y axis' title
    ("dirty_ratio", "ratio"),
    ("since_last_run", "seconds"),
    ("clean_time", "seconds"),
    ("buffer_utilization", "ratio"),
    ("recopy", "ratio"),
    ("dead_threads", "threads"),
]
# what a panel without samples means, and the panels whose every value 0 is the whole story
EMPTY = {"clean_time": "no cleaning recorded yet", "since_last_run": "the cleaner has not reported a run yet",
         "dead_threads": "no broker has reported its cleaner threads yet"}
NOTHING_AT_ZERO = {"dead_threads": "no cleaner thread has died"}
if samples is not None:
    missing = sources.metric(samples, "broker_cleaner_dead_threads").empty
    up = sources.metric(samples, "source_up")
    gauge_sources = up[up["kind"].isin(GAUGES)] if "kind" in up else up.iloc[0:0]
    if missing and gauge_sources.empty:
        st.info("No broker cleaner gauges: give the collector each broker's JMX exporter or Jolokia URL.")
    elif missing and s.mode != "prometheus":
        st.info("No broker cleaner gauges in this refresh: their source is down (above); they come back with its "
                "next good refresh.")
    else:
        if missing:  # the source is down now (said above): Prometheus still has what it scraped before
            st.caption("The brokers' gauges are missing from the collector's last refresh (their source is down, "
                       "above): the charts show what Prometheus scraped before.")
        cols = st.columns(2)
        for i, (key, unit) in enumerate(PANELS):
            title, thr = panel(key).title, panelqueries.threshold(key, s.thresholds)
            with cols[i % 2]:
                if s.mode == "prometheus":
                    data = ui.history(s, panelqueries.promql(key))
                    enough = figures.enough_history(data)
                else:
                    data = sources.metric(samples, panelqueries.metric(key))
                    enough = not data.empty
                if not enough:
                    st.markdown(f"**{title}**: no chart, {EMPTY.get(key, 'no sample yet')}.")
                elif key in NOTHING_AT_ZERO and (data["value"] == 0).all():
                    st.markdown(f"**{title}**: no chart, {NOTHING_AT_ZERO[key]}.")
                elif s.mode == "prometheus":
                    st.plotly_chart(figures.broker_series(data, title, unit, thr), width="stretch",
                                    key=f"brokers.{key}")
                else:
                    st.plotly_chart(figures.broker_bars(data, title, unit, thr), width="stretch", key=f"brokers.{key}")
    st.subheader("Broker alerts")
    ui.alerts_table(alerts, [ALERT.LogCleanerThreadDead, ALERT.LogCleanerStalled, ALERT.UncleanablePartitions,
                             ALERT.CleanerBufferSaturated, ALERT.CleanerSlow])
ui.auto_refresh()

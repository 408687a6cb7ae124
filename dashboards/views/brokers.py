"""Brokers: the log cleaner's own gauges per broker, over time, with the alert thresholds of the loaded
monitor.yaml (as the rule table applies them). The charts are monitor.contract.panels' (Grafana's too)."""

import streamlit as st

from dashboards import figures, panelqueries, sources, ui
from monitor.contract.panels import panel
from monitor.contract.rules import ALERT

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
if samples is not None:
    if sources.metric(samples, "broker_cleaner_dead_threads").empty:
        st.info("No broker cleaner gauges yet: give the collector each broker's JMX exporter or Jolokia URL.")
    else:
        cols = st.columns(2)
        for i, (key, unit) in enumerate(PANELS):
            title, thr = panel(key).title, panelqueries.threshold(key, s.thresholds)
            with cols[i % 2]:
                if s.mode == "prometheus":
                    hist = ui.history(s, panelqueries.promql(key))
                    st.plotly_chart(figures.broker_series(hist, title, unit, thr), width="stretch")
                else:
                    st.plotly_chart(figures.broker_bars(sources.metric(samples, panelqueries.metric(key)), title,
                                                        unit, thr),
                                    width="stretch")
    st.subheader("Broker alerts")
    ui.alerts_table(alerts, [ALERT.LogCleanerThreadDead, ALERT.LogCleanerStalled, ALERT.UncleanablePartitions,
                             ALERT.CleanerBufferSaturated, ALERT.CleanerSlow])
ui.auto_refresh()

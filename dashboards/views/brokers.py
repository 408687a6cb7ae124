"""Brokers: the log cleaner's own gauges per broker, over time, with the alert thresholds of the loaded
monitor.yaml (as the rule table applies them)."""

import streamlit as st

from dashboards import data, figures, ui
from monitor.rules import threshold_of

s = ui.settings()
ui.header("Log cleaner per broker", s, "Kafka's cleaner gauges (JMX), in base units.")
samples, alerts = ui.load(s)
PANELS = [
    ("broker_max_dirty_ratio", "Max dirty ratio (the cleaner's last pick)", "ratio"),
    ("broker_cleaner_time_since_last_run_seconds", "Time since the cleaner last looked for work", "seconds"),
    ("broker_cleaner_max_clean_time_seconds", "Longest recent clean", "seconds"),
    ("broker_cleaner_max_buffer_utilization_ratio", "Dedupe buffer utilization", "ratio"),
    ("broker_cleaner_recopy_ratio", "Recopy ratio (bytes written / read)", "ratio"),
    ("broker_cleaner_dead_threads", "Dead cleaner threads", "threads"),
]
if samples is not None:
    if data.metric(samples, "broker_cleaner_dead_threads").empty:
        st.info("No broker cleaner gauges yet: give the collector each broker's JMX exporter or Jolokia URL.")
    else:
        cols = st.columns(2)
        for i, (name, title, unit) in enumerate(PANELS):
            thr = threshold_of(name, s.thresholds)
            with cols[i % 2]:
                if s.mode == "prometheus":
                    hist = ui.history(s, data.PREFIX + name)
                    st.plotly_chart(figures.broker_series(hist, title, unit, thr), use_container_width=True)
                else:
                    st.plotly_chart(figures.broker_bars(data.metric(samples, name), title, unit, thr),
                                    use_container_width=True)
    st.subheader("Broker alerts")
    ui.alerts_table(alerts, ["LogCleanerThreadDead", "LogCleanerStalled", "UncleanablePartitions",
                             "CleanerBufferSaturated", "CleanerSlow"])
ui.auto_refresh()

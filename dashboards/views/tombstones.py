"""Tombstones: where deletes pile up, which ones the cleaner missed, and who may miss them."""

import streamlit as st

from dashboards import data, figures, ui
from monitor.config import Thresholds

s = ui.settings()
ui.header("Tombstones and consumers", s, "Deletes on compacted topics, and consumer groups that may never see them.")
samples, alerts = ui.load(s)
if samples is not None:
    if not ui.no_compacted_topics(samples):
        table = data.partitions_table(samples)
        if s.mode == "prometheus":
            hist = ui.history(s, "sum by (topic) (kafka_compaction_partition_tombstones)", 3 * 3600)
            st.plotly_chart(figures.tombstone_history(hist), use_container_width=True)
        st.plotly_chart(figures.tombstone_bars(table), use_container_width=True)
        missed = table[table["tombstones_past_horizon"].fillna(0) > 0]
        if missed.empty:
            st.success("No tombstone is past its delete horizon.", icon=":material/check_circle:")
        else:
            st.warning(f"{int(missed['tombstones_past_horizon'].sum())} tombstone(s) are past their delete horizon "
                       f"and still on disk, on {len(missed)} partition(s).")
            st.dataframe(missed[["topic", "partition", "tombstones", "tombstones_past_horizon",
                                 "oldest_tombstone_age_seconds"]], hide_index=True, use_container_width=True)
    st.subheader("Consumer groups on compacted topics")
    ratio = data.metric(samples, "consumer_group_lag_retention_ratio")
    if ratio.empty:
        st.info("No consumer group reads a compacted topic (or the collector has no bootstrap servers).")
    else:
        st.plotly_chart(figures.consumer_risk(ratio, Thresholds().consumer_lag_warning_fraction),
                        use_container_width=True)
        lag = data.metric(samples, "consumer_group_lag_seconds")[["group", "topic", "partition", "value"]]
        st.dataframe(lag.rename(columns={"value": "time lag (s)"}).sort_values("time lag (s)", ascending=False),
                     hide_index=True, use_container_width=True)
    ui.alerts_table(alerts, ["ConsumerMayMissTombstones", "TombstonesPastRetention", "TombstonesPilingUp"])
ui.auto_refresh()

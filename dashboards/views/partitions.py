"""Partitions: which compacted partitions are dirty, for how long, and why."""

import streamlit as st

from dashboards import data, figures, ui

s = ui.settings()
ui.header("Compacted partitions", s, "Computed from the brokers' log dirs the way Kafka's LogCleanerManager does.")
samples, alerts = ui.load(s)
if samples is not None and not ui.no_compacted_topics(samples):
    table = data.partitions_table(samples)
    topics = sorted(table["topic"].unique())
    chosen = st.multiselect("Topics", topics, default=topics, key="partitions.topics")
    view = table[table["topic"].isin(chosen)]
    st.plotly_chart(figures.dirty_heatmap(view), use_container_width=True)
    shown = view.assign(
        eligible_since=view["eligible_seconds"].map(lambda v: "" if not v else f"{v / 60:.1f} min ago"),
        oldest_tombstone=view["oldest_tombstone_age_seconds"].map(lambda v: "" if v != v or v is None else f"{v:,.0f} s"),
    )[["topic", "partition", "broker", "dirty_ratio", "threshold", "cleanable_ratio", "dirty_bytes", "log_bytes",
       "eligible_since", "blocked", "tombstones", "oldest_tombstone", "tombstones_past_horizon"]]
    st.dataframe(shown.sort_values("dirty_ratio", ascending=False), hide_index=True, use_container_width=True,
                 column_config={"dirty_ratio": st.column_config.ProgressColumn("dirty ratio", min_value=0, max_value=1,
                                                                               format="%.2f"),
                                "dirty_bytes": st.column_config.NumberColumn("dirty bytes", format="%d"),
                                "log_bytes": st.column_config.NumberColumn("log bytes", format="%d")})
    st.subheader("One partition")
    ranked = view.sort_values("dirty_ratio", ascending=False)  # the dirtiest first: the likeliest question
    labels = [f"{r.topic}-{r.partition}" for r in ranked.itertuples()]
    pick = st.selectbox("Partition", labels, key="partitions.pick") if labels else None
    if pick:
        row = ranked.iloc[labels.index(pick)]
        c = st.columns(4)
        c[0].metric("Dirty ratio", f"{row['dirty_ratio']:.2f}", help="including what min.compaction.lag.ms holds back")
        c[1].metric("Threshold", f"{row['threshold']:.2f}")
        c[2].metric("Kafka's cleanable ratio", f"{row['cleanable_ratio']:.2f}")
        c[3].metric("Tombstones", int(row["tombstones"] or 0))
        if row["blocked"]:
            st.warning(f"Dirty bytes are held back from the cleaner by **{row['blocked']}**.")
        if s.mode == "prometheus":
            q = (f'kafka_compaction_partition_dirty_ratio{{topic="{row["topic"]}",partition="{row["partition"]}"}}')
            hist = ui.history(s, q)
            if not hist.empty:
                fig = figures.broker_series(hist, f"{pick}: dirty ratio over the last hour", "ratio",
                                            float(row["threshold"]), "min.cleanable.dirty.ratio")
                st.plotly_chart(fig, use_container_width=True)
    st.subheader("Partition alerts")
    ui.alerts_table(alerts, ["CompactionLagging", "CompactionOverdue"])
ui.auto_refresh()

"""Partitions: which compacted partitions have uncleaned bytes, which the cleaner is not keeping up
with (CompactionLagging), for how long, what holds the rest back, and each one's cause
(``monitor.verdicts.causes``, exported as partition_compaction_cause) with the fix for it."""

import streamlit as st

from dashboards import figures, panelqueries, tables, ui
from monitor.verdicts.causes import WHY
from monitor.contract.rules import ALERT

s = ui.settings()
ui.header("Compacted partitions", s, "Computed from the brokers' log dirs the way Kafka's LogCleanerManager does.")
samples, alerts = ui.load(s)
if samples is not None and not ui.no_compacted_topics(samples):
    table = tables.partitions_table(samples, alerts)
    topics = sorted(table["topic"].unique())
    chosen = st.multiselect("Topics", topics, default=topics, key="partitions.topics")
    view = table[table["topic"].isin(chosen)]
    st.plotly_chart(figures.cause_counts(view), width="stretch")
    st.plotly_chart(figures.cleanable_heatmap(view), width="stretch")
    ratio = st.column_config.ProgressColumn
    shown = view.assign(
        eligible_since=view["eligible_seconds"].map(lambda v: "" if not v else f"{v / 60:.1f} min ago"),
        oldest_tombstone=view["oldest_tombstone_age_seconds"].map(lambda v: "" if v != v or v is None else f"{v:,.0f} s"),
    )[["topic", "partition", "broker", "cause", "lagging", "cleanable_ratio", "threshold", "uncleaned_ratio",
       "cleanable_bytes", "uncleaned_bytes", "log_bytes", "eligible_since", "blocked", "last_stable_offset",
       "open_transactions", "tombstones", "oldest_tombstone", "tombstones_past_delete_horizon", "fix"]]
    st.dataframe(shown.sort_values("uncleaned_ratio", ascending=False), hide_index=True, width="stretch",
                 column_config={"cleanable_ratio": ratio("cleanable ratio", min_value=0, max_value=1, format="%.2f"),
                                "threshold": st.column_config.NumberColumn("min.cleanable.dirty.ratio", format="%.2f"),
                                "uncleaned_ratio": ratio("uncleaned ratio", min_value=0, max_value=1, format="%.2f"),
                                "cleanable_bytes": st.column_config.NumberColumn("cleanable bytes", format="%d"),
                                "uncleaned_bytes": st.column_config.NumberColumn("uncleaned bytes", format="%d"),
                                "log_bytes": st.column_config.NumberColumn("log bytes", format="%d")})
    st.subheader("Duplicates stuck in the active segment")
    stuck = tables.stuck_in_active_segment(view)
    if stuck.empty:
        st.success("No active segment holds duplicates of its own keys (or its keys were not read).",
                   icon=":material/check_circle:")
    else:
        st.warning(f"{int(stuck['active_duplicate_records'].sum()):,} superseded record(s) "
                   f"({int(stuck['active_duplicate_bytes'].sum()):,} key and value bytes) wait in active segments, "
                   "which the cleaner never touches; they go once the segment rolls (on an append, past "
                   "segment.ms / max.compaction.lag.ms or segment.bytes) and is cleaned. See the runbook's "
                   "\"duplicates stuck in the active segment\".")

        def when(r):
            if r["roll_seconds"] is not None and r["roll_seconds"] == r["roll_seconds"]:
                return f"in {r['roll_seconds'] / 60:,.0f} min"
            return f"unknown ({r['roll_unknown'] or 'no forecast'})"

        st.dataframe(stuck.assign(rolls=[when(r) for r in stuck.to_dict("records")])[
            ["topic", "partition", "broker", "active_duplicate_records", "active_duplicate_bytes",
             "active_segment_bytes", "segment_bytes", "active_segment_age_seconds", "max_segment_age_seconds",
             "rolls", "held_by_min_compaction_lag_bytes"]],
            hide_index=True, width="stretch",
            column_config={"active_duplicate_records": st.column_config.NumberColumn("duplicate records", format="%d"),
                           "active_duplicate_bytes": st.column_config.NumberColumn("duplicate bytes", format="%d"),
                           "active_segment_bytes": st.column_config.NumberColumn("active segment bytes",
                                                                                  format="%d"),
                           "segment_bytes": st.column_config.NumberColumn("segment.bytes", format="%d"),
                           "active_segment_age_seconds": st.column_config.NumberColumn("age (s)", format="%.0f"),
                           "max_segment_age_seconds": st.column_config.NumberColumn(
                               "rolls at age (s): segment.ms / max.compaction.lag.ms", format="%.0f"),
                           "held_by_min_compaction_lag_bytes": st.column_config.NumberColumn(
                               "held by min.compaction.lag.ms (bytes)", format="%d")})
    st.subheader("One partition")
    ranked = view.sort_values("uncleaned_ratio", ascending=False)  # the most uncleaned first: the likeliest question
    labels = [f"{r.topic}-{r.partition}" for r in ranked.itertuples()]
    pick = st.selectbox("Partition", labels, key="partitions.pick") if labels else None
    if pick:
        row = ranked.iloc[labels.index(pick)]
        def ratio(v):  # a healthy partition's detail is not exported at granularity topic (the default)
            return "not exported" if v is None or v != v else f"{v:.2f}"

        c = st.columns(4)
        c[0].metric("Uncleaned ratio", ratio(row["uncleaned_ratio"]),
                    help="every byte below the active segment not yet cleaned, including what "
                         "min.compaction.lag.ms or an open transaction holds back")
        c[1].metric("Kafka's cleanable ratio", ratio(row["cleanable_ratio"]),
                    help="what the cleaner compares with min.cleanable.dirty.ratio")
        c[2].metric("min.cleanable.dirty.ratio", ratio(row["threshold"]),
                    help="a healthy partition's detail goes out at granularity: partition only")
        def num(v):
            return "unknown" if v is None or v != v else f"{int(v):,}"

        c[3].metric("Tombstones", num(row["tombstones"]),
                    help="unknown while the partition's records are still to be read (headers first: "
                         "partition_detail_pending) or when its detail is not exported")
        st.info(f"Cause: **{row['cause']}** ({WHY.get(row['cause'], '')}).  \nFix: `{row['fix']}`")

        age = row["oldest_open_transaction_age_seconds"]
        st.caption(f"Evidence: first dirty offset {num(row['first_dirty_offset'])}, first uncleanable offset "
                   f"{num(row['first_uncleanable_offset'])}, last stable offset {num(row['last_stable_offset'])}, "
                   f"log end offset {num(row['log_end_offset'])}; open transactions {num(row['open_transactions'])}"
                   + ("" if age is None or age != age else f", the oldest open {age:,.0f} s")
                   + f". The full evidence and forecast: `compaction-monitor explain {pick} --log-dir <log dir>`.")
        if row["lagging"]:
            st.error(f"{ALERT.CompactionLagging}: the log is eligible and the cleaner has not cleaned it.")
        if row["blocked"]:
            st.warning(f"Uncleaned bytes are held back from the cleaner by **{row['blocked']}**.")
        if s.mode == "prometheus":
            hist = ui.history(s, panelqueries.promql("cleanable_ratio", topic=row["topic"],
                                                     partition=str(row["partition"])))
            if not hist.empty:
                thr = row["threshold"]
                fig = figures.broker_series(hist, f"{pick}: Kafka's cleanable ratio over the last hour", "ratio",
                                            None if thr is None or thr != thr else float(thr),
                                            "min.cleanable.dirty.ratio")
                st.plotly_chart(fig, width="stretch")
    st.subheader("Partition alerts")
    ui.alerts_table(alerts, [ALERT.CompactionLagging, ALERT.CompactionOverdue,
                            ALERT.CompactionBlockedByTransaction, ALERT.HangingTransaction])
ui.auto_refresh()

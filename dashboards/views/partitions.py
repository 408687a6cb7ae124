"""Partitions: which compacted partitions have uncleaned bytes, which the cleaner is not keeping up
with (CompactionLagging), for how long, what holds the rest back, and each one's cause
(``monitor.verdicts.causes``, exported as partition_compaction_cause) with the fix for it."""

import streamlit as st

from dashboards import attention, display, figures, panelqueries, tables, ui
from monitor.contract import units
from monitor.verdicts.causes import WHY
from monitor.verdicts.forecasts import ROLL_UNKNOWN_WORDS
from monitor.contract.rules import ALERT

s = ui.settings()
ui.header("Compacted partitions", s, "Computed from the brokers' log dirs the way Kafka's LogCleanerManager does.")
samples, alerts = ui.load(s)
if samples is not None and not ui.no_compacted_topics(samples):
    table = tables.partitions_table(samples, alerts)
    topics = sorted(table["topic"].unique())
    chosen = st.multiselect("Topics", topics, default=topics, key="partitions.topics")
    view = table[table["topic"].isin(chosen)]
    st.plotly_chart(figures.cause_counts(view), width="stretch", key="partitions.causes")
    st.plotly_chart(figures.cleanable_heatmap(view), width="stretch", key="partitions.heatmap")
    ranked = view.sort_values(["uncleaned_ratio", "cleanable_ratio"], ascending=False, na_position="last")
    ranked = ranked.reset_index(drop=True)

    def eligible(v) -> str:
        return "no" if v == 0 else f"for {units.duration_s(v)}"

    def held(v) -> str:
        return v or "nothing"

    ident = {"topic": ("Topic", None), "partition": ("Partition", None)}
    def against(v, thr) -> str:
        return units.ratio(v) + ("" if units.missing(thr) else f" / {units.ratio(thr)}")

    ui.show(tables.shown(ranked.assign(lagging=ranked["lagging"].map(units.yes_no),
                                       blocked=ranked["blocked"].map(held),
                                       against=[against(v, t) for v, t in zip(ranked["cleanable_ratio"],
                                                                              ranked["threshold"])]),
                         {**ident, "cause": ("Cause", None), "lagging": ("Lagging", None),
                          "against": ("Cleanable ratio / min", None),
                          "uncleaned_bytes": ("Uncleaned", units.bytes_iec), "blocked": ("Held back by", None)}),
            details={
                "Each partition's sizes": tables.shown(ranked, {
                    **ident, "uncleaned_ratio": ("Uncleaned ratio", units.ratio),
                    "cleanable_bytes": ("Cleanable", units.bytes_iec), "log_bytes": ("Log size", units.bytes_iec),
                    "eligible_seconds": ("Eligible", eligible)}),
                "Each partition's broker and transactions": tables.shown(ranked, {
                    **ident, "broker": ("Broker", None), "last_stable_offset": ("Last stable offset", units.count),
                    "open_transactions": ("Open transactions", units.count)}),
                "Each partition's tombstones": tables.shown(ranked, {
                    **ident, "tombstones": ("Tombstones", units.count),
                    "oldest_tombstone_age_seconds": ("Oldest tombstone", units.duration_s),
                    "tombstones_past_delete_horizon": ("Past delete horizon", units.count)})},
            key="partitions.table")
    st.caption("Cleanable ratio / min: Kafka's cleanable ratio against the topic's min.cleanable.dirty.ratio; "
               "Lagging: " + ALERT.CompactionLagging + " is raised for it. " + display.NOT_EXPORTED_WHY)
    with st.expander("Each cause's fix, with the partitions it is for"):
        for g in attention.by_cause(ranked, s.thresholds):
            st.markdown(f"**{g.cause}** ({display.link(g.runbook)}):  \n" + "  \n".join(
                f"{attention.named(list(p), 6)}: `{f}`" for f, p in g.fixes))
    st.subheader("Duplicates stuck in the active segment")
    stuck = tables.stuck_in_active_segment(view)
    if stuck.empty:
        st.success("No active segment holds duplicates of its own keys (or its keys were not read).",
                   icon=":material/check_circle:")
    else:
        st.warning(f"{units.count(stuck['active_duplicate_records'].sum())} superseded record(s) "
                   f"({units.bytes_iec(stuck['active_duplicate_bytes'].sum())} of keys and values) wait in active "
                   "segments, which the cleaner never touches; they go once the segment rolls (on an append, past "
                   "segment.ms / max.compaction.lag.ms or segment.bytes) and is cleaned. See the runbook's "
                   "\"duplicates stuck in the active segment\".")

        def when(r):
            if not units.missing(r["roll_seconds"]):
                return f"in {units.duration_s(r['roll_seconds'])}"
            return units.unknown(ROLL_UNKNOWN_WORDS.get(r["roll_unknown"], r["roll_unknown"]) or "no forecast")

        stuck = stuck.assign(rolls=[when(r) for r in stuck.to_dict("records")])
        ui.show(tables.shown(stuck, {**ident, "active_duplicate_records": ("Duplicate records", units.count),
                                     "active_duplicate_bytes": ("Duplicate size", units.bytes_iec),
                                     "rolls": ("Rolls", None)}),
                details={"Each active segment against its roll (at segment.bytes, or at the age of segment.ms "
                         "or max.compaction.lag.ms, the smaller)": tables.shown(stuck, {
                    **ident, "active_segment_bytes": ("Size", units.bytes_iec),
                    "segment_bytes": ("segment.bytes", units.bytes_iec),
                    "active_segment_age_seconds": ("Age", units.duration_s),
                    "max_segment_age_seconds": ("Rolls at age", units.duration_s),
                    "held_by_min_compaction_lag_bytes": ("Held by min.compaction.lag.ms", units.bytes_iec)})},
                key="partitions.stuck")
    st.subheader("One partition")
    ranked = view.sort_values("uncleaned_ratio", ascending=False)  # the most uncleaned first: the likeliest question
    labels = [f"{r.topic}-{r.partition}" for r in ranked.itertuples()]
    pick = st.selectbox("Partition", labels, key="partitions.pick") if labels else None
    if pick:
        row = ranked.iloc[labels.index(pick)]
        def ratio(v):  # a healthy partition's detail is not exported at granularity topic (the default)
            return display.text(v, units.ratio, "not exported")

        c = st.columns(4)
        c[0].metric("Uncleaned ratio", ratio(row["uncleaned_ratio"]),
                    help="every byte below the active segment not yet cleaned, including what "
                         "min.compaction.lag.ms or an open transaction holds back")
        c[1].metric("Kafka's cleanable ratio", ratio(row["cleanable_ratio"]),
                    help="what the cleaner compares with min.cleanable.dirty.ratio")
        c[2].metric("min.cleanable.dirty.ratio", ratio(row["threshold"]),
                    help="a healthy partition's detail goes out at granularity: partition only")
        def num(v, why=units.unknown()):
            return display.text(v, units.count, why)

        c[3].metric("Tombstones", num(row["tombstones"],
                                      display.PENDING if row["detail_pending"] == 1 else display.NOT_EXPORTED),
                    help="unknown while the partition's records are still to be read (headers first: "
                         "partition_detail_pending) or when its detail is not exported")
        st.info(f"Cause: **{row['cause']}** ({WHY.get(row['cause'], '')}).  \nFix: `{row['fix']}`")

        age = row["oldest_open_transaction_age_seconds"]
        st.caption(f"Evidence: first dirty offset {num(row['first_dirty_offset'])}, first uncleanable offset "
                   f"{num(row['first_uncleanable_offset'])}, last stable offset {num(row['last_stable_offset'])}, "
                   f"log end offset {num(row['log_end_offset'])}; open transactions {num(row['open_transactions'])}"
                   + ("" if units.missing(age) else f", the oldest open {units.duration_s(age)}")
                   + f". The full evidence and forecast: `compaction-monitor explain {pick} --log-dir <log dir>`.")
        if row["lagging"]:
            st.error(f"{ALERT.CompactionLagging}: the log is eligible and the cleaner has not cleaned it.")
        if row["blocked"]:
            st.warning(f"Uncleaned bytes are held back from the cleaner by **{row['blocked']}**.")
        if s.mode == "prometheus":
            hist = ui.history(s, panelqueries.promql("cleanable_ratio", topic=row["topic"],
                                                     partition=str(row["partition"])))
            if not figures.enough_history(hist):
                st.caption(f"{pick}: no chart of its cleanable ratio over time yet, Prometheus holds fewer than "
                           f"{figures.MIN_POINTS} samples of it in the last hour.")
            else:
                thr = row["threshold"]
                fig = figures.broker_series(hist, f"{pick}: Kafka's cleanable ratio over the last hour", "ratio",
                                            None if thr is None or thr != thr else float(thr),
                                            "min.cleanable.dirty.ratio")
                st.plotly_chart(fig, width="stretch", key="partitions.history")
    st.subheader("Partition alerts")
    ui.alerts_table(alerts, [ALERT.CompactionLagging, ALERT.CompactionOverdue,
                            ALERT.CompactionBlockedByTransaction, ALERT.HangingTransaction])
ui.auto_refresh()

"""Audit: the latest Spark audit report from the output folder, with a picker for older runs. A run
without its completion marker is shown as in progress, a damaged one as damaged with the file named
(``monitor.contract.auditrun``), never as an exception. Each topic says where its config came from; those whose
config is unknown are listed with the reason, so a null figure reads as unknown, not zero. Partitions
found in several log dirs list their replicas (``spark_analysis.replicas``), those that disagree first.
A run with an earlier complete run before it shows that run's prediction against what the broker then
reclaimed (``monitor.verdicts.accuracy``). Each compacted topic's what-if rows (``spark_analysis.whatif``: its
steady size, cleans and cleaner bytes per day under other settings) are charted and listed, with the
model's assumptions."""

import pandas as pd
import streamlit as st

from dashboards import auditruns, figures, ui
from monitor.contract.auditrun import COMPLETE, DAMAGED, IN_PROGRESS
from monitor.verdicts.accuracy import CLEANED, baseline, charted, signed_bytes, signed_ratio
from monitor.contract.auditrun import CONFIG_UNKNOWN_NOTE, unknown_configs
from monitor.verdicts.restore import EXPLAIN, restore_order


def accuracy_panel(audit_dir: str, run: str, later: dict, complete: list[str]) -> None:
    """The selected run against an earlier one (``monitor.verdicts.accuracy``): what the earlier run predicted
    the next clean would reclaim, against what the broker reclaimed by the time of this run."""
    st.subheader("Prediction against what the broker reclaimed")
    earlier = [r for r in complete if r < run]
    if not earlier:
        st.caption("Needs an earlier complete run of the same log dirs: audit before the cleaner runs, and again "
                   "after, to see how close the prediction came.")
        return
    pick = st.selectbox("Predicted by run", earlier, index=earlier.index(baseline(complete, run)),
                        key="audit.accuracy.baseline")
    before = auditruns.audit_run(audit_dir, pick)
    rows, tot = auditruns.audit_accuracy(before["partitions"], later["partitions"])
    # the chart: partitions the cleaner has been over where something was predicted or reclaimed
    cleaned = rows[[charted(r) for r in rows.to_dict("records")]] if not rows.empty else rows
    c = st.columns(4)
    c[0].metric("Predicted (cleaned partitions)", f"{tot['predicted_bytes'] / 2**20:,.2f} MiB")
    c[1].metric("Reclaimed by the broker", f"{tot['actual_bytes'] / 2**20:,.2f} MiB")
    c[2].metric("Error", signed_bytes(tot["error_bytes"]))
    c[3].metric("Relative error", "unknown" if tot["error_ratio"] is None else signed_ratio(tot["error_ratio"]))
    left = ", ".join(f"{n} {status}" for status, n in sorted(tot["left_out"].items()))
    st.caption(f"{tot['partitions']} partition(s) the cleaner has been over since run {pick}"
               + (f"; left out: {left}" if left else "") + ". Reclaimed: the partition's size in "
               f"{pick} less its size in {run}; error: reclaimed - predicted.")
    if not cleaned.empty:
        st.plotly_chart(figures.audit_accuracy(cleaned), width="stretch", key="audit.accuracy.chart")
    if not rows.empty:  # what the cleaner reclaimed first, most predicted first; then what could not be compared
        rows = rows.assign(_o=rows["status"] != CLEANED, _p=-rows["predicted_bytes"]).sort_values(
            ["_o", "_p", "topic", "partition"]).drop(columns=["_o", "_p"])
    st.dataframe(rows, hide_index=True, width="stretch", key="audit.accuracy.table")


TOPIC_COLUMNS = ["topic", "partitions", "records", "bytes", "reclaimable_bytes", "next_clean_bytes", "settled_bytes",
                 "projection_method", "next_clean_unknown_partitions", "settled_unknown_partitions",
                 "max_cleanable_ratio", "estimated_clean_seconds", "tombstones_past_retention",
                 "tombstones_unstamped", "tombstones_pending", "tombstones_passed", "markers_unstamped",
                 "markers_pending", "markers_passed", "config_source"]
BEFORE_32 = ("A run from before issue 32: its sizes after compaction were estimated from the records' byte shares "
             "(delete horizons ignored), and it has no settled size.")


def with_projections(topics, summary: dict):
    """The topics table and summary with the next-clean columns; a run from before #32 has only its
    estimated ``projected_bytes``, read as an estimated next-clean figure (``BEFORE_32`` says so)."""
    if "next_clean_bytes" in topics.columns or "projected_bytes" not in topics.columns:
        return topics, summary
    return (topics.rename(columns={"projected_bytes": "next_clean_bytes"}).assign(projection_method="estimated"),
            {**summary, "next_clean_bytes": summary.get("projected_bytes"), "projection_method": "estimated"})


def projection_panel(sm: dict) -> None:
    """The two projections, labelled which is which, how they were found and what was left out; the
    tombstones and markers by delete-horizon state and the next removal (``monitor.model.horizon``)."""
    from monitor.model.horizon import STATES

    size = lambda v: "unknown" if v is None else f"{v / 2**20:,.1f} MiB"  # noqa: E731
    c = st.columns(3)
    c[0].metric("After the next clean", size(sm.get("next_clean_bytes")))
    c[1].metric("Settled", size(sm.get("settled_bytes")))
    c[2].metric("Projection", sm.get("projection_method") or "unknown")
    left = [f"{sm[k]} partition(s) unknown, left out of the {what} total"
            for k, what in (("next_clean_unknown_partitions", "next-clean"), ("settled_unknown_partitions", "settled"))
            if sm.get(k)]
    if "settled_unknown_partitions" not in sm:
        st.caption(BEFORE_32)
        return
    when = sm.get("next_removable_ms")
    counts = lambda kind: ", ".join(  # noqa: E731
        f"{'unknown' if sm.get(f'{kind}s_{s}') is None else format(sm[f'{kind}s_{s}'], ',')} {s}" for s in STATES)
    st.caption("After the next clean: what the broker's cleaner leaves if it cleans each partition now. Settled: "
               "after every delete horizon has passed and another clean. Counted: Kafka's cleaner run over the "
               "segments, each kept batch re-encoded; estimated: from the records' byte shares (a dump or a topic). "
               + "".join(f"{x}. " for x in left)
               + f"Delete horizons: tombstones {counts('tombstone')}; markers {counts('marker')}; the next become "
               f"removable {'never (none left)' if when is None else pd.to_datetime(when, unit='ms', utc=True)}.")


def topics_panel(topics, summary: dict) -> None:
    """Each topic's figures with where its config came from (``config_source``: admin, config, default,
    unknown), and the topics whose config is unknown with the reason (``monitor.contract.auditrun``): a null
    figure there is unknown, not zero. Runs before #22 have no config columns: shown without them."""
    st.subheader("Per topic")
    unknown = unknown_configs(summary)
    if unknown:
        st.warning(f"Topic config unknown for {len(unknown)} topic(s): {CONFIG_UNKNOWN_NOTE}.")
        st.dataframe([{"topic": t, "why the config is unknown": why} for t, why in unknown.items()],
                     hide_index=True, width="stretch", key="audit.config_unknown")
    if "config_source" not in topics.columns:
        st.caption("Not in this run: audits from before issue 22 do not say where each topic's config came from.")
    st.dataframe(topics[[c for c in TOPIC_COLUMNS if c in topics.columns]], hide_index=True,
                 width="stretch", key="audit.topics")


WHATIF_COLUMNS = ["topic", "setting", "size_bytes", "peak_bytes", "cleans_per_day", "read_bytes_per_day",
                  "written_bytes_per_day", "write_bytes_per_second", "live_bytes", "unknown_reason"]


def whatif_panel(rows: pd.DataFrame, summary: dict) -> None:
    """What other settings would do (``monitor.model.whatif``, gathered by ``spark_analysis.whatif``): the
    chart of size against cleaner bytes per day, and the table, each row's setting labelled; a run from
    before the table says so."""
    from monitor.contract.whatif import ASSUMPTIONS, GRID_TEXT, label

    st.subheader("What if: other cleaner settings")
    if "whatif" not in (summary.get("tables") or []):
        st.caption("Not in this run: audits from before issue 34 have no what-if table.")
        return
    if rows.empty:
        st.caption("No compacted topic in this run.")
        return
    st.caption(f"{GRID_TEXT} {ASSUMPTIONS}")
    st.plotly_chart(figures.audit_whatif(rows), width="stretch")
    shown = rows.assign(setting=[label(s, v) for s, v in zip(rows["setting"], rows["value"])])
    st.dataframe(shown[WHATIF_COLUMNS], hide_index=True, width="stretch", key="audit.whatif")


s = ui.settings()
st.title("Compaction audit")
st.caption(f"Reports of `compaction-monitor audit` in {s.audit_dir or '(no audit_dir configured)'}.")
runs = auditruns.audit_runs(s.audit_dir)
if not runs:
    st.info("No audit yet. Run `compaction-monitor audit --input LOG_DIRS --out DIR` and set `audit_dir: DIR` "
            "in monitor.yaml (or COMPACTION_MONITOR_AUDIT_DIR).")
else:
    states = {r: auditruns.audit_status(s.audit_dir, r)[0] for r in runs}  # from the markers: no table read
    complete = [r for r in runs if states[r] == COMPLETE]
    run = st.selectbox("Run", runs, index=runs.index(complete[0]) if complete else 0, key="audit.run",
                       format_func=lambda r: r if states[r] == COMPLETE else f"{r} ({states[r]})")
    a = auditruns.audit_run(s.audit_dir, run)
    if a["status"] == IN_PROGRESS:
        st.info(f"Run {run} is in progress: " + "; ".join(a["problems"]))
    elif a["status"] == DAMAGED:
        st.error(f"Run {run} is damaged: " + "; ".join(a["problems"]))
    else:
        a["topics"], sm = with_projections(a["topics"], a["summary"])
        c = st.columns(5)
        c[0].metric("Scanned", f"{sm['bytes'] / 2**20:,.1f} MiB")
        c[1].metric("Reclaimable by the next clean", f"{sm['reclaimable_bytes'] / 2**20:,.1f} MiB")
        c[2].metric("Estimated cleaning time", f"{sm['estimated_clean_seconds']:,.1f} s")
        c[3].metric("Tombstones past retention", f"{sm['tombstones_past_retention']:,}")
        c[4].metric("Corrupt spots", sm["faults"])
        projection_panel(sm)
        accuracy_panel(s.audit_dir, run, a, complete)
        if not a["topics"].empty:
            st.plotly_chart(figures.audit_sizes(a["topics"]), width="stretch")
            st.plotly_chart(figures.audit_clean_time(a["topics"]), width="stretch")
            topics_panel(a["topics"], sm)
        t = a["topics"]
        if not t.empty and "streams_role" in t.columns:  # runs before #16 have no streams_role column
            streams = t[t["streams_role"].fillna("") != ""]
            if not streams.empty:
                st.subheader("Kafka Streams internal topics (by name)")
                st.dataframe(streams[[c for c in ("topic", "streams_role", "partitions", "bytes", "next_clean_bytes",
                                                  "settled_bytes") if c in streams.columns]],
                             hide_index=True, width="stretch")
        st.subheader("Restore time per compacted topic")
        if "restore_seconds" not in t.columns:
            st.caption("Not in this run: audits from before the restore estimate have no restore_seconds.")
        elif not t.empty:
            bps = sm.get("restore_throughput_bytes_per_second")
            st.caption(EXPLAIN + " " + (
                f"Throughput: {bps:,.0f} B/s ({bps / 2**20:,.2f} MiB/s, {sm.get('restore_throughput_source')})."
                if bps else
                f"Unknown: {sm.get('restore_unknown_reason')}. Give --restore-throughput, "
                "restore_throughput_bytes_per_second in monitor.yaml, or run ./dev bench restore."))
            order = [r["topic"] for r in restore_order(t[["topic", "streams_role", "next_clean_bytes"]]
                                                        .to_dict("records"))]
            st.dataframe(t.set_index("topic").loc[order].reset_index()[
                ["topic", "streams_role", "next_clean_bytes", "restore_seconds"]],
                hide_index=True, width="stretch", key="audit.restore")
        whatif_panel(a["whatif"], sm)
        if not a["tombstone_buckets"].empty:
            st.plotly_chart(figures.audit_tombstone_buckets(a["tombstone_buckets"]), width="stretch")
        st.subheader("Most updated keys")
        keys = a["top_keys"]
        if not keys.empty:
            keys = keys.assign(key=keys["key"].map(
                lambda b: "(null)" if b is None else bytes(b).decode("utf-8", "replace")))
            st.dataframe(keys[["topic", "rank", "key", "updates", "tombstones", "obsolete_bytes"]], hide_index=True,
                         width="stretch")
        st.subheader("Producer pitfalls")
        topics = a["topics"]
        if "empty_value_records" not in topics.columns:
            st.caption("Not in this run: audits from before issue 16 do not count them.")
        elif not topics.empty:
            c = st.columns(3)
            c[0].metric("Empty-string values (not tombstones)", f"{sm.get('empty_value_records', 0):,}")
            c[1].metric("Keys in several partitions", f"{sm.get('keys_in_several_partitions', 0):,}")
            c[2].metric("Records without a key", f"{sm.get('keyless_records', 0):,}")
            st.caption("An empty string is no tombstone: the key never goes away (send null to delete). A key in "
                       "several partitions keeps a value in each. Value sizes: " + sm.get("value_size_method", ""))
            st.dataframe(topics[["topic", "empty_value_records", "keys_last_empty_value", "keys_in_several_partitions",
                                 "keyless_records", "value_bytes_p50", "value_bytes_p90", "value_bytes_p99",
                                 "value_bytes_max"]], hide_index=True, width="stretch", key="audit.pitfalls")
        rep = sm.get("replicas")  # runs before #22 have no replicas block nor table
        if rep:
            st.caption(f"Totals count {rep['totals_count']}; every replica read holds "
                       f"{rep['bytes_all_replicas'] / 2**20:,.1f} MiB on disk.")
        if rep and rep["partitions_with_replicas"]:
            st.subheader("Replicas")
            st.caption(f"{rep['partitions_with_replicas']} partition(s) found in several log dirs, each audited "
                       f"once: {rep['choice']}. {rep['disagreeing']} replica(s) disagree with the audited one.")
            r = a["replicas"]
            if not r.empty:
                r = r.assign(_ok=r["disagreement"].fillna("") == "").sort_values(
                    ["_ok", "topic", "partition", "log_dir"]).drop(columns="_ok")
                st.dataframe(r[["topic", "partition", "log_dir", "broker", "audited", "chosen_by", "log_end_offset",
                                "log_start_offset", "bytes", "segments", "cleaner_checkpoint", "first_dirty_offset",
                                "offsets_behind", "bytes_difference", "disagreement"]],
                             hide_index=True, width="stretch")
        if sm["faults"]:
            st.subheader("Corrupt or truncated input")
            st.dataframe(a["faults"], hide_index=True, width="stretch")

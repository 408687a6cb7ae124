"""Audit: the latest Spark audit report from the output folder, with a picker for older runs. A run
without its completion marker is shown as in progress, a damaged one as damaged with the file named
(``monitor.contract.auditrun``), never as an exception.

A complete run starts from its conclusions (``dashboards.auditview.conclusions``): what the next clean
reclaims, the partitions that need attention and why, the tombstone risk, how close an earlier run's
prediction came (``monitor.verdicts.accuracy``). Then each table with a caption saying what it is for, its
identifying columns first and the rest in a collapsed expander, so no table scrolls sideways on a laptop;
every figure through ``monitor.contract.units``, a figure that cannot be known as "unknown". Each topic says
where its config came from; those whose config is unknown are listed with the reason. Partitions found in
several log dirs list their replicas (``spark_analysis.replicas``), those that disagree first. Each
compacted topic's what-if rows (``spark_analysis.whatif``) are charted, every point labelled with its
setting, when two or more are known; else a sentence says why there is no chart."""

import pandas as pd
import streamlit as st

from dashboards import auditruns, figures, ui
from dashboards.auditview import (BYTES, COUNT, RATIO, SECONDS, YESNO, Col, attention, chart_or_why,
                                  conclusions, key_text, shown)
from monitor.contract import units
from monitor.contract.auditrun import COMPLETE, CONFIG_UNKNOWN_NOTE, DAMAGED, IN_PROGRESS, unknown_configs
from monitor.verdicts.accuracy import CLEANED, baseline, charted, signed_bytes, signed_ratio
from monitor.verdicts.restore import EXPLAIN, restore_order

WIDE = "stretch"


def table(df: pd.DataFrame, cols: list[Col], key: str | None = None) -> None:
    ui.grid(shown(df, cols), key=key)


def details(df: pd.DataFrame, cols: list[Col]) -> None:
    """A table inside an expander: static (a data grid in a closed expander is not drawn until it opens,
    so a browser would wait for it), its identifying columns repeated so each row is found."""
    st.table(shown(df, cols), hide_index=True)


def plain(v) -> str:
    """A partition, an offset, a rank, a byte position: as Kafka prints it, no thousands separator."""
    return units.unknown() if units.missing(v) else str(int(v))


def accuracy_of(audit_dir: str, run: str, later: dict, complete: list[str], pick: str | None) -> dict | None:
    """The comparison with run ``pick`` (an earlier complete run), or None when there is none."""
    if pick is None:
        return None
    rows, tot = auditruns.audit_accuracy(auditruns.audit_run(audit_dir, pick)["partitions"], later["partitions"])
    return {"run": pick, "rows": rows, "totals": tot}


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
    acc = accuracy_of(audit_dir, run, later, complete, pick)
    rows, tot = acc["rows"], acc["totals"]
    cleaned = rows[[charted(r) for r in rows.to_dict("records")]] if not rows.empty else rows
    c = st.columns(4)
    c[0].metric("Predicted (cleaned partitions)", units.bytes_iec(tot["predicted_bytes"]))
    c[1].metric("Reclaimed by the broker", units.bytes_iec(tot["actual_bytes"]))
    c[2].metric("Error", signed_bytes(tot["error_bytes"]))
    c[3].metric("Relative error", "unknown" if tot["error_ratio"] is None else signed_ratio(tot["error_ratio"]))
    left = ", ".join(f"{n} {status}" for status, n in sorted(tot["left_out"].items()))
    st.caption(f"What it is for: how far to trust this run's reclaimable figure. {tot['partitions']} partition(s) "
               f"the cleaner has been over since run {pick}" + (f"; left out: {left}" if left else "")
               + f". Reclaimed: the partition's size in {pick} less its size in {run}; error: reclaimed - predicted.")
    if not cleaned.empty:
        st.plotly_chart(figures.audit_accuracy(cleaned), width=WIDE, key="audit.accuracy.chart")
    if rows.empty:
        return
    # what the cleaner reclaimed first, most predicted first; then what could not be compared
    rows = rows.assign(_o=rows["status"] != CLEANED, _p=-rows["predicted_bytes"].fillna(0)).sort_values(
        ["_o", "_p", "topic", "partition"]).drop(columns=["_o", "_p"]).reset_index(drop=True)
    signed = lambda f: lambda v: "unknown" if units.missing(v) else f(v)  # noqa: E731
    table(rows, [Col("topic", "Topic"), Col("partition", "Partition", plain), Col("status", "Status"),
                 Col("predicted_bytes", "Predicted", BYTES), Col("actual_bytes", "Reclaimed", BYTES),
                 Col("error_bytes", "Error", signed(signed_bytes))], key="audit.accuracy.table")
    with st.expander("Sizes before and after, relative error, why a partition is left out"):
        details(rows, [Col("topic", "Topic"), Col("partition", "Partition", plain),
                       Col("bytes_before", "Size in the earlier run", BYTES),
                       Col("bytes_after", "Size in this run", BYTES),
                       Col("error_ratio", "Relative error", signed(signed_ratio)),
                       Col("detail", "Detail", lambda v: v or "none")])


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

    c = st.columns(3)
    c[0].metric("After the next clean", units.bytes_iec(sm.get("next_clean_bytes")))
    c[1].metric("Settled", units.bytes_iec(sm.get("settled_bytes")))
    c[2].metric("Projection", sm.get("projection_method") or "unknown")
    if "settled_unknown_partitions" not in sm:
        st.caption(BEFORE_32)
        return
    left = [f"{sm[k]} partition(s) unknown, left out of the {what} total"
            for k, what in (("next_clean_unknown_partitions", "next-clean"), ("settled_unknown_partitions", "settled"))
            if sm.get(k)]
    when = sm.get("next_removable_ms")
    counts = lambda kind: ", ".join(  # noqa: E731
        f"{units.count(sm.get(f'{kind}s_{s}'))} {s}" for s in STATES)
    with st.expander("How the projections are found; tombstones and markers by delete horizon"):
        st.caption("After the next clean: what the broker's cleaner leaves if it cleans each partition now. Settled: "
                   "after every delete horizon has passed and another clean. Counted: Kafka's cleaner run over the "
                   "segments, each kept batch re-encoded; estimated: from the records' byte shares (a dump or a "
                   "topic). " + "".join(f"{x}. " for x in left)
                   + f"Delete horizons: tombstones {counts('tombstone')}; markers {counts('marker')}; the next become "
                   f"removable {'never (none left)' if when is None else units.timestamp_utc(when)}.")


TOPIC_MAIN = [Col("topic", "Topic"), Col("partitions", "Partitions", COUNT), Col("bytes", "Size", BYTES),
              Col("reclaimable_bytes", "Next clean reclaims", BYTES),
              Col("next_clean_bytes", "After the next clean", BYTES), Col("settled_bytes", "Settled", BYTES),
              Col("config_source", "Config from")]
TOPIC_CLEANING = [Col("topic", "Topic"), Col("records", "Records", COUNT), Col("projection_method", "Projection"),
                  Col("next_clean_unknown_partitions", "Partitions unknown after the next clean", COUNT),
                  Col("settled_unknown_partitions", "Partitions unknown settled", COUNT),
                  Col("max_cleanable_ratio", "Highest cleanable ratio", RATIO),
                  Col("estimated_clean_seconds", "Estimated cleaning time", SECONDS)]
TOPIC_HORIZONS = [Col("topic", "Topic"), Col("tombstones_past_retention", "Tombstones past delete.retention.ms", COUNT),
                  *[Col(f"{k}s_{s}", f"{k.capitalize()}s {s}", COUNT) for k in ("tombstone", "marker")
                    for s in ("unstamped", "pending", "passed")]]


def topics_panel(topics, summary: dict) -> None:
    """Each topic's sizes with where its config came from (admin, config, default, unknown), the rest in an
    expander; the topics whose config is unknown with the reason (``monitor.contract.auditrun``): a figure
    there is unknown, not zero. Runs before #22 have no config columns: shown without them."""
    st.subheader("Per topic")
    st.caption("What it is for: where the bytes are, what the next clean takes back, and where each topic's "
               "config came from (admin: the broker's admin API; config: monitor.yaml; default: Kafka's default).")
    unknown = unknown_configs(summary)
    if unknown:
        st.warning(f"Topic config unknown for {len(unknown)} topic(s): {CONFIG_UNKNOWN_NOTE}.")
        ui.grid([{"Topic": t, "Why its config is unknown": why} for t, why in unknown.items()],
                key="audit.config_unknown")
    if "config_source" not in topics.columns:
        st.caption("Not in this run: audits from before issue 22 do not say where each topic's config came from.")
    table(topics, TOPIC_MAIN, key="audit.topics")
    with st.expander("Per topic: records, projection, cleaning time, tombstones and markers by delete horizon"):
        details(topics, TOPIC_CLEANING)
        st.caption("Tombstones and markers: unstamped (no delete horizon yet: they go a delete.retention.ms after "
                   "the next clean), pending (stamped, waiting for it), passed (the next clean removes them).")
        details(topics, TOPIC_HORIZONS)


# within a 1366-pixel window: the steady size and the cleaner's daily work first; the peak in the details
WHATIF_MAIN = [Col("setting", "Setting"), Col("size_bytes", "Steady size", BYTES),
               Col("cleans_per_day", "Cleans per day", lambda v: "unknown" if units.missing(v) else f"{v:,.1f}"),
               Col("read_bytes_per_day", "Cleaner reads per day", BYTES),
               Col("written_bytes_per_day", "Cleaner writes per day", BYTES)]
WHATIF_MORE = [Col("setting", "Setting"), Col("peak_bytes", "Peak size", BYTES),
               Col("write_bytes_per_second", "Write rate", units.rate), Col("live_bytes", "Live bytes", BYTES)]


def whatif_panel(rows: pd.DataFrame, summary: dict) -> None:
    """What other settings would do (``monitor.model.whatif``, gathered by ``spark_analysis.whatif``), one topic
    at a time (picked; the one where a setting changes the steady size the most first, those whose every
    figure is unknown last): the chart of size against cleaner bytes per day, each point labelled with its
    setting, when two or more points are known (else why not), and the topic's table; a run from before the
    table says so. All topics on one chart and in one table ran their labels into each other at 50 topics."""
    from monitor.contract.whatif import ASSUMPTIONS, GRID_TEXT, label

    st.subheader("What if: other cleaner settings")
    if "whatif" not in (summary.get("tables") or []):
        st.caption("Not in this run: audits from before issue 34 have no what-if table.")
        return
    if rows.empty:
        st.caption("No compacted topic in this run.")
        return
    st.caption("What it is for: choosing min.cleanable.dirty.ratio, segment.ms, segment.bytes and "
               f"delete.retention.ms: the disk each would take against the cleaner's work. {GRID_TEXT}")
    every = figures.whatif_points(rows)
    charted = figures.whatif_topics(every)
    topics = charted + sorted(set(rows["topic"]) - set(charted))
    topic = topics[0] if len(topics) == 1 else st.selectbox(
        "Topic", topics, key="audit.whatif.topic",
        help="One topic at a time: the one where a setting changes the steady size the most first, those whose "
             "figures are all unknown last.")
    mine = rows[rows["topic"] == topic]
    pts = [p for p in every if p["topic"] == topic]
    no_chart = chart_or_why(len(pts), "the settings' sizes against the cleaner's bytes",
                            "no setting's figures are known" if not pts else
                            "every setting whose figures are known gives the same steady size and cleaner bytes "
                            f"({', '.join(pts[0]['labels'])})")
    if no_chart:
        st.caption(f"{topic}: {no_chart}")
    else:
        st.plotly_chart(figures.audit_whatif(mine), width=WIDE, key="audit.whatif.chart")
    unknown = mine[mine["size_bytes"].isna()] if "size_bytes" in mine else mine.iloc[0:0]
    why = sorted({r for r in unknown.get("unknown_reason", []) if isinstance(r, str) and r})
    if why:  # one line here, the reasons (a path each, often) below it: never a wall of text above a table
        settings = sorted({label(s, v) for s, v in zip(unknown["setting"], unknown["value"])})
        st.caption(f"Unknown for {topic}{', so left out of the chart' if not no_chart else ''}: "
                   f"{', '.join(settings)}.")
        with st.expander(f"Why {len(why)} figure(s) are unknown"):
            st.markdown("\n".join(f"- {w}" for w in why[:20]) + (f"\n- and {len(why) - 20} more" if len(why) > 20 else ""))
    # the settings whose figures are known first; the topic is the picker's
    t = mine.assign(setting=[label(s, v) for s, v in zip(mine["setting"], mine["value"])],
                    _unknown=mine["size_bytes"].isna()).sort_values("_unknown", kind="stable") \
        .drop(columns="_unknown").reset_index(drop=True)
    table(t, WHATIF_MAIN, key="audit.whatif")
    with st.expander("The model's assumptions; each setting's peak size, write rate and live bytes"):
        st.caption(ASSUMPTIONS)
        details(t, WHATIF_MORE)


def attention_panel(partitions: pd.DataFrame, sm: dict) -> None:
    att = attention(partitions, sm)
    if att.empty:
        return
    st.subheader("Partitions that need attention")
    st.caption("What it is for: where to look first. One row per partition and reason, the largest figure first; "
               "what to do about each reason is under the table.")
    table(att, [Col("topic", "Topic"), Col("partition", "Partition", plain), Col("why", "Why"),
                Col("evidence", "Evidence")], key="audit.attention")
    st.markdown("\n".join(f"- **{why}**: {fix}" for why, fix in
                          att.drop_duplicates("why")[["why", "fix"]].itertuples(index=False)))


def charted_or_said(points: int, what: str, why_not: str, draw) -> None:
    """The chart when it has two or more meaningful points, else the sentence saying why not."""
    said = chart_or_why(points, what, why_not)
    if said:
        st.caption(said)
    else:
        st.plotly_chart(draw(), width=WIDE)


def complete_run(s, run: str, a: dict, complete: list[str]) -> None:
    a["topics"], sm = with_projections(a["topics"], a["summary"])
    t = a["topics"]
    earlier = [r for r in complete if r < run]
    acc = accuracy_of(s.audit_dir, run, a, complete, baseline(complete, run) if earlier else None)
    st.subheader("What this audit found")
    st.markdown("\n".join(f"- {line}" for line in conclusions(sm, a["partitions"], acc)))
    c = st.columns(5)
    c[0].metric("Scanned", units.bytes_iec(sm["bytes"]))
    c[1].metric("Next clean reclaims", units.bytes_iec(sm["reclaimable_bytes"]))
    c[2].metric("Estimated cleaning time", units.duration_s(sm["estimated_clean_seconds"]))
    c[3].metric("Tombstones past retention", units.count(sm["tombstones_past_retention"]))
    c[4].metric("Corrupt spots", units.count(sm["faults"]))
    attention_panel(a["partitions"], sm)
    projection_panel(sm)
    if not t.empty:
        topics_panel(t, sm)
        sized = t[t["bytes"].fillna(0) > 0]
        charted_or_said(len(sized), "sizes per topic", f"{len(sized)} topic(s) with data; the table gives the figures",
                        lambda: figures.audit_sizes(t))
        slow = t[t["estimated_clean_seconds"].fillna(0) >= figures.CLEAN_TIME_CHARTED_S]
        every = units.duration_s(sm["estimated_clean_seconds"])
        charted_or_said(len(slow), "cleaning time per topic",
                        f"every topic cleans in under a second ({every} in all)" if slow.empty else
                        f"only {slow['topic'].iloc[0]} takes a second or more "
                        f"({units.duration_s(slow['estimated_clean_seconds'].iloc[0])}; {every} in all)",
                        lambda: figures.audit_clean_time(t))
    accuracy_panel(s.audit_dir, run, a, complete)
    if not t.empty and "streams_role" in t.columns:  # runs before #16 have no streams_role column
        streams = t[t["streams_role"].fillna("") != ""]
        if not streams.empty:
            st.subheader("Kafka Streams internal topics (by name)")
            st.caption("What it is for: the changelogs and repartition topics a Streams application restores from.")
            table(streams, [Col("topic", "Topic"), Col("streams_role", "Role"), Col("partitions", "Partitions", COUNT),
                            Col("bytes", "Size", BYTES), Col("next_clean_bytes", "After the next clean", BYTES),
                            Col("settled_bytes", "Settled", BYTES)])
    st.subheader("Restore time per compacted topic")
    if "restore_seconds" not in t.columns:
        st.caption("Not in this run: audits from before the restore estimate have no restore_seconds.")
    elif not t.empty:
        bps = sm.get("restore_throughput_bytes_per_second")
        st.caption("What it is for: how long a consumer (a Streams state store) takes to read each topic from the "
                   "start. " + EXPLAIN + " " + (
                       f"Throughput: {units.rate(bps)} ({sm.get('restore_throughput_source')})." if bps else
                       f"Unknown: {sm.get('restore_unknown_reason')}. Give --restore-throughput, "
                       "restore_throughput_bytes_per_second in monitor.yaml, or run ./dev bench restore."))
        order = [r["topic"] for r in restore_order(t[["topic", "streams_role", "next_clean_bytes"]]
                                                    .to_dict("records"))]
        table(t.set_index("topic").loc[order].reset_index(),
              [Col("topic", "Topic"), Col("streams_role", "Role", lambda v: v or "none"),
               Col("next_clean_bytes", "After the next clean", BYTES),
               Col("restore_seconds", "Restore time",
                   lambda v: units.unknown("no restore throughput") if units.missing(v) else units.duration_s(v))],
              key="audit.restore")
    whatif_panel(a["whatif"], sm)
    b = a["tombstone_buckets"]
    st.subheader("Tombstones by the time they were written")
    if b.empty:
        st.caption("No tombstone on disk: nothing to chart.")
    else:
        span = units.duration_ms(int(b["bucket_ms"].iloc[0])) if "bucket_ms" in b.columns else "bucket"
        charted_or_said(b["bucket_start_ms"].nunique(), "tombstones over time",
                        f"all {units.count(b['tombstones'].sum())} tombstones were written within one "
                        f"{span} bucket, the one from {units.timestamp_utc(b['bucket_start_ms'].min())}",
                        lambda: figures.audit_tombstone_buckets(b))
    keys_panel(a["top_keys"])
    pitfalls_panel(t, sm)
    replicas_panel(a["replicas"], sm)
    if sm["faults"]:
        st.subheader("Corrupt or truncated input")
        st.caption("What it is for: the spots the audit could not read; their records are left out of every figure.")
        table(a["faults"], [Col("segment", "File"), Col("fault_position", "Byte", plain), Col("fault_kind", "Kind"),
                            Col("fault_reason", "Reason")])


def keys_panel(keys: pd.DataFrame) -> None:
    st.subheader("Most updated keys")
    if keys.empty:
        st.caption("No key in this run.")
        return
    st.caption("What it is for: the keys that make a topic dirty, each with its partition (a key hashes to one "
               "partition; one in several was sent with another partitioner). Each key is quoted, "
               "what is not printable text escaped (\\x00, \\xff).")
    keys = keys.assign(key=keys["key"].map(key_text)).sort_values(["topic", "rank"])
    table(keys.reset_index(drop=True), [Col("topic", "Topic"), Col("partition", "Partition", plain),
                                        Col("rank", "Rank", plain), Col("key", "Key"),
                                        Col("updates", "Updates", COUNT), Col("tombstones", "Tombstones", COUNT),
                                        Col("obsolete_bytes", "Obsolete bytes", BYTES)], key="audit.keys")


def pitfalls_panel(topics: pd.DataFrame, sm: dict) -> None:
    st.subheader("Producer pitfalls")
    if "empty_value_records" not in topics.columns:
        st.caption("Not in this run: audits from before issue 16 do not count them.")
        return
    if topics.empty:
        return
    c = st.columns(3)
    c[0].metric("Empty-string values (not tombstones)", units.count(sm.get("empty_value_records", 0)))
    c[1].metric("Keys in several partitions", units.count(sm.get("keys_in_several_partitions", 0)))
    c[2].metric("Records without a key", units.count(sm.get("keyless_records", 0)))
    st.caption("What it is for: records compaction cannot remove. An empty string is no tombstone: the key never "
               "goes away (send null to delete). A key in several partitions keeps a value in each.")
    table(topics, [Col("topic", "Topic"), Col("empty_value_records", "Empty-string values", COUNT),
                   Col("keys_last_empty_value", "Keys last set to an empty string", COUNT),
                   Col("keys_in_several_partitions", "Keys in several partitions", COUNT),
                   Col("keyless_records", "Records without a key", COUNT)], key="audit.pitfalls")
    with st.expander("Value sizes per topic"):
        st.caption("Value sizes: " + sm.get("value_size_method", ""))
        details(topics, [Col("topic", "Topic"), *[Col(f"value_bytes_{q}", f"Value size {q}", BYTES)
                                                  for q in ("p50", "p90", "p99", "max")]])


def replicas_panel(r: pd.DataFrame, sm: dict) -> None:
    rep = sm.get("replicas")  # runs before #22 have no replicas block nor table
    if rep:
        st.caption(f"Totals count {rep['totals_count']}; every replica read holds "
                   f"{units.bytes_iec(rep['bytes_all_replicas'])} on disk.")
    if not (rep and rep["partitions_with_replicas"]):
        return
    st.subheader("Replicas")
    st.caption(f"What it is for: replicas that disagree. {rep['partitions_with_replicas']} partition(s) found in "
               f"several log dirs, each audited once: {rep['choice']}. {rep['disagreeing']} replica(s) disagree with "
               "the audited one.")
    if r.empty:
        return
    r = r.assign(_ok=r["disagreement"].fillna("") == "").sort_values(
        ["_ok", "topic", "partition", "log_dir"]).drop(columns="_ok").reset_index(drop=True)
    ident = [Col("topic", "Topic"), Col("partition", "Partition", plain), Col("log_dir", "Log dir")]
    table(r, ident + [Col("broker", "Broker", lambda v: "unknown" if units.missing(v) else str(v)),
                      Col("audited", "Audited", YESNO), Col("disagreement", "Disagreement", lambda v: v or "none")],
          key="audit.replicas")
    offset = lambda v: "none" if units.missing(v) else plain(v)  # noqa: E731
    with st.expander("Each replica's offsets, size and segments"):
        details(r, ident + [Col("chosen_by", "Chosen by"), Col("log_start_offset", "Log start offset", offset),
                            Col("log_end_offset", "Log end offset", offset),
                            Col("cleaner_checkpoint", "Cleaner checkpoint", offset),
                            Col("first_dirty_offset", "First dirty offset", offset)])
        details(r, ident + [Col("bytes", "Size", BYTES), Col("segments", "Segments", COUNT),
                            Col("offsets_behind", "Offsets behind", COUNT),
                            Col("bytes_difference", "Size difference", BYTES)])


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
        complete_run(s, run, a, complete)

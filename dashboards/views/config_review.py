"""Config review: every compacted topic's live settings against the pitfalls of ``monitor.verdicts.configreview``
(the collector exports each finding as topic_config_finding, the same review ``topics lint`` prints),
with the setting to change and the suggested value; and each broker's log cleaner settings with the
place each value came from."""

import pandas as pd
import streamlit as st

from dashboards import sources, ui
from monitor.verdicts.fixes import alter_topic
from monitor.verdicts.configreview import WHY

s = ui.settings()
ui.header("Configuration review", s, "Compacted topics' live settings against known pitfalls, judged with what "
          "the collector measures (consumer lag, write rates, active segments, tombstones).")
samples, _ = ui.load(s)
SETTINGS = [("broker_cleaner_enabled", "log.cleaner.enable"), ("broker_cleaner_threads", "log.cleaner.threads"),
            ("broker_cleaner_dedupe_buffer_bytes", "log.cleaner.dedupe.buffer.size"),
            ("broker_cleaner_io_buffer_load_factor", "log.cleaner.io.buffer.load.factor"),
            ("broker_cleaner_io_max_bytes_per_second", "log.cleaner.io.max.bytes.per.second"),
            ("broker_cleaner_backoff_seconds", "log.cleaner.backoff.ms (s)")]
if samples is not None:
    if sources.metric(samples, "topic_partitions").empty:
        st.info("No live topic configs: the collector reads them with the admin API; give it "
                "`bootstrap_servers` (or `--bootstrap-server`).")
    else:
        found = sources.metric(samples, "topic_config_finding")
        topics = sources.metric(samples, "topic_partitions")["topic"].nunique()
        if found.empty:
            st.success(f"All {topics} compacted topic(s) pass every check.", icon=":material/check_circle:")
        else:
            st.warning(f"{len(found)} finding(s) on {found['topic'].nunique()} of {topics} compacted topic(s).")
            shown = found.assign(
                why=found["check"].map(WHY),
                fix=[alter_topic("<bootstrap>", r.topic, r.setting, r.suggested) for r in found.itertuples()],
            )[["cluster", "topic", "check", "why", "setting", "current", "suggested", "fix"]]
            st.dataframe(shown.sort_values(["topic", "check"]), hide_index=True, width="stretch")
        st.caption("`compaction-monitor topics lint` prints the same findings with their evidence.")
    st.subheader("Log cleaner settings per broker")
    rows = {}
    for name, key in SETTINGS:
        for r in sources.metric(samples, name).itertuples():
            rows.setdefault((r.cluster, r.broker), {"cluster": r.cluster, "broker": r.broker})[key] = \
                f"{r.value:g} ({r.source})"
    unknown = sources.metric(samples, "broker_cleaner_settings_known")
    unknown = unknown[unknown["value"] == 0]
    if rows:
        st.dataframe(pd.DataFrame(list(rows.values())), hide_index=True, width="stretch")
    for r in unknown.itertuples():
        st.error(f"Broker {r.broker} (cluster {r.cluster}): cleaner settings unknown: {r.reason}")
    if not rows and unknown.empty:
        st.info("No broker cleaner settings yet: the collector reads them with the admin API.")
ui.auto_refresh()

"""Config review: every compacted topic's live settings against the checks of ``monitor.verdicts.configreview``
(the collector exports each finding as topic_config_finding and each check it could not run as
topic_config_check_not_run: the one table ``topics lint`` and ``explain`` run), with the setting to change
and the suggested value; and each broker's log cleaner settings with the place each value came from.
Every figure goes through ``monitor.contract.units`` (durations, sizes, yes/no): no raw milliseconds."""

import pandas as pd
import streamlit as st

from dashboards import sources, ui
from monitor.contract.units import bytes_iec, duration_s, rate, yes_no
from monitor.verdicts.configreview import CHECKS, INPUTS, WHY, human_value
from monitor.verdicts.fixes import DOUBLE_MAX, alter_topic


def _io_max(v: float) -> str:
    return "unlimited" if v >= DOUBLE_MAX else rate(v)


# each broker cleaner setting the collector exports: (metric, Kafka's name, how its value reads for a person)
SETTINGS = [("broker_cleaner_enabled", "log.cleaner.enable", lambda v: yes_no(bool(v))),
            ("broker_cleaner_threads", "log.cleaner.threads", lambda v: f"{v:.0f}"),
            ("broker_cleaner_dedupe_buffer_bytes", "log.cleaner.dedupe.buffer.size", bytes_iec),
            ("broker_cleaner_io_buffer_load_factor", "log.cleaner.io.buffer.load.factor", lambda v: f"{v:.0%}"),
            ("broker_cleaner_io_max_bytes_per_second", "log.cleaner.io.max.bytes.per.second", _io_max),
            ("broker_cleaner_backoff_seconds", "log.cleaner.backoff.ms", duration_s)]


def findings_table(found: pd.DataFrame) -> pd.DataFrame:
    """The findings as a person reads them: what identifies a row first, values in words (what each check
    guards against is said once per check, below the table: a column of it would push the values off)."""
    rows = [{"topic": r.topic, "check": r.check, "setting": r.setting,
             "now": human_value(r.setting, r.current), "suggested": human_value(r.setting, r.suggested)}
            for r in found.sort_values(["topic", "check"]).itertuples()]
    return pd.DataFrame(rows, columns=["topic", "check", "setting", "now", "suggested"])


def not_run_table(not_run: pd.DataFrame, topics: int) -> pd.DataFrame:
    """The checks not run: each check and missing input once, with the topics it concerns."""
    rows = []
    for (check, needs), g in not_run.groupby(["check", "needs"]):
        names = sorted(set(g["topic"]))
        rows.append({"check": check, "needs": INPUTS.get(needs, needs),
                     "topics": "every topic" if topics > 1 and len(names) == topics else ", ".join(names)})
    return pd.DataFrame(rows, columns=["check", "needs", "topics"])


s = ui.settings()
ui.header("Configuration review", s, "Compacted topics' live settings against known pitfalls, judged with what "
          "the collector measures (consumer lag, write rates, active segments, tombstones).")
samples, _ = ui.load(s)
if samples is not None:
    if sources.metric(samples, "topic_partitions").empty:
        st.info("No live topic configs: the collector reads them with the admin API; give it "
                "`bootstrap_servers` (or `--bootstrap-server`).")
    else:
        found = sources.metric(samples, "topic_config_finding")
        not_run = sources.metric(samples, "topic_config_check_not_run")
        topics = sources.metric(samples, "topic_partitions")["topic"].nunique()
        skipped = sorted(set(not_run["check"])) if not not_run.empty else []
        if not found.empty:
            st.warning(f"{len(found)} finding(s) on {found['topic'].nunique()} of {topics} compacted topic(s).")
            ui.grid(findings_table(found))
            st.markdown("\n".join(f"- `{c}`: {WHY.get(c, '')}" for c in sorted(set(found["check"]))))
            with st.expander("The commands that apply the suggested values"):
                st.code("\n".join(alter_topic("<bootstrap>", r.topic, r.setting, r.suggested)
                                  for r in found.sort_values(["topic", "check"]).itertuples()),
                        language="bash", wrap_lines=True)  # a long topic name wraps, never scrolls sideways
        elif not skipped:
            st.success(f"All {topics} compacted topic(s) pass all {len(CHECKS)} checks.", icon=":material/check_circle:")
        else:
            st.info(f"No finding on {topics} compacted topic(s), but not every check could run.")
        if skipped:
            st.caption(f"{len(skipped)} check(s) not run where the collector lacks their input:")
            ui.grid(not_run_table(not_run, topics))
        st.caption("`compaction-monitor topics lint` runs the same checks and prints these findings with their "
                   "evidence.")
    st.subheader("Log cleaner settings per broker")
    st.caption("Each value with where it came from: admin (the broker said), default (Kafka's, nobody asked).")
    rows: dict[str, dict] = {}  # one row per setting, one column per broker: as narrow as the brokers are few
    clusters = {r.cluster for name, _, _ in SETTINGS for r in sources.metric(samples, name).itertuples()}
    for name, key, shown in SETTINGS:
        for r in sources.metric(samples, name).itertuples():
            column = f"broker {r.broker}" if len(clusters) < 2 else f"{r.cluster} broker {r.broker}"
            rows.setdefault(key, {"setting": key})[column] = f"{shown(r.value)} ({r.source})"
    unknown = sources.metric(samples, "broker_cleaner_settings_known")
    unknown = unknown[unknown["value"] == 0]
    if rows:
        ui.grid(pd.DataFrame(list(rows.values())))
    for r in unknown.itertuples():
        st.error(f"Broker {r.broker} (cluster {r.cluster}): cleaner settings unknown: {r.reason}")
    if not rows and unknown.empty:
        st.info("No broker cleaner settings yet: the collector reads them with the admin API.")
ui.auto_refresh()

"""Shared page plumbing: settings, cached loading, and the states a page shows instead of a traceback."""

from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from dashboards import sources
from monitor.settings.redact import redact_url

TTL = int(os.environ.get("COMPACTION_MONITOR_REFRESH", "30"))


@st.cache_data(ttl=TTL, show_spinner=False)
def _current(s: sources.Settings) -> pd.DataFrame:
    return sources.current(s)


@st.cache_data(ttl=TTL, show_spinner=False)
def _alerts(s: sources.Settings, samples: pd.DataFrame) -> pd.DataFrame:
    return sources.alerts(s, samples)


@st.cache_data(ttl=TTL, show_spinner=False)
def _history(s: sources.Settings, query: str, seconds: int = 3600) -> pd.DataFrame:
    return sources.prometheus_range(s.prometheus_url, query, seconds, limits=s)


def history(s: sources.Settings, query: str, seconds: int = 3600) -> pd.DataFrame:
    """A range query's rows, or none with a warning naming why when Prometheus cannot answer it."""
    try:
        return _history(s, query, seconds)
    except sources.SourceError as exc:
        st.warning(f"History unavailable ({exc.kind}): {exc}")
        return pd.DataFrame()


def settings() -> sources.Settings:
    """The settings, or the config's problems on the page (one a line) and the page stopped."""
    from monitor.settings.config import ConfigError

    try:
        return sources.settings_from_env()
    except ConfigError as exc:
        st.error("The config cannot be used:\n\n" + "\n".join(f"- `{line}`" for line in exc.lines),
                 icon=":material/error:")
        st.stop()


def header(title: str, s: sources.Settings, caption: str) -> None:
    st.title(title)
    source = {"prometheus": f"Prometheus at {redact_url(s.prometheus_url or '')}",
              "collector": f"the collector at {redact_url(s.collector_url or '')} (current values only, no history)",
              "none": "no source configured"}[s.mode]
    st.caption(f"{caption} Data: {source}. Refreshes every {TTL}s.")


def load(s: sources.Settings) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """Current samples and alerts, or a clear message (and None) when the source cannot be read."""
    try:
        samples = _current(s)
    except sources.SourceError as exc:
        st.error(f"Cannot read the data source ({exc.kind}): {exc}", icon=":material/error:")
        st.info("Check that the collector (`compaction-monitor collect`) or Prometheus is running and that "
                "`prometheus_url` / `collector_url` in monitor.yaml point at it.")
        return None, None
    try:
        alerts = _alerts(s, samples)
    except sources.SourceError as exc:
        st.warning(f"Alerts unavailable: {exc}")
        alerts = None
    return samples, alerts


def no_compacted_topics(samples: pd.DataFrame) -> bool:
    if sources.metric(samples, "partition_cleanable_ratio").empty:
        st.info("No compacted partition is reported yet: the collector has no log dir to read, or no topic has "
                "`cleanup.policy=compact`. Broker-wide cleaner gauges are on the Brokers page.")
        return True
    return False


def auto_refresh() -> None:
    """Rerun the page on the refresh interval (a no-op under the test harness)."""
    if TTL > 0 and not os.environ.get("COMPACTION_MONITOR_NO_AUTOREFRESH"):
        @st.fragment(run_every=TTL)
        def _tick():
            if st.session_state.get("_ticks", 0) > 0:
                st.rerun()
            st.session_state["_ticks"] = st.session_state.get("_ticks", 0) + 1

        _tick()


def alerts_table(alerts: pd.DataFrame | None, only: str | None = None) -> None:
    if alerts is None:
        return
    names = None if only is None else ([only] if isinstance(only, str) else list(only))
    unknown = {k: v for k, v in alerts.attrs.get("unknown", {}).items() if names is None or k in names}
    for name, why in unknown.items():
        st.caption(f"{name} is not evaluated without Prometheus: it {why}.")
    a = alerts if names is None else alerts[alerts["alert"].isin(names)]
    if a.empty:
        st.success("No alert is firing or pending.", icon=":material/check_circle:")
        return
    order = {"critical": 0, "warning": 1}
    a = a.assign(_o=a["severity"].map(order).fillna(2)).sort_values(["_o", "alert"]).drop(columns="_o")
    cols = [c for c in ["severity", "state", "alert", "summary", "cluster", "broker", "topic", "partition", "group",
                        "since", "runbook"] if c in a.columns]
    st.dataframe(a[cols].fillna(""), hide_index=True, width="stretch")

"""Shared page plumbing: settings, cached loading, and the states a page shows instead of a traceback."""

from __future__ import annotations

import os
import time

import pandas as pd
import streamlit as st

from dashboards import display, sources
from monitor.contract import units
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


@st.cache_resource
def _failing_since() -> dict[str, float]:
    """Endpoint -> when this dashboard first failed to read it (Unix time), until a read succeeds: one dict
    for the dashboard's process, whichever page and session read it."""
    return {}


def endpoint(s: sources.Settings) -> str:
    """The source the pages read, as a person names it (its password redacted)."""
    return {"prometheus": f"Prometheus at {redact_url(s.prometheus_url or '')}",
            "collector": f"the collector at {redact_url(s.collector_url or '')}"}.get(s.mode, "no source")


def load(s: sources.Settings) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """Current samples and alerts, or a clear message (and None) when the source cannot be read: which
    source, why, and since when this dashboard has failed to read it."""
    failing = _failing_since()
    try:
        samples = _current(s)
    except sources.SourceError as exc:
        now = time.time()
        first = failing.setdefault(endpoint(s), now)
        since = ("" if s.mode == "none" else
                 f" Unreadable since {display.ago_utc(first, now)} (the first failed read of this dashboard).")
        st.error(f"Cannot read the data source, {endpoint(s)} ({exc.kind}): {exc}.{since}", icon=":material/error:")
        st.info("Check that the collector (`compaction-monitor collect`) or Prometheus is running and that "
                "`prometheus_url` / `collector_url` in monitor.yaml point at it.")
        return None, None
    failing.pop(endpoint(s), None)
    sources_down(samples)
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


def alerts_table(alerts: pd.DataFrame | None, only: str | None = None, key: str | None = None) -> None:
    """The alerts (``only`` those names) the most severe first: which, where, since when; their summary,
    meaning and runbook link in an expander below."""
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
    now = time.time()
    clusters = a["cluster"].dropna().nunique() > 1  # one cluster: its name would only widen every row
    began = [_epoch(v) for v in a["since"]]  # each alert's activeAt as Unix time, None without Prometheus
    a = a.assign(where=[where(r, clusters) for r in a.to_dict("records")],
                 since_text=[f"{state} for {display.elapsed(max(now - t, 0))}" if not units.missing(t)
                             else f"{state}, " + (units.unknown("no history without Prometheus")
                                                  if state == "active" else units.unknown())
                             for t, state in zip(began, a["state"])],
                 since_utc=[display.ago_utc(t, now) for t in began])  # (ago_utc says unknown for a missing t)
    show(display.as_text(a, {"severity": "Severity", "alert": "Alert", "where": "Where", "since_text": "Since"}),
         key=key)
    with st.expander("Each alert's summary, meaning and runbook"):
        st.markdown("\n".join(
            f"- **{r['alert']}** ({r['where']}), {r['state']} since {r['since_utc']}: {r['summary']}. "
            f"{r['description']} "
            f"Runbook: {display.link(r['runbook'])}"
            for r in a.to_dict("records") if isinstance(r["summary"], str)))


def _epoch(v) -> float | None:
    """An alert's ``activeAt`` (RFC 3339 from Prometheus; None from the Python evaluator) as Unix time."""
    if v is None or (isinstance(v, float) and v != v) or v == "":
        return None
    try:
        return pd.Timestamp(v).timestamp()
    except (ValueError, TypeError):
        return None


def where(r: dict, cluster: bool = True) -> str:
    """An alert's labels as a place: "group g, topic-partition, broker b, cluster c" (those it has; the
    cluster only when ``cluster``)."""
    def has(k):
        return r.get(k) is not None and r.get(k) == r.get(k) and str(r.get(k)) != ""

    parts = []
    if has("group"):
        parts.append(f"group {r['group']}")
    if has("topic"):
        parts.append(f"{r['topic']}-{r['partition']}" if has("partition") else f"topic {r['topic']}")
    if has("broker"):
        parts.append(f"broker {r['broker']}")
    if has("source"):
        parts.append(f"source {r['source']}")
    if has("log_dir"):
        parts.append(f"log dir {r['log_dir']}")
    if cluster and has("cluster"):
        parts.append(f"cluster {r['cluster']}")
    return ", ".join(parts) or "the whole monitor"


def grid(table, key: str | None = None) -> None:
    """A data grid of text cells within a 1366-pixel window: the widest columns narrowed to fit when the
    whole would not (``display.fit_widths``: a long cell ends in an ellipsis, whole when hovered), so no
    table scrolls sideways. Every page's grids go through here."""
    table = pd.DataFrame(table)
    cells = display.cell_widths(table)
    widths = display.fit_widths(display.natural_widths(table, cells), cells=cells)
    config = {c: st.column_config.TextColumn(width=w) for c, w in widths.items()} if widths else None
    st.dataframe(table, hide_index=True, width="stretch", key=key, column_config=config)


def show(table: pd.DataFrame, details: dict[str, pd.DataFrame] | None = None, key: str | None = None) -> None:
    """A table of text cells (``dashboards.display``) whose first columns say which row it is, within the
    page's width; ``details``: the rest of each row's figures, by title, each collapsed below it (the
    identifying columns repeated, so a row is found there too). The details are static tables: their cells
    wrap rather than scroll sideways, and a collapsed one is whole when opened (a data grid in a collapsed
    expander is not drawn until it opens)."""
    grid(table, key=key)
    for title, frame in (details or {}).items():
        if not frame.empty:
            with st.expander(title):
                st.table(frame, hide_index=True)


def sources_down(samples: pd.DataFrame) -> None:
    """The collector's sources whose last refresh failed (``source_up`` 0), each named with since when it
    has failed (its last success, UTC and how long ago) and its last error."""
    up = sources.metric(samples, "source_up")
    down = up[up["value"] == 0]
    if down.empty:
        return
    last = sources.metric(samples, "source_last_success_timestamp_seconds")
    errors = sources.metric(samples, "source_last_error_info")
    now = time.time()
    lines = []
    for r in down.to_dict("records"):
        ok = last[(last["source"] == r["source"]) & (last["cluster"] == r["cluster"])]["value"]
        ok = [v for v in ok if v > 0]
        since = (f"last refreshed {display.ago_utc(max(ok), now)}" if ok
                 else "not refreshed once since the collector started")
        err = errors[(errors["source"] == r["source"]) & (errors["cluster"] == r["cluster"])]
        msg = "" if err.empty or "message" not in err.columns else f": {err.iloc[0]['message']}"
        lines.append(f"- source `{r['source']}` ({r['kind']}, cluster {r['cluster']}) is down, {since}{msg}")
    st.error(f"{len(lines)} collector source(s) down:\n" + "\n".join(lines), icon=":material/error:")

"""Plotly figures for the pages: pure functions of DataFrames, testable without Streamlit.

A figure draws threshold lines it is given and colours what the alerts say (a ``lagging`` column, an
alert ``severity``); it never compares a value with a threshold itself.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from monitor.contract import units
from monitor.verdicts.accuracy import signed_bytes, signed_ratio
from monitor.contract.rules import ALERT

LAYOUT = dict(template="plotly_white", margin=dict(l=50, r=20, t=50, b=40), height=340,
              legend=dict(orientation="h", y=-0.2))


def count_axis(largest: float) -> dict:
    """An axis of counts (records, partitions, threads): whole ticks, one apart while few, never 0.5 of a record."""
    return dict(tickformat=",d", rangemode="tozero", dtick=1 if largest <= 10 else None)


MODEBAR_PX = 30  # the band at a chart's top where Plotly's buttons are drawn (Streamlit shows them always)


def _styled(fig: go.Figure, title: str) -> go.Figure:
    """The pages' chart style, the title under the buttons' band: beside them, a half-width chart's title
    ("Time since the cleaner last looked for work") ran under the buttons."""
    fig.update_layout(title=dict(text=title, y=1, yref="container", yanchor="top", pad=dict(t=MODEBAR_PX)),
                      **{**LAYOUT, "margin": {**LAYOUT["margin"], "t": LAYOUT["margin"]["t"] + MODEBAR_PX}})
    return fig


def broker_series(df: pd.DataFrame, title: str, y_title: str, threshold: float | None = None,
                  threshold_label: str = "alert threshold") -> go.Figure:
    """Lines per broker over time (Prometheus history), with the alert threshold drawn in red."""
    fig = go.Figure()
    if not df.empty:
        for broker, g in df.sort_values("time").groupby("broker"):
            fig.add_scatter(x=g["time"], y=g["value"], mode="lines", name=f"broker {broker}")
    fig.update_xaxes(**TIME_AXIS)
    if threshold is not None:
        fig.add_hline(y=threshold, line_dash="dash", line_color="#d62728", annotation_text=threshold_label,
                      annotation_position="top left")
    fig.update_yaxes(title=y_title, rangemode="tozero")
    if y_title == "threads":  # a count: whole ticks, never 0.2 of a thread
        fig.update_yaxes(**count_axis(0 if df.empty else float(df["value"].max())))
    return _styled(fig, title)


def broker_bars(df: pd.DataFrame, title: str, y_title: str, threshold: float | None = None) -> go.Figure:
    """Current value per broker (no history without Prometheus), with the threshold line."""
    fig = go.Figure()
    if not df.empty:
        fig.add_bar(x=[f"broker {b}" for b in df["broker"]], y=df["value"], marker_color="#1f77b4")
    if threshold is not None:
        fig.add_hline(y=threshold, line_dash="dash", line_color="#d62728", annotation_text="alert threshold")
    fig.update_yaxes(title=y_title, rangemode="tozero")
    if y_title == "threads":  # a count: whole ticks, never 0.2 of a thread
        fig.update_yaxes(**count_axis(0 if df.empty else float(df["value"].max())))
    return _styled(fig, title)


DARK_CELL = 0.5  # a cleanable ratio from which the heatmap's red is dark enough to need white text
HELD_COLOR = "#ff7f0e"  # held back: not clean, not cleanable either (min.compaction.lag.ms, an open transaction)


def cleanable_heatmap(table: pd.DataFrame) -> go.Figure:
    """Kafka's cleanable ratio, topic x partition; a partition CompactionLagging is raised for is marked "!".
    A partition held back from the cleaner (``blocked``) is drawn orange with "held" and its uncleaned
    ratio: its cleanable ratio is 0 although nothing of it is clean, so white would read healthy."""
    t = table.copy()
    held = t["blocked"].astype(bool) if "blocked" in t else pd.Series(False, index=t.index)
    uncleaned = t["uncleaned_ratio"] if "uncleaned_ratio" in t else pd.Series(None, index=t.index, dtype=float)
    t["cell"] = [(f"held {units.ratio(u)}" if h else units.ratio(v)) + (" !" if lag else "")
                 for v, u, h, lag in zip(t["cleanable_ratio"], uncleaned, held, t["lagging"])]
    t["held"] = [1.0 if h else None for h in held]
    grid = t.pivot_table(index="topic", columns="partition", values="cleanable_ratio", aggfunc="max", dropna=False)
    text = t.pivot_table(index="topic", columns="partition", values="cell", aggfunc="first").reindex_like(grid)
    held_grid = t.pivot_table(index="topic", columns="partition", values="held", aggfunc="max").reindex_like(grid)
    x, y = [str(c) for c in grid.columns], list(grid.index)
    scale = [[0, "#f7f7f7"], [1, "#d62728"]]
    hover = "topic %{y}<br>partition %{x}<br>cleanable ratio %{z:.2f}<extra></extra>"
    dark = grid.values >= DARK_CELL  # Plotly writes a cell's text in one colour: grey on full red did not read
    # each cell's text written by one trace only: Plotly sizes a trace's text to fit its longest, so "held 1.00"
    # under the held trace's own shrank every pale cell's "0.00" to a speck in a topic of 20 partitions
    pale = ~dark & held_grid.isna().values
    fig = go.Figure(go.Heatmap(
        z=grid.values, x=x, y=y, zmin=0, zmax=1, colorscale=scale,
        text=text.where(pale, "").fillna("").values, textfont=dict(color="#262730"),
        texttemplate="%{text}", colorbar=dict(title="cleanable ratio"), hovertemplate=hover))
    if dark.any():
        fig.add_heatmap(z=grid.where(dark).values, x=x, y=y, zmin=0, zmax=1, colorscale=scale, showscale=False,
                        text=text.where(dark, "").fillna("").values, textfont=dict(color="white"),
                        texttemplate="%{text}", hovertemplate=hover)
    if held.any():
        fig.add_heatmap(z=held_grid.values, x=x, y=y, zmin=0, zmax=1, showscale=False,
                        text=text.where(held_grid.notna(), "").fillna("").values, textfont=dict(color="#262730"),
                        texttemplate="%{text}", colorscale=[[0, HELD_COLOR], [1, HELD_COLOR]],
                        hovertemplate="topic %{y}<br>partition %{x}<br>held back from the cleaner<extra></extra>")
    fig.update_xaxes(title="partition", type="category")
    fig.update_layout(title=f"Cleanable ratio per partition (! {ALERT.CompactionLagging}, orange: held back)",
                      **{**LAYOUT, "height": max(260, 60 + 32 * len(grid.index))})
    return fig


MIN_POINTS = 3  # samples a line over time needs to show a trend; with fewer a page says so in a sentence
# Ticks a minute apart or more read hours and minutes (the date under the first, and where it changes), closer
# ones seconds: a minute of history had nine ticks all reading 21:14. Never a fraction of a second
# (03:00:59.9995: Plotly's own format for close ticks).
TIME_AXIS = dict(title="time (UTC)", tickformat="%H:%M\n%Y-%m-%d",
                 tickformatstops=[dict(dtickrange=[None, 60_000], value="%H:%M:%S\n%Y-%m-%d"),
                                  dict(dtickrange=[60_000, None], value="%H:%M\n%Y-%m-%d")])


def enough_history(df: pd.DataFrame) -> bool:
    """Whether a range query's rows (``sources.prometheus_range``) have the ``MIN_POINTS`` distinct times a line
    needs; with fewer, one dot on an axis of fractions of a second says nothing."""
    return not df.empty and "time" in df and df["time"].nunique() >= MIN_POINTS


def tombstone_history(df: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    if not df.empty:
        for topic, g in df.sort_values("time").groupby("topic"):
            fig.add_scatter(x=g["time"], y=g["value"], mode="lines", name=topic, stackgroup=None)
    fig.update_xaxes(**TIME_AXIS)
    fig.update_yaxes(title="tombstones on disk", rangemode="tozero")
    return _styled(fig, "Tombstones on disk over time, per topic")


def tombstone_bars(table: pd.DataFrame) -> go.Figure:
    """Tombstones on disk per topic, those past their delete horizon (missed) in red: a bar a topic, the most
    first (``_topic_bars``: the slanted names under vertical bars ran into the legend)."""
    t = table.groupby("topic", as_index=False)[["tombstones", "tombstones_past_delete_horizon"]].sum()
    t, cut = _topic_rows(t, "tombstones")
    fig = go.Figure()
    fig.add_bar(y=t["topic"], x=t["tombstones"] - pd.to_numeric(t["tombstones_past_delete_horizon"]).fillna(0),
                orientation="h", name="before their delete horizon")
    fig.add_bar(y=t["topic"], x=t["tombstones_past_delete_horizon"], orientation="h",
                name="past delete horizon (missed)", marker_color="#d62728")
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="tombstones", **count_axis(float(t["tombstones"].max()) if len(t) else 0))
    return _topic_bars(fig, len(t), "Tombstones on disk now, per topic" + cut)


HORIZON_COLORS = {"unstamped": "#9e9e9e", "pending": "#1f77b4", "passed": "#d62728"}


def horizon_states(table: pd.DataFrame) -> go.Figure:
    """Tombstones and markers per topic by delete-horizon state (``dashboards.tables.horizons_table``),
    stacked: grey never stamped (they go a delete.retention.ms after the next clean), blue stamped and
    waiting for their horizon, red past it (the next clean removes them; tombstones there are what
    TombstonesPastDeleteHorizon alerts on). One bar per topic and kind; a kind still unread is no bar."""
    fig = go.Figure()
    if not table.empty:
        rows = []
        for kind in ("tombstone", "marker"):
            cols = [f"{kind}s {st}" for st in HORIZON_COLORS]
            known = table.dropna(subset=cols, how="all")
            t = known.groupby("topic", as_index=False)[cols].sum()
            rows += [(f"{r['topic']} · {kind}s", st, r[f"{kind}s {st}"])
                     for _, r in t.iterrows() for st in HORIZON_COLORS]
        df = pd.DataFrame(rows, columns=["bar", "state", "records"]).sort_values("bar")
        for st, color in HORIZON_COLORS.items():
            d = df[df["state"] == st]
            fig.add_bar(y=d["bar"], x=d["records"], orientation="h", name=st, marker_color=color)
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="records", **count_axis(0 if table.empty else float(
        table[[c for c in table.columns if c.endswith(tuple(HORIZON_COLORS))]].sum(axis=1).max())))
    return _styled(fig, "Tombstones and markers by delete horizon: never stamped, stamped, past it")


SEVERITY_COLOR = {"critical": "#d62728", "warning": "#ff7f0e"}


def consumer_risk(df: pd.DataFrame, warning_fraction: float, critical_fraction: float) -> go.Figure:
    """Each group's time lag as a fraction of delete.retention.ms; 1.0 is where deletes can be missed.
    ``df`` has the alert's ``severity`` per group and partition (empty where no alert is raised)."""
    d = df.copy()
    d["label"] = d["group"] + " · " + d["topic"] + "-" + d["partition"].astype(str)
    d = d.sort_values("value", ascending=True)
    colors = [SEVERITY_COLOR.get(s, "#2ca02c") for s in d["severity"]]
    fig = go.Figure(go.Bar(x=d["value"], y=d["label"], orientation="h", marker_color=colors,
                           hovertemplate="%{y}<br>%{x:.0%} of delete.retention.ms<extra></extra>"))
    # the lines' names above the bars (inside, they were written over them), away from each other: the warning's
    # to the left of its line, delete.retention.ms's to the right of its own, however close the two lines are
    above = dict(yref="paper", y=1.0, yanchor="bottom", showarrow=False, font=dict(size=11))
    fig.add_vline(x=critical_fraction, line_color="#d62728", line_dash="dash", annotation_text="delete.retention.ms",
                  annotation=dict(above, xanchor="left"))
    fig.add_vline(x=warning_fraction, line_color="#ff7f0e", line_dash="dot",
                  annotation_text=f"warning ({warning_fraction:.0%})", annotation=dict(above, xanchor="right"))
    top = max(critical_fraction * 1.2, float(d["value"].max()) * 1.05) if not d.empty else 1.2
    fig.update_xaxes(title="time lag / delete.retention.ms", tickformat=".0%", range=[0, top])
    fig.update_layout(title="Consumer groups: time lag against delete.retention.ms",
                      **{**LAYOUT, "height": max(240, 80 + 28 * len(d))})
    return fig


def _bytes_axis(largest: float) -> tuple[float, str]:
    from dashboards.auditview import byte_scale

    return byte_scale(largest if largest == largest else 0)  # NaN (no figure): bytes


TOPICS_CHARTED = 25  # the per-topic bars: the largest this many, a row each; the table beside has them all


def _topic_rows(topics: pd.DataFrame, by: str) -> tuple[pd.DataFrame, str]:
    """The topics a per-topic bar chart draws (the ``TOPICS_CHARTED`` largest by ``by``) and what its title
    adds when that is not all of them."""
    t = topics.sort_values(by, ascending=False, kind="stable").head(TOPICS_CHARTED)
    return t, (f" (the {len(t)} largest of {len(topics)} topics)" if len(topics) > len(t) else "")


def _topic_bars(fig: go.Figure, n: int, title: str) -> go.Figure:
    """A chart with a horizontal bar per topic: the names on the y axis read across, the largest on top, and
    the chart as tall as its rows need. Slanted labels under vertical bars ran into each other past ten
    topics (53 topics in the browser test's run)."""
    fig.update_yaxes(type="category", autorange="reversed", automargin=True, title="topic")
    fig.update_layout(title=title, **{**LAYOUT, "height": max(240, 110 + 24 * n),
                                      "legend": dict(orientation="h", y=1.0, yanchor="bottom", x=0)})
    return fig


def audit_sizes(topics: pd.DataFrame) -> go.Figure:
    """Per topic: what the next clean leaves and reclaims (stacked), and the settled size (after every
    delete horizon has passed and another clean) as a mark, where the run has one; in the IEC unit the
    largest topic needs (``dashboards.auditview.byte_scale``). A bar a topic, the largest first."""
    t, cut = _topic_rows(topics, "bytes")
    div, unit = _bytes_axis(float(t["bytes"].max()) if not t.empty else 0)
    fig = go.Figure()
    fig.add_bar(y=t["topic"], x=t["next_clean_bytes"] / div, orientation="h", name="left after the next clean",
                hovertemplate="%{y}: %{x:.1f} " + unit + "<extra>left after the next clean</extra>")
    fig.add_bar(y=t["topic"], x=t["reclaimable_bytes"] / div, orientation="h", name="reclaimed by the next clean",
                marker_color="#d62728", hovertemplate="%{y}: %{x:.1f} " + unit + "<extra>reclaimed</extra>")
    if "settled_bytes" in t.columns:
        fig.add_scatter(y=t["topic"], x=t["settled_bytes"] / div, mode="markers", name="settled",
                        marker=dict(symbol="line-ns", size=18, line=dict(width=4, color="#2ca02c")),
                        hovertemplate="%{y}: %{x:.1f} " + unit + " once every delete horizon has passed and "
                                      "another clean<extra>settled</extra>")
    unknown = t[pd.to_numeric(t["next_clean_bytes"], errors="coerce").isna()]
    if not unknown.empty:  # no bar is not no bytes: said on the row (the table below says why)
        fig.add_scatter(y=unknown["topic"], x=[0] * len(unknown), mode="text", text=["unknown"] * len(unknown),
                        textposition="middle right", showlegend=False, hoverinfo="skip")
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title=f"size on disk ({unit})", tickformat=",.3~f", rangemode="tozero")
    return _topic_bars(fig, len(t), "What the next clean leaves and reclaims, and settled, per topic" + cut)


CLEAN_TIME_CHARTED_S = 1.0  # below a second a clean is no concern: the cleaner backs off 15 s between checks


def audit_clean_time(topics: pd.DataFrame) -> go.Figure:
    """Each topic's estimated cleaning time (one thread), the longest first; the page charts it when two
    or more topics take at least ``CLEAN_TIME_CHARTED_S``."""
    t, cut = _topic_rows(topics, "estimated_clean_seconds")
    fig = go.Figure(go.Bar(y=t["topic"], x=t["estimated_clean_seconds"], orientation="h", marker_color="#1f77b4",
                           hovertemplate="%{y}: %{x:,.0f} s<extra></extra>"))
    fig.update_xaxes(title="estimated cleaning time (s, one cleaner thread)", tickformat=",~f", rangemode="tozero")
    return _topic_bars(fig, len(t), "Estimated time for the cleaner to clean what is dirty now" + cut)


def whatif_points(rows: pd.DataFrame) -> list[dict]:
    """The what-if chart's points: per topic, one per distinct (steady size, cleaner bytes per day) of the
    rows whose figures are known, with every setting that lands there (``labels``, the current one first):
    settings that change nothing share a point instead of drawing their labels over each other."""
    from monitor.contract.whatif import cleaner_bytes, label

    out: dict = {}
    for r in rows.to_dict("records"):
        if r["size_bytes"] is None or pd.isna(r["size_bytes"]) or cleaner_bytes(r) is None:
            continue
        x, y = float(r["size_bytes"]), float(cleaner_bytes(r))
        p = out.setdefault((r["topic"], f"{x:.6g}", f"{y:.6g}"), {"topic": r["topic"], "x": x, "y": y, "labels": []})
        p["labels"].append(label(r["setting"], r["value"]))
    for p in out.values():
        p["labels"].sort(key=lambda lb: lb != "current")
    return list(out.values())


def whatif_topics(points: list[dict]) -> list[str]:
    """The topics of the what-if chart's points (``whatif_points``), the one whose settings' steady sizes
    spread the widest first: the page charts one topic at a time (with 53 topics on one chart their labels
    covered each other), and opens on the topic where a setting changes the most."""
    sizes: dict[str, list[float]] = {}
    for p in points:
        sizes.setdefault(p["topic"], []).append(p["x"])
    return sorted(sizes, key=lambda t: (-(max(sizes[t]) - min(sizes[t])), -len(sizes[t]), t))


def _point_label(labels: list[str]) -> str:
    return labels[0] + (f" (and {len(labels) - 1} more, same figures)" if len(labels) > 1 else "")


def _padded(values: list[float], share: float = 0.18) -> list[float]:
    lo, hi = min(values), max(values)
    pad = (hi - lo) * share or abs(hi) * share or 1
    return [lo - pad, hi + pad]


def audit_whatif(rows: pd.DataFrame) -> go.Figure:
    """The what-if table (``spark_analysis.whatif``): per topic, a point per setting at its steady size and
    the cleaner's bytes read and written per day, each point labelled with its setting (settings with the
    same figures share one, ``whatif_points``), the topic's current settings larger; axes in the IEC unit
    the figures need, padded so no label is cut. Unknown rows are left out (the page says why)."""
    from monitor.contract.whatif import CHART_TITLE, X_AXIS, Y_AXIS

    pts = whatif_points(rows)
    xdiv, xunit = _bytes_axis(max((p["x"] for p in pts), default=0))
    ydiv, yunit = _bytes_axis(max((p["y"] for p in pts), default=0))
    fig = go.Figure()
    for topic in sorted({p["topic"] for p in pts}):
        g = [p for p in pts if p["topic"] == topic]
        fig.add_scatter(x=[p["x"] / xdiv for p in g], y=[p["y"] / ydiv for p in g], mode="markers+text", name=topic,
                        text=[_point_label(p["labels"]) for p in g], textposition="top center",
                        textfont=dict(size=11), cliponaxis=False,
                        customdata=["<br>".join(p["labels"]) for p in g],
                        hovertemplate="%{customdata}<br>%{x:,.1f} " + xunit + ", %{y:,.1f} " + yunit + "/day<extra>"
                                      + topic + "</extra>",
                        marker=dict(size=[14 if "current" in p["labels"] else 8 for p in g]))
    if pts:
        fig.update_xaxes(range=_padded([p["x"] / xdiv for p in pts]))
        fig.update_yaxes(range=_padded([p["y"] / ydiv for p in pts]))
    fig.update_xaxes(title=f"{X_AXIS}, {xunit}", tickformat=",~f")  # as the contract's titles write a unit
    fig.update_yaxes(title=f"{Y_AXIS}, {yunit}/day", tickformat=",~f")
    drawn = sorted({p["topic"] for p in pts})
    one = len(drawn) == 1  # one topic (the page's choice): named under the title, clear of the chart's buttons
    fig.update_layout(title=CHART_TITLE + (f"<br><sup>{drawn[0]}</sup>" if one else ""), showlegend=not one,
                      **{**LAYOUT, "height": 440, "margin": {**LAYOUT["margin"], "t": 70 if one else 50}})
    return fig


def audit_tombstone_buckets(buckets: pd.DataFrame) -> go.Figure:
    """Tombstones on disk by when they were written (the run's buckets, UTC); the page charts it when
    there are two or more buckets."""
    fig = go.Figure()
    if not buckets.empty:
        b = buckets.copy()
        b["time"] = pd.to_datetime(b["bucket_start_ms"], unit="ms", utc=True)
        for topic, g in b.groupby("topic"):
            fig.add_scatter(x=g["time"], y=g["tombstones"], mode="lines+markers", name=topic,
                            hovertemplate="%{x|%Y-%m-%d %H:%M} UTC: %{y:,} tombstones<extra>" + topic + "</extra>")
    fig.update_xaxes(title="written (UTC)", tickformat="%Y-%m-%d %H:%M")
    fig.update_yaxes(title="tombstones", tickformat=",~f", rangemode="tozero")
    return _styled(fig, "Tombstones on disk by the time they were written")


def cause_counts(table: pd.DataFrame) -> go.Figure:
    """How many partitions have each cause (``monitor.verdicts.causes``), in the causes' precedence order."""
    from monitor.verdicts.causes import CAUSES

    counts = table["cause"].value_counts() if not table.empty else pd.Series(dtype=int)
    names = [c for c in CAUSES if c in counts.index]
    fig = go.Figure(go.Bar(x=[int(counts[c]) for c in names], y=names, orientation="h", marker_color="#1f77b4",
                           hovertemplate="%{y}: %{x} partitions<extra></extra>"))
    fig.update_xaxes(title="partitions", **count_axis(float(counts.max()) if len(counts) else 0))
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title="Why partitions are (not) compacting: partitions per cause",
                      **{**LAYOUT, "height": max(220, 80 + 30 * len(names))})
    return fig


def audit_accuracy(rows: pd.DataFrame) -> go.Figure:
    """Predicted against reclaimed bytes per partition (``monitor.verdicts.accuracy`` rows of status cleaned), the
    error (reclaimed - predicted) written over each pair of bars; in the IEC unit the figures need."""
    fig = go.Figure()
    unit = "B"
    if not rows.empty:
        div, unit = _bytes_axis(float(max(rows["predicted_bytes"].abs().max(), rows["actual_bytes"].abs().max())))
        names = [f"{t}-{p}" for t, p in zip(rows["topic"], rows["partition"])]
        fig.add_bar(x=names, y=rows["predicted_bytes"] / div, name="predicted (earlier run)", marker_color="#1f77b4")
        fig.add_bar(x=names, y=rows["actual_bytes"] / div, name="reclaimed by the broker", marker_color="#2ca02c",
                    text=[f"error {signed_bytes(e)}" + ("" if pd.isna(r) else f" ({signed_ratio(r)})")
                          for e, r in zip(rows["error_bytes"], rows["error_ratio"])],
                    textposition="outside")
        fig.update_layout(barmode="group")
    fig.update_xaxes(title="partition (topic-partition)", type="category")
    fig.update_yaxes(title=f"bytes ({unit})", tickformat=",~f")
    return _styled(fig, "Prediction against what the broker reclaimed, per partition")

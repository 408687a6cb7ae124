"""The audit's self-contained HTML report: plotly charts with plotly.js inlined once, so the file
opens from a mail or a CI artefact store with no network."""

from __future__ import annotations

import datetime as dt
import html

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from monitor.model.horizon import STATES


def _mb(v: float) -> str:
    return f"{v / (1 << 20):,.1f} MiB"


def _dur(s: float) -> str:
    if s < 120:
        return f"{s:,.1f} s"
    if s < 7200:
        return f"{s / 60:,.1f} min"
    return f"{s / 3600:,.1f} h"


def _fig_html(fig) -> str:
    fig.update_layout(template="plotly_white", margin=dict(l=60, r=20, t=50, b=60), height=380)
    return pio.to_html(fig, full_html=False, include_plotlyjs=False)


def figures(topics: list[dict], buckets: list[dict]) -> list:
    figs = []
    top = sorted(topics, key=lambda t: -t["bytes"])[:25]
    names = [t["topic"] for t in top]
    fig = go.Figure()
    fig.add_bar(name="left after the next clean", x=names, y=[(t["next_clean_bytes"] or 0) / (1 << 20) for t in top])
    fig.add_bar(name="reclaimed by the next clean", x=names, y=[(t["reclaimable_bytes"] or 0) / (1 << 20) for t in top])
    fig.add_scatter(name=f"settled ({SETTLED})", x=names, mode="markers", marker=dict(symbol="line-ew-open", size=24),
                    y=[None if t.get("settled_bytes") is None else t["settled_bytes"] / (1 << 20) for t in top])
    fig.update_layout(barmode="stack", title="Size per topic: what the next clean leaves and reclaims, and settled",
                      yaxis_title="MiB")
    figs.append(fig)
    est = sorted(topics, key=lambda t: -(t["estimated_clean_seconds"] or 0))[:25]
    fig = go.Figure(go.Bar(x=[t["topic"] for t in est], y=[t["estimated_clean_seconds"] for t in est],
                           marker_color="#d62728"))
    fig.update_layout(title="Estimated time for the cleaner to clean the dirty section", yaxis_title="seconds")
    figs.append(fig)
    if buckets:
        fig = go.Figure()
        by_topic: dict[str, list] = {}
        for b in buckets:
            by_topic.setdefault(b["topic"], []).append(b)
        for topic, rows in sorted(by_topic.items(), key=lambda kv: -sum(r["tombstones"] for r in kv[1]))[:10]:
            xs = [dt.datetime.fromtimestamp(r["bucket_start_ms"] / 1000, dt.timezone.utc) for r in rows]
            fig.add_scatter(x=xs, y=[r["tombstones"] for r in rows], mode="lines+markers", name=topic)
        fig.update_layout(title="Tombstones on disk by the time they were written", yaxis_title="tombstones")
        figs.append(fig)
    return figs


NEXT_CLEAN = "what the broker's cleaner leaves if it cleans the partition now"
SETTLED = "after every delete horizon has passed and another clean"


def _size(v) -> str:
    return "unknown" if v is None else _bytes(v)


def projection_html(summary: dict) -> str:
    """The two projections, which is which, how they were found, what was left out; tombstones and
    markers by their delete horizon's state (``monitor.model.horizon``) and the next removal."""
    if "next_clean_bytes" not in summary:
        return "<p>Not in this run (an audit from before issue 32: its projected size was estimated).</p>"
    method = summary.get("projection_method") or "none"
    how = {"counted": "counted: Kafka's cleaner run over the segments, each batch it keeps re-encoded as "
                      "MemoryRecords.filterTo writes it",
           "estimated": "estimated from the records' byte shares: a dump or a topic has no batch bytes to "
                        "re-encode; the settled size is not counted"}.get(method, method)
    left = [f"{summary[k]} partition(s) left out of the {what} total (unknown, see the partitions table)"
            for k, what in (("next_clean_unknown_partitions", "next-clean"), ("settled_unknown_partitions", "settled"))
            if summary.get(k)]
    when = summary.get("next_removable_ms")
    counted = any(summary.get(f"{kind}s_{st}") is not None for kind in ("tombstone", "marker") for st in STATES)
    when = ("at " + dt.datetime.fromtimestamp(when / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
            if when is not None else "never: none is left" if counted else "unknown")

    def counts(kind: str) -> str:
        got = [(st, summary.get(f"{kind}s_{st}")) for st in STATES]
        return ", ".join(f"{'unknown' if v is None else format(v, ',')} {st}" for st, v in got)

    return (f"<p>After the next clean: {html.escape(_size(summary['next_clean_bytes']))} ({html.escape(NEXT_CLEAN)}). "
            f"Settled: {html.escape(_size(summary.get('settled_bytes')))} ({html.escape(SETTLED)}). "
            f"Method: {html.escape(how)}." + "".join(f" {html.escape(x)}." for x in left) + "</p>"
            f"<p>Delete horizons (KIP-534): tombstones {counts('tombstone')}; transaction markers {counts('marker')}. "
            "Unstamped: the next clean stamps them, they go one delete.retention.ms later; pending: stamped, the "
            "horizon ahead; passed: the next clean removes them. The next become removable "
            f"{html.escape(when)}.</p>")


def _table(rows: list[dict], cols: list[tuple[str, str]], fmt: dict | None = None) -> str:
    fmt = fmt or {}
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in cols)
    body = []
    for r in rows:
        cells = []
        for key, _ in cols:
            v = r.get(key)
            v = fmt[key](v) if key in fmt and v is not None else v
            cells.append(f"<td>{html.escape(str(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def replicas_html(summary: dict, replicas: list[dict]) -> str:
    """What the totals count, and the replicas of partitions found in several log dirs, those that
    disagree with the audited one first (``spark_analysis.replicas`` says what is flagged)."""
    r = summary.get("replicas") or {}
    if not r:
        return ""
    head = (f"<p>Totals count {html.escape(r['totals_count'])}; every replica read holds "
            f"{_mb(r['bytes_all_replicas'])} on disk.</p>")
    if not replicas:
        return "<h2>Replicas</h2>" + head
    rows = sorted(replicas, key=lambda x: (not x["disagreement"], x["topic"], x["partition"], x["log_dir"]))
    return (f"<h2>Replicas</h2>{head}<p>{r['partitions_with_replicas']} partition(s) found in several log dirs "
            f"({r['replicas_of_those']} replicas), each audited once: {html.escape(r['choice'])}. "
            f"{r['disagreeing']} replica(s) disagree with the audited one.</p>"
            + _table(rows, [("topic", "topic"), ("partition", "partition"), ("log_dir", "log dir"),
                            ("broker", "broker"), ("audited", "audited"), ("chosen_by", "chosen by"),
                            ("log_end_offset", "log end offset"), ("log_start_offset", "log start offset"),
                            ("bytes", "size"), ("segments", "segments"), ("cleaner_checkpoint", "cleaner checkpoint"),
                            ("first_dirty_offset", "first dirty offset"), ("offsets_behind", "offsets behind"),
                            ("disagreement", "disagreement")], {"bytes": _mb}))


def _config_note(summary: dict) -> str:
    """Which topics' configs are unknown (the admin API asked and did not tell) and why: their figures
    that depend on the config are shown as unknown and left out of the totals (``monitor.contract.auditrun``)."""
    from monitor.contract.auditrun import CONFIG_UNKNOWN_NOTE, unknown_configs

    unknown = unknown_configs(summary)
    if not unknown:
        return ""
    items = "".join(f"<li>{html.escape(t)}: {html.escape(why)}</li>" for t, why in unknown.items())
    return f"<p>Topic config unknown for {len(unknown)} topic(s): {CONFIG_UNKNOWN_NOTE} above.</p><ul>{items}</ul>"


ACCURACY_TITLE = "Prediction against what the broker reclaimed"
NO_EARLIER = ("No earlier complete run in this output location to compare with: audit into the same --out again "
              "after the cleaner has run to see this run's prediction against what the broker reclaimed.")
ACCURACY_COLUMNS = [("topic", "topic"), ("partition", "partition"), ("status", "status"),
                    ("predicted_bytes", "predicted"), ("bytes_before", "size before"), ("bytes_after", "size after"),
                    ("actual_bytes", "reclaimed"), ("error_bytes", "error"), ("error_ratio", "relative error"),
                    ("detail", "detail")]


def _bytes(v: float) -> str:
    return f"{v:,.0f} B" if abs(v) < 2**20 else _mb(v)


def accuracy_html(run: str, partitions: list[dict], earlier) -> str:
    """This run against the output location's earlier complete run (``spark_analysis.earlier``), compared
    by ``monitor.verdicts.accuracy`` as the Audit page compares them: the earlier run's reclaimable bytes (the
    prediction) against its partitions' size then less their size now (what the broker reclaimed)."""
    from monitor.verdicts.accuracy import CLEANED, charted, compare_runs, signed_bytes, signed_ratio, totals

    head = f"<h2>{ACCURACY_TITLE}</h2>"
    if earlier is None:
        return f"{head}<p>{html.escape(NO_EARLIER, quote=False)}</p>"
    if earlier.partitions is None:
        return f"{head}<p>No comparison: {html.escape(earlier.error or '')}.</p>"
    found = compare_runs(earlier.partitions, partitions)
    tot = totals(found)
    rows = sorted((r.as_dict() for r in found),
                  key=lambda r: (r["status"] != CLEANED, -(r["predicted_bytes"] or 0), r["topic"], r["partition"]))
    left = ", ".join(f"{n} {status}" for status, n in sorted(tot.left_out.items()))
    ratio = "unknown" if tot.error_ratio is None else signed_ratio(tot.error_ratio)
    text = (f"<p>Run {html.escape(earlier.run)} predicted {_bytes(tot.predicted_bytes)} reclaimable in the "
            f"{tot.partitions} partition(s) the cleaner has been over since; the broker reclaimed "
            f"{_bytes(tot.actual_bytes)}: error {signed_bytes(tot.error_bytes)} ({ratio})"
            + (f"; left out: {html.escape(left)}" if left else "") + ". Reclaimed: the partition's size in "
            f"{html.escape(earlier.run)} less its size in {html.escape(run)}; error: reclaimed - predicted.</p>")
    chart = ""
    shown = [r for r in rows if charted(r)]
    if shown:
        names = [f"{r['topic']}-{r['partition']}" for r in shown]
        fig = go.Figure()
        fig.add_bar(x=names, y=[r["predicted_bytes"] / (1 << 20) for r in shown], name="predicted (earlier run)",
                    marker_color="#1f77b4")
        fig.add_bar(x=names, y=[r["actual_bytes"] / (1 << 20) for r in shown], name="reclaimed by the broker",
                    marker_color="#2ca02c", textposition="outside",
                    text=[f"error {signed_bytes(r['error_bytes'])}"
                          + ("" if r["error_ratio"] is None else f" ({signed_ratio(r['error_ratio'])})") for r in shown])
        fig.update_layout(barmode="group", title=f"{ACCURACY_TITLE}, per partition", yaxis_title="MiB")
        fig.update_xaxes(title="topic-partition", type="category")
        chart = f'<div class="chart">{_fig_html(fig)}</div>'
    more = f"<p>The first 100 of {len(rows)} partitions.</p>" if len(rows) > 100 else ""
    table = _table(rows[:100], ACCURACY_COLUMNS, {
        **{k: _bytes for k in ("predicted_bytes", "bytes_before", "bytes_after", "actual_bytes")},
        "error_bytes": signed_bytes, "error_ratio": signed_ratio})
    return head + text + chart + more + table.replace("<td>None</td>", "<td>-</td>")


def decompressed_limit_html(summary: dict) -> str:
    """Kafka 4.4's max.decompressed.message.bytes against the largest stored records (summary.json's
    ``decompressed_limit``, present only where a topic sets a cap or its value is unknown): the partitions
    whose next clean fails, in the collector's words, and those unknown, with why. Empty without it."""
    d = summary.get("decompressed_limit")
    if not d:
        return ""
    rows = [{"partition": f"{r['topic']}-{r['partition']}",
             "largest": "unknown" if r["max_decompressed_record_bytes"] is None else f"{r['max_decompressed_record_bytes']:,} B",
             "limit": "unknown" if r["max_decompressed_message_bytes"] is None else f"{r['max_decompressed_message_bytes']:,} B",
             "says": r["summary"] or (f"unknown: {r['unknown_reason']}" if r["unknown_reason"] else "fits"),
             "fix": r["fix"] or ""}
            for r in d["partitions"] if r["over"] or r["unknown_reason"]]
    head = (f"<h2>max.decompressed.message.bytes (Kafka 4.4)</h2><p>{len(d['partitions'])} partition(s) of topics "
            f"that set it: {d['over']} with a stored record above it (check {html.escape(d['check'])}; once the "
            f"cleaner fails, the cause {html.escape(d['cause'])}), {d['unknown']} unknown.</p>")
    return head + (_table(rows, [("partition", "partition"), ("largest", "largest record"), ("limit", "limit"),
                                 ("says", "finding"), ("fix", "fix")]) if rows else "")


def render_report(summary: dict, topics: list[dict], partitions: list[dict], buckets: list[dict],
                  top_keys: list[dict], replicas: list[dict] | None = None, earlier=None,
                  whatif: list[dict] | None = None) -> str:
    """The report of one run; ``earlier``: the output location's earlier complete run
    (``spark_analysis.earlier.EarlierRun``, None when there is none), for the accuracy section;
    ``whatif``: the what-if table's rows (``spark_analysis.whatif``; None: a run from before it)."""
    when = dt.datetime.fromtimestamp(summary["generated_at_ms"] / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cards = [
        ("Data scanned", _mb(summary["bytes"])),
        ("Reclaimable by the next clean", _mb(summary["reclaimable_bytes"])),
        (f"After the next clean ({summary.get('projection_method') or 'unknown'})",
         _size(summary.get("next_clean_bytes"))),
        ("Settled (every delete horizon passed, cleaned again)", _size(summary.get("settled_bytes"))),
        ("Dirty (cleanable) now", _mb(summary["cleanable_bytes"])),
        ("Estimated cleaning time (one thread, summed)", _dur(summary["estimated_clean_seconds"])),
        ("Wall clock, busiest broker", _dur(summary.get("estimated_wall_clock_seconds", 0.0))),
        ("Tombstones", f"{summary['tombstones']:,}"),
        ("Tombstones past delete.retention.ms", f"{summary['tombstones_past_retention']:,}"),
        ("Corrupt or unreadable spots", f"{summary['faults']:,}"),
        ("Empty-string values (no tombstones)", f"{summary.get('empty_value_records', 0):,}"),
        ("Keys in several partitions", f"{summary.get('keys_in_several_partitions', 0):,}"),
        ("Deleted by retention (compact,delete)", _mb(summary.get("retention_deleted_bytes", 0))),
    ]
    card_html = "".join(f'<div class="card"><div class="v">{html.escape(v)}</div><div class="l">{html.escape(k)}</div></div>'
                        for k, v in cards)
    charts = "".join(f'<div class="chart">{_fig_html(f)}</div>' for f in figures(topics, buckets))
    worst = sorted(partitions, key=lambda p: -(p["reclaimable_bytes"] or 0))[:30]
    part_table = _table(worst, [("topic", "topic"), ("partition", "partition"), ("bytes", "size"),
                                ("reclaimable_bytes", "reclaimable"), ("next_clean_bytes", "after the next clean"),
                                ("settled_bytes", "settled"), ("projection_method", "method"),
                                ("cleanable_ratio", "dirty ratio"),
                                ("cleaner_passes", "passes"), ("estimated_clean_seconds", "est. clean"),
                                ("tombstones", "tombstones"), ("tombstones_past_retention", "past retention"),
                                ("config_source", "config from")],
                        {"bytes": _mb, "reclaimable_bytes": _mb, "next_clean_bytes": _mb, "settled_bytes": _mb,
                         "cleanable_ratio": lambda v: f"{v:.2f}",
                         "estimated_clean_seconds": _dur}).replace("<td>None</td>", "<td>unknown</td>")
    part_table = _config_note(summary) + part_table
    streams = [t for t in topics if t.get("streams_role")]
    streams_html = ("<h2>Kafka Streams internal topics (by name)</h2>" + _table(
        streams, [("topic", "topic"), ("streams_role", "role"), ("partitions", "partitions"), ("bytes", "size"),
                  ("next_clean_bytes", "after the next clean"), ("settled_bytes", "settled")],
        {"bytes": _mb, "next_clean_bytes": _mb, "settled_bytes": _mb}).replace("<td>None</td>", "<td>unknown</td>")
        if streams else "")
    restore_html = _restore(topics, summary)
    keys = [{**k, "key": _key_text(k.get("key"))} for k in top_keys[:40]]
    key_table = _table(keys, [("topic", "topic"), ("key", "key"), ("updates", "updates"),
                              ("tombstones", "tombstones"), ("obsolete_bytes", "obsolete bytes")],
                       {"obsolete_bytes": _mb})
    pitfall_html = _pitfalls(topics, summary)
    faults = summary.get("fault_list") or []
    fault_html = (_table(faults, [("file", "file"), ("position", "byte"), ("kind", "kind"), ("reason", "reason")])
                  if faults else "<p>None: every batch read was valid.</p>")
    c = summary["cleaner"]
    broker_html = _table([{**b, "broker": "(the run's model)" if b["broker"] is None else b["broker"],
                           "threads": f"{b['threads']} ({b['sources'].get('log.cleaner.threads', 'default')})",
                           "keys_per_pass": f"{b['keys_per_pass']:,} (buffer "
                                            f"{b['sources'].get('log.cleaner.dedupe.buffer.size', 'default')}, "
                                            f"load factor {b['sources'].get('log.cleaner.io.buffer.load.factor', 'default')})",
                           "io_max_bytes_per_second": ("none" if b["io_max_bytes_per_second"] is None else
                                                       f"{b['io_max_bytes_per_second']:,.0f} B/s") +
                           f" ({b['sources'].get('log.cleaner.io.max.bytes.per.second', 'default')})"}
                          for b in summary.get("brokers", [])],
                         [("broker", "broker"), ("partitions", "partitions"), ("threads", "log.cleaner.threads"),
                          ("keys_per_pass", "keys per pass"), ("io_max_bytes_per_second", "throttle"),
                          ("summed_seconds", "summed"), ("wall_clock_seconds", "wall clock"), ("basis", "how")],
                         {"summed_seconds": _dur, "wall_clock_seconds": _dur})
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Kafka compaction audit {html.escape(when)}</title>
<script>{get_plotlyjs()}</script>
<style>
body{{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222}}
h1{{margin-bottom:4px}} .sub{{color:#666;margin-bottom:18px}}
.cards{{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:18px}}
.card{{border:1px solid #ddd;border-radius:8px;padding:12px 16px;min-width:170px}}
.card .v{{font-size:22px;font-weight:600}} .card .l{{color:#666;font-size:13px}}
.chart{{border:1px solid #eee;border-radius:8px;margin-bottom:16px}}
table{{border-collapse:collapse;font-size:13px;margin-bottom:18px}}
td,th{{border-bottom:1px solid #eee;padding:4px 10px;text-align:left}}
</style></head><body>
<h1>Kafka compaction audit</h1>
<div class="sub">{html.escape(when)} &middot; input: {html.escape(summary['input_kind'])} &middot;
{summary['topics']} topics, {summary['partitions']} partitions, {summary['records']:,} records &middot;
cleaner model: {c['threads']} thread(s), {c['keys_per_pass']:,} keys per pass,
{c['throughput_bytes_per_second'] / (1 << 20):.1f} MiB/s ({html.escape(c['throughput_source'])})</div>
<div class="cards">{card_html}</div>
{f'<p>{summary["vanished_segments"]} segment(s) were replaced by the broker while the audit read a live log dir; '
 'audit a copy for exact figures.</p>' if summary.get("vanished_segments") else ''}
<h2>What the next clean leaves, and settled</h2>{projection_html(summary)}
{charts}
{accuracy_html(summary.get("run", "this run"), partitions, earlier)}
<h2>Cleaning time per broker</h2>
<p>Each broker cleans its own replicas with its own settings (values from flags, the admin API, the config file
or Kafka's defaults, as marked). The wall clock schedules the cleans longest first over the broker's
log.cleaner.threads, and is never below the bytes read over log.cleaner.io.max.bytes.per.second (one throttle
for all threads).</p>{broker_html}
<h2>Partitions with the most to reclaim</h2>{part_table}
{streams_html}
{decompressed_limit_html(summary)}
<h2>Restore time per compacted topic</h2>{restore_html}
<h2>What if: other cleaner settings per compacted topic</h2>{whatif_html(whatif)}
<h2>Most updated keys</h2>{key_table}
<h2>Producer pitfalls</h2>{pitfall_html}
{replicas_html(summary, replicas or [])}
<h2>Corrupt or truncated input</h2>{fault_html}
</body></html>"""


WHATIF_TOPICS = 25  # the largest topics shown (the Parquet table has every one)


def whatif_chart(rows: list[dict]):
    """Size against the cleaner's bytes per day, one trace per topic, a point per setting (the current one
    larger); None when no row is known."""
    from monitor.contract.whatif import CHART_TITLE, X_TITLE, Y_TITLE, cleaner_bytes, label

    known = [r for r in rows if r.get("size_bytes") is not None and cleaner_bytes(r) is not None]
    if not known:
        return None
    fig = go.Figure()
    by_topic: dict[str, list] = {}
    for r in known:
        by_topic.setdefault(r["topic"], []).append(r)
    for topic, mine in by_topic.items():
        fig.add_scatter(name=topic, mode="markers", x=[r["size_bytes"] / (1 << 20) for r in mine],
                        y=[cleaner_bytes(r) / (1 << 20) for r in mine],
                        text=[label(r["setting"], r["value"]) for r in mine], hovertemplate="%{text}",
                        marker=dict(size=[14 if r["setting"] == "current" else 8 for r in mine]))
    fig.update_layout(title=CHART_TITLE, xaxis_title=X_TITLE, yaxis_title=Y_TITLE)
    return fig


def whatif_html(rows: list[dict] | None) -> str:
    """The what-if section: how the grid is chosen, the assumptions, a chart and a table (``spark_analysis.whatif``)."""
    from monitor.contract import units
    from monitor.contract.whatif import ASSUMPTIONS, GRID_TEXT, label

    if rows is None:
        return "<p>Not in this run (an audit from before the what-if table).</p>"
    if not rows:
        return "<p>No compacted topic in this run.</p>"
    sizes: dict = {}
    for r in rows:
        if r["setting"] == "current":
            sizes[r["topic"]] = r["size_bytes"] or 0
    shown = set(sorted(sizes, key=lambda t: -sizes[t])[:WHATIF_TOPICS])
    mine = [r for r in rows if r["topic"] in shown]
    fig = whatif_chart(mine)
    chart = f'<div class="chart">{_fig_html(fig)}</div>' if fig is not None else ""
    day = lambda v: units.bytes_iec(v) + "/day"  # noqa: E731
    table = _table([{**r, "setting": label(r["setting"], r["value"]),
                     "unknown_reason": r["unknown_reason"] or ""} for r in mine],
                   [("topic", "topic"), ("setting", "setting"), ("size_bytes", "steady size"),
                    ("peak_bytes", "peak"), ("cleans_per_day", "cleans/day"), ("read_bytes_per_day", "cleaner reads"),
                    ("written_bytes_per_day", "cleaner writes"), ("write_bytes_per_second", "write rate"),
                    ("unknown_reason", "unknown because")],
                   {"size_bytes": units.bytes_iec, "peak_bytes": units.bytes_iec,
                    "cleans_per_day": lambda v: f"{v:,.1f}", "read_bytes_per_day": day, "written_bytes_per_day": day,
                    "write_bytes_per_second": units.rate}).replace("<td>None</td>", "<td>unknown</td>")
    more = (f"<p>The {WHATIF_TOPICS} largest of {len(sizes)} compacted topics; the whatif table has every one.</p>"
            if len(sizes) > WHATIF_TOPICS else "")
    return f"<p>{html.escape(GRID_TEXT)} {html.escape(ASSUMPTIONS)}</p>{chart}{more}{table}"


PITFALL_COLUMNS = [("topic", "topic"), ("empty_value_records", "empty-string values"),
                   ("keys_last_empty_value", "keys left with an empty value"),
                   ("keys_in_several_partitions", "keys in several partitions"), ("keyless_records", "records without a key"),
                   ("value_bytes_p50", "value p50"), ("value_bytes_p90", "value p90"), ("value_bytes_p99", "value p99"),
                   ("value_bytes_max", "value max")]


def _pitfalls(topics: list[dict], summary: dict) -> str:
    """Per topic: the producer mistakes compaction never repairs (``audit.pitfalls``) and the value sizes."""
    if not topics or "empty_value_records" not in topics[0]:
        return "<p>Not in this run (an audit from before issue 16).</p>"
    size = lambda v: f"{v:,.0f} B"  # noqa: E731
    table = _table(sorted(topics, key=lambda t: (-(t["empty_value_records"] + t["keys_in_several_partitions"]
                                                   + t["keyless_records"]), t["topic"]))[:50],
                   PITFALL_COLUMNS, {k: size for k, _ in PITFALL_COLUMNS if k.startswith("value_bytes")})
    return ("<p>An empty string is no tombstone: the cleaner keeps it as the key's value for ever (send null to "
            "delete). A key in several partitions keeps one value in each: compaction never merges partitions. "
            "Records without a key cannot be compacted. Value sizes: "
            f"{html.escape(summary.get('value_size_method', ''))}.</p>" + table)


def _restore(topics: list[dict], summary: dict) -> str:
    """Each compacted topic's restore time (``monitor.verdicts.restore``), changelogs first; unknown with the reason."""
    from monitor.verdicts.restore import EXPLAIN, restore_order

    if "restore_throughput_source" not in summary:
        return "<p>Not in this run (an audit from before the restore estimate).</p>"
    bps = summary["restore_throughput_bytes_per_second"]
    basis = (f"Throughput: {bps:,.0f} B/s ({bps / (1 << 20):,.2f} MiB/s, "
             f"{html.escape(summary['restore_throughput_source'])})."
             if bps is not None else
             f"Unknown: {html.escape(summary.get('restore_unknown_reason') or '')}. Give --restore-throughput, "
             "restore_throughput_bytes_per_second in monitor.yaml, or run ./dev bench restore.")
    rows = [{**t, "streams_role": t.get("streams_role") or "-"} for t in restore_order(topics)[:50]]
    return (f"<p>{html.escape(EXPLAIN)} {basis}</p>" + _table(
        rows, [("topic", "topic"), ("streams_role", "Streams role"), ("next_clean_bytes", "after the next clean"),
               ("restore_seconds", "restore time")],
        {"next_clean_bytes": _mb, "restore_seconds": _dur}).replace("<td>None</td>", "<td>unknown</td>"))


def _key_text(key) -> str:
    """A key by the one display rule (``monitor.fileio.excerpt.escaped``), as the dashboard and ``inspect``
    show it; ``(null)`` for none."""
    from monitor.fileio.excerpt import escaped

    return "(null)" if key is None else escaped(bytes(key), 80)

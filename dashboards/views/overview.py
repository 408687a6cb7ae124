"""Overview: what is wrong, where, and what to do, first; then the alerts and the cluster at a glance.

The partitions that need attention are grouped by their cause (``monitor.verdicts.causes``, in its precedence:
the most urgent first), each group with its fix and its runbook link (``dashboards.attention``). Every count
in the tiles is followed by the partitions, groups, brokers or sources it counts, so a number is never
alone on the page. The counts come from the alerts (Prometheus', or the rule table evaluated on the
collector's samples), not from thresholds of its own."""

import streamlit as st

from dashboards import alertrows, attention, display, sources, tables, ui
from monitor.contract import units
from monitor.contract.rules import ALERT

s = ui.settings()
ui.header("Compaction health", s, "What is wrong, where, and what to do about it.")
samples, alerts = ui.load(s)
if samples is not None:
    table = tables.partitions_table(samples, alerts)
    no_alerts = units.unknown("alerts unavailable")

    def alerted(name: str, keys: list[str]) -> list[str] | None:
        """What alert ``name`` fires for, named; None when the alerts cannot be read."""
        if alerts is None:
            return None
        rows = alertrows.alerting(alerts, name, keys)
        if "partition" in keys:
            return attention.partition_names(rows)
        return [str(v) for v in rows[keys[-1]]]

    lagging = alerted(ALERT.CompactionLagging, tables.PARTITION)
    overdue = alerted(ALERT.CompactionOverdue, tables.PARTITION)
    at_risk = alerted(ALERT.ConsumerMayMissTombstones, ["cluster", "group"])
    held = table[table["blocked"].astype(bool)] if not table.empty else table
    held_names = [f"{n} ({b})" for n, b in zip(attention.partition_names(held), held["blocked"])]
    def per_broker(name: str):
        """A broker gauge summed per broker (a broker's log dirs each have a series), the brokers above 0."""
        m = sources.metric(samples, name)
        m = m.groupby(["cluster", "broker"], as_index=False)["value"].sum() if not m.empty else m
        return m[m["value"] > 0]

    unclean = per_broker("broker_uncleanable_partitions")
    dead = per_broker("broker_cleaner_dead_threads")
    up = sources.metric(samples, "source_up")
    down = up[up["value"] == 0]
    tiles = [  # label, count, what it counts (named), help
        ("Lagging", lagging, f"{ALERT.CompactionLagging}: Kafka's cleanable ratio has stayed above "
                                        "min.cleanable.dirty.ratio"),
        ("Overdue", overdue, f"{ALERT.CompactionOverdue}: partitions past max.compaction.lag.ms"),
        ("Held back", held_names, "partitions whose uncleaned bytes min.compaction.lag.ms or an open transaction "
                                  "hold back from the cleaner: not healthy, not lagging either"),
        ("Uncleanable", [f"broker {b}: {units.count(v)}" for b, v in zip(unclean["broker"], unclean["value"])],
         "partitions the cleaner gave up on after an error, per broker"),
        ("Dead threads", [f"broker {b}: {units.count(v)}" for b, v in zip(dead["broker"], dead["value"])],
         "log cleaner threads that died, per broker"),
        ("Groups at risk", at_risk, f"{ALERT.ConsumerMayMissTombstones}: groups lagging a fraction of "
                                    "delete.retention.ms or more"),
        ("Sources down", [str(v) for v in down["source"]], "collector sources whose last refresh failed"),
    ]
    c = st.columns(len(tiles))
    for col, (label, names, help_) in zip(c, tiles):
        if label in ("Uncleanable", "Dead threads"):  # counted per broker: the sum, not the brokers
            value = units.count(sum((unclean if label == "Uncleanable" else dead)["value"]))
        else:
            value = no_alerts if names is None else units.count(len(names))
        col.metric(label, value, help=help_)
    named = [f"**{label}**: {attention.named(names)}" for label, names, _ in tiles if names]
    if named:
        st.markdown("  \n".join(named))

    st.subheader("What needs attention, by cause")
    if not ui.no_compacted_topics(samples):
        groups = attention.by_cause(table, s.thresholds)
        # what needs attention now: a cause whose alert fires; past a limit with the alert still pending: below
        urgent = [g for g in groups if g.attention and attention.alerting(g, alerts, alertrows.FIRING)]
        pending = [g for g in groups if g.attention and not attention.alerting(g, alerts, alertrows.FIRING)]
        loud = alerts[alerts["state"].isin(alertrows.FIRING) & alerts["severity"].isin(["critical", "warning"])] \
            if alerts is not None else None
        if not urgent and loud is not None and not loud.empty:  # the partitions are fine, something else is not
            said = sorted({f"{r['alert']} ({r['severity']}) on {ui.where(r, False)}" for r in loud.to_dict("records")})
            st.warning(f"No partition's compaction needs attention, but {units.count(len(loud))} alert(s) fire: "
                       f"{attention.named(said, 4)}. See the alerts below.", icon=":material/warning:")
        elif not urgent and pending:
            st.success("No alert fires on any partition: "
                       f"{units.count(sum(len(g.partitions) for g in pending))} partition(s) are past a limit, "
                       "their alert pending (it fires if that lasts its window): below.",
                       icon=":material/check_circle:")
        elif not urgent:
            st.success("No partition needs attention: every one is clean or held back as configured.",
                       icon=":material/check_circle:")

        def cause_box(g, alerting: bool = True) -> None:
            box = st.error if alerting and g.attention and g.cause in attention.CAUSE_ALERT else (
                st.warning if g.attention else st.info)
            fixes = g.fixes
            if len(fixes) == 1:
                fix = f"Fix: `{fixes[0][0]}`"
            else:
                fix = "Fix:\n" + "\n".join(f"- {attention.named(list(p), 6)}: `{f}`" for f, p in fixes)
            head = (f"**{g.cause}** on {units.count(len(g.partitions))} partition(s): "
                    f"{attention.named(list(g.partitions))}")
            kind = "" if g.attention else " (Kafka's configured behaviour: nothing to do unless it is not intended)"
            box(f"{head}{kind}  \nWhy this cause: {g.why}.  \n{fix}  \nRunbook: {display.link(g.runbook)}")

        for g in urgent:
            cause_box(g)
        if pending:
            n = sum(len(g.partitions) for g in pending)
            with st.expander(f"{units.count(n)} partition(s) past a limit, their alert pending"):
                for g in pending:
                    cause_box(g, alerting=False)
        calm = [g for g in groups if not g.attention]
        if calm:  # configured behaviour: there to look up, not to read first
            n = sum(len(g.partitions) for g in calm)
            with st.expander(f"{units.count(n)} partition(s) waiting as configured, by cause"):
                for g in calm:
                    cause_box(g)

    firing = 0 if alerts is None else int((alerts["state"].isin(alertrows.FIRING)).sum())
    pending = 0 if alerts is None else int((alerts["state"] == "pending").sum())
    st.subheader(f"Alerts: {firing} firing, {pending} pending")
    ui.alerts_table(alerts, key="overview.alerts")
    if not table.empty:
        from dashboards.figures import cleanable_heatmap

        st.plotly_chart(cleanable_heatmap(table), width="stretch", key="overview.heatmap")
ui.auto_refresh()

"""The overview's grouping (dashboards.attention): causes in their precedence, each with the runbook link its alert
rule carries (one definition of a link), and the troubleshooting page's anchor for a cause no alert covers."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from dashboards import attention, figures
from monitor.contract.rules import RULES
from monitor.settings.config import Thresholds
from monitor.verdicts.causes import CAUSES

ROOT = Path(__file__).resolve().parents[2]


def test_a_causes_link_is_its_alert_rules_runbook_link():
    t = Thresholds(runbook_base="https://wiki.example/runbook")
    assert set(attention.CAUSE_ALERT) <= set(CAUSES)
    for cause, alert in attention.CAUSE_ALERT.items():
        rule = next(r for r in RULES if r.alert == alert)
        link = attention.runbook(cause, t)
        assert link == rule.annotations(t)["runbook"] == f"https://wiki.example/runbook#{alert.lower()}"


def test_a_cause_without_an_alert_links_the_troubleshooting_causes_table():
    path, anchor = attention.CAUSES_PAGE.split("#")
    headings = re.findall(r"^## (.+)$", (ROOT / path).read_text(), re.M)
    slugs = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
    assert anchor in slugs
    assert attention.runbook("min_compaction_lag", Thresholds()) == attention.CAUSES_PAGE


def test_groups_follow_the_causes_precedence_and_share_a_fix_by_its_text():
    table = pd.DataFrame({"topic": ["b", "a", "a", "c"], "partition": [0, 1, 0, 0],
                          "cause": ["waiting", "waiting", "waiting", "clean"],
                          "fix": ["fix b", "fix a", "fix a", "nothing"]})
    table.loc[len(table)] = ["d", 3, "cleaner_dead", "restart"]
    groups = attention.by_cause(table, Thresholds())
    assert [g.cause for g in groups] == ["cleaner_dead", "waiting"]  # clean is no group
    assert groups[1].partitions == ("b-0", "a-1", "a-0")
    assert groups[1].fixes == (("fix a", ("a-1", "a-0")), ("fix b", ("b-0",)))
    assert all(g.attention for g in groups)


def test_a_line_over_time_needs_three_samples_and_reads_minutes():
    t = pd.to_datetime([1_765_000_000, 1_765_000_060, 1_765_000_120], unit="s", utc=True)
    one = pd.DataFrame({"time": t[:1], "value": [1.0], "topic": ["x"]})
    three = pd.DataFrame({"time": t, "value": [1.0, 2.0, 3.0], "topic": ["x"] * 3})
    assert not figures.enough_history(one) and not figures.enough_history(pd.DataFrame())
    assert figures.enough_history(three)
    axis = figures.tombstone_history(three).layout.xaxis
    assert axis.tickformat == "%H:%M\n%Y-%m-%d"
    # ticks under a minute apart read seconds (a minute of history had nine ticks reading the same minute)
    assert [(tuple(s.dtickrange), s.value) for s in axis.tickformatstops] == [
        ((None, 60_000), "%H:%M:%S\n%Y-%m-%d"), ((60_000, None), "%H:%M\n%Y-%m-%d")]


def test_a_held_back_partition_is_not_drawn_as_a_clean_one():
    """Its cleanable ratio is 0 (nothing cleanable) though all of it is uncleaned: the heatmap draws it orange,
    written "held" with its uncleaned ratio, never the white 0.00 of a clean partition."""
    table = pd.DataFrame({"topic": ["cdc", "cdc", "ok"], "partition": [0, 1, 0], "cleanable_ratio": [0.0, 0.0, 0.0],
                          "uncleaned_ratio": [1.0, 0.25, 0.0], "lagging": [False] * 3,
                          "blocked": ["min_compaction_lag", "open_transaction", ""]})
    fig = figures.cleanable_heatmap(table)
    ratio, held = fig.data
    assert held.colorscale[0][1] == held.colorscale[1][1] == figures.HELD_COLOR
    cells = {(y, x): t for y, row in zip(held.y, held.text) for x, t in zip(held.x, row)}
    assert cells[("cdc", "0")] == "held 1.00" and cells[("cdc", "1")] == "held 0.25"
    drawn = {(y, x): z for y, row in zip(held.y, held.z) for x, z in zip(held.x, row)}
    assert drawn[("cdc", "0")] == 1 and pd.isna(drawn[("ok", "0")])  # the clean one is left to the ratio's white
    assert cells[("ok", "0")] == ""  # its text too: written over the others' in the held trace's colour, unread
    written = {(y, x): t for y, row in zip(ratio.y, ratio.text) for x, t in zip(ratio.x, row) if t}
    assert written == {("ok", "0"): "0.00"}  # a held cell's text is the held trace's only (one size a trace)


def test_a_full_red_cell_is_written_white_and_a_pale_one_dark():
    """Plotly writes a heatmap's text in one colour a trace: grey "1.00" on the full red of a partition all
    cleanable did not read (seen at 1366 px). Dark cells are a trace of their own with white text."""
    table = pd.DataFrame({"topic": ["a", "a", "b"], "partition": [0, 1, 0], "cleanable_ratio": [1.0, 0.2, 0.5],
                          "uncleaned_ratio": [1.0, 0.2, 0.5], "lagging": [True, False, False], "blocked": [""] * 3})
    pale, dark = figures.cleanable_heatmap(table).data
    assert pale.textfont.color != "white" and dark.textfont.color == "white" and dark.showscale is False

    def cells(trace):
        return {(y, x): t for y, row in zip(trace.y, trace.text) for x, t in zip(trace.x, row) if t}

    assert cells(pale) == {("a", "1"): "0.20"}
    assert cells(dark) == {("a", "0"): "1.00 !", ("b", "0"): "0.50"}
    assert pale.zmin == dark.zmin == 0 and pale.zmax == dark.zmax == 1 and pale.colorscale == dark.colorscale


def test_how_long_reads_in_whole_seconds_and_under_one_is_said_so():
    """An alert pending for 985 ms read "pending for 985 ms" (and a fresh one "0 ms"): Prometheus evaluates
    rules every few seconds, so the pages say how long in whole seconds, and "under 1 s" below one."""
    from dashboards import display

    assert [display.elapsed(s) for s in (0, 0.985, 1.2, 61.7, 3700)] == [
        "under 1 s", "under 1 s", "1 s", "1 min 1 s", "1 h 2 min"]
    assert display.ago_utc(1_796_690_000.0, 1_796_690_000.4).endswith(", under 1 s ago")


def test_a_binary_key_is_shown_escaped_by_the_one_rule():
    from dashboards import display
    from monitor.fileio.excerpt import excerpt

    assert display.key(b"\x00\x01\xff\xfe") == excerpt(b"\x00\x01\xff\xfe") == "'\\x00\\x01\\xff\\xfe'"
    assert display.key(b"key-505") == "'key-505'" and display.key(b"") == "''" and display.key(None) == "(null)"


def test_a_cause_is_first_on_the_page_only_when_its_alert_fires_for_it():
    """A healthy partition a second past max.compaction.lag.ms is overdue with CompactionOverdue still
    pending: not the on-call person's first problem. Firing for that partition (or, for a broker's
    alert, at all): it is. A cause no alert covers, or no alerts to read: shown as it is."""
    g = attention.Group("overdue", "", ("orders-0", "orders-1"), (), "", True)

    def alerts(*rows):
        return pd.DataFrame(rows, columns=["alert", "state", "topic", "partition"])

    assert not attention.alerting(g, alerts())
    assert not attention.alerting(g, alerts(("CompactionOverdue", "pending", "orders", "0")))
    assert not attention.alerting(g, alerts(("CompactionOverdue", "firing", "orders", "7")))  # another partition
    assert attention.alerting(g, alerts(("CompactionOverdue", "firing", "orders", "1")))
    assert attention.alerting(g, alerts(("CompactionOverdue", "active", "orders", "0")))  # the evaluator's state
    dead = attention.Group("cleaner_dead", "", ("orders-0",), (), "", True)
    assert attention.alerting(dead, alerts(("LogCleanerThreadDead", "firing", None, None)))
    assert attention.alerting(attention.Group("no_such_cause", "", ("x-0",), (), "", True), alerts())
    assert attention.alerting(g, None)


def test_the_consumer_chart_names_its_lines_above_the_bars_and_apart():
    """The two lines' names sat inside the plot, written over a lagging group's bar; now above it, the
    warning's to the left of its line and delete.retention.ms's to the right of its own."""
    df = pd.DataFrame({"group": ["g", "g"], "topic": ["t", "t"], "partition": [1, 2], "value": [18.0, 0.2],
                       "severity": ["critical", ""]})
    notes = {a.text: a for a in figures.consumer_risk(df, 0.5, 1.0).layout.annotations}
    assert set(notes) == {"delete.retention.ms", "warning (50%)"}
    assert all(a.y == 1.0 and a.yanchor == "bottom" for a in notes.values())
    assert (notes["warning (50%)"].xanchor, notes["delete.retention.ms"].xanchor) == ("right", "left")


def test_tombstones_per_topic_are_rows_the_most_first_missed_in_red():
    table = pd.DataFrame({"topic": ["a", "a", "bb", "ccc"], "tombstones": [5, 5, 40, 0],
                          "tombstones_past_delete_horizon": [0, 2, None, 0]})
    fig = figures.tombstone_bars(table)
    before, missed = fig.data
    assert before.orientation == missed.orientation == "h" and list(before.y) == ["bb", "a", "ccc"]
    assert list(before.x) == [40, 8, 0] and list(missed.x[:2]) == [0, 2]
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.xaxis.title.text == "tombstones"

"""What the on-call person reads first: the partitions that need attention grouped by cause
(``monitor.verdicts.causes``), each group with its fix (``monitor.verdicts.fixes``) and the link to its runbook
section, and the partitions behind every count the overview shows.

Why a module of its own: the overview's answer ("what is wrong, where, what to do") is a function of the
pages' tables (``dashboards.tables``) and the alerts (``dashboards.alertrows``); kept pure (no Streamlit),
it is tested without a page. The links are the alert rules' own (``Rule.runbook``: ``thresholds.runbook_base``
then ``#<alert in lower case>``), so a cause's link and its alert's ``runbook`` annotation are one link.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dashboards import alertrows
from monitor.contract.rules import ALERT, RULES
from monitor.settings.config import Thresholds
from monitor.verdicts.causes import CAUSES, WHY

# The alert whose runbook section covers a cause (its rule fires on it or on what causes it); a cause no alert
# covers links to the causes' table in the troubleshooting page.
CAUSE_ALERT = {
    "cleaner_disabled": ALERT.CleanerDisabled,
    "record_over_decompressed_limit": ALERT.RecordOverDecompressedLimit,
    "uncleanable": ALERT.UncleanablePartitions,
    "cleaner_dead": ALERT.LogCleanerThreadDead,
    "hanging_transaction": ALERT.HangingTransaction,
    "open_transaction": ALERT.CompactionBlockedByTransaction,
    "throttled_cleaner": ALERT.CleanerThrottled,
    "overdue": ALERT.CompactionOverdue,
    "waiting": ALERT.CompactionLagging,
}
CAUSES_PAGE = "docs/troubleshooting.md#why-a-partition-is-not-compacting-the-causes"
# Kafka's configured behaviour: nothing to do unless the configuration is not what was meant
AS_CONFIGURED = ("min_compaction_lag", "below_threshold", "active_segment_only")
NOTHING_TO_DO = ("clean",)


def runbook(cause: str, t: Thresholds) -> str:
    """Where a cause is explained and its fix is stated: its alert's runbook section (the rule's own
    link), else the troubleshooting page's causes table."""
    alert = CAUSE_ALERT.get(cause)
    if alert is None:
        return CAUSES_PAGE
    return next(r for r in RULES if r.alert == alert).runbook(t)


def partition_names(rows: pd.DataFrame) -> list[str]:
    """``topic-partition`` of each row (Kafka's TopicPartition.toString), in the rows' order."""
    return [f"{t}-{int(p)}" for t, p in zip(rows["topic"], rows["partition"])]


@dataclass(frozen=True)
class Group:
    cause: str
    why: str  # why the cause stands where it does (monitor.verdicts.causes.WHY)
    partitions: tuple[str, ...]
    fixes: tuple[tuple[str, tuple[str, ...]], ...]  # (fix, the partitions it is for), the most partitions first
    runbook: str
    attention: bool  # False: Kafka's configured behaviour, nothing to do unless unintended


def by_cause(table: pd.DataFrame, t: Thresholds) -> list[Group]:
    """The partitions of ``dashboards.tables.partitions_table`` grouped by cause, in the causes' precedence
    (the most urgent first); clean partitions are left out. A group's partitions share a fix when their
    fix lines are the same text (a topic's command names the topic, an abort its partition)."""
    groups = []
    for cause in CAUSES:
        rows = table[table["cause"] == cause] if not table.empty else table
        if cause in NOTHING_TO_DO or rows.empty:
            continue
        names = partition_names(rows)
        fixes: dict[str, list[str]] = {}
        for name, fix in zip(names, rows["fix"]):
            fixes.setdefault(fix, []).append(name)
        ordered = sorted(fixes.items(), key=lambda kv: -len(kv[1]))
        groups.append(Group(cause, WHY.get(cause, ""), tuple(names), tuple((f, tuple(p)) for f, p in ordered),
                            runbook(cause, t), cause not in AS_CONFIGURED))
    return groups


def alerting(group: Group, alerts: pd.DataFrame | None, firing=alertrows.FIRING) -> bool:
    """Whether the alert that covers ``group``'s cause (``CAUSE_ALERT``) fires for it: for one of its
    partitions, or at all when the alert is not per partition (a broker's). A cause no alert covers, or
    alerts that cannot be read, count as alerting: nothing to wait for. A cause whose alert is still pending
    (inside its rule's window: a healthy partition a second past max.compaction.lag.ms before the cleaner
    takes it) is not shown as the on-call person's first problem."""
    alert = CAUSE_ALERT.get(group.cause)
    if alert is None or alerts is None:
        return True
    rows = alertrows.alerting(alerts, alert, ["topic", "partition"], states=firing)
    if rows.empty:
        return False
    where = {f"{t}-{p}" for t, p in zip(rows["topic"], rows["partition"])
             if isinstance(t, str) and t and p is not None and p == p and str(p) != ""}
    return not where or bool(where & set(group.partitions))


def named(names: list[str], limit: int = 12) -> str:
    """Names for a sentence: all of them up to ``limit``, else the first ones and how many more."""
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"

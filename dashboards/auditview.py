"""The Audit page as a person reads it: what the run found, in sentences with units, and its tables with
words for headers and every figure through the one units formatter (``monitor.contract.units``).

Why apart from the page: these are pure functions of a run's summary and tables (no Streamlit), so a
test can hold them to the rules a reader sees: no ``None``, ``nan`` or ``2.0e+03`` in a cell, no
snake_case header, a record key escaped by the one escaping rule (``monitor.fileio.excerpt``) and
shown with its partition, a chart only when it has something to show (else a sentence saying why).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from dashboards import display
from monitor.contract import units
from monitor.model.compaction import CLEANABLE_RATIO_ABOVE_MIN
from monitor.contract.auditrun import unknown_configs
from monitor.verdicts.accuracy import signed_bytes, signed_ratio

def key_text(key) -> str:
    """A record key as a cell shows it: the live pages' one rule (``dashboards.display.key``); a missing
    cell of a table read back from Parquet (NaN) is a null key too."""
    if key is None or (isinstance(key, float) and math.isnan(key)):
        return "(null)"
    return display.key(key)


def _text(none: str) -> Callable:
    return lambda v: none if units.missing(v) or v == "" else str(v)


def _yes_no(v) -> str:
    return units.yes_no(None if units.missing(v) else bool(v))


# how each kind of column is written; a figure that is missing reads "unknown" (units.unknown)
BYTES, COUNT, SECONDS, RATIO, TIME, YESNO = (units.bytes_iec, units.count, units.duration_s, units.ratio,
                                             units.timestamp_utc, _yes_no)


@dataclass(frozen=True)
class Col:
    """One column as shown: the run's column ``name``, its ``label`` in words, and how a value is written."""

    name: str
    label: str
    fmt: Callable = _text(units.unknown())


def shown(df: pd.DataFrame, cols: list[Col]) -> pd.DataFrame:
    """``df``'s ``cols`` (those the run has: older runs lack some) as text, headed by their labels."""
    out = {c.label: [c.fmt(None if units.missing(v) else v) for v in df[c.name]] for c in cols if c.name in df.columns}
    return pd.DataFrame(out, index=range(len(df)))


def partition_label(topic: str, partition) -> str:
    """Kafka's name of a partition (``TopicPartition.toString``): ``orders-0``."""
    return f"{topic}-{int(partition)}"


def _names(rows: pd.DataFrame, limit: int = 6) -> str:
    names = [partition_label(t, p) for t, p in zip(rows["topic"], rows["partition"])]
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _of(n: int, what: str) -> str:
    return f"{units.count(n)} {what}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------- what the run found

ATTENTION = ("dirty enough to clean", "tombstones past delete.retention.ms", "config unknown",
             "past max.compaction.lag.ms")


def attention(partitions: pd.DataFrame, summary: dict) -> pd.DataFrame:
    """The partitions that need attention, one row per partition and reason (``ATTENTION``'s order), the
    largest figure first in each: ``topic``, ``partition``, ``why``, ``evidence`` (a sentence with units)
    and ``fix``."""
    rows = []
    p = partitions
    if p.empty:
        return pd.DataFrame(columns=["topic", "partition", "why", "evidence", "fix"])
    if "eligible" in p.columns:
        for r in p[[not units.missing(v) and bool(v) for v in p["eligible"]]].sort_values("reclaimable_bytes", ascending=False) \
                .to_dict("records"):
            ratio, least = r.get("cleanable_ratio"), r.get("min_cleanable_dirty_ratio")
            by_ratio = not units.missing(ratio) and not units.missing(least) and \
                CLEANABLE_RATIO_ABOVE_MIN.holds(ratio, least)  # Kafka's own test; else max.compaction.lag.ms
            rows.append({"topic": r["topic"], "partition": int(r["partition"]),
                         "why": ATTENTION[0] if by_ratio else ATTENTION[3],
                         "evidence": (f"cleanable ratio {units.ratio(ratio)} {CLEANABLE_RATIO_ABOVE_MIN.op} "
                                      f"{units.ratio(least)}" if by_ratio else
                                      f"cleanable ratio {units.ratio(ratio)}, not above {units.ratio(least)}: a record "
                                      "is older than max.compaction.lag.ms")
                                     + f"; reclaims {units.bytes_iec(r.get('reclaimable_bytes'))}",
                         "fix": "none if the cleaner keeps up: it picks the dirtiest log first; on a live broker "
                                "that stays here, see the Partitions page's cause" if by_ratio else
                                "none if the cleaner gets to it soon (Kafka must clean a log past "
                                "max.compaction.lag.ms); on a live broker that stays here, see the Partitions "
                                "page's cause"})
    past = p[p["tombstones_past_retention"].fillna(0) > 0] if "tombstones_past_retention" in p.columns else p.iloc[:0]
    for r in past.sort_values("tombstones_past_retention", ascending=False).to_dict("records"):
        rows.append({"topic": r["topic"], "partition": int(r["partition"]), "why": ATTENTION[1],
                     "evidence": f"{_of(r['tombstones_past_retention'], 'tombstone')} older than "
                                 f"{units.duration_ms(r.get('delete_retention_ms'))} (delete.retention.ms)",
                     "fix": "once the cleaner removes them, a consumer further behind than delete.retention.ms "
                            "misses these deletes: keep consumer lag below it, or raise delete.retention.ms"})
    unknown = unknown_configs(summary)
    for r in p[p["topic"].isin(list(unknown))].to_dict("records"):
        rows.append({"topic": r["topic"], "partition": int(r["partition"]), "why": ATTENTION[2],
                     "evidence": unknown[r["topic"]] or "the run could not tell its config",
                     "fix": "audit with --bootstrap-server (the admin API gives each topic's config)"})
    return pd.DataFrame(rows, columns=["topic", "partition", "why", "evidence", "fix"])


def conclusions(summary: dict, partitions: pd.DataFrame, accuracy: dict | None = None) -> list[str]:
    """What the run found, one sentence each, with units: what the next clean reclaims (and what is left,
    settled), the partitions that need attention by reason, the tombstone risks, the projection's
    accuracy against an earlier run (``accuracy``: ``{"run", "totals"}`` or None when there is none),
    and corrupt input."""
    sm = summary
    n_parts, n_topics = sm.get("partitions"), sm.get("topics")
    scanned = sm.get("bytes")
    reclaim = sm.get("reclaimable_bytes")
    share = f" ({units.percent(reclaim / scanned)})" if scanned and not units.missing(reclaim) else ""
    out = [f"The next clean reclaims {units.bytes_iec(reclaim)} of the {units.bytes_iec(scanned)} scanned{share} "
           f"in {_of(n_parts or 0, 'partition')} of {_of(n_topics or 0, 'topic')}; what it leaves is "
           f"{units.bytes_iec(sm.get('next_clean_bytes'))}"
           + ("." if "settled_bytes" not in sm else
              f", and {units.bytes_iec(sm.get('settled_bytes'))} once every delete horizon has passed and "
              "another clean ran (settled).")]
    att = attention(partitions, sm)
    if att.empty:
        out.append("No partition needs attention: none is dirty enough for the cleaner, none holds tombstones "
                   "past delete.retention.ms, every topic config is known.")
    else:
        parts = [f"{why[0].upper()}{why[1:]}: {_names(att[att['why'] == why])}"
                 for why in ATTENTION if (att["why"] == why).any()]
        n = att[["topic", "partition"]].drop_duplicates().shape[0]
        out.append(f"{_of(n, 'partition')} need{'s' if n == 1 else ''} attention. " + "; ".join(parts)
                   + ". The table below gives each one's evidence, and what to do.")
    past = sm.get("tombstones_past_retention") or 0
    total = sm.get("tombstones")
    if past:
        out.append(f"Tombstone risk: {units.count(past)} of the {_of(total, 'tombstone')} on disk are older than "
                   "delete.retention.ms; once the cleaner removes them, a consumer further behind than that misses "
                   "those deletes.")
    elif total is not None:
        out.append(f"No tombstone risk: none of the {_of(total, 'tombstone')} on disk is older than "
                   "delete.retention.ms.")
    if accuracy is None:
        out.append("Projection accuracy: unknown (needs an earlier complete run of the same log dirs: audit "
                   "before the cleaner runs and again after).")
    else:
        t = accuracy["totals"]
        left = "".join(f"; {_of(n, 'partition')} left out, {status}" for status, n in sorted(t["left_out"].items()))
        if not t["partitions"]:
            out.append(f"Projection accuracy: unknown (the cleaner has been over none of run {accuracy['run']}'s "
                       "partitions since).")
        else:
            ratio = "" if t["error_ratio"] is None else f", {signed_ratio(t['error_ratio'])}"
            out.append(f"Projection accuracy: run {accuracy['run']} predicted {units.bytes_iec(t['predicted_bytes'])} "
                       f"for the {_of(t['partitions'], 'partition')} the cleaner has been over since; the broker "
                       f"reclaimed {units.bytes_iec(t['actual_bytes'])} (error {signed_bytes(t['error_bytes'])}"
                       f"{ratio}){left}.")
    out += decompressed_limit(sm)
    if sm.get("faults"):
        out.append(f"{_of(sm['faults'], 'corrupt or truncated spot')} in the input: its records are left out "
                   "(listed at the end of the page).")
    return out


def decompressed_limit(summary: dict) -> list[str]:
    """Kafka 4.4's max.decompressed.message.bytes, as the run's summary.json says it (``decompressed_limit``,
    only where a topic sets a cap or its value is unknown): each partition whose stored record is above it,
    in the collector's sentence (the audit stores the config review's), then the unknown ones with why."""
    d = summary.get("decompressed_limit")
    if not d:
        return []
    over = [r for r in d["partitions"] if r["over"]]
    unknown = [r for r in d["partitions"] if r["unknown_reason"]]
    out = []
    if over:
        verb = "holds" if len(over) == 1 else "hold"
        out.append(f"max.decompressed.message.bytes (Kafka 4.4): {_of(len(over), 'partition')} {verb} a record "
                   f"above it ({d['check']}; once the cleaner fails, {d['cause']}). "
                   + " ".join(f"{partition_label(r['topic'], r['partition'])}: {r['summary']}. Fix: {r['fix']}"
                              for r in over[:3]) + (" ..." if len(over) > 3 else ""))
    else:
        n = len(d["partitions"]) - len(unknown)
        if n:
            out.append(f"max.decompressed.message.bytes (Kafka 4.4): every stored record of the "
                       f"{_of(n, 'partition')} of topics that set it fits.")
    if unknown:
        out.append(f"max.decompressed.message.bytes (Kafka 4.4): unknown for {_of(len(unknown), 'partition')}: "
                   f"{unknown[0]['unknown_reason']}.")
    return out


# ---------------------------------------------------------------- the charts' axes


def byte_scale(largest: float) -> tuple[float, str]:
    """(divisor, IEC unit) for an axis whose largest value is ``largest`` bytes, so its ticks read
    "12.5 KiB" rather than "0.0119 MiB" (``units.IEC``, base 1024 as ``units.bytes_iec``)."""
    i = 0
    while i < len(units.IEC) - 1 and largest >= 1024 ** (i + 1):
        i += 1
    return float(1024 ** i), units.IEC[i]


def chart_or_why(points: int, what: str, why_not: str) -> str | None:
    """None when a chart of ``points`` meaningful points has something to show (two or more), else the
    sentence the page shows instead: what is not charted and why."""
    return None if points >= 2 else f"No chart of {what}: {why_not}."

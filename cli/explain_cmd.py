"""``explain``: each selected partition's one cause, with its evidence, fix and forecast, for a person
(text) or a program (JSON). Built from the scan's facts (``collectors.facts.from_scan``): the same
causes, broker facts and cleaner-log state the collector's series are made from."""

from __future__ import annotations

import sys

from cli.oneshot import exit_code, read_cleaner_log, scan
from monitor.fileio import strictjson
from monitor.verdicts.facts import duration
from monitor.verdicts.horizons import describe as describe_horizons
from monitor.kafka.kafkanames import partition_name


def run_explain(selectors, *, config, log_dirs, fmt: str = "text", bootstrap: str | None = None,
                topic_overrides: dict | None = None, admin=None, cleaner_log: str | None = None, out=sys.stdout,
                err=sys.stderr, admin_error: str | None = None) -> int:
    """One read of the log dirs: the write rate is the one-shot estimate from each dirty section, and how
    long a partition has been eligible is unknown (the collector measures both). With ``admin``, the
    broker's cleaner settings (its node.id from meta.properties) join the causes."""
    from collectors.facts import from_scan

    snap = scan(log_dirs, config, topic_overrides, err, "explain", admin=admin, admin_error=admin_error)
    cleaner = read_cleaner_log(cleaner_log, err, "explain") if cleaner_log else None
    facts = from_scan(snap, admin=admin, node=_node_id(snap) if admin is not None else None, cleaner=cleaner,
                      bootstrap=bootstrap)
    whole, parts, missing = parse_selectors(selectors, facts.topics() | _error_topics(snap))
    for sel in missing:
        print(f"explain: {sel}: no such compacted topic or partition in {', '.join(map(str, log_dirs))}", file=err)
    chosen = [f for f in facts.every() if not selectors or f.topic in whole or f.key in parts]
    if fmt == "json":
        strictjson.dump([f.cause.as_dict() | {"log_dir": f.log_dir} for f in chosen], out, indent=2)
        out.write("\n")
    else:
        for f in chosen:
            out.write(format_cause(f.cause, f.log_dir) + "\n")
    if missing:
        return 2
    return exit_code(snap, cleaner_ok=cleaner is not None or not cleaner_log)


def _error_topics(snap) -> set[str]:
    """The topics of every partition with a read fault (the scan keys them ``(topic, partition)``)."""
    return {topic for topic, _ in snap.partition_errors}


def _node_id(snap) -> str | None:
    """The broker's node.id, from the first log dir found whose meta.properties has one."""
    return next((f.node_id for f in snap.found.values() if f.node_id), None)


def parse_selectors(selectors, topics) -> tuple[set, set, list]:
    """``TOPIC`` or ``TOPIC-PARTITION`` (topic names may hold ``-``: a whole topic name wins) against the
    topics found; returns (topics, (topic, partition) pairs, selectors that match nothing)."""
    whole, parts, missing = set(), set(), []
    for sel in selectors:
        if sel in topics:
            whole.add(sel)
            continue
        tp = partition_name(sel)  # as Kafka reads a folder name: "orders-03" is orders-3
        if tp is not None and tp.topic in topics:
            parts.add((tp.topic, tp.partition))
        else:
            missing.append(sel)
    return whole, parts, missing


def format_cause(c, log_dir: str | None) -> str:
    """A cause for a person: the sentence, the evidence that matters, the fix and the forecast."""
    ev = c.evidence
    lines = [f"{c.topic}-{c.partition}" + (f"  ({log_dir})" if log_dir else ""),
             f"  cause:     {c.cause}", f"  why:       {c.summary}"]
    if "first_dirty_offset" in ev:
        def fmt(v, spec=""):  # a figure made from a topic config that is unknown: "unknown"
            return "unknown" if v is None else format(v, spec)

        lines.append(f"  offsets:   log start {ev['log_start_offset']}, first dirty {ev['first_dirty_offset']} "
                     f"(checkpoint {ev['checkpoint_offset']}), first uncleanable {fmt(ev['first_uncleanable_offset'])} "
                     f"({fmt(ev['uncleanable_reason'])}), last stable {ev['last_stable_offset']}, "
                     f"log end {ev['log_end_offset']}")
        lines.append(f"  sizes:     clean {ev['clean_bytes']} B, cleanable {fmt(ev['cleanable_bytes'])} B, uncleaned "
                     f"{ev['uncleaned_bytes']} B (cleanable ratio {fmt(ev['cleanable_ratio'], '.3f')}, "
                     f"min.cleanable.dirty.ratio {fmt(ev['min_cleanable_dirty_ratio'], 'g')}); active segment "
                     f"{ev['active_segment']}")
    for k, v in ev.items():
        if k in ("configs",) and v:
            lines.append("  configs:   " + ", ".join(f"{n}={'unknown' if x['value'] is None else x['value']} "
                                                 f"({x['source']})" for n, x in v.items()))
        elif k == "leftover_files" and v:
            for x in v:
                lines.append(f"  leftover:  {x['file']} ({x['kind']}, {x['bytes']} B, unchanged "
                             f"{duration(x['unchanged_ms'])}; removed or completed by the broker on its next start)")
        elif k == "delete_horizons" and v:
            lines.append(f"  horizons:  {describe_horizons(v)}")
        elif k == "tombstones_past_horizon" and v:
            lines.append(f"  horizon:   {v['why']}")
            lines += [f"  {'':<10} fix: {x}" for x in v["fix"]]
        elif k == "transaction" and v:
            lines.append(f"  txn:       producer {v['producer_id']} epoch {v['producer_epoch']} from offset "
                         f"{v['first_offset']}, age {duration(v['age_ms'])}")
        elif k in ("exception", "message", "cleaner_log", "dead_threads", "cleaner_threads", "cleaner_enabled",
                   "last_error", "first_fault", "reason",
                   "held_from_segment", "compaction_delay_ms") and v is not None:
            lines.append(f"  {k + ':':<10} {v}")
    for i, fix in enumerate(c.fix):
        lines.append(f"  {'fix:' if i == 0 else '':<10} {fix}")
    names = {"threshold": "ratio above min.cleanable.dirty.ratio", "next_clean_due": "next clean due",
             "active_segment_roll": "active segment rolls"}
    for k, label in names.items():
        f = c.forecast[k]
        when = ("unknown" if f["at_ms"] is None else "now" if f["in_seconds"] == 0
                else f"in {duration(f['in_seconds'] * 1000)}")
        lines.append(f"  forecast:  {label}: {when} ({f['reason']})")
    lines.append(f"  rate:      {c.forecast['write_rate_basis']}")
    for k, why in c.unchecked.items():
        lines.append(f"  unchecked: {k} ({why})")
    return "\n".join(lines)

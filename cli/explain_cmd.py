"""``explain``: each selected partition's one cause, with its evidence, fix and forecast, for a person
(text) or a program (JSON). Built from the scan's facts (``collectors.export.facts.from_scan``): the same
causes, broker facts and cleaner-log state the collector's series are made from."""

from __future__ import annotations

import sys

from cli.logdir_cmd import undecided_row
from cli.oneshot import exit_code, read_cleaner_log, scan
from monitor.fileio import strictjson
from monitor.contract.units import bytes_iec, duration_ms, duration_s, rate as rate_text, unknown, yes_no
from monitor.model.topicconfig import LONG_MAX
from monitor.verdicts.fixes import DOUBLE_MAX
from monitor.verdicts.horizons import describe as describe_horizons
from monitor.verdicts.queue import in_words
from monitor.kafka.kafkanames import partition_name
from monitor.verdicts.facts import segment_file


def run_explain(selectors, *, config, log_dirs, fmt: str = "text", bootstrap: str | None = None,
                topic_overrides: dict | None = None, admin=None, cleaner_log: str | None = None, out=None,
                err=None, admin_error: str | None = None, groups=None, cleaner_logs=None) -> int:
    """One read of the log dirs: the write rate is the one-shot estimate from each dirty section, and how
    long a partition has been eligible is unknown (the collector measures both). The paths are read as one
    part per broker found under them (``collectors.export.facts.from_scan_brokers``): with ``admin``, each
    partition's own broker's cleaner settings (its node.id from meta.properties) join its cause, and its next
    clean is forecast in its own broker's queue. With ``admin`` too, the chosen topics'
    configuration review (``monitor.verdicts.configreview``: the checks of ``topics lint``, on the same
    facts; the consumer-group check with ``groups``, the admin API's ``GroupSnapshot``). ``cleaner_log`` is
    one broker's log-cleaner.log; ``cleaner_logs``, several brokers' as ``(log dirs, cleaner log)`` (the
    config's brokers): each read for the broker found under its log dirs (``_cleaners_by_node``)."""
    from collectors.export.facts import from_scan_brokers

    # the streams of the call, not of the import (an in-process caller may have replaced them since)
    out, err = out or sys.stdout, err or sys.stderr

    # list_undecided: a partition folder whose policy is unknown here is said as ``logdir`` says it, not "no such"
    snap = scan(log_dirs, config, topic_overrides, err, "explain", admin=admin, admin_error=admin_error,
                list_undecided=True)
    cleaner = read_cleaner_log(cleaner_log, err, "explain") if cleaner_log else None
    cleaners_ok = True
    if cleaner_logs:
        cleaner, cleaners_ok = _cleaners_by_node(cleaner_logs, snap, err)
    # one part per broker under the paths: each partition with its own broker's settings and cleaner queue
    brokers = from_scan_brokers(snap, admin=admin, cleaner=cleaner, bootstrap=bootstrap)
    if cleaner is not None and not isinstance(cleaner, dict) and len(brokers) > 1:  # whose: the paths do not tell
        print(f"explain: {cleaner_log}: one broker's cleaner log, read here for each of brokers "
              f"{', '.join(b.broker for b in brokers)} found under the paths: give one broker's log dirs with "
              "--cleaner-log to have only its partitions judged by it", file=err)
    whole, parts, missing = parse_selectors(selectors, set().union(*(b.topics() for b in brokers)) | _error_topics(snap))
    undecided = {}  # selected partitions not judged (policy unknown here), as logdir lists them
    if missing:
        u_whole, u_parts, missing = parse_selectors(missing, {t for t, _ in snap.undecided}, set(snap.undecided))
        undecided = {k: u for k, u in sorted(snap.undecided.items()) if k[0] in u_whole or k in u_parts}
    for sel in missing:
        print(f"explain: {sel}: no such compacted topic or partition in {', '.join(map(str, log_dirs))}", file=err)
    chosen = [(f, b.queue) for f, b in _every(brokers) if not selectors or f.topic in whole or f.key in parts]
    reviewed = config_review(sorted({f.topic for f, _ in chosen}), brokers, admin, groups, bootstrap,
                             admin_error or "no --bootstrap-server given")
    if fmt == "json":
        strictjson.dump([f.cause.as_dict() | {"log_dir": f.log_dir, "next_clean": _next_clean(_next(q, f)),
                                              "config_review": _of_topic(reviewed, f.topic)}
                         for f, q in chosen] + [_undecided_json(u) for u in undecided.values()], out, indent=2)
        out.write("\n")
    else:
        for f, q in chosen:
            nxt = _next(q, f)  # in its own broker's cleaner queue
            more = f"\n  queue:     {in_words(nxt, q.now_ms)}" if nxt is not None else ""
            out.write(format_cause(f.cause, f.log_dir) + more + "\n")
        for u in undecided.values():
            out.write(format_undecided(u) + "\n")
        unchecked = format_unchecked(f.cause for f, _ in chosen)
        if unchecked:
            out.write(unchecked + "\n")
        if chosen:
            out.write(format_config_review(reviewed) + "\n")
    if missing:
        return 2
    return exit_code(snap, cleaner_ok=cleaners_ok and (cleaner is not None or not cleaner_log))


def _cleaners_by_node(cleaner_logs, snap, err) -> tuple[dict, bool]:
    """node.id -> what its log-cleaner.log says, for each ``(log dirs, cleaner log)``: the log is that broker's
    whose log dirs (meta.properties' node.id) the scan found under those paths; when they hold no broker or
    several, it is not read and the line says why. Returns the states and whether every log was read."""
    from pathlib import Path

    out, ok = {}, True
    for dirs, path in cleaner_logs:
        nodes = sorted({f.node_id for p, f in snap.found.items() if f.node_id and any(
            Path(p) == Path(d) or Path(d) in Path(p).parents for d in dirs)})
        if len(nodes) != 1:
            print(f"explain: {path}: not read: it is the cleaner log of the broker with log dirs {', '.join(dirs)}, "
                  f"under which {'no broker was found' if not nodes else 'brokers ' + ', '.join(nodes) + ' were found'}",
                  file=err)
            ok = False
            continue
        state = read_cleaner_log(path, err, "explain")
        if state is None:
            ok = False
        else:
            out[nodes[0]] = state
    return out, ok


def format_undecided(u) -> str:
    """A partition whose cleanup.policy is not known here and that was never cleaned (``logdir``'s "not
    judged"): why, the way to have it judged, and what its folder's listing still tells."""
    segs = f"{u.segments} segment(s)"
    if u.first_segment is not None:
        segs += f", {segment_file(u.first_segment)} to {segment_file(u.active_segment)} (active)"
    return "\n".join([f"{u.topic}-{u.partition}  ({u.log_dir})", "  cause:     unknown",
                      f"  why:       {u.reason}", f"  on disk:   {bytes_iec(u.log_bytes)} in {segs}"])


def config_review(topics, brokers, admin, groups, bootstrap: str | None, why: str):
    """The configuration review of ``topics`` (``monitor.verdicts.configreview.review``, the table ``topics
    lint`` and the collector's topic_config_finding run) from this read's partitions (every broker's part,
    ``brokers``), the admin API's live configs and the groups' lags; without live configs, every check not
    run for ``why``."""
    from collectors.export.review import review_facts
    from monitor.verdicts.configreview import review, unreviewed

    if admin is None:
        return unreviewed(topics, why)
    reports = [f.report for b in brokers for f in b.partitions]
    mine = [t for t in review_facts(admin, groups, reports, brokers[0].snapshot.taken_at) if t.topic in topics]
    return review(mine, bootstrap=bootstrap)


def format_config_review(r) -> str:
    """The configuration lines: each finding once per topic (not per partition), the checks not run."""
    from monitor.verdicts.configreview import format_finding, format_not_run, summary_line

    lines = [x for f in r.findings for x in format_finding(f)] + format_not_run(r)
    return "\n".join(["configuration (the checks of topics lint):"] + [f"  {x}" for x in lines]
                     + [f"  {summary_line(r)}"])


def _of_topic(r, topic: str) -> dict:
    """The review's findings and checks not run for one topic (JSON, beside each of its partitions)."""
    return {"findings": [f.as_dict() for f in r.findings if f.topic == topic],
            "not_run": [{**n, "topics": [topic]} for n in r.not_run if topic in n["topics"]]}


def _undecided_json(u) -> dict:
    """A not-judged partition in explain's own shape (a cause, unknown, with its log dir), and what ``logdir``
    lists of it (``not_judged``, its listing)."""
    row = undecided_row(u)
    return {**row.pop("cause"), "topic": u.topic, "partition": u.partition, "log_dir": u.log_dir, "next_clean": None,
            **{k: row[k] for k in ("not_judged", "log_bytes", "segments", "first_segment_base_offset",
                                   "active_segment_base_offset")}}


def _next_clean(c) -> dict | None:
    """A partition's next clean as the queue forecast has it (monitor.model.cleanerqueue), for JSON."""
    return None if c is None else c.as_dict()


def _error_topics(snap) -> set[str]:
    """The topics of every partition with a read fault (the scan keys them ``(topic, partition)``)."""
    return {topic for topic, _ in snap.partition_errors}


def _every(brokers) -> list:
    """``(partition facts, its broker's facts)`` of every broker's part, by (topic, partition) then broker
    (two brokers' replicas of one partition each with its own); a partition that could not be read and
    whose broker is not known (in every part: ``scan_brokers``) once."""
    out, unread = [], set()
    for b in brokers:
        for f in b.every():
            if f.report is None:
                if (f.key, f.fault) in unread:
                    continue
                unread.add((f.key, f.fault))
            out.append((f, b))
    return sorted(out, key=lambda fb: (fb[0].key, len(fb[0].broker), fb[0].broker))


def _next(queue, f):
    """A partition's next clean in its broker's forecast queue (None: no queue, or not in it)."""
    return queue.cleans.get(f.key) if queue is not None else None


def parse_selectors(selectors, topics, partitions=None) -> tuple[set, set, list]:
    """``TOPIC`` or ``TOPIC-PARTITION`` (topic names may hold ``-``: a whole topic name wins) against the
    topics found (and, given, the (topic, partition) pairs found: a partition not among them matches
    nothing); returns (topics, (topic, partition) pairs, selectors that match nothing)."""
    whole, parts, missing = set(), set(), []
    for sel in selectors:
        if sel in topics:
            whole.add(sel)
            continue
        tp = partition_name(sel)  # as Kafka reads a folder name: "orders-03" is orders-3
        if tp is not None and tp.topic in topics and (partitions is None or (tp.topic, tp.partition) in partitions):
            parts.add((tp.topic, tp.partition))
        else:
            missing.append(sel)
    return whole, parts, missing


def format_cause(c, log_dir: str | None) -> str:
    """A cause for a person: the sentence, the evidence that matters, the fix and the forecast, in people's
    units (``monitor.contract.units``); a figure not known says so, never ``None``. The causes that could not be
    checked are left to ``format_unchecked`` (once for every partition)."""
    ev = c.evidence
    lines = [f"{c.topic}-{c.partition}" + (f"  ({log_dir})" if log_dir else ""),
             f"  cause:     {c.cause}", f"  why:       {c.summary}"]
    if "first_dirty_offset" in ev:
        def fmt(v, spec=""):  # a figure made from a topic config that is unknown
            return unknown("the topic's config is unknown") if v is None else format(v, spec)

        def size(v):
            return unknown("the topic's config is unknown") if v is None else bytes_iec(v)

        lines.append(f"  offsets:   log start {ev['log_start_offset']}, first dirty {ev['first_dirty_offset']} "
                     f"({_checkpoint(ev['checkpoint_offset'])}), first uncleanable "
                     f"{fmt(ev['first_uncleanable_offset'])} ({_held_by(ev['uncleanable_reason'])}), last stable "
                     f"{ev['last_stable_offset']}, log end {ev['log_end_offset']}")
        lines.append(f"  sizes:     clean {bytes_iec(ev['clean_bytes'])}, cleanable {size(ev['cleanable_bytes'])}, "
                     f"uncleaned {bytes_iec(ev['uncleaned_bytes'])} (cleanable ratio "
                     f"{fmt(ev['cleanable_ratio'], '.3f')}, min.cleanable.dirty.ratio "
                     f"{fmt(ev['min_cleanable_dirty_ratio'], 'g')}); active segment {ev['active_segment']}")
    for k, v in ev.items():
        if k in ("configs",) and v:
            lines.append("  configs:   " + ", ".join(_config(n, x) for n, x in v.items()))
        elif k == "leftover_files" and v:
            for x in v:
                lines.append(f"  leftover:  {x['file']} ({x['kind']}, {bytes_iec(x['bytes'])}, unchanged "
                             f"{duration_ms(x['unchanged_ms'])}; removed or completed by the broker on its next start)")
        elif k == "delete_horizons" and v:
            lines.append(f"  horizons:  {describe_horizons(v)}")
        elif k == "tombstones_past_horizon" and v:
            lines.append(f"  horizon:   {v['why']}")
            lines += [f"  {'':<10} fix: {x}" for x in v["fix"]]
        elif k == "transaction" and v:
            lines.append(f"  txn:       producer {v['producer_id']} epoch {v['producer_epoch']} from offset "
                         f"{v['first_offset']}, age {duration_ms(v['age_ms'])}")
        elif k in _SHOWN and v is not None:
            lines.append(f"  {_SHOWN[k] + ':':<10} {_value(k, v)}")
    for i, fix in enumerate(c.fix):
        lines.append(f"  {'fix:' if i == 0 else '':<10} {fix}")
    names = {"threshold": "ratio above min.cleanable.dirty.ratio", "next_clean_due": "next clean due",
             "active_segment_roll": "active segment rolls"}
    rate = c.forecast.get("write_rate_bytes_per_second")
    basis = c.forecast["write_rate_basis"]
    if ev.get("reason") and rate is None and basis == ev["reason"] and all(
            c.forecast[k]["at_ms"] is None and c.forecast[k]["reason"] == basis for k in names):
        lines.append("  forecast:  unknown (the reason above)")  # a partition not read: once, not four times
        return "\n".join(lines)
    for k, label in names.items():
        f = c.forecast[k]
        if f["at_ms"] is None:
            when = unknown(f["reason"])
        elif f["in_seconds"] == 0:  # a roll (or a threshold reached at one) is due: it comes with the next append
            when = ("due" if ROLL in (k, f.get("code")) else "now") + f"; {f['reason']}"
        else:
            when = f"in {duration_s(f['in_seconds'])}; {f['reason']}"
        lines.append(f"  forecast:  {label}: {when}")
    lines.append(f"  rate:      {unknown(basis) if rate is None else rate_text(rate) + ' (' + basis + ')'}")
    return "\n".join(lines)


ROLL = "active_segment_roll"


# evidence shown as "name: value" (the name a person reads), when present
_SHOWN = {"exception": "exception", "message": "message", "cleaner_log": "cleaner log", "dead_threads": "dead threads",
          "cleaner_threads": "threads", "cleaner_enabled": "cleaner on", "last_error": "last error",
          "first_fault": "fault", "reason": "reason", "held_from_segment": "held from",
          "compaction_delay_ms": "overdue by"}


def _value(key: str, v) -> str:
    if isinstance(v, bool):
        return yes_no(v)
    if key.endswith("_ms"):
        return duration_ms(v)
    return f"{v:g}" if isinstance(v, float) else str(v)


def _checkpoint(offset: int | None) -> str:
    """Where the first dirty offset comes from: the cleaner's checkpoint, or why there is none."""
    if offset is None:
        return "no cleaner checkpoint yet: the cleaner has not cleaned this partition, so it starts at the log start"
    return f"cleaner checkpoint {offset}"


def _held_by(reason: str | None) -> str:
    return unknown("the topic's config is unknown") if reason is None else f"held by {reason.replace('_', ' ')}"


def _config(name: str, x: dict) -> str:
    """A topic or broker config as Kafka takes it, with its unit for a person where it has one."""
    v = x["value"]
    if v is None:
        return f"{name}=unknown ({x['source']})"
    human = ""
    try:
        n = float(v)
        if name.endswith(".ms") and n >= 0:
            human = "unset, " if n >= LONG_MAX else f"{duration_ms(n)}, "
        elif name.endswith(".bytes") and n >= 0:
            human = f"{bytes_iec(n)}, "
        elif name.endswith(".bytes.per.second") and n >= 0:
            human = f"{rate_text(n)}, " if n < DOUBLE_MAX else "unlimited, "
    except ValueError:
        pass
    return f"{name}={v} ({human}{x['source']})"


def format_unchecked(causes) -> str:
    """The causes that could not be checked, each once with why, after the partitions: the same inputs are
    missing for every partition of one run (the broker's gauges, its cleaner log), so a line per partition
    would say the same thing N times. A reason that concerns only some partitions names them."""
    causes = list(causes)
    by_reason: dict[tuple[str, str], list[str]] = {}
    for c in causes:
        for k, why in c.unchecked.items():
            by_reason.setdefault((k, why), []).append(f"{c.topic}-{c.partition}")
    if not by_reason:
        return ""
    judged = sum(1 for c in causes if c.unchecked)  # a partition not judged at all (unknown) checks nothing
    lines = ["not checked (an input was not given):"]
    for (k, why), parts in by_reason.items():
        more = f", ... ({len(parts)} of {len(causes)} partitions)" if len(parts) > 5 else ""
        who = "" if len(parts) == judged else f" [{', '.join(parts[:5])}{more}]"
        lines.append(f"  {k}: {why}{who}")
    return "\n".join(lines)

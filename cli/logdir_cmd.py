"""``logdir``: every partition of a broker's log dirs, no broker needed, as a table or JSON: its state,
its cause (``monitor.verdicts.causes``), its leftover files, open transactions and each log dir's free space;
with the broker's log-cleaner.log, whether the cleaner marked it uncleanable and why. Built from the
scan's facts (``collectors.export.facts.from_scan``), as the collector's series are from the store's."""

from __future__ import annotations

import sys

from cli.oneshot import exit_code, read_cleaner_log, scan
from monitor.contract.units import bytes_iec, duration_ms, yes_no
from monitor.fileio import strictjson
from monitor.model.streams import streams_role
from monitor.verdicts.horizons import describe as describe_horizons

COLUMNS = [("topic", 28), ("partition", 9), ("first_dirty_offset", 12), ("clean_bytes", 10),
           ("cleanable_bytes", 10), ("cleanable_ratio", 8), ("eligible", 8), ("tombstones", 10),
           ("oldest_tombstone_age_ms", 11), ("cause", 20), ("streams_role", 11)]
HEADS = ["topic", "part", "first dirty", "clean", "cleanable", "ratio", "eligible", "tombstones",
         "oldest tomb", "cause", "streams"]
# how a column's figure reads for a person (monitor.contract.units); JSON keeps the base units
SHOWN = {"clean_bytes": bytes_iec, "cleanable_bytes": bytes_iec, "cleanable_ratio": lambda v: f"{v:.3f}",
         "eligible": yes_no, "oldest_tombstone_age_ms": duration_ms, "cause": lambda v: v["cause"]}


def run_logdir(paths, *, config, fmt: str = "text", include_all: bool = False, out=sys.stdout,
               err=sys.stderr, topic_overrides: dict | None = None, cleaner_log: str | None = None) -> int:
    """Per-partition state of log dirs, each row with its cause; a partition that could not be read has
    its row too, its figures unknown and its fault said (never left out)."""
    from collectors.export.facts import from_scan

    snap = scan(paths, config, topic_overrides, err, "logdir", include_all=include_all, list_undecided=True)
    cleaner = read_cleaner_log(cleaner_log, err, "logdir") if cleaner_log else None
    facts = from_scan(snap, cleaner=cleaner)
    rows = [_row(f, snap, cleaner, cleaner_log) for f in facts.partitions] + [_fault_row(f) for f in facts.unreadable]
    rows += [undecided_row(u) for _, u in sorted(snap.undecided.items())]
    if fmt == "json":
        strictjson.dump(rows, out, indent=2)
        out.write("\n")
    else:
        _table(rows, out)
        _open_transactions_table(rows, out)
        _leftovers_table(rows, out)
        _space_lines(snap, out)
    return exit_code(snap, cleaner_ok=cleaner is not None or not cleaner_log)


def _cause(f) -> dict:
    cause = f.cause.as_dict()
    del cause["topic"], cause["partition"]
    return cause


def _row(f, snap, cleaner, cleaner_log) -> dict:
    r, tmt = f.report, snap.transaction_max_timeout
    row = r.state.as_dict() | {"log_dir": r.log_dir, "config_source": r.config_source,
                               "transaction_max_timeout_ms": tmt.value,
                               "transaction_max_timeout_ms_source": tmt.source, "cause": _cause(f),
                               "leftover_files": [x.as_dict(int(snap.taken_at * 1000)) for x in r.leftovers],
                               "clean_needed_bytes": r.clean_needed_bytes,
                               "streams_role": streams_role(f.topic)}
    if cleaner_log:
        u = cleaner.uncleanable.get(f.key) if cleaner is not None else None
        row["uncleanable"] = None if u is None else {"exception": u.exception, "message": u.message,
                                                     "source": u.source}
    return row | {"fault": None}


def _fault_row(f) -> dict:
    """A partition whose state could not be computed (a segment unreadable or vanished, a checkpoint entry
    that cannot be right): its fault, its cause unknown."""
    return {"topic": f.topic, "partition": f.partition, "log_dir": None, "fault": f.fault, "cause": _cause(f),
            "streams_role": streams_role(f.topic)}


def undecided_row(u) -> dict:
    """A partition not known to be compacted or not (``collectors.logdirs.snapshot.Undecided``): listed with
    why it is not judged and what its listing shows; its records are not read (``--all`` reads them).
    ``explain`` says the same of such a partition."""
    from monitor.verdicts.causes import unknown_cause

    cause = unknown_cause(u.topic, u.partition, u.reason).as_dict()
    del cause["topic"], cause["partition"]
    return {"topic": u.topic, "partition": u.partition, "log_dir": u.log_dir, "fault": None, "not_judged": u.reason,
            "log_bytes": u.log_bytes, "segments": u.segments, "first_segment_base_offset": u.first_segment,
            "active_segment_base_offset": u.active_segment, "cause": cause, "streams_role": streams_role(u.topic)}


def _table(rows: list[dict], out) -> None:
    out.write("  ".join(h.ljust(w) for h, (_, w) in zip(HEADS, COLUMNS)) + "\n")
    for r in rows:
        vals = []
        for k, w in COLUMNS:
            v = r.get(k)
            # None: a faulted or unjudged partition's figures (the line below says why), no tombstone, no role
            v = "-" if v is None else SHOWN[k](v) if k in SHOWN else v
            vals.append(str(v)[:w].ljust(w))
        out.write("  ".join(vals) + "\n")
    for r in rows:
        if r["fault"]:
            out.write(f"fault: {r['topic']}-{r['partition']}: {r['fault']}\n")
        if r.get("not_judged"):
            out.write(f"{r['topic']}-{r['partition']}: {r['not_judged']}; {bytes_iec(r['log_bytes'])} in {r['segments']} "
                      f"segment(s), {r['log_dir']}\n")
        ev = (r.get("cause") or {}).get("evidence") or {}
        if _has_horizon_news(ev.get("delete_horizons")):
            out.write(f"horizons: {r['topic']}-{r['partition']}: {describe_horizons(ev['delete_horizons'])}\n")
        past = ev.get("tombstones_past_horizon")
        if past:
            out.write(f"past horizon: {r['topic']}-{r['partition']}: {past['why']}; fix: {past['fix'][0]}\n")
        if r.get("uncleanable"):
            u = r["uncleanable"]
            out.write(f"uncleanable: {r['topic']}-{r['partition']}: {u['exception']}: {u['message']} "
                      f"({u['source']}; clears on a broker restart)\n")


def _has_horizon_news(ev: dict | None) -> bool:
    """Whether a partition's horizon line says anything: a tombstone or marker on disk, or tombstones unknown."""
    if not ev:
        return False
    return any(states is None or any(states.values()) for states in (ev["records"] or {}).values()) \
        or any((ev["rejected"] or {}).values())


def _open_transactions_table(rows: list[dict], out) -> None:
    """Below the partition table, one line per open transaction (from ``PartitionState.as_dict``),
    with whether it hangs (open longer than transaction.max.timeout.ms)."""
    txns = [(r, t) for r in rows for t in r.get("open_transactions") or ()]
    if not txns:
        return
    out.write("\nopen transactions (hanging: open longer than transaction.max.timeout.ms)\n")
    heads = [("partition", 34), ("producer id", 12), ("epoch", 6), ("first offset", 13), ("age", 11), ("hanging", 7)]
    out.write("  ".join(h.ljust(w) for h, w in heads) + "\n")
    for r, t in txns:
        age = "-" if t["age_ms"] is None else duration_ms(t["age_ms"])
        vals = [f"{r['topic']}-{r['partition']}", t["producer_id"], t["producer_epoch"], t["first_offset"], age,
                yes_no(t["hanging"])]
        out.write("  ".join(str(v)[:w].ljust(w) for v, (_, w) in zip(vals, heads)) + "\n")


def _space_lines(snap, out) -> None:
    """Each log dir's free space against the room its largest clean needs (``monitor.model.diskspace``)."""
    for sp in snap.space:
        if sp.error:
            out.write(f"free space: {sp.error}\n")
            continue
        need = "no compacted segment to clean" if sp.need is None else (
            f"the largest clean needs {bytes_iec(sp.need.bytes)} ({sp.need.topic}-{sp.need.partition}): "
            + ("room for it" if sp.room_for_clean else "NO ROOM: the cleaner's copy would fail and the broker "
               "would take this log dir offline"))
        out.write(f"free space: {sp.log_dir}: {bytes_iec(sp.free_bytes)} free; {need}\n")


def _leftovers_table(rows, out) -> None:
    """Kafka's temporary files left behind (``monitor.kafka.logdir.Leftover``), one line each, when there are any."""
    for r in rows:
        for x in r.get("leftover_files") or ():
            out.write(f"leftover: {r['log_dir']}/{r['topic']}-{r['partition']}/{x['file']}: {x['kind']}, "
                      f"{bytes_iec(x['bytes'])}, unchanged {duration_ms(x['unchanged_ms'])} (> file.delete.delay.ms; "
                      "the broker removes or completes it on its next start)\n")

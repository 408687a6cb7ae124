"""The audit's what-if table: each compacted topic under other ``min.cleanable.dirty.ratio``,
``segment.ms``, ``segment.bytes`` and ``delete.retention.ms`` values (``monitor.model.whatif``, the model
and its assumptions). This module only gathers the model's inputs from what the audit already made,
on the driver, with no Spark job and no second pass over the data:

* the write rate: the partition task's ``write_bytes_per_second`` (its uncleaned tail's bytes over the
  time its batches span, from the batch headers it read anyway: ``partition_audit.writes``);
* the live bytes: the settled projection (every live key's latest record once each, no tombstone or
  marker left, counted by Kafka's cleaner run over the files: ``monitor.model.nextclean``) less the
  uncleanable tail above the first uncleanable offset, which that projection keeps whole;
* the tombstone share: the tombstones no clean has stamped yet (the ones written since the last clean)
  over the records the uncleaned tail holds.

The records path (dumps, a live topic) has neither segment timestamps per file nor a settled count:
its what-if figures are unknown, with the reason.
"""

from __future__ import annotations

from monitor.model.whatif import CURRENT, DEFAULT_BACKOFF_MS, Observed, Settings, topic_outcomes

WHATIF_DDL = ("topic string, setting string, value double, partitions long, min_cleanable_dirty_ratio double, "
              "segment_ms long, segment_bytes long, delete_retention_ms long, size_bytes double, peak_bytes double, "
              "cleans_per_day double, read_bytes_per_day double, written_bytes_per_day double, "
              "write_bytes_per_second double, live_bytes double, unknown_reason string")


def observed(facts: dict, row: dict, backoff_ms: int = DEFAULT_BACKOFF_MS) -> Observed:
    """One partition's model inputs from its facts (the task's) and its audit row (``tables.partition_row``)."""
    def no(reason: str) -> Observed:
        return Observed(None, 0.0, backoff_ms=backoff_ms, unknown_reason=f"{row['topic']}-{row['partition']}: {reason}")

    if "write_bytes_per_second" not in facts or (facts.get("write_bytes_per_second") is None
                                                 and facts.get("write_rate_unknown_reason") is None):
        return no("write rate unknown: the input has records, not segment files whose batches time the writes")
    if facts["write_bytes_per_second"] is None:
        return no(f"write rate unknown: {facts['write_rate_unknown_reason']}")
    if row.get("settled_bytes") is None:
        why = row.get("projection_unknown_reason") or row.get("config_unknown_reason") or "not counted"
        return no(f"live bytes unknown (settled size unknown: {why})")
    if row.get("clean_bytes") is None or row.get("cleanable_bytes") is None:
        return no(f"live bytes unknown ({row.get('config_unknown_reason') or 'bounds unknown'})")
    gone = row.get("retention_deleted_bytes") or 0
    tail = max(row["bytes"] - gone - row["clean_bytes"] - row["cleanable_bytes"], 0)
    live = max(row["settled_bytes"] - tail, 0)
    offsets = facts.get("write_offsets") or 0
    share = min((row.get("tombstones_unstamped") or 0) / offsets, 1.0) if offsets > 0 else 0.0
    return Observed(float(facts["write_bytes_per_second"]), float(live), tombstone_share=share, backoff_ms=backoff_ms)


def current_settings(cfg) -> Settings:
    return Settings(cfg.min_cleanable_dirty_ratio, cfg.segment_ms, cfg.segment_bytes, cfg.delete_retention_ms)


def whatif_rows(facts: list[dict], rows: list[dict], inputs) -> list[dict]:
    """The what-if table's rows (``WHATIF_DDL``): for each compacted topic, its grid, summed over its
    partitions. ``inputs``: the audit's (``AuditInputs``: each topic's effective config)."""
    by_tp = {(f["topic"], f["partition"]): f for f in facts}
    per: dict = {}
    for r in rows:
        per.setdefault(r["topic"], []).append(r)
    out = []
    for topic, mine in sorted(per.items()):
        ec = inputs.effective(topic)
        if not ec.config.compacted:
            continue
        obs = [observed(by_tp.get((topic, r["partition"]), {}), r) for r in mine]
        unknown_cfg = sorted(k for k in ec.unknown_keys if k in ("min.cleanable.dirty.ratio", "segment.ms",
                                                                 "segment.bytes", "delete.retention.ms"))
        if unknown_cfg:
            why = ec.refusal.text if ec.refusal is not None else "not given"
            obs = [Observed(None, 0.0, unknown_reason=f"{', '.join(unknown_cfg)} unknown: {why}")]
        base = current_settings(ec.config)
        known = [o for o in obs if o.write_bytes_per_second is not None]
        rate = sum(o.write_bytes_per_second for o in known) if len(known) == len(obs) else None
        live = sum(o.live_bytes for o in known) if len(known) == len(obs) else None
        for t in topic_outcomes(obs, base):
            s = t.settings
            out.append({"topic": topic, "setting": t.setting, "value": None if t.setting == CURRENT else t.value,
                        "partitions": len(mine), "min_cleanable_dirty_ratio": s.min_cleanable_dirty_ratio,
                        "segment_ms": s.segment_ms, "segment_bytes": s.segment_bytes,
                        "delete_retention_ms": s.delete_retention_ms, "size_bytes": t.size_bytes,
                        "peak_bytes": t.peak_bytes, "cleans_per_day": t.cleans_per_day,
                        "read_bytes_per_day": t.read_bytes_per_day, "written_bytes_per_day": t.written_bytes_per_day,
                        "write_bytes_per_second": rate, "live_bytes": live, "unknown_reason": t.unknown_reason})
    return out

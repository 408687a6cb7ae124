"""What an audit run folder holds and when it is complete: one definition for the audit that writes
it (``spark_analysis.job``) and the dashboard that reads it (``dashboards.auditruns``).

A run is written under a hidden temporary name and renamed to ``run-<UTC time>[-N]`` when whole; its
completion marker ``_SUCCESS`` (Hadoop's name for a finished output) is written last and lists every
file of the run with its size. So a folder without the marker is a run still being written (or one
that failed and could not be cleaned away), and a file whose size differs from the marker's is
damaged. The summary's fields the dashboard shows are checked here too, with the file named.
"""

from __future__ import annotations

import json
import math
from monitor.fileio import strictjson

RUN_PREFIX = "run-"
TEMP_PREFIX = ".tmp-"  # hidden: neither the dashboard nor Spark's readers (which skip . and _ names) list it
MARKER = "_SUCCESS"
SUMMARY = "summary.json"
REPORT = "report.html"
LATEST = "latest.json"
TABLES = ("partitions", "topics", "tombstone_buckets", "top_keys", "top_producers", "faults", "replicas", "whatif")
# the summary's figures the dashboard shows, each a number
SUMMARY_NUMBERS = ("bytes", "reclaimable_bytes", "estimated_clean_seconds", "tombstones_past_retention", "faults")

COMPLETE, IN_PROGRESS, DAMAGED = "complete", "in progress", "damaged"

# what a topic whose config is unknown does to its figures (``spark_analysis.audit.tables.CONFIG_DEPENDENT``):
# said the same way by the HTML report and the Audit page
CONFIG_UNKNOWN_NOTE = ("their reclaimable bytes, dirty ratio, eligibility and tombstones past retention are unknown "
                       "(not zero), and left out of the totals")


def unknown_configs(summary: dict) -> dict[str, str]:
    """Topic -> why its config (some of it) is unknown, from ``summary.json``'s ``topic_configs``, in
    topic order; empty for a run whose every topic config is known, or from before #22 (no such field)."""
    per = summary.get("topic_configs") or {}
    return {t: c.get("reason") or "" for t, c in sorted(per.items()) if c.get("unknown")}


class RunDamaged(ValueError):
    """One file of a run that cannot be used: ``file`` (relative to the run folder) and why."""

    def __init__(self, file: str, reason: str):
        self.file, self.reason = file, reason
        super().__init__(f"{file}: {reason}")


def marker_text(run: str, generated_at_ms: int, files: dict[str, int]) -> str:
    """The marker's content: the run, and every file in it (relative path -> size in bytes)."""
    return strictjson.dumps({"run": run, "generated_at_ms": generated_at_ms, "files": dict(sorted(files.items()))},
                      indent=1)


def _json_object(raw: bytes, file: str) -> dict:
    if not raw:
        raise RunDamaged(file, "empty")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunDamaged(file, f"binary content, not JSON text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg  # "Unterminated string starting at"
        raise RunDamaged(file, f"not JSON: {msg} at byte {exc.pos} (truncated?)") from None
    if not isinstance(data, dict):
        raise RunDamaged(file, f"a JSON {type(data).__name__}, expected an object")
    return data


def read_marker(raw: bytes) -> dict[str, int]:
    """The marker's file sizes; RunDamaged if it is not what ``marker_text`` writes."""
    data = _json_object(raw, MARKER)
    files = data.get("files")
    if not isinstance(files, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in files.values()):
        raise RunDamaged(MARKER, "no file list (files: {path: size})")
    return files


def size_problems(expected: dict[str, int], actual: dict[str, int]) -> list[RunDamaged]:
    """Files missing or of another size than the marker says (a truncated or replaced file)."""
    out = []
    for f, size in sorted(expected.items()):
        if f not in actual:
            out.append(RunDamaged(f, "missing"))
        elif actual[f] != size:
            out.append(RunDamaged(f, f"{actual[f]} bytes, the run wrote {size} (truncated or overwritten)"))
    return out


NO_MARKER = (f"no {MARKER}: the run is still being written, failed, or predates completion markers "
             f"(run the audit again)")


def run_status(marker: bytes | None, sizes: dict[str, int]) -> tuple[str, list[str]]:
    """A run's status from its marker's bytes (None: no marker) and its files' sizes (relative path ->
    size, the marker itself left out): complete, in progress, or damaged with the problems. One rule
    for every reader (the dashboard's run picker, the report's earlier run)."""
    if marker is None:
        return IN_PROGRESS, [NO_MARKER]
    try:
        damaged = size_problems(read_marker(marker), sizes)
    except RunDamaged as exc:
        return DAMAGED, [str(exc)]
    return (DAMAGED, [str(d) for d in damaged]) if damaged else (COMPLETE, [])


def read_summary(raw: bytes) -> dict:
    """``summary.json`` as the dashboard uses it; RunDamaged naming the file and the field otherwise."""
    data = _json_object(raw, SUMMARY)
    for key in SUMMARY_NUMBERS:
        v = data.get(key)
        if v is None:
            raise RunDamaged(SUMMARY, f"{key} is {'null' if key in data else 'missing'}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise RunDamaged(SUMMARY, f"{key} is {v!r}, not a number")
    return data

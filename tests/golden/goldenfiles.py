"""Golden outputs: compare an output, normalised, with its recorded file under tests/golden/, or record it.

Re-recording (``GOLDEN_UPDATE=1 ./dev test tests/golden``) rewrites every golden file from the code as it
is. Do it only when a change of output is meant; the commit that carries the new files must say what
changed and why (a refactor of issue #29 changes nothing: its goldens stay as they are, or the commit
names the fork that was a bug and the figures it fixes).

What is normalised, and why (nothing else is):
- paths under the test's temporary folder -> ``<tmp>`` (pytest's folder differs every run);
- the session broker's and the JMX page server's ``host:port`` -> ``<bootstrap>``, ``<jmx>`` (ports the
  kernel hands out);
- figures that depend on the wall clock -> ``<now>``, only where the value is a number (a None stays
  None: known/unknown is kept): ages, times since, forecasts "at"/"in", the refresh's own timings. The
  inputs' timestamps are fixed and years old, so every comparison with "now" made from them (past a
  horizon, older than a lag, stale) comes out the same every run; only the distance to now moves.
  The same distance written into a sentence (``NOW_PHRASES``: "over the 1107.9 d since", "open 1107.9 d,")
  becomes ``<now>`` too: CI's first run of the goldens, a day after they were recorded, failed on it;
  They are named in ``NOW_KEYS`` (JSON keys) and ``NOW_METRICS`` (metric names): a refactor that makes
  another figure depend on the clock fails here, and one that loses a figure's dependence on the clock
  shows as a ``<now>`` turned into a number;
- in ``collect``'s page, counts of everything the session broker lists (``SHARED_METRICS``: other tests'
  topics and groups are there too) -> ``<shared broker>``, and a log dir's free disk space -> ``<machine>``;
- floating-point numbers to 12 significant digits (Spark sums per task, in an order that may vary);
- rows of the audit's tables sorted, a page's samples sorted within their family (the order threads
  finish in is no behaviour).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
UPDATE = os.environ.get("GOLDEN_UPDATE") == "1"
NOW = "<now>"

# JSON keys whose numeric value is a distance to the wall clock (logdir, explain, the audit's summary)
NOW_KEYS = {
    "oldest_tombstone_age_ms", "active_segment_age_ms", "unchanged_ms", "age_ms", "in_seconds", "at_ms",
    "taken_at", "generated_at_ms", "duration_seconds", "elapsed_seconds", "open_seconds", "time_lag_ms",
    "write_rate_bytes_per_second",  # the dirty section's bytes over the time since its first batch
    "write_bytes_per_second",  # the same, summed over a topic's partitions (the configuration review's evidence)
    "lag_seconds", "eligible_in_ms", "seconds_between_cleans",  # its other evidence against the clock
    "next_delete_horizon_ms", "next_removal_ms",  # an unstamped tombstone or marker: now + delete.retention.ms
}
# phrases of a sentence whose number is a distance to the wall clock (a write rate's basis, a hanging
# transaction's age): the number and its unit -> <now>, the words around kept
NOW_PHRASES = [
    re.compile(r"(over the )[0-9][0-9.]* (?:ms|s|min|h|d)( since)"),
    re.compile(r"(open )[0-9][0-9.]* (?:ms|s|min|h|d)(,)"),
    # min_compaction_lag's fix: a lag below the held-back records' age (their age grows with the clock)
    re.compile(r"(min\.compaction\.lag\.ms=)[0-9]+(   \(now )"),
    re.compile(r"(record is )[0-9][0-9.]* (?:ms|s|min|h|d)(?: [0-9]+ (?:s|min))?( old, so )"),
    re.compile(r"(old, so )[0-9][0-9.]* (?:ms|s|min|h|d)(?: [0-9]+ (?:s|min))?( lets)"),
    # the configuration review's segment check: the one-shot write rate, and how long segment.bytes takes at it
    re.compile(r"(at )(?:< )?[0-9][0-9.]* (?:B|KiB|MiB|GiB)/s( a segment of)"),
    re.compile(r"(fills in )[0-9][0-9.]* (?:ms|s|min|h|d)( and)"),
    re.compile(r"(time lag \()[0-9][0-9.]* (?:ms|s|min|h|d)( on partition)"),
    re.compile(r"(at )(?:< )?[0-9][0-9.]* (?:B|KiB|MiB|GiB)/s( its dirty ratio)"),
    re.compile(r"(min\.cleanable\.dirty\.ratio in )[0-9][0-9.]* (?:ms|s|min|h|d)(, so)"),
    re.compile(r"(--add-config delete\.retention\.ms=)[0-9]{10,}()"),  # 2x a lag of months or more
]
# the configuration review's checks whose suggested value is made from a time lag (the clock's)
CLOCK_SUGGESTIONS = {"delete_retention_below_consumer_lag"}
MACHINE = "<machine>"
# metric names whose value is the machine's, not the inputs' (free disk space)
MACHINE_METRICS = {"kafka_compaction_log_dir_free_bytes"}
# metric names (without _total/_created suffixes) whose value is a distance to the wall clock
NOW_METRICS = {
    "kafka_compaction_source_last_success_timestamp_seconds", "kafka_compaction_source_refresh_duration_seconds",
    "kafka_compaction_partition_active_segment_age_seconds", "kafka_compaction_partition_oldest_tombstone_age_seconds",
    "kafka_compaction_partition_oldest_open_transaction_age_seconds",
    # in one refresh: the time between the log dirs' read and the join (how long eligible, LSOs apart)
    "kafka_compaction_partition_eligible_seconds", "kafka_compaction_partition_last_stable_offset_disagreement_seconds",
    "kafka_compaction_consumer_group_lag_seconds", "kafka_compaction_consumer_group_lag_retention_ratio",
    "kafka_compaction_consumer_group_topic_max_lag_seconds",
    "kafka_compaction_consumer_group_topic_max_lag_retention_ratio",
    "kafka_compaction_partition_next_delete_horizon_timestamp_seconds",  # unstamped: now + delete.retention.ms
}
# (metric, label, on the samples with): label values made from the clock (a suggested delete.retention.ms
# above a group's time lag)
NOW_LABELS = {("kafka_compaction_topic_config_finding", "suggested", 'check="delete_retention_below_consumer_lag"')}
SHARED = "<shared broker>"
# metric names whose value counts what the whole session broker holds, other tests' topics and groups too
SHARED_METRICS = {"kafka_compaction_admin_listed_groups", "kafka_compaction_admin_listed_topics"}


class Normaliser:
    def __init__(self, replacements: dict[str, str]):
        # longest first, so a path inside another one is replaced whole
        self.replacements = sorted(replacements.items(), key=lambda kv: -len(kv[0]))

    def text(self, s: str) -> str:
        for old, new in self.replacements:
            s = s.replace(old, new)
        for phrase in NOW_PHRASES:
            s = phrase.sub(rf"\g<1>{NOW}\g<2>", s)
        return s

    def data(self, v, key: str | None = None):
        if isinstance(v, dict):
            if v.get("check") in CLOCK_SUGGESTIONS:  # a finding whose suggested value follows a lag (2x it)
                v = {**v, "suggested": NOW}
            return {k: self.data(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [self.data(x, key) for x in v]
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, bool) or v is None:
            return v
        if key in NOW_KEYS and isinstance(v, (int, float)):
            return NOW
        if isinstance(v, float):
            return float(f"{v:.12g}") if math.isfinite(v) else repr(v)
        return v

    def json_text(self, v) -> str:
        return json.dumps(self.data(v), indent=1, sort_keys=True, default=str) + "\n"

    def exposition(self, page: str) -> str:
        """A Prometheus text page: samples sorted within each family, clock figures replaced."""
        out, samples = [], []

        def flush():
            out.extend(sorted(samples))
            samples.clear()

        for line in self.text(page).splitlines():
            if line.startswith("#"):
                flush()
                out.append(line)
                continue
            if not line.strip():
                continue
            m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line)
            if m and _base(m.group(1)) in NOW_METRICS:
                line = f"{m.group(1)}{m.group(2) or ''} {NOW}"
            elif m and _base(m.group(1)) in MACHINE_METRICS:
                line = f"{m.group(1)}{m.group(2) or ''} {MACHINE}"
            elif m and _base(m.group(1)) in SHARED_METRICS:
                line = f"{m.group(1)}{m.group(2) or ''} {SHARED}"
            for metric, label, with_ in NOW_LABELS:
                if m and m.group(1) == metric and with_ in line:
                    line = re.sub(rf'({label}=")\d+(")', rf"\g<1>{NOW}\g<2>", line)
            samples.append(line)
        flush()
        return "\n".join(out) + "\n"


def _base(name: str) -> str:
    for suffix in ("_total", "_created", "_count", "_sum", "_bucket"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def check(name: str, text: str) -> None:
    """``text`` equals tests/golden/``name``; or, with GOLDEN_UPDATE=1, becomes it. A difference fails
    with a unified diff of its first lines."""
    path = HERE / name
    if UPDATE:
        path.write_text(text)
        return
    assert path.exists(), f"no golden file {path}: record it with GOLDEN_UPDATE=1 (see tests/golden/golden.py)"
    want = path.read_text()
    if text != want:
        diff = list(difflib.unified_diff(want.splitlines(), text.splitlines(), f"golden/{name}", "now", n=2,
                                         lineterm=""))
        shown = "\n".join(diff[:80]) + (f"\n... ({len(diff) - 80} more diff lines)" if len(diff) > 80 else "")
        raise AssertionError(f"{name} differs from its golden file:\n{shown}")

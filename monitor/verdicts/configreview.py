"""The configuration review (``compaction-monitor topics lint``, the collector's
``topic_config_finding`` and the dashboard's "Config review" page): every compacted topic's live
settings against the pitfalls operators meet, judged with what the collector measures (consumer
groups' time lag, write rates, active segments, tombstones on disk), each finding with its evidence and
a suggested value.

The checks (``CHECKS``), and the limits they use (``ReviewLimits``, defined here once):

* ``delete_retention_below_consumer_lag``: delete.retention.ms below the slowest consumer group's time
  lag: the cleaner may drop a delete before that group reads it (LogCleaner keeps a tombstone for
  delete.retention.ms after the clean that first met it, then removes it);
* ``dirty_ratio_too_low``: min.cleanable.dirty.ratio below ``min_dirty_ratio``: every clean recopies
  the whole clean section, and it comes after only a sliver of new data (constant recleaning);
* ``unbounded_max_compaction_lag``: max.compaction.lag.ms left at Long.MAX_VALUE on a quiet topic that
  holds tombstones: a topic whose dirty ratio will not pass min.cleanable.dirty.ratio within
  ``quiet_after_ms`` at the measured write rate is never picked, so its tombstones (and the keys they
  delete) stay on disk indefinitely;
* ``segment_roll_beyond_traffic``: the active segment would not roll within ``roll_within_ms`` (by
  min(segment.ms, max.compaction.lag.ms), LogConfig.maxSegmentMs, or by segment.bytes at the measured
  rate): the cleaner never touches the active segment, so its duplicates stay;
* ``retention_below_delete_retention``: cleanup.policy=compact,delete with retention.ms below
  delete.retention.ms: time retention deletes whole segments, data and tombstones alike, before the
  promise delete.retention.ms makes to consumers (and the tombstone setting is moot);
* ``decompressed_limit_below_records``: max.decompressed.message.bytes (Kafka 4.4) below the largest record
  of a compressed batch on disk: Kafka's doc says lowering it "below the size of already-stored records makes
  compaction and timestamp offset lookups of affected partitions fail until it is raised again", so this
  finds it before the cleaner does (at the cleaner's next pick). At Kafka's default no record can exceed it:
  passed without reading a log dir.

Each check is one row of ``CHECKS`` (``Check``: its name, the inputs it needs, its severity, what it guards
against); ``topics lint``, the collector's ``topic_config_finding`` (hence the dashboard's Config review) and
``explain``'s configuration lines all run ``review`` over that one table, so they cannot disagree. Where a
check is also an alert (``delete_retention_below_consumer_lag`` and ConsumerMayMissTombstones' critical
rule), the check makes the rule's own comparison (``monitor.contract.rules``).

A check whose measured input is missing is not guessed: it is not run, and ``Review.not_run`` names it with
the input it needs and why that input is missing; a review with a check not run never passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from monitor.contract.rules import LAG_PAST_RETENTION, holds
from monitor.contract.units import bytes_iec, duration_ms, rate
from monitor.model.compaction import over_decompressed_limit
from monitor.verdicts.fixes import BOOTSTRAP_PLACEHOLDER, alter_topic, decompressed_limit_to_fit
from monitor.verdicts.forecasts import max_segment_ms
from monitor.model.topicconfig import LONG_MAX, TopicConfig


@dataclass(frozen=True)
class ReviewLimits:
    min_dirty_ratio: float = 0.1  # below: "very low" min.cleanable.dirty.ratio
    suggested_dirty_ratio: float = 0.5  # Kafka's default
    quiet_after_ms: int = 86_400_000  # a topic not eligible within a day at its write rate is quiet
    suggested_max_compaction_lag_ms: int = 86_400_000
    roll_within_ms: int = 86_400_000  # an active segment that rolls later than this holds duplicates too long
    suggested_segment_ms: int = 3_600_000


# the inputs a check may need (the key a program reads: JSON's and topic_config_check_not_run's "needs"),
# and how a person supplies them (INPUTS): every check needs the topic's live config
LIVE_CONFIG, GROUP_LAG, LOG_DIR = "live_config", "consumer_group_lag", "log_dir"
INPUTS = {
    LIVE_CONFIG: "the topic's live config: give --bootstrap-server",
    GROUP_LAG: "the consumer groups' time lag: give --bootstrap-server (consumer_groups on)",
    LOG_DIR: "the topic's partitions on disk (write rate, tombstones, active segment): give --log-dir",
}


@dataclass(frozen=True)
class Missing:
    """A check not run: the input it needs (a key of ``INPUTS``) and why that input is missing."""

    needs: str
    why: str


@dataclass(frozen=True)
class GroupLagFact:
    group: str
    partition: int
    lag_seconds: float | None  # None: the record at the committed offset could not be read


@dataclass(frozen=True)
class TopicFacts:
    """One compacted topic: its live config and what was measured about it (None: not measured)."""

    topic: str
    config: TopicConfig
    log_bytes: int | None = None  # summed over the partitions whose log dirs were read
    clean_bytes: int | None = None
    cleanable_bytes: int | None = None
    tombstones: int | None = None
    write_bytes_per_second: float | None = None  # summed over the partitions
    write_rate_basis: str = "no log dir read"
    active_segment_bytes: int | None = None  # the largest active segment of the partitions
    active_segment_age_ms: int | None = None  # the oldest active segment's age (its first batch's timestamp)
    # the largest record of a compressed batch in the partitions read (PartitionState.max_decompressed_record_bytes)
    max_decompressed_record_bytes: int | None = None
    records_pending: bool = False  # some partition's records are still to be read (headers first): the largest partial
    group_lags: tuple[GroupLagFact, ...] = ()
    groups_measured: bool = False  # the consumer groups were listed (an empty tuple then means none)


@dataclass(frozen=True)
class Finding:
    topic: str
    check: str  # one of CHECKS
    setting: str  # the topic config to change
    current: str
    suggested: str
    summary: str
    evidence: dict
    fix: str  # the command line

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Review:
    findings: tuple[Finding, ...]
    unchecked: dict = field(default_factory=dict)  # topic -> {check: Missing}
    topics: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Every check ran on every topic and found nothing: a check not run is not a pass."""
        return not self.findings and not self.unchecked

    @property
    def not_run(self) -> list[dict]:
        """The checks not run, one entry per (check, input needed, why), with the topics it concerns."""
        by: dict[tuple[str, str, str], list[str]] = {}
        for topic, checks in sorted(self.unchecked.items()):
            for name, m in checks.items():
                by.setdefault((name, m.needs, m.why), []).append(topic)
        return [{"check": name, "needs": needs, "why": why, "topics": topics}
                for (name, needs, why), topics in sorted(by.items())]

    def as_dict(self) -> dict:
        return {"passed": self.passed, "topics": list(self.topics),
                "findings": [f.as_dict() for f in self.findings], "not_run": self.not_run}


def _ms(v: int) -> str:
    return "unlimited" if v >= LONG_MAX or v < 0 else duration_ms(v)


# how each setting a finding changes reads for a person, beside its value as Kafka takes it
_HUMAN = {"delete.retention.ms": _ms, "max.compaction.lag.ms": _ms, "segment.ms": _ms, "retention.ms": _ms,
          "max.decompressed.message.bytes": bytes_iec}


def human_value(setting: str, value: str) -> str:
    """A setting's value for a person only (the Config review page): "7 d" for segment.ms=604800000; a value
    without a unit (a ratio) as written."""
    human = _HUMAN.get(setting)
    try:
        return human(int(value)) if human else value
    except ValueError:
        return value


def setting_text(setting: str, value: str) -> str:
    """A setting's value as written, with its unit for a person where it has one: "604800000 (7 d)"."""
    human = _HUMAN.get(setting)
    try:
        return f"{value} ({human(int(value))})" if human else value
    except ValueError:
        return value


def _delete_retention(t: TopicFacts, lim: ReviewLimits, b: str):
    if not t.groups_measured:
        return Missing(GROUP_LAG, "consumer groups were not read")
    lags = [g for g in t.group_lags if g.lag_seconds is not None]
    if not lags:
        return None if not t.group_lags else Missing(GROUP_LAG, "no group's time lag could be read")
    slow = max(lags, key=lambda g: g.lag_seconds)
    retention = t.config.delete_retention_ms
    # ConsumerMayMissTombstones' critical comparison (time lag / delete.retention.ms >= 1), not a second one
    if retention <= 0 or not holds(LAG_PAST_RETENTION, slow.lag_seconds * 1000 / retention,
                                   LAG_PAST_RETENTION.threshold.number):
        return None
    # twice the lag, up to whole days: a value a person sets, and one label value while the lag grows within a day
    suggested = max(math.ceil(slow.lag_seconds * 2000 / 86_400_000), 1) * 86_400_000
    return Finding(t.topic, "delete_retention_below_consumer_lag", "delete.retention.ms", str(retention),
                   str(suggested),
                   f"delete.retention.ms ({duration_ms(retention)}) is below consumer group {slow.group}'s time lag "
                   f"({duration_ms(slow.lag_seconds * 1000)} on partition {slow.partition}): the cleaner may remove "
                   "deletes before that group reads them",
                   {"delete.retention.ms": retention, "slowest_group": slow.group, "partition": slow.partition,
                    "lag_seconds": slow.lag_seconds},
                   alter_topic(b, t.topic, "delete.retention.ms", suggested))


def _dirty_ratio(t: TopicFacts, lim: ReviewLimits, b: str):
    m = t.config.min_cleanable_dirty_ratio
    if m >= lim.min_dirty_ratio:
        return None
    ev = {"min.cleanable.dirty.ratio": m, "log_bytes": t.log_bytes, "write_bytes_per_second": t.write_bytes_per_second}
    every = ""
    if t.log_bytes and t.write_bytes_per_second:
        secs = m * t.log_bytes / t.write_bytes_per_second
        ev["seconds_between_cleans"] = secs
        every = (f"; at {rate(t.write_bytes_per_second)} that is a clean every {duration_ms(secs * 1000)}, each "
                 f"recopying about {bytes_iec((1 - m) * t.log_bytes)} of clean data")
    suggested = f"{max(lim.suggested_dirty_ratio, lim.min_dirty_ratio):g}"  # raised: never below the limit
    return Finding(t.topic, "dirty_ratio_too_low", "min.cleanable.dirty.ratio", f"{m:g}", suggested,
                   f"min.cleanable.dirty.ratio {m:g} is below {lim.min_dirty_ratio:g}: the cleaner picks the log "
                   f"again as soon as {m:.0%} of it is dirty and rewrites the rest each time{every}", ev,
                   alter_topic(b, t.topic, "min.cleanable.dirty.ratio", suggested))


def _time_to_eligible_ms(t: TopicFacts) -> float:
    """At the measured write rate, ms until the cleaner may pick the log: its cleanable ratio past
    min.cleanable.dirty.ratio, counting the active segment's bytes as dirty once it rolls, and never
    before it rolls (on an append only: LogSegment.shouldRoll). inf: no writes, so never."""
    c, r = t.config, t.write_bytes_per_second
    clean, dirty, active = t.clean_bytes or 0, t.cleanable_bytes or 0, t.active_segment_bytes or 0
    m = c.min_cleanable_dirty_ratio
    if clean + dirty > 0 and dirty / (clean + dirty) > m:
        return 0.0
    if m >= 1 or r is None or r <= 0:
        return float("inf")
    need = max((m * (clean + dirty + active) - dirty - active) / (1 - m), 0)
    age = t.active_segment_age_ms or 0
    roll = min(max(max_segment_ms(c) - age, 0), max(c.segment_bytes - active, 0) / r * 1000)
    return max(need / r * 1000, roll)


def _max_lag(t: TopicFacts, lim: ReviewLimits, b: str):
    c = t.config
    if c.max_compaction_lag_ms < LONG_MAX:
        return None
    if t.tombstones is None:
        return Missing(LOG_DIR, "no log dir read: tombstones on disk unknown")
    if t.tombstones == 0:
        return None
    if t.write_bytes_per_second is None:
        return Missing(LOG_DIR, f"write rate unknown ({t.write_rate_basis})")
    wait = _time_to_eligible_ms(t)
    if wait <= lim.quiet_after_ms:
        return None
    # lowered from unbounded (Long.MAX_VALUE), whatever delete.retention.ms is (unbounded too: the limit's value)
    suggested = max(c.delete_retention_ms, lim.suggested_max_compaction_lag_ms)
    suggested = suggested if suggested < LONG_MAX else lim.suggested_max_compaction_lag_ms
    when = "never" if wait == float("inf") else f"in {duration_ms(wait)}"
    return Finding(t.topic, "unbounded_max_compaction_lag", "max.compaction.lag.ms",
                   str(c.max_compaction_lag_ms), str(suggested),
                   f"max.compaction.lag.ms is unbounded on a quiet topic with {t.tombstones} tombstone(s) on disk: at "
                   f"{rate(t.write_bytes_per_second)} its dirty ratio passes min.cleanable.dirty.ratio {when}, "
                   "so nothing forces a clean and the deletes stay",
                   {"tombstones": t.tombstones, "write_bytes_per_second": t.write_bytes_per_second,
                    "write_rate_basis": t.write_rate_basis, "eligible_in_ms": None if wait == float("inf") else wait,
                    "min.cleanable.dirty.ratio": c.min_cleanable_dirty_ratio},
                   alter_topic(b, t.topic, "max.compaction.lag.ms", suggested))


def _segment_roll(t: TopicFacts, lim: ReviewLimits, b: str):
    c = t.config
    by_time = max_segment_ms(c)
    if by_time <= lim.roll_within_ms:
        return None
    r = t.write_bytes_per_second
    if r is None:
        return Missing(LOG_DIR, f"write rate unknown ({t.write_rate_basis}): segment.bytes' roll time cannot be told")
    by_size = c.segment_bytes / r * 1000 if r > 0 else float("inf")
    roll = min(by_time, by_size)
    if roll <= lim.roll_within_ms:
        return None
    suggested = min(lim.suggested_segment_ms, lim.roll_within_ms)  # below the roll time found too long
    return Finding(t.topic, "segment_roll_beyond_traffic", "segment.ms", str(c.segment_ms), str(suggested),
                   f"at {rate(r)} a segment of segment.bytes={c.segment_bytes} ({bytes_iec(c.segment_bytes)}) fills "
                   f"{'never' if by_size == float('inf') else 'in ' + duration_ms(by_size)} and segment.ms rolls it after "
                   f"{duration_ms(by_time)}: duplicates wait that long in the active segment, which the cleaner never "
                   "touches",
                   {"segment.ms": c.segment_ms, "segment.bytes": c.segment_bytes, "max.compaction.lag.ms":
                    c.max_compaction_lag_ms, "write_bytes_per_second": r, "write_rate_basis": t.write_rate_basis,
                    "active_segment_bytes": t.active_segment_bytes, "active_segment_age_ms": t.active_segment_age_ms},
                   alter_topic(b, t.topic, "segment.ms", suggested))


def _compact_delete(t: TopicFacts, lim: ReviewLimits, b: str):
    c = t.config
    if "delete" not in c.cleanup_policy or c.retention_ms < 0 or c.retention_ms >= c.delete_retention_ms:
        return None
    return Finding(t.topic, "retention_below_delete_retention", "retention.ms", str(c.retention_ms),
                   str(c.delete_retention_ms),
                   f"cleanup.policy=compact,delete with retention.ms ({_ms(c.retention_ms)}) below delete.retention.ms "
                   f"({_ms(c.delete_retention_ms)}): whole segments, latest values and deletes alike, are removed "
                   "by time before consumers were promised the deletes",
                   {"cleanup.policy": ",".join(c.cleanup_policy), "retention.ms": c.retention_ms,
                    "delete.retention.ms": c.delete_retention_ms},
                   alter_topic(b, t.topic, "retention.ms", c.delete_retention_ms))


def _decompressed_limit(t: TopicFacts, lim: ReviewLimits, b: str):
    limit = t.config.decompressed_cap
    if limit is None:
        return None
    largest = t.max_decompressed_record_bytes
    if largest is None:
        return Missing(LOG_DIR, "no log dir read: the largest stored record is unknown")
    if not over_decompressed_limit(largest, limit):
        return Missing(LOG_DIR, "records still being read (headers first)") if t.records_pending else None
    suggested = decompressed_limit_to_fit(largest)
    return Finding(t.topic, "decompressed_limit_below_records", "max.decompressed.message.bytes", str(limit),
                   str(suggested),
                   f"max.decompressed.message.bytes={limit} ({bytes_iec(limit)}) is below a stored record of "
                   f"{largest} bytes ({bytes_iec(largest)} decompressed): the cleaner's next clean of the partition "
                   "fails with InvalidRecordException and marks it uncleanable until a broker restart",
                   {"max.decompressed.message.bytes": limit, "max_decompressed_record_bytes": largest},
                   alter_topic(b, t.topic, "max.decompressed.message.bytes", suggested))


@dataclass(frozen=True)
class Check:
    """One row of the check table: ``test(facts, limits, bootstrap)`` returns a ``Finding``, None (passed)
    or ``Missing`` (not run: the input it lacks). ``needs``: the inputs beyond the topic's live config it
    reads; ``severity`` as the alert rules grade (``alert``: the rule that fires on the same condition, if
    any); ``why``: what it guards against, in a line (the dashboard's page shows it from the metric's labels)."""

    name: str
    test: object
    setting: str
    needs: tuple[str, ...]
    severity: str
    why: str
    alert: str | None = None
    # a check that judges only a setting set away from Kafka's default (max.decompressed.message.bytes: at the
    # default no record can exceed it): moot, not "not run", for a topic whose live config is not known
    # (``unreviewed``), where the other checks are not run and the review does not pass anyway
    moot_at_default: bool = False


_TABLE = (
    Check("delete_retention_below_consumer_lag", _delete_retention, "delete.retention.ms", (GROUP_LAG,), "critical",
          "a consumer group lags longer than deletes are kept: it may miss them", "ConsumerMayMissTombstones"),
    Check("dirty_ratio_too_low", _dirty_ratio, "min.cleanable.dirty.ratio", (), "warning",
          "the cleaner recleans the whole log for a sliver of new data"),
    Check("unbounded_max_compaction_lag", _max_lag, "max.compaction.lag.ms", (LOG_DIR,), "warning",
          "a quiet topic's tombstones are never forced out"),
    Check("segment_roll_beyond_traffic", _segment_roll, "segment.ms", (LOG_DIR,), "warning",
          "duplicates wait in an active segment that the traffic takes too long to roll"),
    Check("retention_below_delete_retention", _compact_delete, "retention.ms", (), "warning",
          "compact,delete: time retention removes data before the deletes' promise"),
    Check("decompressed_limit_below_records", _decompressed_limit, "max.decompressed.message.bytes", (LOG_DIR,),
          "critical", "a stored record is above max.decompressed.message.bytes: the cleaner fails on it",
          "RecordOverDecompressedLimit", moot_at_default=True),
)
CHECKS: dict[str, Check] = {c.name: c for c in _TABLE}  # the one table
WHY = {c.name: c.why for c in _TABLE}
ALWAYS = frozenset(c.name for c in _TABLE if not c.moot_at_default)  # the checks every topic is judged by


def review(topics: list[TopicFacts], limits: ReviewLimits | None = None, bootstrap: str | None = None) -> Review:
    """Every check of ``CHECKS`` on every compacted topic given."""
    limits, b = limits or ReviewLimits(), bootstrap or BOOTSTRAP_PLACEHOLDER
    findings, unchecked = [], {}
    for t in sorted(topics, key=lambda t: t.topic):
        if not t.config.compacted:
            continue
        for name, check in CHECKS.items():
            got = check.test(t, limits, b)
            if isinstance(got, Finding):
                findings.append(got)
            elif isinstance(got, Missing):
                unchecked.setdefault(t.topic, {})[name] = got
    return Review(tuple(findings), unchecked, tuple(sorted(t.topic for t in topics if t.config.compacted)))


def unreviewed(topics, why: str) -> Review:
    """The review of ``topics`` whose live configs could not be had (``explain`` offline, the admin API
    down): every check not run, for ``why``."""
    return Review((), {t: {name: Missing(LIVE_CONFIG, why) for name in ALWAYS} for t in topics}, tuple(sorted(topics)))


def _checks_text(names) -> str:
    names = sorted(names)
    return "every check" if set(names) >= ALWAYS else ", ".join(names)


def summary_line(r: Review) -> str:
    """The review's last line: findings, and the checks not run (never "all pass" when one was not)."""
    line = f"{len(r.findings)} finding(s) on {len(r.topics)} compacted topic(s)"
    skipped = {n["check"] for n in r.not_run}
    if skipped:
        return line + f"; {len(skipped)} check(s) not run: {_checks_text(skipped)}"
    return line + ("" if r.findings else ": all pass")


def format_finding(f: Finding) -> list[str]:
    """A finding for a person: the check, why, the setting with its suggested value, the fix."""
    return [f"{f.topic}: {f.check}", f"  why:       {f.summary}",
            f"  setting:   {f.setting}={setting_text(f.setting, f.current)}  ->  suggested "
            f"{setting_text(f.setting, f.suggested)}", f"  fix:       {f.fix}"]


def format_not_run(r: Review) -> list[str]:
    """The checks not run, one line per missing input and reason (no log dir read, no groups listed: the
    same for every topic), with the checks and topics it concerns and the input to give."""
    by: dict[tuple[str, str, tuple], list[str]] = {}
    for n in r.not_run:
        by.setdefault((n["needs"], n["why"], tuple(n["topics"])), []).append(n["check"])
    lines = []
    for (needs, why, topics), names in by.items():
        who = "every topic" if len(r.topics) > 1 and len(topics) == len(r.topics) else ", ".join(topics)
        lines += [f"not run: {_checks_text(names)} on {who}", f"  why:       {why}",
                  f"  needs:     {INPUTS[needs]}"]
    return lines


def format_review(r: Review) -> str:
    """The review for a person."""
    lines = [x for f in r.findings for x in format_finding(f)]
    return "\n".join(lines + format_not_run(r) + [summary_line(r)])

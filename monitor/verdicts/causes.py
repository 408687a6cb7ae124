"""One cause per partition: why it is, or is not, compacting, with the evidence, the fix and a forecast.

The collector (``kafka_compaction_partition_compaction_cause{cause}``), ``logdir``, ``explain`` and the
dashboard all ask ``explain`` here, so they can never disagree. The inputs are facts already read by
the edges: the partition's ``PartitionState`` (``monitor.model.compaction``), the topic's config and where each
value came from (``EffectiveConfig``), what ``log-cleaner.log`` says (``CleanerLogState``), the broker's
DeadThreadCount and its log cleaner settings (``BrokerFacts``), how long the partition has been eligible, and the write rate. A fact
that was not given is not guessed: the causes that need it are listed under ``unchecked`` with the reason,
and the forecast says "unknown" with the reason.

The order in which causes are tried is ``PRECEDENCE`` (the first that holds wins); its entries say why
they stand where they do. Kafka facts relied on:

* LogManager / CleanerConfig: with log.cleaner.enable=false the broker starts no LogCleaner at all (no
  threads, no uncleanable set, no checkpoint updates); the setting is not dynamic, so only a restart
  with it true brings compaction back. It is deprecated (to go in Kafka 5.0) but still honoured in 4.3.
* LogCleaner / Throttler: one I/O throttler (log.cleaner.io.max.bytes.per.second, dynamic:
  LogCleaner.reconfigure updates it) is shared by every cleaner thread; a busy cleaner is held at it
  (``monitor.model.cleanerio``), so more threads do not help a throttled cleaner, a higher setting does.
* LogCleanerManager: the cleaner skips an uncleanable partition until the broker restarts (the set is
  kept in memory only); it never cleans at or past the last stable offset; it picks the filthiest
  eligible log first, one per cleaner thread, so an eligible log can wait behind others.

This module holds the table and the entry points; the facts and shared helpers are in ``monitor.verdicts.facts``,
each cause's test in ``monitor.verdicts.finders``, the forecasts in ``monitor.verdicts.forecasts`` (with the
active segment's roll) and the fixes' command lines in ``monitor.verdicts.fixes``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

from monitor.kafka.cleanerlog import CleanerLogState
from monitor.model.compaction import PartitionState
from monitor.model.configdeps import DEPENDS
from monitor.model.topicconfig import UNKNOWN, BrokerSetting, EffectiveConfig, TopicConfig
from monitor.verdicts import finders, horizons
from monitor.verdicts.facts import BrokerFacts, Facts, Found, WriteRate, segment_file
from monitor.verdicts.finders import unchecked
from monitor.verdicts.fixes import BOOTSTRAP_PLACEHOLDER
from monitor.verdicts.forecasts import forecast, rate_from_dirty_section, unknown_at


@dataclass(frozen=True)
class Cause:
    topic: str
    partition: int
    cause: str  # one of CAUSES
    summary: str  # one sentence for a person
    evidence: dict  # offsets, ages (ms), sizes (bytes), configs {name: {value, source}}, files
    fix: tuple[str, ...]  # what an operator can do, most direct first (command lines where there is one)
    forecast: dict  # threshold, next_clean_due, active_segment_roll: {at_ms, in_seconds, reason}; write rate
    unchecked: dict = field(default_factory=dict)  # cause -> why it could not be checked (an input missing)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["fix"] = list(self.fix)
        return d


# The order causes are tried in; the first that holds is the partition's cause.
PRECEDENCE: tuple[tuple[str, Callable[[Facts], Found | None], str], ...] = (
    ("cleaner_disabled", finders.cleaner_disabled,
     "no cleaner exists on the broker: nothing below can lead to a clean, and an uncleanable mark or a dead "
     "thread belongs to a cleaner that no longer runs (both clear on the restart that disabling needed)"),
    ("record_over_decompressed_limit", finders.record_over_decompressed_limit,
     "names why the cleaner gave up (uncleanable's InvalidRecordException) or will at its next clean: a stored "
     "record above max.decompressed.message.bytes (Kafka 4.4), fixed by the topic's config, not by repairing files"),
    ("uncleanable", finders.uncleanable,
     "the cleaner itself has given up on the partition until a restart; nothing below can change that"),
    ("cleaner_dead", finders.cleaner_dead,
     "with no cleaner thread alive, no other fix leads to a clean; it concerns every partition with dirty bytes"),
    ("unknown", finders.unknown,
     "the figures every cause below is read from are wrong or moot (read faults, a topic the cleaner ignores): "
     "better no answer than a confident wrong one"),
    ("hanging_transaction", finders.hanging_transaction,
     "a transaction past transaction.max.timeout.ms never ends by itself and holds the cleaner at the LSO"),
    ("open_transaction", finders.open_transaction,
     "the LSO is a hard limit that only the producer (or an abort) moves: whatever else holds, nothing past it "
     "is cleaned, and every byte written meanwhile piles up behind it (counted whatever the ratio)"),
    ("throttled_cleaner", finders.throttled_cleaner,
     "eligible while the cleaner runs at log.cleaner.io.max.bytes.per.second: the throttle explains the wait "
     "(and an overdue clean), and its fix differs from a lack of threads (they share the one throttle)"),
    ("overdue", finders.overdue,
     "eligible and past max.compaction.lag.ms: a broken promise, more urgent than an ordinary wait"),
    ("waiting", finders.waiting,
     "eligible: the config is satisfied, only the cleaner has not come yet"),
    ("min_compaction_lag", finders.min_compaction_lag,
     "a configured hold that releases by itself: counted only when lifting it would make the partition "
     "eligible (else the ratio is the reason)"),
    ("below_threshold", finders.below_threshold,
     "dirty bytes below the active segment, but not enough of them: Kafka's configured behaviour"),
    ("active_segment_only", finders.active_segment_only,
     "dirty records only in the active segment: nothing is cleanable until it rolls"),
    ("clean", finders.clean, "nothing is dirty"),
)
CAUSES = tuple(name for name, _, _ in PRECEDENCE)


def _base_evidence(s: PartitionState) -> dict:
    return {"log_start_offset": s.log_start_offset, "checkpoint_offset": s.checkpoint_offset,
            "first_dirty_offset": s.first_dirty_offset, "first_uncleanable_offset": s.first_uncleanable_offset,
            "uncleanable_reason": s.uncleanable_reason, "last_stable_offset": s.last_stable_offset,
            "log_end_offset": s.log_end_offset, "open_transactions": len(s.open_transactions),
            "active_segment": segment_file(s.active_segment_base_offset),
            "first_dirty_segment": segment_file(s.checkpoint_segment_base_offset),
            "clean_bytes": s.clean_bytes, "cleanable_bytes": s.cleanable_bytes, "uncleaned_bytes": s.uncleaned_bytes,
            "log_bytes": s.log_bytes, "cleanable_ratio": s.cleanable_ratio, "uncleaned_ratio": s.uncleaned_ratio,
            "min_cleanable_dirty_ratio": s.min_cleanable_dirty_ratio, "eligible": s.eligible}


def explain(state: PartitionState, config: EffectiveConfig | TopicConfig, *, now_ms: int,
            cleaner: CleanerLogState | None = None, broker: BrokerFacts | None = None,
            eligible_seconds: float | None = None, write_rate: WriteRate | None = None,
            faults: tuple[str, ...] = (), bootstrap: str | None = None, leftovers: tuple[dict, ...] = (),
            transaction_max_timeout: BrokerSetting | None = None) -> Cause:
    """The partition's one cause (the first of ``PRECEDENCE`` that holds), with evidence, fix and forecast.

    ``config`` is the topic's config with its sources (a bare TopicConfig: sources "unknown");
    ``write_rate`` defaults to the one-shot ``rate_from_dirty_section``; ``faults`` are the read faults'
    texts when the caller has them; ``bootstrap`` goes into the fix's command lines. ``leftovers``: Kafka's
    temporary files (``.cleaned``/``.swap``/``.deleted``) left in the partition's folder longer than
    file.delete.delay.ms (``monitor.kafka.logdir.Leftover.as_dict``), added to the evidence when there are any.
    They are evidence, not a cause: they do not stop the cleaner (a new clean of the same segments deletes
    a stale ``.cleaned`` first: ``Cleaner.createNewCleanedSegment``), they cost disk, and the broker's own
    recovery removes (``.cleaned``, ``.deleted``) or completes (``.swap``) them on its next start.
    ``transaction_max_timeout``: the broker setting the state's hanging count was made with, so the
    transaction causes can say where its value came from."""
    cfg, sources = (config.config, config.sources) if isinstance(config, EffectiveConfig) else (config, {})
    rate = write_rate or rate_from_dirty_section(state, now_ms)
    f = Facts(state, cfg, sources, cleaner, broker, eligible_seconds, rate, now_ms, tuple(faults),
               bootstrap or BOOTSTRAP_PLACEHOLDER, transaction_max_timeout,
               config.refusal if isinstance(config, EffectiveConfig) else None)
    for name, test, _ in PRECEDENCE:
        found = test(f)
        if found is not None:
            summary, extra, fix = found
            base = _base_evidence(state)
            evidence = {**base, **extra}
            # a figure made from a config placeholder is not the topic's: unknown (monitor.model.configdeps)
            evidence.update({k: None for k in base if k in DEPENDS
                             and any(sources.get(c) == UNKNOWN for c in DEPENDS[k])})
            if leftovers:
                evidence["leftover_files"] = list(leftovers)
            evidence["delete_horizons"] = horizons.evidence(state)
            past = horizons.past_horizon(state, name, summary, fix, f.bootstrap, cfg.max_compaction_lag_ms)
            if past is not None:
                evidence["tombstones_past_horizon"] = past
            return Cause(state.topic, state.partition, name, summary, evidence, fix, forecast(f), unchecked(f))
    raise AssertionError("clean always holds")


def unknown_cause(topic: str, partition: int, reason: str) -> Cause:
    """The cause of a partition whose state could not be computed (a file unreadable, its log dir down)."""
    return Cause(topic, partition, "unknown", f"cannot tell: {reason}", {"reason": reason}, ("fix the named input",),
                 {k: unknown_at(reason) for k in ("threshold", "next_clean_due", "active_segment_roll")}
                 | {"write_rate_bytes_per_second": None, "write_rate_basis": reason})


WHY = {name: why for name, _, why in PRECEDENCE}  # why each cause stands where it does, for the pages

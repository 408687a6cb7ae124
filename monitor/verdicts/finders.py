"""One test per cause: whether it holds for a partition, and if so its summary, evidence and fix.

``monitor.verdicts.causes.PRECEDENCE`` orders these tests and says why each stands where it does; each test
here assumes only that the ones before it did not hold (``overdue`` comes after ``throttled_cleaner``, ``clean``
holds always). ``unchecked`` says which tests could not be made because an input was not given.
"""

from __future__ import annotations

from dataclasses import replace as _replace

from monitor.model.cleanerio import at_throttle, throttle_ratio
from monitor.model.compaction import CLEANABLE_RATIO_ABOVE_MIN, PartitionState
from monitor.contract.units import bytes_iec, duration_ms, rate as rate_text
from monitor.verdicts.facts import VERDICT_CONFIGS, BrokerFacts, Facts, Found, segment_file
from monitor.model.topicconfig import ADMIN_DOWN, DEFAULT
from monitor.verdicts.fixes import (CLEANER_ENABLE_FIX, IO_MAX, THREADS, abort_transaction, alter_brokers, alter_topic, decompressed_limit_to_fit,
                                    lag_that_releases, more_threads, raised_throttle, ratio_below)
from monitor.verdicts.forecasts import max_segment_ms, roll_forecast


def _above(ratio: float, threshold: float) -> bool:
    return CLEANABLE_RATIO_ABOVE_MIN.holds(ratio, threshold)


def _would_be_eligible(s: PartitionState) -> bool:
    """Whether the cleaner would pick the partition if nothing but the active segment held it back."""
    return s.uncleaned_bytes > 0 and (_above(s.uncleaned_ratio, s.min_cleanable_dirty_ratio)
                                      or s.compaction_delay_ms > 0)


def _txn(t) -> dict:
    return {"producer_id": t.producer_id, "producer_epoch": t.producer_epoch, "first_offset": t.first_offset,
            "last_offset": t.last_offset, "first_timestamp": t.first_timestamp, "age_ms": t.age_ms}


def uncleanable(f: Facts) -> Found | None:
    u = f.cleaner.uncleanable.get((f.state.topic, f.state.partition)) if f.cleaner else None
    if u is None:
        return None
    tp = f"{u.topic}-{u.partition}"
    return (f"the cleaner marked {tp} uncleanable after a {u.exception} ({u.message}); it skips it until the "
            f"broker restarts",
            {"exception": u.exception, "message": u.message, "logged_at_ms": u.timestamp_ms,
             "cleaner_log": u.source, "log_dir": u.log_dir},
            (f"find and repair what the {u.exception} names (see {u.source or 'log-cleaner.log'}); "
             f"the partition's files are in {u.log_dir or 'its log dir'}/{tp}",
             "restart the broker (one at a time): Kafka keeps uncleanable partitions in memory only, "
             "so only a restart lets the cleaner try it again"))


def record_over_decompressed_limit(f: Facts) -> Found | None:
    """Kafka 4.4: a record the cleaner reads is larger than the topic's max.decompressed.message.bytes (set
    after it was written: the broker rejects larger records on produce). Each clean of the partition throws
    InvalidRecordException on it and the cleaner marks the partition uncleanable (LogCleaner's "Unexpected
    exception thrown when cleaning log"). Holds when the cleaner marked it so after that exception, or before
    it did (not marked yet, or log-cleaner.log not read) while it has uncleaned bytes: the next clean fails.
    A mark after another exception is ``uncleanable``'s to name."""
    s = f.state
    if not s.over_decompressed_limit:
        return None
    u = f.cleaner.uncleanable.get((s.topic, s.partition)) if f.cleaner else None
    if u is not None and not u.exception.endswith("InvalidRecordException"):
        return None
    if u is None and s.uncleaned_bytes + s.cleanable_bytes <= 0:
        return None
    tp, largest, limit = f"{s.topic}-{s.partition}", s.max_decompressed_record_bytes, s.max_decompressed_message_bytes
    raised = decompressed_limit_to_fit(largest)
    what = (f"the cleaner marked {tp} uncleanable after a {u.exception} ({u.message})" if u is not None else
            f"the next clean of {tp} fails (log-cleaner.log {'not read' if f.cleaner is None else 'has no mark yet'})")
    evidence = {"max_decompressed_record_bytes": largest,
                "configs": f.cfg("max.decompressed.message.bytes")}
    if u is not None:
        evidence.update({"exception": u.exception, "message": u.message, "logged_at_ms": u.timestamp_ms,
                         "cleaner_log": u.source, "log_dir": u.log_dir})
    return (f"{what}: a stored record of {largest} bytes ({bytes_iec(largest)}, decompressed) is larger than "
            f"max.decompressed.message.bytes={limit} ({bytes_iec(limit)}), which Kafka checks on every record it "
            "decompresses, the cleaner's included",
            evidence,
            (alter_topic(f.bootstrap, s.topic, "max.decompressed.message.bytes", raised)
             + " (at least the largest stored record; or --delete-config it for Kafka's default)",
             "then restart the broker (one at a time): Kafka keeps uncleanable partitions in memory only, so only "
             "a restart lets the cleaner try it again" if u is not None else
             "then nothing more: the cleaner has not marked it yet"))


def cleaner_disabled(f: Facts) -> Found | None:
    if f.broker is None or f.broker.cleaner_enabled is not False:
        return None
    if f.state.uncleaned_bytes + f.state.cleanable_bytes <= 0 and f.state.first_dirty_offset >= f.state.log_end_offset:
        return None
    return (f"log.cleaner.enable=false: the broker runs no log cleaner, so {f.state.topic}-{f.state.partition} is "
            f"never compacted ({bytes_iec(f.state.uncleaned_bytes)} uncleaned, and growing)",
            {"cleaner_enabled": False},
            (CLEANER_ENABLE_FIX,))


def cleaner_dead(f: Facts) -> Found | None:
    dead = f.broker.dead_threads if f.broker else None
    if not dead or dead <= 0 or f.state.uncleaned_bytes + f.state.cleanable_bytes <= 0:
        return None
    deaths = list(f.cleaner.thread_deaths) if f.cleaner else []
    last = deaths[-1] if deaths else None
    threads = f.broker.cleaner_threads
    ev = {"dead_threads": dead, "gauge": f.broker.source, "cleaner_threads": threads,
          "all_threads_dead": None if threads is None else dead >= threads,
          "last_error": last.error if last else None, "thread": last.thread if last else None,
          "cleaner_log": last.source if last else None}
    who = (f"all {threads} log cleaner thread(s) died" if threads is not None and dead >= threads
           else f"{dead:g} of {threads} log cleaner threads died" if threads is not None
           else f"{dead:g} log cleaner thread(s) died")
    return (f"{who} (DeadThreadCount), so {bytes_iec(f.state.uncleaned_bytes)} uncleaned "
            f"wait for a cleaner that may never come",
            ev, (f"read the error that killed the thread in log-cleaner.log{' (' + last.error + ')' if last else ''}",
                 "restart the broker to start its cleaner threads again"))


def unknown(f: Facts) -> Found | None:
    s = f.state
    if f.unknown_configs:  # no verdict from Kafka's defaults passed off as the topic's config
        why = f.refusal.text if f.refusal is not None else "the topic's config could not be read"
        if f.refusal is not None and f.refusal.code == ADMIN_DOWN:  # nothing answered: no ACL is missing
            fix = ("the admin API did not answer: make the cluster reachable (its error names the address and "
                   "why), or give the topic's config in monitor.yaml (clusters[].topics)")
        else:
            fix = ("grant the collector's user Describe and DescribeConfigs on the topic (kafka-acls --add "
                   f"--operation Describe --operation DescribeConfigs --topic {s.topic}), or give its config in "
                   "monitor.yaml (clusters[].topics)")
        return (f"the config of {s.topic} is unknown ({', '.join(f.unknown_configs)}): {why}; no threshold, "
                f"eligibility or tombstone verdict without it",
                {"reason": f"topic config unknown: {why}", "configs": f.cfg(*VERDICT_CONFIGS)}, (fix,))
    if not f.config.compacted and f.sources.get("cleanup.policy") == DEFAULT:  # nobody asked: not known, not delete
        return (f"not known to be compacted: {s.topic}-{s.partition} has no entry in the cleaner's checkpoint (never "
                "cleaned) and its cleanup.policy was not given (no admin API, config file entry or --topic-config); "
                "its figures are read as if Kafka's default, delete, were its policy",
                {"reason": "cleanup.policy unknown, never cleaned", "configs": f.cfg("cleanup.policy")},
                (f"give its config: --topic-config {s.topic}:cleanup.policy=compact, its entry in monitor.yaml "
                 "(clusters[].topics), or --bootstrap-server where the command takes it",))
    if not f.config.compacted:
        return (f"cleanup.policy={f.config.policy_text}: the log cleaner does not compact this topic",
                {"reason": "not compacted", "configs": f.cfg("cleanup.policy")},
                (alter_topic(f.bootstrap, s.topic, "cleanup.policy", "compact") + "   (only if it should be compacted)",))
    if s.faults or f.faults:
        first = f.faults[0] if f.faults else "see the partition's read errors"
        return (f"{max(s.faults, len(f.faults))} batch(es) of {s.topic}-{s.partition} could not be read, so its "
                f"offsets and sizes cannot be trusted: {first}",
                {"reason": "read faults", "read_faults": s.faults, "first_fault": first},
                ("inspect the named segment with `compaction-monitor inspect` or kafka-dump-log.sh",))
    return None


def hanging_transaction(f: Facts) -> Found | None:
    s = f.state
    if s.hanging_transactions <= 0:
        return None
    oldest = sorted(s.open_transactions, key=lambda t: -(t.age_ms or 0))[: s.hanging_transactions]
    t = min(oldest, key=lambda x: x.first_offset)
    return (f"a hanging transaction (producer {t.producer_id}, open {duration_ms(t.age_ms)}, longer than "
            f"transaction.max.timeout.ms, {duration_ms(s.transaction_max_timeout_ms)}) holds the last stable offset "
            f"at {s.last_stable_offset}; it will not end by itself",
            {"transaction": _txn(t), "hanging_transactions": s.hanging_transactions, "configs": f.txn_timeout_cfg()},
            (abort_transaction(f.bootstrap, s.topic, s.partition, t.first_offset),
             f"check it first: kafka-transactions.sh --bootstrap-server {f.bootstrap} describe-producers "
             f"--topic {s.topic} --partition {s.partition}"))


def open_transaction(f: Facts) -> Found | None:
    s = f.state
    if s.blocked_by != "last_stable_offset":
        return None
    held = [t for t in s.open_transactions if t.first_offset == s.last_stable_offset]
    t = held[0] if held else None
    who = f"producer {t.producer_id} (epoch {t.producer_epoch}), open {duration_ms(t.age_ms)}" if t else "a producer"
    fix = (f"let the producer commit or abort; if it is gone: "
           f"{abort_transaction(f.bootstrap, s.topic, s.partition, s.last_stable_offset)}",)
    return (f"an open transaction of {who} holds the last stable offset at {s.last_stable_offset}; the cleaner "
            f"may not pass it, so {bytes_iec(s.uncleaned_bytes)} uncleaned wait",
            {"transaction": _txn(t) if t else None, "configs": f.txn_timeout_cfg()}, fix)


def _at_throttle(b: BrokerFacts) -> bool:
    """Whether the broker's cleaner is known to run at its throttle: what ``throttled_cleaner`` is chosen by."""
    return b.io_max is not None and bool(at_throttle(b.cleaner_io, b.io_max.value))


def choice_key(b: BrokerFacts | None) -> tuple | None:
    """What of a broker's facts the choice of a partition's cause reads: all of them but the cleaner's I/O rate,
    which enters only as whether the cleaner runs at its throttle (``throttled_cleaner``). Equal keys, the same
    cause for the same report (its evidence and forecast aside, which are made when explained). Why: the rate is
    measured again at every refresh of the broker's gauges, and a collector that kept causes only while the whole
    facts were equal explained every partition's again each time (``collectors.export.facts.CauseCache``)."""
    if b is None:
        return None
    return _replace(b, cleaner_io=None), _at_throttle(b)


def throttled_cleaner(f: Facts) -> Found | None:
    s, b = f.state, f.broker
    if not s.eligible or b is None or not _at_throttle(b):
        return None
    rate, limit = b.cleaner_io.bytes_per_second, b.io_max.value
    late = f" and {duration_ms(s.compaction_delay_ms)} past max.compaction.lag.ms" if s.compaction_delay_ms > 0 else ""
    return (f"eligible{late}, while the broker's log cleaner reads and writes {rate_text(rate)}, at its throttle "
            f"{IO_MAX}={limit:.0f} ({rate_text(limit)}, {b.io_max.source}): the throttle holds the cleaner back",
            {"cleaner_io_bytes_per_second": rate, "cleaner_io_window_seconds": b.cleaner_io.window_seconds,
             "cleaner_io_basis": b.cleaner_io.basis, "throttle_ratio": throttle_ratio(b.cleaner_io, limit),
             "gauge": b.source, "eligible_seconds": f.eligible_seconds, "compaction_delay_ms": s.compaction_delay_ms,
             "configs": {IO_MAX: {"value": f"{limit:g}", "source": b.io_max.source}}},
            (alter_brokers(f.bootstrap, IO_MAX, f"{raised_throttle(limit):.0f}", b.entity(IO_MAX))
             + f"   (twice the current {rate_text(limit)}; a dynamic broker config: no restart; "
             + (f"set on broker {b.broker} alone, which the cluster's --entity-default would not change)"
                if b.entity(IO_MAX) else "--entity-name <broker id> instead of --entity-default for one broker)"),
             "more log.cleaner.threads do not help: every cleaner thread shares the one throttle"))


def _entity(f: Facts, key: str) -> str | None:
    """The broker a fix of the cleaner setting ``key`` must name, None for the cluster's default."""
    return f.broker.entity(key) if f.broker is not None else None


def overdue(f: Facts) -> Found | None:
    s = f.state
    if s.compaction_delay_ms <= 0 or not s.eligible:
        return None
    return (f"max.compaction.lag.ms has passed by {duration_ms(s.compaction_delay_ms)} and the cleaner has not cleaned it",
            {"compaction_delay_ms": s.compaction_delay_ms, "first_dirty_timestamp": s.first_dirty_timestamp,
             "eligible_seconds": f.eligible_seconds, "configs": f.cfg("max.compaction.lag.ms")},
            ("the cleaner is behind: check CleanerSlow / CleanerBufferSaturated and the cleaner's throttle "
             "(log.cleaner.io.max.bytes.per.second)",
             alter_brokers(f.bootstrap, THREADS, more_threads(f.broker), _entity(f, THREADS))))


def waiting(f: Facts) -> Found | None:
    s = f.state
    if not s.eligible:
        return None
    how_long = ("for an unknown time (a one-shot read; the collector tracks partition_eligible_seconds)"
                if f.eligible_seconds is None else f"for {duration_ms(f.eligible_seconds * 1000)}")
    return (f"eligible (cleanable ratio {s.cleanable_ratio:.3f} > min.cleanable.dirty.ratio "
            f"{s.min_cleanable_dirty_ratio:g}) and queued {how_long}: the cleaner takes the filthiest log first",
            {"eligible_seconds": f.eligible_seconds, "configs": f.cfg("min.cleanable.dirty.ratio")},
            ("nothing if it is cleaned soon; if it waits long, the cleaner lacks capacity: "
             + alter_brokers(f.bootstrap, THREADS, more_threads(f.broker), _entity(f, THREADS)),))


def min_compaction_lag(f: Facts) -> Found | None:
    s = f.state
    if s.blocked_by != "min_compaction_lag" or not _would_be_eligible(s):
        return None
    lag = f.config.min_compaction_lag_ms
    lower, age = lag_that_releases(s, f.now_ms, lag)
    why = (f"(now {duration_ms(lag)}; the newest held-back record is {duration_ms(age)} old, so "
           f"{duration_ms(lower)} lets the cleaner take every dirty segment below the active one)" if age is not None
           else "(0 turns the lag off: the held-back records' times are unknown)")
    return (f"min.compaction.lag.ms ({duration_ms(lag)}) holds back {bytes_iec(s.uncleaned_bytes - s.cleanable_bytes)} "
            f"from segment {segment_file(s.first_uncleanable_offset)} on: they are too recent to clean",
            {"held_from_segment": segment_file(s.first_uncleanable_offset),
             "configs": f.cfg("min.compaction.lag.ms")},
            ("nothing if the lag is intended; else "
             + alter_topic(f.bootstrap, s.topic, "min.compaction.lag.ms", lower) + "   " + why,))


def below_threshold(f: Facts) -> Found | None:
    s = f.state
    if s.uncleaned_bytes <= 0:
        return None
    ratio = s.cleanable_ratio
    lower = ratio_below(ratio if s.cleanable_bytes > 0 else s.uncleaned_ratio)
    held = f" ({s.blocked_by} holds back more, but even without it the ratio stays below)" if s.blocked_by else ""
    return (f"cleanable ratio {ratio:.3f} is not above min.cleanable.dirty.ratio {s.min_cleanable_dirty_ratio:g}: "
            f"the cleaner waits for more dirty bytes{held}",
            {"configs": f.cfg("min.cleanable.dirty.ratio"), "blocked_by": s.blocked_by},
            ("nothing: this is the configured behaviour; to compact sooner: "
             + alter_topic(f.bootstrap, s.topic, "min.cleanable.dirty.ratio", f"{lower:g}")
             + f"   (below the {'cleanable' if s.cleanable_bytes > 0 else 'uncleaned'} ratio, so the cleaner "
               "picks it" + (f" once {s.blocked_by} releases" if s.cleanable_bytes <= 0 else "") + ")",))


def active_segment_only(f: Facts) -> Found | None:
    s = f.state
    if s.active_segment_bytes <= 0 or s.first_dirty_offset >= s.log_end_offset:
        return None
    roll = roll_forecast(f)
    due = roll["at_ms"] is not None and roll["in_seconds"] == 0
    when = ("it rolls at an unknown time" if roll["at_ms"] is None else "its roll is due" if due
            else f"it rolls in {duration_ms(roll['in_seconds'] * 1000)}")
    limit = max_segment_ms(f.config)
    if due:  # its time has come: only an append rolls it (LogSegment.shouldRoll), no lower segment.ms is sooner
        fix = ("nothing to change: the roll is due and happens on the next append to the partition "
               "(a segment rolls only on an append)",)
    elif limit <= 1:
        fix = ("nothing to change: the segment already rolls by time on every append (segment.ms is at its "
               "minimum, 1 ms)",)
    else:
        lower = min(limit // 2, 3_600_000)
        fix = ("nothing if the roll time is acceptable; else " + alter_topic(f.bootstrap, s.topic, "segment.ms", lower)
               + f"   (it rolls by time after {duration_ms(limit)} now)",)
    return (f"all dirty records are in the active segment {segment_file(s.active_segment_base_offset)}, which the "
            f"cleaner never touches; {when} ({roll['reason']})",
            {"active_segment_bytes": s.active_segment_bytes,
             "active_segment_first_timestamp": s.active_segment_first_timestamp,
             "configs": f.cfg("segment.ms", "segment.bytes", "max.compaction.lag.ms")}, fix)


def clean(f: Facts) -> Found | None:
    """Nothing dirty. Without a cleaner checkpoint the first dirty offset is the log start, not a checkpoint
    (``explain``'s offsets line says "no cleaner checkpoint yet"): never shown as a checkpoint of that value."""
    s = f.state
    if s.checkpoint_offset is None:
        return (f"nothing to clean: no cleaner checkpoint yet, and nothing is written past the log start "
                f"({s.log_start_offset})", {}, ("nothing",))
    return (f"nothing to clean: the cleaner's checkpoint ({s.first_dirty_offset}) is at the log end", {},
            ("nothing",))


def unchecked(f: Facts) -> dict:
    """The causes that could not be checked, each with why (the input it needs was not given)."""
    out = {}
    if f.cleaner is None:
        out["uncleanable"] = "log-cleaner.log was not read"
    if f.broker is None or f.broker.cleaner_enabled is None:
        out["cleaner_disabled"] = "the broker's log.cleaner.enable was not read (admin API)"
    if f.broker is None or f.broker.dead_threads is None:
        out["cleaner_dead"] = "the broker's DeadThreadCount gauge was not read"
    throttled = _throttle_unchecked(f.broker)
    if throttled:
        out["throttled_cleaner"] = throttled
    return out


def _throttle_unchecked(b: BrokerFacts | None) -> str | None:
    """Why the throttle could not be checked (None: it was)."""
    if b is None or b.cleaner_io is None:
        return "the broker's cleaner-io count was not read twice (the collector samples it each refresh)"
    if b.io_max is None or b.io_max.value is None:
        return f"the broker's {IO_MAX} is not known" + (f" ({b.io_max.reason})" if b.io_max else "")
    if at_throttle(b.cleaner_io, b.io_max.value) is None:
        return f"the cleaner's I/O rate is unknown ({b.cleaner_io.basis})"
    return None

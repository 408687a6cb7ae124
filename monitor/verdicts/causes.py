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
* LogConfig.maxSegmentMs: a compacted topic's active segment rolls after min(segment.ms,
  max.compaction.lag.ms); LogSegment.shouldRoll rolls it, on an append only, once the appended batch's
  timestamp is that far past the segment's first batch's (rollingBasedTimestamp), or once it would
  exceed segment.bytes. No append, no roll.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Mapping

from monitor.model.cleanerio import IoRate, at_throttle, throttle_ratio
from monitor.kafka.cleanerlog import CleanerLogState
from monitor.model.compaction import CLEANABLE_RATIO_ABOVE_MIN, PartitionState
from monitor.model.configdeps import DEPENDS, configs_of
from monitor.model.topicconfig import UNKNOWN, LONG_MAX, AdminRefusal, BrokerSetting, EffectiveConfig, TopicConfig

# the topic configs the causes' verdicts and forecasts are made from (monitor.model.configdeps: eligibility,
# tombstones past retention, the active segment's roll)
VERDICT_CONFIGS = configs_of("eligible", "tombstones_past_retention", "active_segment_roll")

BOOTSTRAP_PLACEHOLDER = "<bootstrap>"
MORE_THREADS = "<up to twice the current>"  # log.cleaner.threads may at most double per change


@dataclass(frozen=True)
class BrokerFacts:
    """What the broker's own gauges say (JMX exporter / Jolokia), and its cleaner settings (admin API)."""

    dead_threads: float | None = None  # DeadThreadCount; None when the gauge was not read
    source: str = ""  # where it was read
    cleaner_enabled: bool | None = None  # log.cleaner.enable; None when not known
    cleaner_threads: int | None = None  # log.cleaner.threads; None when not known
    # the cleaner's read plus write rate over the collector's last refresh window (monitor.model.cleanerio),
    # and log.cleaner.io.max.bytes.per.second with where it came from; None when not known
    cleaner_io: IoRate | None = None
    io_max: BrokerSetting | None = None


@dataclass(frozen=True)
class WriteRate:
    """Bytes appended to the partition per second, and how that was found (or why it is unknown)."""

    bytes_per_second: float | None
    basis: str


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


@dataclass(frozen=True)
class _Facts:
    state: PartitionState
    config: TopicConfig
    sources: Mapping[str, str]
    cleaner: CleanerLogState | None
    broker: BrokerFacts | None
    eligible_seconds: float | None
    rate: WriteRate
    now_ms: int
    faults: tuple[str, ...]
    bootstrap: str
    txn_timeout: BrokerSetting | None
    refusal: AdminRefusal | None = None  # why the topic's config is unknown, when it is

    def cfg(self, *keys: str) -> dict:
        """The configs named, each with its source; a value the admin API did not give (source unknown) is
        None, never the placeholder the state was computed with."""
        values = self.config.to_strings()
        return {k: {"value": None if self.sources.get(k) == UNKNOWN else values[k],
                    "source": self.sources.get(k, "unknown")} for k in keys}

    @property
    def unknown_configs(self) -> tuple[str, ...]:
        """The compaction configs the verdicts are made from that are unknown (the admin API refused)."""
        return tuple(k for k in VERDICT_CONFIGS if self.sources.get(k) == UNKNOWN)

    def txn_timeout_cfg(self) -> dict:
        """The broker's transaction.max.timeout.ms the state's hanging count was made with, and where it
        came from (admin | config | default; "unknown" when the caller did not say)."""
        used, given = self.state.transaction_max_timeout_ms, self.txn_timeout
        source = given.source if given is not None and given.value == used else "unknown"
        return {"transaction.max.timeout.ms": {"value": str(used), "source": source}}


Found = tuple[str, dict, tuple[str, ...]]  # summary, evidence beyond the common, fix


# ------------------------------------------------------------------ helpers


def segment_file(base_offset: int) -> str:
    """Kafka's segment file name for a base offset (LogFileUtils.filenamePrefixFromOffset)."""
    return f"{base_offset:020d}.log"


def duration(ms: float | None) -> str:
    if ms is None:
        return "unknown"
    s = max(ms, 0) / 1000
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"


def alter_topic(bootstrap: str, topic: str, key: str, value) -> str:
    return (f"kafka-configs.sh --bootstrap-server {bootstrap} --alter --entity-type topics "
            f"--entity-name {topic} --add-config {key}={value}")


def alter_brokers(bootstrap: str, key: str, value) -> str:
    """A cluster-wide dynamic broker config (the log cleaner's settings are reconfigurable: LogCleaner).
    log.cleaner.threads may at most double in one change (LogCleaner.validateReconfiguration refuses
    more: "Log cleaner threads cannot be increased to more than double the current value")."""
    return (f"kafka-configs.sh --bootstrap-server {bootstrap} --alter --entity-type brokers --entity-default "
            f"--add-config {key}={value}")


def abort_transaction(bootstrap: str, topic: str, partition: int, start_offset: int) -> str:
    return (f"kafka-transactions.sh --bootstrap-server {bootstrap} abort --topic {topic} "
            f"--partition {partition} --start-offset {start_offset}")


def _above(ratio: float, threshold: float) -> bool:
    return CLEANABLE_RATIO_ABOVE_MIN.holds(ratio, threshold)


def _would_be_eligible(s: PartitionState) -> bool:
    """Whether the cleaner would pick the partition if nothing but the active segment held it back."""
    return s.uncleaned_bytes > 0 and (_above(s.uncleaned_ratio, s.min_cleanable_dirty_ratio)
                                      or s.compaction_delay_ms > 0)


def _txn(t) -> dict:
    return {"producer_id": t.producer_id, "producer_epoch": t.producer_epoch, "first_offset": t.first_offset,
            "last_offset": t.last_offset, "first_timestamp": t.first_timestamp, "age_ms": t.age_ms}


# ------------------------------------------------------------------ the causes


def _uncleanable(f: _Facts) -> Found | None:
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


def _cleaner_disabled(f: _Facts) -> Found | None:
    if f.broker is None or f.broker.cleaner_enabled is not False:
        return None
    if f.state.uncleaned_bytes + f.state.cleanable_bytes <= 0 and f.state.first_dirty_offset >= f.state.log_end_offset:
        return None
    return (f"log.cleaner.enable=false: the broker runs no log cleaner, so {f.state.topic}-{f.state.partition} is "
            f"never compacted ({f.state.uncleaned_bytes} uncleaned bytes, and growing)",
            {"cleaner_enabled": False},
            ("set log.cleaner.enable=true (or remove it: true is Kafka's default) in the broker's server.properties "
             "and restart the broker: the setting is not dynamic",))


def _cleaner_dead(f: _Facts) -> Found | None:
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
    return (f"{who} (DeadThreadCount), so {f.state.uncleaned_bytes} uncleaned bytes "
            f"wait for a cleaner that may never come",
            ev, (f"read the error that killed the thread in log-cleaner.log{' (' + last.error + ')' if last else ''}",
                 "restart the broker to start its cleaner threads again"))


def _unknown(f: _Facts) -> Found | None:
    s = f.state
    if f.unknown_configs:  # no verdict from Kafka's defaults passed off as the topic's config
        why = f.refusal.text if f.refusal is not None else "the topic's config could not be read"
        return (f"the config of {s.topic} is unknown ({', '.join(f.unknown_configs)}): {why}; no threshold, "
                f"eligibility or tombstone verdict without it",
                {"reason": f"topic config unknown: {why}", "configs": f.cfg(*VERDICT_CONFIGS)},
                ("grant the collector's user Describe and DescribeConfigs on the topic (kafka-acls --add "
                 f"--operation Describe --operation DescribeConfigs --topic {s.topic}), or give its config in "
                 "monitor.yaml (clusters[].topics)",))
    if not f.config.compacted:
        return (f"cleanup.policy={','.join(f.config.cleanup_policy)}: the log cleaner does not compact this topic",
                {"reason": "not compacted", "configs": f.cfg("cleanup.policy")},
                (alter_topic(f.bootstrap, s.topic, "cleanup.policy", "compact") + "   (only if it should be compacted)",))
    if s.faults or f.faults:
        first = f.faults[0] if f.faults else "see the partition's read errors"
        return (f"{max(s.faults, len(f.faults))} batch(es) of {s.topic}-{s.partition} could not be read, so its "
                f"offsets and sizes cannot be trusted: {first}",
                {"reason": "read faults", "read_faults": s.faults, "first_fault": first},
                ("inspect the named segment with `compaction-monitor inspect` or kafka-dump-log.sh",))
    return None


def _hanging_transaction(f: _Facts) -> Found | None:
    s = f.state
    if s.hanging_transactions <= 0:
        return None
    oldest = sorted(s.open_transactions, key=lambda t: -(t.age_ms or 0))[: s.hanging_transactions]
    t = min(oldest, key=lambda x: x.first_offset)
    return (f"a hanging transaction (producer {t.producer_id}, open {duration(t.age_ms)}, longer than "
            f"transaction.max.timeout.ms, {duration(s.transaction_max_timeout_ms)}) holds the last stable offset "
            f"at {s.last_stable_offset}; it will not end by itself",
            {"transaction": _txn(t), "hanging_transactions": s.hanging_transactions, "configs": f.txn_timeout_cfg()},
            (abort_transaction(f.bootstrap, s.topic, s.partition, t.first_offset),
             f"check it first: kafka-transactions.sh --bootstrap-server {f.bootstrap} describe-producers "
             f"--topic {s.topic} --partition {s.partition}"))


def _open_transaction(f: _Facts) -> Found | None:
    s = f.state
    if s.blocked_by != "last_stable_offset":
        return None
    held = [t for t in s.open_transactions if t.first_offset == s.last_stable_offset]
    t = held[0] if held else None
    who = f"producer {t.producer_id} (epoch {t.producer_epoch}), open {duration(t.age_ms)}" if t else "a producer"
    fix = (f"let the producer commit or abort; if it is gone: "
           f"{abort_transaction(f.bootstrap, s.topic, s.partition, s.last_stable_offset)}",)
    return (f"an open transaction of {who} holds the last stable offset at {s.last_stable_offset}; the cleaner "
            f"may not pass it, so {s.uncleaned_bytes} uncleaned bytes wait",
            {"transaction": _txn(t) if t else None, "configs": f.txn_timeout_cfg()}, fix)


IO_MAX = "log.cleaner.io.max.bytes.per.second"


def _throttled_cleaner(f: _Facts) -> Found | None:
    s, b = f.state, f.broker
    if not s.eligible or b is None or b.io_max is None or not at_throttle(b.cleaner_io, b.io_max.value):
        return None
    rate, limit = b.cleaner_io.bytes_per_second, b.io_max.value
    late = f" and {duration(s.compaction_delay_ms)} past max.compaction.lag.ms" if s.compaction_delay_ms > 0 else ""
    return (f"eligible{late}, while the broker's log cleaner reads and writes {rate:.0f} B/s, at its throttle "
            f"{IO_MAX}={limit:.0f} ({b.io_max.source}): the throttle holds the cleaner back",
            {"cleaner_io_bytes_per_second": rate, "cleaner_io_window_seconds": b.cleaner_io.window_seconds,
             "cleaner_io_basis": b.cleaner_io.basis, "throttle_ratio": throttle_ratio(b.cleaner_io, limit),
             "gauge": b.source, "eligible_seconds": f.eligible_seconds, "compaction_delay_ms": s.compaction_delay_ms,
             "configs": {IO_MAX: {"value": f"{limit:g}", "source": b.io_max.source}}},
            (alter_brokers(f.bootstrap, IO_MAX, f"{limit * 2:.0f}") + "   (a dynamic broker config: no restart; "
             "--entity-name <broker id> instead of --entity-default for one broker)",
             "more log.cleaner.threads do not help: every cleaner thread shares the one throttle"))


def _overdue(f: _Facts) -> Found | None:
    s = f.state
    if s.compaction_delay_ms <= 0 or not s.eligible:
        return None
    return (f"max.compaction.lag.ms has passed by {duration(s.compaction_delay_ms)} and the cleaner has not cleaned it",
            {"compaction_delay_ms": s.compaction_delay_ms, "first_dirty_timestamp": s.first_dirty_timestamp,
             "eligible_seconds": f.eligible_seconds, "configs": f.cfg("max.compaction.lag.ms")},
            ("the cleaner is behind: check CleanerSlow / CleanerBufferSaturated and the cleaner's throttle "
             "(log.cleaner.io.max.bytes.per.second)",
             alter_brokers(f.bootstrap, "log.cleaner.threads", MORE_THREADS)))


def _waiting(f: _Facts) -> Found | None:
    s = f.state
    if not s.eligible:
        return None
    how_long = ("for an unknown time (a one-shot read; the collector tracks partition_eligible_seconds)"
                if f.eligible_seconds is None else f"for {duration(f.eligible_seconds * 1000)}")
    return (f"eligible (cleanable ratio {s.cleanable_ratio:.3f} > min.cleanable.dirty.ratio "
            f"{s.min_cleanable_dirty_ratio:g}) and queued {how_long}: the cleaner takes the filthiest log first",
            {"eligible_seconds": f.eligible_seconds, "configs": f.cfg("min.cleanable.dirty.ratio")},
            ("nothing if it is cleaned soon; if it waits long, the cleaner lacks capacity: "
             + alter_brokers(f.bootstrap, "log.cleaner.threads", MORE_THREADS),))


def _min_compaction_lag(f: _Facts) -> Found | None:
    s = f.state
    if s.blocked_by != "min_compaction_lag" or not _would_be_eligible(s):
        return None
    lag = f.config.min_compaction_lag_ms
    return (f"min.compaction.lag.ms ({duration(lag)}) holds back {s.uncleaned_bytes - s.cleanable_bytes} bytes from "
            f"segment {segment_file(s.first_uncleanable_offset)} on: they are too recent to clean",
            {"held_from_segment": segment_file(s.first_uncleanable_offset),
             "configs": f.cfg("min.compaction.lag.ms")},
            ("nothing if the lag is intended; else " + alter_topic(f.bootstrap, s.topic, "min.compaction.lag.ms",
                                                                   max(lag // 10, 0)),))


def _below_threshold(f: _Facts) -> Found | None:
    s = f.state
    if s.uncleaned_bytes <= 0:
        return None
    ratio = s.cleanable_ratio
    lower = max(int(ratio * 100) / 100 - 0.01, 0.01)
    held = f" ({s.blocked_by} holds back more, but even without it the ratio stays below)" if s.blocked_by else ""
    return (f"cleanable ratio {ratio:.3f} is not above min.cleanable.dirty.ratio {s.min_cleanable_dirty_ratio:g}: "
            f"the cleaner waits for more dirty bytes{held}",
            {"configs": f.cfg("min.cleanable.dirty.ratio"), "blocked_by": s.blocked_by},
            ("nothing: this is the configured behaviour; to compact sooner: "
             + alter_topic(f.bootstrap, s.topic, "min.cleanable.dirty.ratio", f"{lower:.2f}"),))


def _active_segment_only(f: _Facts) -> Found | None:
    s = f.state
    if s.active_segment_bytes <= 0 or s.first_dirty_offset >= s.log_end_offset:
        return None
    roll = _roll(f)
    when = "at an unknown time" if roll["at_ms"] is None else f"in {duration(roll['in_seconds'] * 1000)}"
    c = f.config
    return (f"all dirty records are in the active segment {segment_file(s.active_segment_base_offset)}, which the "
            f"cleaner never touches; it rolls {when} ({roll['reason']})",
            {"active_segment_bytes": s.active_segment_bytes,
             "active_segment_first_timestamp": s.active_segment_first_timestamp,
             "configs": f.cfg("segment.ms", "segment.bytes", "max.compaction.lag.ms")},
            ("nothing if the roll time is acceptable; else " + alter_topic(
                f.bootstrap, s.topic, "segment.ms", max(min(c.segment_ms // 2, 3_600_000), 1000)),))


def _clean(f: _Facts) -> Found | None:
    s = f.state
    return (f"nothing to clean: the cleaner's checkpoint ({s.first_dirty_offset}) is at the log end", {},
            ("nothing",))


# The order causes are tried in; the first that holds is the partition's cause.
PRECEDENCE: tuple[tuple[str, Callable[[_Facts], Found | None], str], ...] = (
    ("cleaner_disabled", _cleaner_disabled,
     "no cleaner exists on the broker: nothing below can lead to a clean, and an uncleanable mark or a dead "
     "thread belongs to a cleaner that no longer runs (both clear on the restart that disabling needed)"),
    ("uncleanable", _uncleanable,
     "the cleaner itself has given up on the partition until a restart; nothing below can change that"),
    ("cleaner_dead", _cleaner_dead,
     "with no cleaner thread alive, no other fix leads to a clean; it concerns every partition with dirty bytes"),
    ("unknown", _unknown,
     "the figures every cause below is read from are wrong or moot (read faults, a topic the cleaner ignores): "
     "better no answer than a confident wrong one"),
    ("hanging_transaction", _hanging_transaction,
     "a transaction past transaction.max.timeout.ms never ends by itself and holds the cleaner at the LSO"),
    ("open_transaction", _open_transaction,
     "the LSO is a hard limit that only the producer (or an abort) moves: whatever else holds, nothing past it "
     "is cleaned, and every byte written meanwhile piles up behind it (counted whatever the ratio)"),
    ("throttled_cleaner", _throttled_cleaner,
     "eligible while the cleaner runs at log.cleaner.io.max.bytes.per.second: the throttle explains the wait "
     "(and an overdue clean), and its fix differs from a lack of threads (they share the one throttle)"),
    ("overdue", _overdue,
     "eligible and past max.compaction.lag.ms: a broken promise, more urgent than an ordinary wait"),
    ("waiting", _waiting,
     "eligible: the config is satisfied, only the cleaner has not come yet"),
    ("min_compaction_lag", _min_compaction_lag,
     "a configured hold that releases by itself: counted only when lifting it would make the partition "
     "eligible (else the ratio is the reason)"),
    ("below_threshold", _below_threshold,
     "dirty bytes below the active segment, but not enough of them: Kafka's configured behaviour"),
    ("active_segment_only", _active_segment_only,
     "dirty records only in the active segment: nothing is cleanable until it rolls"),
    ("clean", _clean, "nothing is dirty"),
)
CAUSES = tuple(name for name, _, _ in PRECEDENCE)


def _unchecked(f: _Facts) -> dict:
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


# ------------------------------------------------------------------ forecast


def _unknown_at(reason: str, code: str | None = None) -> dict:
    return {"at_ms": None, "in_seconds": None, "reason": reason, "code": code}


def _at(now_ms: int, at_ms: float, reason: str, code: str | None = None) -> dict:
    return {"at_ms": int(at_ms), "in_seconds": max(at_ms - now_ms, 0) / 1000, "reason": reason, "code": code}


def max_segment_ms(c: TopicConfig) -> int:
    """LogConfig.maxSegmentMs: a compacted topic's segments roll by max.compaction.lag.ms too."""
    if c.compacted and c.max_compaction_lag_ms > 0:
        return min(c.max_compaction_lag_ms, c.segment_ms)
    return c.segment_ms


# The roll forecast's codes (``forecast["active_segment_roll"]["code"]``): what rolls it when known
# (ROLLED_BY), why it cannot be told otherwise (ROLL_UNKNOWN). The exporter labels its series with them.
ROLLED_BY = ("segment_ms", "max_compaction_lag_ms", "segment_bytes")
ROLL_UNKNOWN = ("empty_segment", "no_writes", "write_rate_unknown")


def active_segment_roll(state: PartitionState, config: TopicConfig, rate: WriteRate, now_ms: int) -> dict:
    """When the active segment rolls at the current write rate: ``{at_ms, in_seconds, reason, code}``
    (at_ms None when it cannot be told; code one of ``ROLLED_BY`` / ``ROLL_UNKNOWN``). The earlier of its
    time roll (first batch's timestamp + LogConfig.maxSegmentMs, reached only on an append) and its size
    roll (segment.bytes at the rate); at a rate of 0 nothing is appended, so it never rolls.
    ``explain``'s forecast and the collector's ``partition_active_segment_roll_seconds`` are this one.
    Not modelled: segment.jitter.ms (LogSegment.shouldRoll subtracts a random jitter below it; Kafka's
    default is 0), and the offset/time index filling up (a roll at any size)."""
    s, c, r = state, config, rate.bytes_per_second
    if s.active_segment_bytes <= 0:
        return _unknown_at("the active segment is empty: the next append starts it", "empty_segment")
    limit = max_segment_ms(c)
    by = "segment.ms" if limit == c.segment_ms else "max.compaction.lag.ms"
    options = []
    if s.active_segment_first_timestamp >= 0 and limit < LONG_MAX:
        t = s.active_segment_first_timestamp + limit
        options.append((max(t, now_ms), f"{by}={limit} after its first batch's timestamp, on the next append",
                        by.replace(".", "_")))
    if r is not None and r > 0:
        left = max(c.segment_bytes - s.active_segment_bytes, 0)
        options.append((now_ms + left / r * 1000, f"segment.bytes={c.segment_bytes} reached at {r:.0f} B/s",
                        "segment_bytes"))
    if r is not None and r <= 0:
        return _unknown_at("no writes: a segment rolls only on an append", "no_writes")
    if not options:
        return _unknown_at(f"write rate unknown ({rate.basis})", "write_rate_unknown")
    at, why, code = min(options)
    if r is None:
        why += f"; write rate unknown ({rate.basis}), so the append may come later"
    return _at(now_ms, at, why, code)


def _roll(f: _Facts) -> dict:
    return active_segment_roll(f.state, f.config, f.rate, f.now_ms)


def _threshold(f: _Facts) -> dict:
    s, r = f.state, f.rate.bytes_per_second
    m = s.min_cleanable_dirty_ratio
    if s.cleanable_ratio_above_min:
        return _at(f.now_ms, f.now_ms, "already above min.cleanable.dirty.ratio")
    if s.blocked_by:
        return _unknown_at(f"held back by {s.blocked_by}: new writes are not cleanable until it releases")
    if m >= 1:
        return _unknown_at("min.cleanable.dirty.ratio is 1: the ratio can never exceed it")
    if r is None:
        return _unknown_at(f"write rate unknown ({f.rate.basis})")
    if r <= 0:
        return _unknown_at("no writes at the current rate: never")
    total, dirty = s.clean_bytes + s.cleanable_bytes, s.cleanable_bytes
    need = max((m * total - dirty) / (1 - m), 0)
    return _at(f.now_ms, f.now_ms + need / r * 1000,
               f"{need:.0f} more dirty bytes at {r:.0f} B/s (counted once their segment rolls)")


def _next_clean_due(f: _Facts) -> dict:
    s, lag = f.state, f.config.max_compaction_lag_ms
    if lag >= LONG_MAX:
        return _unknown_at("max.compaction.lag.ms is not set: no clean is ever forced")
    if s.compaction_delay_ms > 0:
        return _at(f.now_ms, f.now_ms - s.compaction_delay_ms, "overdue: max.compaction.lag.ms has passed")
    if s.first_dirty_timestamp is not None:
        return _at(f.now_ms, s.first_dirty_timestamp + lag,
                   "the oldest dirty segment's first batch timestamp + max.compaction.lag.ms")
    if s.active_segment_bytes > 0 and s.active_segment_first_timestamp >= 0:
        return _at(f.now_ms, s.active_segment_first_timestamp + lag,
                   "the active segment's first batch timestamp + max.compaction.lag.ms (it rolls by then)")
    return _unknown_at("nothing dirty")


def forecast(f: _Facts) -> dict:
    if f.unknown_configs:
        why = f"topic config unknown ({', '.join(f.unknown_configs)})"
        return {k: _unknown_at(why) for k in ("threshold", "next_clean_due", "active_segment_roll")} | {
            "write_rate_bytes_per_second": f.rate.bytes_per_second, "write_rate_basis": f.rate.basis}
    return {"threshold": _threshold(f), "next_clean_due": _next_clean_due(f), "active_segment_roll": _roll(f),
            "write_rate_bytes_per_second": f.rate.bytes_per_second, "write_rate_basis": f.rate.basis}


def rate_from_dirty_section(state: PartitionState, now_ms: int) -> WriteRate:
    """A one-shot write rate: the dirty section's bytes over the time since its first batch's timestamp
    (what ``explain`` uses; the collector measures it between refreshes instead)."""
    start = state.first_dirty_timestamp
    if start is None and state.active_segment_first_timestamp >= 0 and state.active_segment_bytes > 0:
        start = state.active_segment_first_timestamp
    if start is None:
        return WriteRate(None, "no batch timestamp in the dirty section")
    dirty, span = state.log_bytes - state.clean_bytes, now_ms - start
    if span <= 0:
        return WriteRate(None, "the dirty section's first timestamp is not in the past")
    return WriteRate(dirty * 1000 / span, f"one-shot: {dirty} bytes of the dirty section over the "
                                          f"{duration(span)} since its first batch's timestamp")


# ------------------------------------------------------------------ entry points


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
    f = _Facts(state, cfg, sources, cleaner, broker, eligible_seconds, rate, now_ms, tuple(faults),
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
            return Cause(state.topic, state.partition, name, summary, evidence, fix, forecast(f), _unchecked(f))
    raise AssertionError("clean always holds")


def unknown_cause(topic: str, partition: int, reason: str) -> Cause:
    """The cause of a partition whose state could not be computed (a file unreadable, its log dir down)."""
    return Cause(topic, partition, "unknown", f"cannot tell: {reason}", {"reason": reason}, ("fix the named input",),
                 {k: _unknown_at(reason) for k in ("threshold", "next_clean_due", "active_segment_roll")}
                 | {"write_rate_bytes_per_second": None, "write_rate_basis": reason})


def fix_outline(cause: str, topic: str, partition: int, *, last_stable_offset: int | None = None,
                bootstrap: str | None = None) -> str:
    """The fix of a cause in one line, from what a metric series carries (the dashboard's view: no
    segments at hand); ``explain`` gives the full fix with the partition's own numbers."""
    b = bootstrap or BOOTSTRAP_PLACEHOLDER
    start = "<first offset>" if last_stable_offset is None else last_stable_offset
    return {
        "cleaner_disabled": "set log.cleaner.enable=true in server.properties and restart the broker",
        "uncleanable": "repair what the exception in log-cleaner.log names, then restart the broker "
                       "(uncleanable partitions are kept in memory until a restart)",
        "cleaner_dead": "read the error in log-cleaner.log, then restart the broker",
        "unknown": f"run `compaction-monitor explain {topic}-{partition} --log-dir <log dir>` for the reason",
        "hanging_transaction": abort_transaction(b, topic, partition, start),
        "open_transaction": "let the producer commit or abort; if it is gone: "
                            + abort_transaction(b, topic, partition, start),
        "throttled_cleaner": "raise the cleaner's I/O throttle: " + alter_brokers(b, IO_MAX, "<higher>"),
        "overdue": "the cleaner lacks capacity: " + alter_brokers(b, "log.cleaner.threads", MORE_THREADS),
        "waiting": "nothing if it is cleaned soon; else " + alter_brokers(b, "log.cleaner.threads", MORE_THREADS),
        "min_compaction_lag": "nothing if intended; else " + alter_topic(b, topic, "min.compaction.lag.ms", "<lower>"),
        "below_threshold": "nothing (configured); to compact sooner: "
                           + alter_topic(b, topic, "min.cleanable.dirty.ratio", "<lower>"),
        "active_segment_only": "nothing if the roll time is acceptable; else "
                               + alter_topic(b, topic, "segment.ms", "<lower>"),
        "clean": "nothing",
    }[cause]


WHY = {name: why for name, _, why in PRECEDENCE}  # why each cause stands where it does, for the pages

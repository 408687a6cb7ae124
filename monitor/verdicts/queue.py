"""The cleaner queue's forecast of one broker (``monitor.model.cleanerqueue``) made from what the edges read:
each partition's state, config and write rate, the broker's cleaner settings (``BrokerFacts``: the admin
API's) and the throughput learned from its log-cleaner.log; and said in words for ``explain``.

The one place these inputs are turned into the model's: the collector (``collectors.export.facts`` joins the
forecast into each broker's log-dir facts) and ``explain`` both call ``broker_queue``.
"""

from __future__ import annotations

from dataclasses import replace

from monitor.contract.units import duration_ms, rate as rate_text, timestamp_utc
from monitor.kafka.cleanerlog import CleanerLogState
from monitor.model.cleanerqueue import BROKER_UNKNOWN, CleanerQueueParams, NextClean, QueueForecast, forecast, from_state
from monitor.model.configdeps import configs_of
from monitor.verdicts.facts import BrokerFacts

BACKOFF = "log.cleaner.backoff.ms"
QUEUE_CONFIGS = configs_of("eligible")  # what the queue reads of a topic: whether and when the cleaner picks it


def params_of(broker: BrokerFacts | None, cleaner: CleanerLogState | None) -> CleanerQueueParams:
    """The cleaner's settings and throughput, each unknown one named (the forecast is then unknown)."""
    if cleaner is None:
        throughput, basis = None, "no log-cleaner.log read for this broker"
    else:
        throughput = cleaner.learned_throughput()
        basis = (f"learned from {len(cleaner.cleans)} recent clean(s) in log-cleaner.log" if throughput else
                 "no clean of 1 MB or more in log-cleaner.log yet")
    if broker is None:
        return CleanerQueueParams(throughput=throughput, throughput_basis=basis,
                                  unknown="the broker's cleaner settings are unknown (no admin API answer)")
    missing = []
    threads, backoff, io_max = broker.cleaner_threads, broker.backoff, broker.io_max
    if threads is None:
        missing.append("log.cleaner.threads")
    if backoff is None or not backoff.known:
        missing.append(BACKOFF)
    if io_max is not None and not io_max.known:
        missing.append(io_max.key)
    dead = int(broker.dead_threads or 0)
    return CleanerQueueParams(
        threads=max(int(threads or 1) - dead, 0) if threads is not None else 1,
        backoff_ms=int(backoff.value) if backoff is not None and backoff.known else CleanerQueueParams.backoff_ms,
        io_max_bytes_per_second=io_max.value if io_max is not None and io_max.known else None,
        throughput=throughput, throughput_basis=basis, enabled=broker.cleaner_enabled,
        unknown=f"the broker's {', '.join(missing)} unknown" if missing else None)


def broker_queue(partitions, broker: BrokerFacts | None, cleaner: CleanerLogState | None,
                 now_ms: int) -> QueueForecast:
    """``partitions``: ``(state, EffectiveConfig, write rate bytes/s or None)`` of every compacted partition the
    broker's log dirs hold. One whose config is unknown leaves every forecast unknown (its place in the
    queue cannot be told); one log-cleaner.log marks uncleanable is skipped, as Kafka skips it."""
    marked = cleaner.uncleanable if cleaner is not None else {}
    logs = []
    unknowns: dict = {}  # id(config) -> why its queue figures are unknown (a topic's partitions share one object)
    for state, cfg, rate in partitions:
        if not cfg.config.compacted:
            continue
        if id(cfg) in unknowns:
            unknown = unknowns[id(cfg)][1]
        else:
            unknown = None if cfg.known(*QUEUE_CONFIGS) else \
                f"topic config unknown ({', '.join(k for k in QUEUE_CONFIGS if not cfg.known(k))})"
            unknowns[id(cfg)] = (cfg, unknown)  # (the config held: its id is not reused meanwhile)
        u = marked.get((state.topic, state.partition))
        logs.append(from_state(state, cfg.config, rate, unknown=unknown,
                               uncleanable=f"{u.exception} ({u.source})" if u is not None else None))
    return forecast(logs, params_of(broker, cleaner), now_ms)


def unknown_queue(q: QueueForecast, why: str) -> QueueForecast:
    """``q`` with every figure unknown for ``why`` (a partition of the broker that could not be read)."""
    cleans = {k: replace(c, start_ms=None, end_ms=None, position=None, reason=why, code=BROKER_UNKNOWN)
              for k, c in q.cleans.items()}
    return replace(q, cleans=cleans, drain_ms=None, drain_reason=why, drain_code=BROKER_UNKNOWN)


def in_words(c: NextClean, now_ms: int) -> str:
    """One partition's next clean, for ``explain``."""
    if c.start_ms is None:
        return f"next clean: unknown ({c.reason})"
    when = "now" if c.start_ms <= now_ms else f"in {duration_ms(c.start_ms - now_ms)} ({timestamp_utc(c.start_ms)})"
    took = f", done in {duration_ms(c.end_ms - c.start_ms)}" if c.end_ms is not None else ""
    late = ""
    if c.late_ms is not None and c.late_ms > 0:
        late = f"; {duration_ms(c.late_ms)} past its max.compaction.lag.ms deadline ({timestamp_utc(c.due_ms)})"
    return f"next clean: starts {when}{took}, #{c.position} in the broker's queue{late}"


def drain_in_words(q: QueueForecast, throughput: float | None = None) -> str:
    if q.drain_ms is None:
        return f"the cleaner's backlog: drain time unknown ({q.drain_reason})"
    at = f" at {rate_text(throughput)}" if throughput else ""
    return f"the cleaner's backlog drains in {duration_ms(q.drain_ms - q.now_ms)}{at}"

"""The fixes' command lines: the ``kafka-configs.sh`` / ``kafka-transactions.sh`` an operator runs.

The finders (``monitor.verdicts.finders``) put them into a cause's fix with the partition's own numbers, the
config review and the dashboard put them on their pages, and ``fix_outline`` gives each cause's fix in one line
from what a metric series carries; one place for the command lines keeps those views from drifting apart.
"""

from __future__ import annotations

import math

from monitor.model.topicconfig import NO_DECOMPRESSED_CAP

BOOTSTRAP_PLACEHOLDER = "<bootstrap>"
MORE_THREADS = "<up to twice the current>"  # log.cleaner.threads may at most double per change
IO_MAX = "log.cleaner.io.max.bytes.per.second"
THREADS = "log.cleaner.threads"
# log.cleaner.enable is deprecated since Kafka 4.1 (KIP-1148, to go in 5.0, after which log.cleaner.threads must
# be at least 1): the fix never advises setting it, on any version; it removes the false and names what stays
CLEANER_ENABLE_FIX = ("remove log.cleaner.enable=false from the broker's server.properties (deprecated since Kafka "
                      "4.1, KIP-1148: do not set it to true either, true is its default) and keep "
                      "log.cleaner.threads at 1 or more, then restart the broker: the setting is not dynamic")


DOUBLE_MAX = 1.7976931348623157e308  # Java's Double.MAX_VALUE: log.cleaner.io.max.bytes.per.second's default


# Every value a fix proposes moves its setting the way that helps, whatever the current value (tests/monitor/
# verdicts/test_fix_directions.py holds each cause to it): a hold is lowered below what holds, a limit raised.
def lag_that_releases(s, now_ms: int, current_ms: int) -> tuple[int, int | None]:
    """A min.compaction.lag.ms that holds none of the dirty segments below the active one, and the age of their
    newest record (None: not known). Kafka holds a segment while its largestTimestamp > now - lag
    (LogCleanerManager.cleanableOffsets), so any lag up to that age releases them all; it is rounded down to a
    whole day, hour, minute or second. It is below ``current_ms`` (a held segment is younger than the lag);
    with no record time known, 0 (Kafka then skips the check: ``if (minCompactionLagMs > 0)``)."""
    newest = getattr(s, "dirty_largest_timestamp", None)
    if newest is None:
        return 0, None
    age = max(now_ms - newest, 0)
    lower = next((age // unit * unit for unit in (86_400_000, 3_600_000, 60_000, 1000) if age >= unit), 0)
    return min(lower, max(current_ms - 1, 0)), age


def ratio_below(ratio: float) -> float:
    """The largest min.cleanable.dirty.ratio of two decimals strictly below ``ratio`` (at least 0, Kafka's
    lowest): the cleaner picks a log whose ratio is above it (LogCleanerManager: cleanableRatio > min)."""
    return max(round(math.ceil(ratio * 100 - 1e-9) / 100 - 0.01, 2), 0.0)


def raised_throttle(limit: float) -> float:
    """Twice log.cleaner.io.max.bytes.per.second (a higher throttle lets the shared cleaner threads go faster),
    at most Java's largest double."""
    return min(limit * 2, DOUBLE_MAX)


def decompressed_limit_to_fit(record_bytes: int) -> int:
    """A max.decompressed.message.bytes that lets the cleaner read a stored record of ``record_bytes``: the
    next whole MiB above it (Kafka fails a record larger than the setting), at most Kafka's default (its top)."""
    return min((record_bytes // 1_048_576 + 1) * 1_048_576, NO_DECOMPRESSED_CAP)


def more_threads(broker) -> str:
    """log.cleaner.threads doubled when the current count is known (the most one change may add), else the
    placeholder that says so."""
    threads = getattr(broker, "cleaner_threads", None)
    return str(max(threads * 2, 1)) if threads is not None else MORE_THREADS


def alter_topic(bootstrap: str, topic: str, key: str, value) -> str:
    return (f"kafka-configs.sh --bootstrap-server {bootstrap} --alter --entity-type topics "
            f"--entity-name {topic} --add-config {key}={value}")


def alter_brokers(bootstrap: str, key: str, value, broker: str | None = None) -> str:
    """A dynamic broker config (the log cleaner's settings are reconfigurable: LogCleaner): cluster-wide
    (``--entity-default``), or on ``broker`` alone where it is set on that broker alone, since a per-broker
    value comes before the cluster's default and the default would not change it (``BrokerFacts.entity``).
    log.cleaner.threads may at most double in one change (LogCleaner.validateReconfiguration refuses
    more: "Log cleaner threads cannot be increased to more than double the current value")."""
    entity = "--entity-default" if broker is None else f"--entity-name {broker}"
    return (f"kafka-configs.sh --bootstrap-server {bootstrap} --alter --entity-type brokers {entity} "
            f"--add-config {key}={value}")


def abort_transaction(bootstrap: str, topic: str, partition: int, start_offset: int) -> str:
    return (f"kafka-transactions.sh --bootstrap-server {bootstrap} abort --topic {topic} "
            f"--partition {partition} --start-offset {start_offset}")


def fix_outline(cause: str, topic: str, partition: int, *, last_stable_offset: int | None = None,
                bootstrap: str | None = None) -> str:
    """The fix of a cause in one line, from what a metric series carries (the dashboard's view: no
    segments at hand); ``explain`` gives the full fix with the partition's own numbers."""
    b = bootstrap or BOOTSTRAP_PLACEHOLDER
    start = "<first offset>" if last_stable_offset is None else last_stable_offset
    return {
        "cleaner_disabled": "remove log.cleaner.enable=false from server.properties (deprecated since 4.1; keep "
                            "log.cleaner.threads >= 1) and restart the broker",
        "record_over_decompressed_limit": "raise it to at least the largest stored record: "
                                          + alter_topic(b, topic, "max.decompressed.message.bytes", "<higher>")
                                          + ", then restart the broker if the cleaner marked it uncleanable",
        "uncleanable": "repair what the exception in log-cleaner.log names, then restart the broker "
                       "(uncleanable partitions are kept in memory until a restart)",
        "cleaner_dead": "read the error in log-cleaner.log, then restart the broker",
        "unknown": f"run `compaction-monitor explain {topic}-{partition} --log-dir <log dir>` for the reason",
        "hanging_transaction": abort_transaction(b, topic, partition, start),
        "open_transaction": "let the producer commit or abort; if it is gone: "
                            + abort_transaction(b, topic, partition, start),
        "throttled_cleaner": "raise the cleaner's I/O throttle: " + alter_brokers(b, IO_MAX, "<higher>"),
        "overdue": "the cleaner lacks capacity: " + alter_brokers(b, THREADS, MORE_THREADS),
        "waiting": "nothing if it is cleaned soon; else " + alter_brokers(b, THREADS, MORE_THREADS),
        "min_compaction_lag": "nothing if intended; else " + alter_topic(b, topic, "min.compaction.lag.ms", "<lower>"),
        "below_threshold": "nothing (configured); to compact sooner: "
                           + alter_topic(b, topic, "min.cleanable.dirty.ratio", "<lower>"),
        "active_segment_only": "nothing if the roll time is acceptable; else "
                               + alter_topic(b, topic, "segment.ms", "<lower>"),
        "clean": "nothing",
    }[cause]

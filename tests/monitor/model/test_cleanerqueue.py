"""monitor.model.cleanerqueue: Kafka's cleaning loop run forward over hand-built queues. Every expected time
is worked out by hand in the comment above it (bytes processed = clean + cleanable, at the throughput)."""

from types import SimpleNamespace

import pytest

from monitor.model import cleanerqueue as cq
from monitor.model.cleanerqueue import CleanerQueueParams, QueueLog, forecast, from_state
from monitor.model.topicconfig import LONG_MAX, TopicConfig

NOW = 1_000_000_000
T = "t"


def log(p, clean, dirty, min_ratio=0.2, **kw):
    return QueueLog(T, p, clean, dirty, min_ratio, **kw)


def params(**kw):
    kw.setdefault("throughput", 1000.0)
    kw.setdefault("throughput_basis", "test")
    return CleanerQueueParams(**kw)


# A: 0.5, B: 1.0, C: 0.25 -- the filthiest first, whatever the size
ABC = [log(0, 1000, 1000), log(1, 0, 500), log(2, 3000, 1000)]


def starts(f):
    return {p: (c.start_ms - NOW if c.start_ms is not None else None,
                c.end_ms - NOW if c.end_ms is not None else None) for (_, p), c in f.cleans.items()}


def test_one_thread_takes_the_dirtiest_first_one_after_another():
    f = forecast(ABC, params(threads=1), NOW)
    # B 500 B (0-500), A 2000 B (500-2500), C 4000 B (2500-6500)
    assert f.order() == [(T, 1), (T, 0), (T, 2)]
    assert starts(f) == {1: (0, 500), 0: (500, 2500), 2: (2500, 6500)}
    assert f.drain_seconds == 6.5


def test_two_threads_take_the_two_dirtiest_at_once():
    f = forecast(ABC, params(threads=2), NOW)
    # B (0-500) and A (0-2000) at once; C on B's thread from 500, 4000 B: 4500
    assert starts(f) == {1: (0, 500), 0: (0, 2000), 2: (500, 4500)}
    assert f.drain_seconds == 4.5


def test_the_throttle_is_shared_by_the_threads_running():
    f = forecast(ABC, params(threads=2, io_max_bytes_per_second=1000.0), NOW)
    # the throttle counts I/O: the offset map's read of the cleanable bytes, the processed bytes read, and
    # as many written (B: 500 + 500 + 500 = 1500 B, A: 1000 + 2000 + 2000 = 5000, C: 1000 + 4000 + 4000 = 9000).
    # Two cleans at 500 B/s of I/O each: B's 1500 end at 3000, A has done 1500 of its 5000; C joins: both at
    # 500 B/s, A's 3500 left end at 3000 + 7000 = 10000, C has done 3500 of 9000, its 5500 left alone at
    # 1000 B/s: 15500 (all 15500 B of I/O at the throttle)
    assert starts(f) == {1: (0, 3000), 0: (0, 10000), 2: (3000, 15500)}


def test_one_throttled_clean_pays_for_its_reads_and_its_writes():
    # B alone (0 clean, 500 cleanable): the map reads 500, the copy reads 500 and writes 500: 1500 B of I/O
    # at 1000 B/s is 1.5 s, though its 500 B processed at 1000 B/s would be 0.5 s; unthrottled it is 0.5 s
    f = forecast([log(1, 0, 500)], params(threads=1, io_max_bytes_per_second=1000.0), NOW)
    assert starts(f) == {1: (0, 1500)}
    f = forecast([log(1, 0, 500)], params(threads=1, io_max_bytes_per_second=1e6), NOW)
    assert starts(f) == {1: (0, 500)}  # the throttle far above the throughput: the throughput's time


def test_no_throttle_at_kafkas_default():
    f = forecast(ABC, params(threads=2, io_max_bytes_per_second=1.7976931348623157e308), NOW)
    assert starts(f) == {1: (0, 500), 0: (0, 2000), 2: (500, 4500)}


@pytest.mark.parametrize("backoff, start", [(15_000, 15_000), (4_000, 12_000), (0, 10_001)])
def test_a_log_made_eligible_by_writes_waits_for_the_threads_next_back_off_wake_up(backoff, start):
    # ratio 0 now; at 100 B/s its ratio passes 0.5 once 1000 B are written: 10 s. The idle thread looks at
    # 0, then every back-off: the first look past 10 s starts it, with 1000 clean + 100 B/s written so far
    f = forecast([log(0, 1000, 0, 0.5, write_rate=100.0)], params(backoff_ms=backoff), NOW)
    c = f.cleans[(T, 0)]
    assert c.start_ms - NOW == start
    assert c.end_ms - NOW == pytest.approx(start + (1000 + start / 10) , abs=1)


def test_max_compaction_lag_offers_a_log_below_its_ratio_but_not_ahead_of_a_dirtier_one():
    y, z = log(0, 1000, 9000, 0.5), log(1, 400, 600, 0.5)  # 0.9 (10 s), 0.6 (1 s)
    x = log(2, 900, 100, 0.5, due_ms=NOW + 5000)  # 0.1: offered only past its deadline, 5 s from now
    f = forecast([y, z, x], params(), NOW)
    # Y 0-10000; at 10000 Z (0.6) and X (overdue, 0.1) are offered: Kafka takes the higher ratio, Z
    assert starts(f) == {0: (0, 10_000), 1: (10_000, 11_000), 2: (11_000, 12_000)}
    assert f.cleans[(T, 2)].late_ms == 6000 and f.cleans[(T, 1)].late_ms is None
    # without the deadline X is never offered (no writes)
    f2 = forecast([y, z, log(2, 900, 100, 0.5, write_rate=0.0)], params(), NOW)
    assert f2.cleans[(T, 2)].code == cq.NEVER and f2.cleans[(T, 2)].start_ms is None


def test_an_overdue_log_starts_now_when_the_thread_is_free():
    f = forecast([log(0, 900, 100, 0.5, due_ms=NOW - 60_000)], params(), NOW)
    c = f.cleans[(T, 0)]
    assert (c.start_ms, c.late_ms, c.end_ms - NOW) == (NOW, 60_000, 1000)


def test_without_a_throughput_the_order_but_no_time():
    f = forecast(ABC, params(throughput=None, throughput_basis="no clean of 1 MB in log-cleaner.log"), NOW)
    assert f.drain_ms is None and "no clean of 1 MB" in f.drain_reason
    b = f.cleans[(T, 1)]
    assert (b.start_ms, b.position, b.code) == (None, 1, cq.NO_THROUGHPUT)
    assert {c.code for c in f.cleans.values()} == {cq.NO_THROUGHPUT}
    assert all(c.start_ms is None and c.end_ms is None for c in f.cleans.values())


def test_a_log_not_eligible_whose_write_rate_is_unknown_is_unknown_and_no_writes_is_never():
    f = forecast([log(0, 1000, 10, 0.5), log(1, 1000, 10, 0.5, write_rate=0.0)], params(), NOW)
    assert f.cleans[(T, 0)].code == cq.NOT_ELIGIBLE_RATE_UNKNOWN
    assert f.cleans[(T, 1)].code == cq.NEVER
    assert f.drain_seconds == 0.0  # nothing to clean: the backlog is empty now


def test_a_disabled_cleaner_or_an_unknown_config_leaves_every_forecast_unknown():
    f = forecast(ABC, params(enabled=False), NOW)
    assert {c.code for c in f.cleans.values()} == {cq.BROKER_UNKNOWN} and "log.cleaner.enable" in f.drain_reason
    f = forecast(ABC + [log(3, 10, 10, unknown="topic config unknown (describe_configs refused)")], params(), NOW)
    assert f.drain_ms is None and "t-3: topic config unknown" in f.drain_reason
    assert all(c.start_ms is None for c in f.cleans.values())


def test_an_uncleanable_log_is_skipped():
    f = forecast(ABC + [log(3, 0, 9000, uncleanable="CorruptRecordException")], params(threads=1), NOW)
    assert f.cleans[(T, 3)].code == cq.UNCLEANABLE
    assert starts(f)[1] == (0, 500)  # B still first, though the uncleanable log's ratio is 1.0 too


def test_writes_that_outrun_the_cleaner_never_drain():
    f = forecast([log(0, 0, 1000, 0.1, write_rate=5000.0)], params(backoff_ms=1000), NOW)
    assert f.cleans[(T, 0)].start_ms == NOW
    assert f.drain_ms is None and "does not catch up" in f.drain_reason and f.drain_code == cq.NOT_CAUGHT_UP


def test_from_state_takes_the_deadline_from_the_oldest_dirty_batch():
    st = SimpleNamespace(topic="t", partition=4, clean_bytes=10, cleanable_bytes=20, min_cleanable_dirty_ratio=0.5,
                         first_dirty_timestamp=NOW - 1000, uncleanable_reason="active_segment",
                         dirty_largest_timestamp=None)
    q = from_state(st, TopicConfig(cleanup_policy=("compact",), max_compaction_lag_ms=60_000), 12.5)
    assert (q.due_ms, q.lag_ms, q.write_rate, q.cleanable_bytes) == (NOW + 59_000, 60_000, 12.5, 20)
    q = from_state(st, TopicConfig(cleanup_policy=("compact",), max_compaction_lag_ms=LONG_MAX))
    assert (q.due_ms, q.lag_ms) == (None, None)


def test_bytes_held_by_min_compaction_lag_join_the_queue_when_released():
    # ratio 0 now; 3000 B held until 20 s from now: then 3000 / 4000 = 0.75, offered at the next wake-up
    # (back-off 15 s: 0, 15000, 30000), 4000 B at 1000 B/s
    f = forecast([log(0, 1000, 0, 0.5, held_bytes=3000, held_until_ms=NOW + 20_000)], params(), NOW)
    assert starts(f) == {0: (30_000, 34_000)}
    assert f.drain_seconds == 34.0  # the held bytes are backlog: written, only held


def test_from_state_counts_the_bytes_min_compaction_lag_holds():
    st = SimpleNamespace(topic="t", partition=0, clean_bytes=10, cleanable_bytes=0, min_cleanable_dirty_ratio=0.5,
                         first_dirty_timestamp=None, uncleanable_reason="min_compaction_lag",
                         dirty_largest_timestamp=NOW - 1000, not_yet_cleanable_split=lambda: {"min_compaction_lag": 70})
    q = from_state(st, TopicConfig(cleanup_policy=("compact",), min_compaction_lag_ms=60_000))
    assert (q.held_bytes, q.held_until_ms) == (70, NOW + 59_000)

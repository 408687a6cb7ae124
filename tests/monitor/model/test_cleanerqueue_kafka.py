"""``monitor.model.cleanerqueue`` against a real broker's cleaner (the session broker: one cleaner thread,
``log.cleaner.backoff.ms`` 500): four compacted partitions, dirty by different amounts over clean sections of
different sizes, released to the cleaner at one moment; the forecast made before the release against the
order and the times of the cleans ``log-cleaner.log`` reports.

How the four are released at once: their dirty records all carry one timestamp, so ``min.compaction.lag.ms``
holds every dirty segment back until that timestamp + the lag (LogCleanerManager.cleanableOffsets), a
moment the forecast knows (``held_until_ms``). Before it, each partition's clean section is made by one
first round of cleans (records timestamped two hours back, not held), whose statistics in log-cleaner.log
give the throughput the forecast is made with, as the collector learns it.

The cleaner is not throttled here; test_cleanerqueue_throttled_kafka.py runs the same queue under a
throttle, and the throttle shared among threads is checked on hand-built queues
(tests/monitor/model/test_cleanerqueue.py).

The error allowed, and why: a start may come up to one ``log.cleaner.backoff.ms`` after the release (the
thread wakes from its back-off then; the forecast takes the next wake-up on a grid it cannot see, so up to
one back-off either way), plus the cleans ahead of it, whose durations the learned throughput gives to
within the spread of Kafka's own cleaning speeds on a loaded 2-core machine (``SPREAD`` of the time from the
release to the forecast end, at least a second: the first round's small cleans ran at 2.8 MB/s in one run,
8.1 MB/s in another, and the released ones at about 5 MB/s in the first; the errors measured were +0.04 to
+5.9 s against an allowance of 6.9 s at 0.6, then +0.1 to +1.9 s, forecast later than logged both times: 1.0
keeps a loaded CI machine from failing on the known late bias, which the docs state; the order is exact). Log4j's timestamp is the end of a clean (recordStats runs after it); its start is that
minus the clean's seconds."""

from __future__ import annotations

import sys
import time

import pytest

from cleanerqueuekafka import MB, held_queue, released_cleans, state_of, cleans_of
from monitor.model.cleanerqueue import CleanerQueueParams, forecast, from_state

pytestmark = pytest.mark.kafka

# (clean MB, dirty MB) per partition: ratios 0.75, 0.4, 0.5, 0.67 -- the dirtiest is not the biggest
SHAPE = [(2, 6), (6, 4), (3, 3), (2, 4)]
RELEASE_IN_MS = 15_000  # from the dirty writes' start to their release: writing, the first cleans, the forecast
BACKOFF_MS = 500  # localkafka.broker.FAST_CLEANER
SPREAD = 1.0  # of the forecast time from the release: how far the learned throughput may be off (module docstring)


def test_the_forecast_order_and_times_against_the_cleaners_own(kafka):
    t_start = time.monotonic()
    q = held_queue(kafka, "queue", SHAPE, RELEASE_IN_MS)
    topic, config = q.topic, q.config
    now_ms = int(time.time() * 1000)
    assert now_ms < q.release_ms - 2000, "the set-up took longer than RELEASE_IN_MS: the forecast would be late"
    states = [state_of(kafka.log_dir, topic, p, config, now_ms) for p in range(len(SHAPE))]
    before, log_state = cleans_of(kafka, topic)
    throughput = log_state.learned_throughput()
    assert throughput, f"no throughput learned from the first round's cleans: {[c[4] for c in before]}"
    params = CleanerQueueParams(threads=1, backoff_ms=BACKOFF_MS, throughput=throughput,
                                throughput_basis=f"{len(log_state.cleans)} cleans in log-cleaner.log")
    f = forecast([from_state(s, config, 0.0) for s in states], params, now_ms)
    for s in states:  # the set-up as meant: nothing cleanable now, the dirty bytes held until the release
        assert s.cleanable_bytes == 0 and s.blocked_by == "min_compaction_lag", s
    want = {p: f.cleans[(topic, p)] for p in range(len(SHAPE))}
    assert all(c.start_ms is not None for c in want.values()), want

    # the release, and the cleaner's own account of it
    got = released_cleans(kafka, q, RELEASE_IN_MS / 1000 + 60)
    order_logged = [c[0] for c in sorted(got, key=lambda c: c[2])]
    assert f.order() == [(topic, p) for p in order_logged], (f.order(), order_logged)
    assert order_logged == [0, 3, 2, 1]  # the ratio's order, not the dirty bytes' (0, then 1 and 3, then 2)

    errors = []
    release = q.release_ms
    for p, start, end, _, c in got:
        fc = want[p]
        allowed = BACKOFF_MS + max(1000.0, SPREAD * (fc.end_ms - release))
        errors.append((p, fc.start_ms - start, fc.end_ms - end, allowed))
    report = "; ".join(f"{topic}-{p}: start {ds / 1000:+.2f} s, end {de / 1000:+.2f} s (allowed {a / 1000:.2f} s)"
                       for p, ds, de, a in errors)
    print(f"[cleanerqueue] forecast minus logged: {report}; throughput {throughput / MB:.1f} MB/s; "
          f"forecast {(q.release_ms - now_ms) / 1000:.1f} s before the release; test {time.monotonic() - t_start:.1f} s",
          file=sys.stderr)
    assert all(abs(ds) <= a and abs(de) <= a for _, ds, de, a in errors), report
    drain_at = f.drain_ms
    assert drain_at is not None
    # the drain: the last clean's end, as forecast, against the logged one
    assert abs(drain_at - max(c[2] for c in got)) <= max(e[3] for e in errors), (drain_at, max(c[2] for c in got))

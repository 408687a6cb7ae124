"""``monitor.model.cleanerqueue`` against a real broker's cleaner held to a throttle: the session broker
(one cleaner thread, ``log.cleaner.backoff.ms`` 500) with ``log.cleaner.io.max.bytes.per.second`` set low
through the admin API (a dynamic broker config, put back when the test ends: the broker is shared), three
compacted partitions released to the cleaner at one moment (tests/cleanerqueuekafka.py), and the forecast
made before the release against the order and the times of the cleans ``log-cleaner.log`` reports.

Sized so the throttle, not the cleaner's own speed, sets each clean's time: a clean's I/O (the offset
map's read of the dirty bytes, the whole log read, as much written: 8 to 15 MiB here) at 4 MB/s takes 2
to 4 s, where the first round's unthrottled speed would take well under a second.

The error allowed, and why: Kafka's Throttler (storage/.../internals/utils/Throttler.java, called by
LogCleaner for every buffer read or written, ``checkIntervalMs`` 300) lets the cleaner run at full speed
until 300 ms have passed since its last check, then sleeps until the bytes since that check fit the
setting. So the rate holds at each check, not between them: the bytes after the last check (a clean's
tail, up to 300 ms at full speed) are paid for at the next check, in the next clean, and the queue's last
tail is never paid; and the first check after an idle spell averages the idle time in, so the bytes left
unpaid before it go free too. The cleaner is thus ahead of the fluid forecast by up to two check intervals'
full-speed bytes / the throttle, never behind it by more than one back-off (the thread's wake-up after the
release, as in test_cleanerqueue_kafka.py) and a second of its own work. The full speed is taken as the
first round's learned throughput x the I/O per byte processed x ``FULL_SPEED_SPREAD`` (those small, cold
cleans ran at a third to a half of the full speed the released ones showed: 40 MB/s of I/O with 1000-byte
values, 20 MB/s with 100-byte ones, which is why the values are small here). Measured over six runs (forecast
minus logged, 100-byte values, learned 4.1 to 5.0 MiB/s): starts -0.04 to +2.2 s, ends and the drain +0.05
to +2.9 s, each clean 1.7 to 3.3 s by the forecast; allowed -1.5 to +5.8..7.0 s; the order exact."""

from __future__ import annotations

import sys
import time

import pytest

from cleanerqueuekafka import MB, cleaner_throttle, cleans_of, held_queue, released_cleans, state_of
from monitor.model.cleanerqueue import CleanerQueueParams, _io_per_byte, forecast, from_state

pytestmark = pytest.mark.kafka

# (clean MiB, dirty MiB): ratios 0.75, 0.5, 0.67 -- order 0, 2, 1; I/O 11, 15, 8 MiB
SHAPE = [(1, 3), (3, 3), (1, 2)]
THROTTLE = 4_000_000  # bytes/s of read plus write
RELEASE_IN_MS = 12_000  # writing 13 MiB, the first round of cleans, the throttle set, the forecast
BACKOFF_MS = 500  # localkafka.broker.FAST_CLEANER
VALUE = 100  # bytes of each record's value: small records keep the cleaner's full speed low (docstring)
CHECK_S = 0.3  # LogCleaner's Throttler checkIntervalMs
FULL_SPEED_SPREAD = 3.0  # the cleaner's full speed over the first round's learned throughput, at most (docstring)


def test_the_throttled_queue_forecast_against_the_cleaners_own(kafka):
    t_start = time.monotonic()
    q = held_queue(kafka, "throttledqueue", SHAPE, RELEASE_IN_MS, value=VALUE)
    topic, config = q.topic, q.config
    before, log_state = cleans_of(kafka, topic)
    throughput = log_state.learned_throughput()
    assert throughput, f"no throughput learned from the first round's cleans: {[c[4] for c in before]}"
    with cleaner_throttle(kafka, THROTTLE):
        now_ms = int(time.time() * 1000)
        assert now_ms < q.release_ms - 2000, "the set-up took longer than RELEASE_IN_MS: the forecast would be late"
        states = [state_of(kafka.log_dir, topic, p, config, now_ms) for p in range(len(SHAPE))]
        for s in states:  # the set-up as meant: nothing cleanable now, the dirty bytes held until the release
            assert s.cleanable_bytes == 0 and s.blocked_by == "min_compaction_lag", s
        params = CleanerQueueParams(threads=1, backoff_ms=BACKOFF_MS, io_max_bytes_per_second=THROTTLE,
                                    throughput=throughput,
                                    throughput_basis=f"{len(log_state.cleans)} cleans in log-cleaner.log")
        f = forecast([from_state(s, config, 0.0) for s in states], params, now_ms)
        unthrottled = forecast([from_state(s, config, 0.0) for s in states],
                               CleanerQueueParams(threads=1, backoff_ms=BACKOFF_MS, throughput=throughput), now_ms)
        want = {p: f.cleans[(topic, p)] for p in range(len(SHAPE))}
        assert all(c.start_ms is not None and c.end_ms is not None for c in want.values()), want
        got = released_cleans(kafka, q, RELEASE_IN_MS / 1000 + 60)

    order_logged = [c[0] for c in sorted(got, key=lambda c: c[2])]
    assert f.order() == [(topic, p) for p in order_logged], (f.order(), order_logged)
    assert order_logged == [0, 2, 1]  # the ratio's order, not the dirty bytes' or the sizes'
    # the premise: the throttle, not the learned throughput, sets the forecast's times (a machine so loaded
    # that the first round cleaned slower than the throttle's share would make this a test of the throughput)
    assert f.drain_ms - unthrottled.drain_ms >= 1000, ("the throttle does not set the forecast's times",
                                                        f.drain_ms - q.release_ms, unthrottled.drain_ms - q.release_ms)

    full_io = throughput * max(_io_per_byte(c * MB, d * MB) for c, d in SHAPE) * FULL_SPEED_SPREAD
    ahead = BACKOFF_MS + 2 * 1000.0 * CHECK_S * full_io / THROTTLE  # forecast later than logged, at most
    behind = BACKOFF_MS + 1000.0  # forecast earlier than logged, at most
    errors = [(p, want[p].start_ms - start, want[p].end_ms - end) for p, start, end, _, _ in got]
    drain_error = f.drain_ms - max(c[2] for c in got)
    report = "; ".join(f"{topic}-{p}: start {ds / 1000:+.2f} s, end {de / 1000:+.2f} s" for p, ds, de in errors)
    durations = ", ".join(f"{p}: {(end - start) / 1000:.2f} s logged, {(want[p].end_ms - want[p].start_ms) / 1000:.2f} s "
                          f"forecast" for p, start, end, _, _ in got)
    print(f"[cleanerqueue throttled] forecast minus logged: {report}; drain {drain_error / 1000:+.2f} s "
          f"(allowed -{behind / 1000:.2f} to +{ahead / 1000:.2f} s); durations {durations}; throttle {THROTTLE / 1e6:g} MB/s, learned "
          f"throughput {throughput / MB:.1f} MiB/s; test {time.monotonic() - t_start:.1f} s", file=sys.stderr)
    assert all(-behind <= e <= ahead for _, ds, de in errors for e in (ds, de)), (report, ahead)
    assert -behind <= drain_error <= ahead, (drain_error, ahead)

"""The cleaner model's per-broker arithmetic: keys per pass from the broker's buffer and load factor, the
wall clock of N threads (the longest-first schedule, checked against an exhaustive search of every
assignment), the shared throttle as a lower bound, and where each value came from."""

from __future__ import annotations

import itertools
import random

import pytest

from monitor.model.estimate import CleanEstimate, CleanerParams, params_for, wall_clock
from monitor.model.topicconfig import broker_cleaner_settings


def _clean(seconds: float, bytes_read: float = 0.0) -> CleanEstimate:
    return CleanEstimate(1, bytes_read, seconds, 1.0)


def best_makespan(times: list[float], threads: int) -> float:
    """The optimal schedule, by trying every assignment (small inputs only)."""
    best = float("inf")
    for assign in itertools.product(range(threads), repeat=len(times)):
        loads = [0.0] * threads
        for t, a in zip(times, assign):
            loads[a] += t
        best = min(best, max(loads))
    return best


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_schedule_is_within_lpts_bound_of_the_best_and_never_below_it(seed, threads):
    rng = random.Random(seed + threads)
    for _ in range(20):
        times = [rng.uniform(1, 100) for _ in range(rng.randint(1, 7))]
        w = wall_clock([_clean(t) for t in times], CleanerParams(threads=threads))
        best = best_makespan(times, threads)
        assert best - 1e-9 <= w.seconds <= best * (4 / 3 - 1 / (3 * threads)) + 1e-9  # Graham's LPT bound
        assert w.seconds >= max(sum(times) / threads, max(times)) - 1e-9
        assert w.summed_seconds == pytest.approx(sum(times)) and w.longest_seconds == max(times)


def test_one_thread_is_the_sum_and_more_threads_than_cleans_is_the_longest():
    times = [30.0, 20.0, 10.0]
    assert wall_clock([_clean(t) for t in times], CleanerParams(threads=1)).seconds == 60.0
    assert wall_clock([_clean(t) for t in times], CleanerParams(threads=8)).seconds == 30.0
    assert wall_clock([], CleanerParams(threads=2)).seconds == 0.0


def test_the_shared_throttle_bounds_the_wall_clock_below():
    """Four threads, four 10 s cleans reading 1000 bytes each: 10 s unthrottled; one throttle of 100 B/s
    shared by all threads needs 4000 / 100 = 40 s."""
    cleans = [_clean(10.0, 1000.0) for _ in range(4)]
    assert wall_clock(cleans, CleanerParams(threads=4)).seconds == 10.0
    w = wall_clock(cleans, CleanerParams(threads=4, io_max_bytes_per_second=100.0))
    assert (w.seconds, w.schedule_seconds, w.throttle_seconds) == (40.0, 10.0, 40.0)
    assert "throttle bounds it" in w.basis


def test_flags_over_broker_settings_over_defaults_with_their_sources():
    settings = broker_cleaner_settings(admin={"log.cleaner.threads": "4", "log.cleaner.dedupe.buffer.size": "1048576",
                                              "log.cleaner.io.buffer.load.factor": "0.5",
                                              "log.cleaner.io.max.bytes.per.second": "2000000.0"})
    p = params_for(CleanerParams(), settings, {"log.cleaner.threads": 2})
    assert (p.threads, p.dedupe_buffer_size, p.load_factor, p.io_max_bytes_per_second) == (2, 1_048_576, 0.5, 2e6)
    assert p.source_of("log.cleaner.threads") == "flag" and p.source_of("log.cleaner.dedupe.buffer.size") == "admin"
    # SkimpyOffsetMap: floor(1 MiB / 2 threads / 24 B) slots, times the load factor
    assert p.keys_per_pass == int((1_048_576 // 2 // 24) * 0.5)
    assert p.rate == 2e6  # the default 40 MiB/s thread capped by the throttle
    refused = broker_cleaner_settings(admin_error="ClusterAuthorizationException")
    q = params_for(CleanerParams(), refused)
    assert q.threads == 1 and q.source_of("log.cleaner.threads").startswith("unknown (ClusterAuthorizationException)")
    assert params_for(CleanerParams(), broker_cleaner_settings()).source_of("log.cleaner.threads") == "default"

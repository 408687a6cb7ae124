"""The I/O budget holds on an injected clock: over any span, bytes taken stay within rate * span + burst
(+ the one read charged before its wait); header-pass charges never wait but are paid off by the reads
after them. No timed test: the wall-clock measure over a minute is bench's."""

from __future__ import annotations

import pytest

from fakeclock import FakeClock
from monitor.fileio.iobudget import BURST_SECONDS, DEFAULT_BYTES_PER_SECOND, IoBudget


def test_takes_hold_the_rate_over_a_minute_of_fake_time():
    clock = FakeClock(100.0)
    rate = 1_000_000
    b = IoBudget(rate, clock=clock, sleep=clock.sleep)
    start, taken, batch = clock.now, 0, 64 * 1024
    marks = []
    while clock.now - start < 60:
        b.take(batch)
        taken += batch
        clock.now += 0.0001  # the read itself
        marks.append((clock.now - start, taken))
    for t, n in marks:  # never ahead of the bucket, at any moment
        assert n <= rate * t + rate * BURST_SECONDS + batch
    elapsed = clock.now - start
    assert abs(taken / elapsed - rate) / rate < 0.1  # and it does use its budget
    assert b.bytes_total == taken


def test_header_charges_never_wait_and_are_paid_off_by_later_reads():
    clock = FakeClock(100.0)
    b = IoBudget(1000, clock=clock, sleep=clock.sleep)
    b.charge(10_000)  # the header pass: no wait
    assert clock.slept == []
    b.take(0)  # the first record read pays the debt: 10 000 - 1000 (burst) at 1000/s
    assert clock.slept == [pytest.approx(9.0)]
    assert b.bytes_total == 10_000


def test_unlimited_counts_only_and_negative_is_refused():
    clock = FakeClock(100.0)
    b = IoBudget(0, clock=clock, sleep=clock.sleep)
    b.take(10 ** 12)
    assert clock.slept == [] and b.bytes_total == 10 ** 12 and b.rate is None
    with pytest.raises(ValueError, match="io budget -1"):
        IoBudget(-1)
    assert DEFAULT_BYTES_PER_SECOND == 20 << 20


def test_less_than_a_byte_owed_is_no_debt():
    """The refill's float rounding (rate x elapsed) can leave 1e-13 of a byte owed: as debt it was 1e-15 s, which
    a clock at 80.5 s cannot move by (80.5 + 1e-15 == 80.5), and the record reads, which start only out of debt,
    stalled for good (the headers-first test failed so under load). Less than a byte is none; a byte is debt."""
    clock = FakeClock()
    clock.now = 80.5
    budget = IoBudget(100, clock=clock, sleep=clock.sleep)
    budget.charge(int(budget.burst))  # the bucket at exactly 0
    budget._tokens -= 1e-13  # what the rounding leaves
    assert budget.debt_seconds() == 0.0
    budget.charge(1)
    assert budget.debt_seconds() == pytest.approx(0.01)

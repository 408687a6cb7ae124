"""monitor.model.cleanerio: the cleaner's I/O rate between two samples of the throttler's count, and whether it
runs at log.cleaner.io.max.bytes.per.second. Expected values by hand from the samples."""

import pytest

from monitor.model.cleanerio import IoRate, IoSample, at_throttle, io_rate, throttle_ratio, windowed
from monitor.model.topicconfig import BROKER_DEFAULTS


def test_the_rate_is_the_count_difference_over_the_window():
    r = io_rate(IoSample(100.0, 1_000_000), IoSample(115.0, 2_500_000))
    assert r.bytes_per_second == 100_000.0 and r.window_seconds == 15.0
    assert "1500000 bytes over the 15 s" in r.basis


@pytest.mark.parametrize("previous, current, why", [
    (None, IoSample(1.0, 5), "a rate needs two refreshes"),
    (IoSample(1.0, 5), None, "no cleaner-io count"),
    (IoSample(1.0, 5), IoSample(1.0, 9), "at the same time"),
    (IoSample(1.0, 500), IoSample(16.0, 20), "went down (the broker restarted)"),
])
def test_a_rate_that_cannot_be_had_says_why(previous, current, why):
    r = io_rate(previous, current)
    assert r.bytes_per_second is None and why in r.basis


def test_at_the_throttle_from_nine_tenths_of_it():
    limit = 200_000.0
    assert at_throttle(IoRate(180_000.0, 15, ""), limit) is True
    assert at_throttle(IoRate(179_999.0, 15, ""), limit) is False
    assert at_throttle(IoRate(230_000.0, 15, ""), limit) is True  # a window that ends after a sleep's bytes
    assert throttle_ratio(IoRate(50_000.0, 15, ""), limit) == 0.25
    # Kafka's default (Double.MAX_VALUE) is no throttle: never at it, whatever the rate
    assert at_throttle(IoRate(1e12, 15, ""), BROKER_DEFAULTS["log.cleaner.io.max.bytes.per.second"]) is False
    assert at_throttle(IoRate(None, None, "one sample"), limit) is None
    assert at_throttle(IoRate(1.0, 15, ""), None) is None


def test_the_rate_spans_the_window_of_samples_not_one_refresh():
    """The count grows in steps (300 ms at full speed, then a sleep): two refreshes 15 s apart may catch
    one step or none; the rate over five minutes of samples is the throttle's."""
    kept, rate = [], None
    # a cleaner held at 100 kB/s by 1.5 MB steps every 15 s (the step lands right after each sample)
    for i in range(31):
        kept, rate = windowed(kept, IoSample(i * 10.0, 1_500_000 * (i * 10 // 15)))
    assert kept[-1].at == 300 and kept[0].at == 0 and len(kept) == 31
    assert rate.window_seconds == 300 and rate.bytes_per_second == 1_500_000 * 20 / 300
    kept, rate = windowed(kept, IoSample(310.0, 1_500_000 * 20))
    assert kept[0].at == 10 and rate.window_seconds == 300  # the oldest sample within 300 s of now
    # one refresh interval alone could have said 0 or 150 kB/s
    assert io_rate(IoSample(290.0, 1_500_000 * 19), IoSample(300.0, 1_500_000 * 20)).bytes_per_second == 150_000


def test_a_broker_restart_starts_the_window_again():
    kept, _ = windowed([IoSample(0.0, 100), IoSample(10.0, 200)], IoSample(20.0, 5))
    assert kept == [IoSample(20.0, 5)]
    kept, rate = windowed(kept, IoSample(30.0, 105))
    assert rate.bytes_per_second == 10.0 and rate.window_seconds == 10.0

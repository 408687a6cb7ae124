"""The one formatter of figures for people (monitor.contract.units): its rules at their boundaries."""

from __future__ import annotations

import pytest

from monitor.contract.units import bytes_iec, duration_ms, duration_s, rate, timestamp_utc, unknown, yes_no


@pytest.mark.parametrize("n, text", [
    (0, "0 B"), (512, "512 B"), (1023, "1023 B"),
    (1023.6, "1.0 KiB"),  # rounded first: never "1024 B"
    (1536, "1.5 KiB"), (1048575, "1.0 MiB"),  # never "1024.0 KiB"
    (84_095_078_400, "78.3 GiB"), (82_709_794_816, "77.0 GiB"), (1 << 30, "1.0 GiB"),
    (2 ** 63 - 1, "8.0 EiB"), (-2048, "-2.0 KiB"), (None, "unknown"),
])
def test_bytes_are_iec(n, text):
    assert bytes_iec(n) == text


@pytest.mark.parametrize("ms, text", [
    (0, "0 ms"), (850, "850 ms"), (999.6, "1 s"), (42_000, "42 s"),
    (59_600, "1 min"),  # never "60 s"
    (192_000, "3 min 12 s"), (180_000, "3 min"), (3_599_600, "1 h"), (11_520_000, "3 h 12 min"),
    (7_200_000, "2 h"), (86_399_999, "1 d"), (483_840_000, "5.6 d"),
    (3650 * 86_400_000, "3650 d"), (604_800_000, "7 d"), (-42_000, "-42 s"), (None, "unknown"),
])
def test_durations_have_one_rule(ms, text):
    assert duration_ms(ms) == text
    if ms is not None:
        assert duration_s(ms / 1000) == text


@pytest.mark.parametrize("bps, text", [
    (0, "0 B/s"), (0.001, "< 0.01 B/s"), (0.25, "0.25 B/s"), (1, "1 B/s"), (35, "35 B/s"),
    (1.2 * 2 ** 20, "1.2 MiB/s"), (None, "unknown"),
])
def test_rates_never_show_a_small_rate_as_zero(bps, text):
    assert rate(bps) == text


def test_yes_no_timestamps_and_unknowns():
    assert (yes_no(True), yes_no(False), yes_no(None)) == ("yes", "no", "unknown")
    assert timestamp_utc(0) == "1970-01-01T00:00:00.000Z"
    assert timestamp_utc(1_700_000_100_123) == "2023-11-14T22:15:00.123Z"
    assert timestamp_utc(10 ** 20).startswith("unknown (") and timestamp_utc(None) == "unknown"
    assert unknown("the admin API refused") == "unknown (the admin API refused)"


@pytest.mark.parametrize("fmt", [bytes_iec, duration_ms, duration_s, rate, timestamp_utc])
def test_nan_is_unknown_never_nan(fmt):
    """A pandas cell without a value is NaN: it reads "unknown", as None does."""
    assert fmt(float("nan")) == "unknown"


def test_counts_ratios_and_percentages():
    from monitor.contract.units import count, percent, ratio

    assert [count(v) for v in (0, 308754, 104857600.0, None, float("nan"))] == [
        "0", "308,754", "104,857,600", "unknown", "unknown"]
    assert [ratio(v) for v in (0, 0.5, 1, 0.4249, float("nan"))] == ["0.00", "0.50", "1.00", "0.42", "unknown"]
    assert [percent(v) for v in (0, 0.001, 0.42, 0.995, 1, 2.5, None)] == [
        "0 %", "< 1 %", "42 %", "> 99 %", "100 %", "250 %", "unknown"]

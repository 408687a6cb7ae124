"""Figures as people read them: the one formatter of bytes, durations, rates, yes/no, times and unknowns
for every text a person reads (the command line's tables and sentences, a cause's summary and fix).

Why one module: a table that prints ``82709794816 B`` beside another that prints ``77.0 GiB``, or
``True`` beside ``yes``, makes a reader convert in their head; one formatter keeps every text alike.
JSON and metrics never go through here: they keep Kafka's base units (bytes, ms or s as their names say).

The rules, stated once:

* bytes: IEC, base 1024 (Kafka's sizes are bytes and its defaults powers of two: segment.bytes 1 GiB):
  below 1 KiB whole bytes ("512 B"), else one decimal of the largest unit that keeps it at least 1
  ("1.5 KiB", "78.3 GiB"), up to EiB;
* durations: below 1 s whole ms ("850 ms"); below 1 min whole s ("42 s"); below 1 h minutes and
  seconds ("3 min 12 s"); below 1 d hours and minutes ("3 h 12 min"); from 1 d on days with one
  decimal, a trailing ".0" dropped ("5.6 d", "3650 d"). A part that is 0 is left out ("3 min", "2 h").
  Rounded to the shown precision first, so 59.6 s reads "1 min", never "60 s";
* rates: the bytes of a second, ``/s`` after ("1.2 MiB/s"); a rate above 0 but below 0.01 B/s reads
  "< 0.01 B/s", so a tiny rate is never shown as 0;
* yes/no for a truth value; a time as ISO 8601 UTC with milliseconds ("2026-11-27T07:18:12.345Z");
* counts: whole, with thousands separators ("308,754");
* a ratio as Kafka writes its ratios (min.cleanable.dirty.ratio): two decimals ("0.42");
* a fraction as a percentage, whole ("42 %"); above 0 but below 1 % "< 1 %", below 100 % but above
  99 % "> 99 %", so a small share never reads 0 and an almost full one never 100 %;
* a figure that cannot be known: "unknown (why)"; NaN (a pandas cell without a value) is one too, never
  "nan".

May be imported by every layer above ``monitor.contract`` and by the edges (it imports only the standard
library).
"""

from __future__ import annotations

from datetime import datetime, timezone

IEC = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_S, _MIN, _H, _D = 1000, 60_000, 3_600_000, 86_400_000


def unknown(reason: str | None = None) -> str:
    """A figure that cannot be known, with why: "unknown (the admin API refused)"."""
    return f"unknown ({reason})" if reason else "unknown"


def missing(v) -> bool:
    """Whether ``v`` is no figure: None, or NaN (what a pandas cell without a value holds)."""
    return v is None or (isinstance(v, float) and v != v)


def bytes_iec(n: float | None) -> str:
    """A size in bytes for a person: "0 B", "512 B", "1.5 KiB", "78.3 GiB" (base 1024)."""
    if missing(n):
        return unknown()
    sign, v = ("-", -n) if n < 0 else ("", n)
    i = 0
    while i < len(IEC) - 1 and (round(v) if i == 0 else round(v, 1)) >= 1024:
        v /= 1024
        i += 1
    return f"{sign}{round(v)} B" if i == 0 else f"{sign}{v:.1f} {IEC[i]}"


def rate(bytes_per_s: float | None) -> str:
    """Bytes per second for a person: "1.2 MiB/s", "35 B/s", "0.25 B/s", "< 0.01 B/s" (never 0 when above 0)."""
    if missing(bytes_per_s):
        return unknown()
    if 0 < bytes_per_s < 0.01:
        return "< 0.01 B/s"
    if 0 < bytes_per_s < 10 and round(bytes_per_s) != bytes_per_s:
        return f"{bytes_per_s:.2g} B/s"
    return bytes_iec(bytes_per_s) + "/s"


def _days(ms: float) -> str:
    d = f"{ms / _D:.1f}"
    return (d[:-2] if d.endswith(".0") else d) + " d"


def _pair(big: int, big_unit: str, small: int, small_unit: str) -> str:
    return f"{big} {big_unit}" + (f" {small} {small_unit}" if small else "")


def duration_ms(ms: float | None) -> str:
    """A duration in milliseconds for a person: "850 ms", "42 s", "3 min 12 s", "3 h 12 min", "5.6 d"
    (the rule is the module's); None: "unknown"."""
    if missing(ms):
        return unknown()
    if ms < 0:
        return "-" + duration_ms(-ms)
    if round(ms) < _S:
        return f"{round(ms)} ms"
    s = round(ms / _S)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return _pair(s // 60, "min", s % 60, "s")
    m = round(ms / _MIN)
    if m < 1440:
        return _pair(m // 60, "h", m % 60, "min")
    return _days(ms)


def duration_s(s: float | None) -> str:
    """A duration in seconds for a person (``duration_ms``'s rule)."""
    return duration_ms(None if missing(s) else s * 1000)


def yes_no(b: bool | None) -> str:
    """A truth value for a person: "yes", "no"; None: "unknown"."""
    return unknown() if b is None else "yes" if b else "no"


def timestamp_utc(ms: float | None) -> str:
    """A time in ms since the epoch (as Kafka stores them) for a person: "2026-11-27T07:18:12.345Z"."""
    if missing(ms):
        return unknown()
    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    except (OverflowError, OSError, ValueError):
        return unknown(f"{ms} ms since the epoch is out of range")


def count(n: float | None) -> str:
    """A number of things for a person: "0", "308,754" (whole, thousands separated)."""
    return unknown() if missing(n) else f"{round(n):,}"


def ratio(r: float | None) -> str:
    """A ratio as Kafka writes min.cleanable.dirty.ratio: "0.42", "1.00"."""
    return unknown() if missing(r) else f"{r:.2f}"


def percent(fraction: float | None) -> str:
    """A fraction for a person: "42 %", "< 1 %" (above 0), "> 99 %" (below 1), "250 %"."""
    if missing(fraction):
        return unknown()
    p = fraction * 100
    if 0 < p < 1:
        return "< 1 %"
    if 99 < p < 100:
        return "> 99 %"
    return f"{round(p):,} %"

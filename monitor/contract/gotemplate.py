"""Prometheus' alert annotation templates, rendered in Python exactly as Prometheus renders them.

Only the forms the rule table uses: ``{{ $labels.x }}``, ``{{ $value }}`` (Go's ``%v`` of a float64)
and ``{{ $value | humanize }}``, ``humanizeDuration``, ``humanizePercentage`` (Prometheus' template
functions, with Go's ``%.4g``). The Python evaluator uses it so the dashboard shows the text an
Alertmanager would; the promtool tests state their expected annotations with it, so promtool checks it.
"""

from __future__ import annotations

import math
import re


def _g4(v: float) -> str:
    return "%.4g" % v


def humanize(v: float) -> str:
    if v == 0 or math.isnan(v) or math.isinf(v):
        return _g4(v)
    if abs(v) >= 1:
        prefix = ""
        for p in ("k", "M", "G", "T", "P", "E", "Z", "Y"):
            if abs(v) < 1000:
                break
            prefix = p
            v /= 1000
        return _g4(v) + prefix
    v, prefix = _scaled_up(v)
    return _g4(v) + prefix


def _scaled_up(v: float) -> tuple[float, str]:
    """A value below 1 times 1000 until it is at least 1, with the SI prefix that says so."""
    prefix = ""
    for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(v) >= 1:
            break
        prefix = p
        v *= 1000
    return v, prefix


def humanize_duration(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        return _g4(v)
    if v == 0:
        return "0s"
    if abs(v) >= 1:
        sign = "-" if v < 0 else ""
        s = int(abs(v))
        sec, mins, hours, days = s % 60, (s // 60) % 60, (s // 3600) % 24, s // 86400
        if days:
            return f"{sign}{days}d {hours}h {mins}m {sec}s"
        if hours:
            return f"{sign}{hours}h {mins}m {sec}s"
        if mins:
            return f"{sign}{mins}m {sec}s"
        return f"{sign}{_g4(abs(v))}s"
    v, prefix = _scaled_up(v)
    return _g4(v) + prefix + "s"


def humanize_percentage(v: float) -> str:
    return _g4(v * 100) + "%"


def go_value(v: float) -> str:
    """``{{ $value }}``: Go's ``%v`` of a float64 (shortest form, exponent from 1e21 or below 1e-4)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if float(v).is_integer() and abs(v) < 1e21:
        return str(int(v))
    text = repr(float(v))
    return re.sub(r"e([+-])(\d)$", r"e\g<1>0\2", text)  # Go writes at least two exponent digits


FUNCTIONS = {"humanize": humanize, "humanizeDuration": humanize_duration, "humanizePercentage": humanize_percentage}


def render(text: str, labels: dict, value: float) -> str:
    def sub(m):
        expr = m.group(1).strip()
        if expr.startswith("$labels."):
            return labels.get(expr[len("$labels."):], "") or ""
        if expr == "$value":
            return go_value(value)
        head, fn = (x.strip() for x in expr.split("|", 1))
        if head != "$value" or fn not in FUNCTIONS:
            raise ValueError(f"template form not supported: {{{{ {expr} }}}}")
        return FUNCTIONS[fn](value)

    return re.sub(r"\{\{(.*?)\}\}", sub, text, flags=re.S)

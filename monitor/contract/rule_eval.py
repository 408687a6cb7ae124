"""The rule table (``monitor.contract.rules``) evaluated in Python on samples, for when there is no Prometheus.

What a result means, against Prometheus:

* The evaluator sees samples at one instant, not history: an alert whose condition holds now is
  ``active``. Prometheus calls the same alert ``pending`` until the condition has held for the rule's
  ``for`` window, then ``firing``; the evaluator does not know the window has passed and never says
  ``firing``.
* A ``delta`` rule (TombstonesPilingUp: the change over 1h) needs two samples: the current one and
  one taken a window earlier (``earlier={"1h": samples}``). The value is now minus then, as
  Prometheus' ``delta`` gives for a series that changes at a steady rate; a series missing in either
  is not evaluated. Without earlier samples (a collector's page has none) the rule is unknown, not
  quiet: ``unknown_rules`` names it.
* Comparisons, joins (``and on`` / ``unless on``), comparisons with peers (``monitor.contract.rules.Peers``:
  minus the peers' ``min by``, or ``count by`` below another metric's count), ``or`` (the first clause that holds gives the
  value for a label set), per-series thresholds (one-to-one on identical labels) and the annotations
  (``monitor.contract.gotemplate``) are the PromQL ones; ``alerts/promtool_tests.py`` feeds the same samples
  to promtool to keep it so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from monitor.contract import gotemplate
from monitor.settings.config import Thresholds
from monitor.contract.rules import OPS, RULES, Clause, Rule, matchers


@dataclass(frozen=True)
class Sample:
    name: str
    labels: Mapping[str, str]
    value: float


@dataclass(frozen=True)
class Alert:
    alert: str
    severity: str
    labels: dict  # the series' labels (besides alertname and severity)
    value: float  # Prometheus' $value
    annotations: dict = field(default_factory=dict)  # summary, description, runbook: rendered
    state: str = "active"


def _key(labels: Mapping[str, str]) -> frozenset:
    return frozenset((k, v) for k, v in labels.items() if v not in (None, ""))


def _by_name(samples: Iterable[Sample]) -> dict[str, list[Sample]]:
    out: dict[str, list[Sample]] = {}
    for s in samples:
        out.setdefault(s.name, []).append(s)
    return out


def _select(by_name: dict, clause: Clause, t: Thresholds) -> dict[frozenset, float]:
    want = matchers(clause, t)
    rows = [s for s in by_name.get(clause.metric, ()) if all(s.labels.get(k) == v for k, v in want)]
    if not clause.sum_without:
        return {_key(s.labels): float(s.value) for s in rows}
    out: dict[frozenset, float] = {}
    for s in rows:
        k = _key({a: b for a, b in s.labels.items() if a not in clause.sum_without})
        out[k] = out.get(k, 0.0) + float(s.value)
    return out


def _clause(clause: Clause, now: dict, earlier: Mapping[str, dict], t: Thresholds) -> dict[frozenset, float] | None:
    series = _select(now, clause, t)
    if clause.delta is not None:
        if clause.delta not in earlier:
            return None
        then = _select(earlier[clause.delta], clause, t)
        series = {k: v - then[k] for k, v in series.items() if k in then}
    peers = clause.peers
    if peers is not None and peers.spread:
        lowest: dict[tuple, float] = {}
        for k, v in series.items():
            g = _on(k, peers.on)
            lowest[g] = min(lowest.get(g, v), v)
        series = {k: v - lowest[_on(k, peers.on)] for k, v in series.items()}
    kept = {}
    for k, v in series.items():
        ok = True
        for c in clause.compare:
            if c.threshold.metric is not None:
                other = _select(now, Clause(c.threshold.metric, ()), t).get(k)
                if other is None:
                    ok = False
                    break
                limit = other
            else:
                limit = c.threshold.value(t)
            if math.isnan(v) or not OPS[c.op](v, limit):
                ok = False
                break
        if ok:
            kept[k] = v
    if clause.join is not None and kept:
        j = clause.join
        allowed = {tuple(s.labels.get(x) or "" for x in j.on) for s in now.get(j.metric, ())
                   if OPS[j.op](float(s.value), j.value)}
        kept = {k: v for k, v in kept.items() if (tuple(dict(k).get(x, "") for x in j.on) in allowed) != j.unless}
    if peers is not None and peers.not_all is not None and kept:
        holding: dict[tuple, int] = {}
        for k in kept:
            holding[_on(k, peers.on)] = holding.get(_on(k, peers.on), 0) + 1
        total: dict[tuple, int] = {}
        for s in now.get(peers.not_all, ()):
            g = _on(_key(s.labels), peers.on)
            total[g] = total.get(g, 0) + 1
        kept = {k: v for k, v in kept.items() if holding[_on(k, peers.on)] < total.get(_on(k, peers.on), 0)}
    return kept


def _on(k: frozenset, on: tuple[str, ...]) -> tuple:
    return tuple(dict(k).get(x, "") for x in on)


def evaluate_rule(r: Rule, samples: Iterable[Sample], t: Thresholds | None = None,
                  earlier: Mapping[str, Iterable[Sample]] | None = None) -> list[Alert] | None:
    """The alerts of one rule; None when it cannot be evaluated (a ``delta`` without earlier samples)."""
    t = t or Thresholds()
    now = _by_name(samples)
    before = {w: _by_name(s) for w, s in (earlier or {}).items()}
    found: dict[frozenset, float] = {}
    for clause in r.clauses:
        got = _clause(clause, now, before, t)
        if got is None:
            return None
        for k, v in got.items():
            found.setdefault(k, v)
    ann = r.annotations(t)
    out = []
    for k, v in sorted(found.items(), key=lambda kv: sorted(kv[0])):
        labels = dict(sorted({**dict(k), **{n: v for n, v in r.labels().items() if n != "severity"}}.items()))
        out.append(Alert(r.alert, r.severity, labels, v,
                         {name: gotemplate.render(text, labels, v) for name, text in ann.items()}))
    return out


def evaluate(samples: Iterable[Sample], t: Thresholds | None = None,
             earlier: Mapping[str, Iterable[Sample]] | None = None) -> list[Alert]:
    """Every rule's active alerts on these samples (rules that cannot be evaluated give none)."""
    samples = list(samples)
    out: list[Alert] = []
    for r in RULES:
        out.extend(evaluate_rule(r, samples, t, earlier) or [])
    return out


def unknown_rules(earlier: Mapping[str, Iterable[Sample]] | None = None) -> dict[str, str]:
    """Alerts that ``evaluate`` cannot decide without the earlier samples they need, with the reason."""
    have = set(earlier or {})
    return {r.alert: f"needs samples from {c.delta} earlier (the change over {c.delta})"
            for r in RULES for c in r.clauses if c.delta is not None and c.delta not in have}

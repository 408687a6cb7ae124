"""Which partitions are unhealthy, defined once from the causes (``monitor.verdicts.causes``) and the rule table
(``monitor.contract.rules``), and the worst of several causes.

What it is for today: the collector exports every per-partition series only for unhealthy partitions
(``granularity: topic``, the default; ``collectors.export.exporter``), so a healthy partition costs a handful of
series. No threshold is written here. A partition is unhealthy when

* its cause is not one of ``SETTLED``: the tail of ``PRECEDENCE`` from ``min_compaction_lag`` on, the
  causes that mean "compacting as configured" (a configured hold, a ratio still below
  min.cleanable.dirty.ratio, dirty records only in the active segment, nothing dirty); any cause
  tried before them (an uncleanable mark, a dead or disabled cleaner, unreadable figures, a
  transaction holding the LSO, overdue, eligible and waiting) makes it unhealthy; or
* one of the rule table's comparisons holds on its own series now (the ``for`` window aside): a
  clause of a rule, or the condition of a rule's join (LogCleanerStalled needs ``partition_eligible ==
  1``). So every alert that a partition's series can raise is raised from an unhealthy partition,
  whose series are all exported. A ``delta`` clause (TombstonesPilingUp) needs history, which a
  partition that just turned unhealthy has not: its series must be exported for every partition
  (the exporter's default series; a test checks it).

A consumer group's partition (one group reading one partition) has no cause: it is unhealthy when the
rule table's second condition alone holds on its series (``series_fire``): ConsumerMayMissTombstones'
fraction of delete.retention.ms, ConsumerMayMissUpdates. The exporter then sends its every series, else
``metrics.GROUP_DEFAULT``'s.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from monitor.verdicts.causes import CAUSES
from monitor.settings.config import Thresholds
from monitor.contract.rules import OPS, RULES, Clause, Join, matchers

SETTLED = CAUSES[CAUSES.index("min_compaction_lag"):]


def worst_cause(causes: Iterable[str]) -> str | None:
    """The cause tried first by ``PRECEDENCE`` among ``causes`` (None for none): a topic's worst."""
    rank = {c: i for i, c in enumerate(CAUSES)}
    found = [c for c in causes if c in rank]
    return min(found, key=rank.__getitem__) if found else None


def _conditions() -> tuple[tuple[Clause, ...], tuple[Join, ...], frozenset, frozenset]:
    clauses = tuple(c for r in RULES for c in r.clauses if c.delta is None and c.peers is None)
    joins = tuple(c.join for r in RULES for c in r.clauses if c.join is not None and not c.join.unless)
    history = frozenset(c.metric for r in RULES for c in r.clauses if c.delta is not None)
    peers = frozenset(c.metric for r in RULES for c in r.clauses if c.peers is not None)
    return clauses, joins, history, peers


# NEEDS_PEERS: series compared with the other replicas of the partition (ReplicasDisagree), which one
# broker's series of one partition cannot show: they must go out for every partition whatever its health
# (a default series, or one the granularity does not cut; a test checks it)
CLAUSES, JOINS, NEEDS_HISTORY, NEEDS_PEERS = _conditions()


def _rows(samples, name: str, want) -> list:
    return [s for s in samples.get(name, ()) if all(s[0].get(k) == v for k, v in want)]


def _clause_holds(c: Clause, samples: Mapping[str, list], t: Thresholds) -> bool:
    rows = _rows(samples, c.metric, matchers(c, t))
    if c.sum_without:
        summed: dict = {}
        for labels, v in rows:
            k = tuple(sorted((a, b) for a, b in labels.items() if a not in c.sum_without))
            summed[k] = summed.get(k, 0.0) + v
        rows = [(dict(k), v) for k, v in summed.items()]
    for labels, v in rows:
        ok = v == v
        for cmp in c.compare:
            if not ok:
                break
            if cmp.threshold.metric is not None:  # one-to-one on the same labels, as PromQL
                other = [w for lb, w in samples.get(cmp.threshold.metric, ()) if lb == labels]
                ok = bool(other) and OPS[cmp.op](v, other[0])
            else:
                ok = OPS[cmp.op](v, cmp.threshold.value(t))
        if ok:
            return True  # a join on other (broker) series is not checked here: unhealthy errs towards detail
    return False


def unhealthy(cause: str, samples: Iterable[tuple[str, Mapping[str, str], float]], t: Thresholds) -> bool:
    """Whether a partition with this cause and these series is unhealthy (see the module's docstring).

    ``samples``: the partition's series as ``(metric, labels beyond cluster/broker/topic/partition,
    value)``; its cause series need not be among them."""
    return cause not in SETTLED or series_fire(samples, t)


def series_fire(samples: Iterable[tuple[str, Mapping[str, str], float]], t: Thresholds,
                clauses: tuple[Clause, ...] = CLAUSES, joins: tuple[Join, ...] = JOINS) -> bool:
    """Whether one of the rule table's comparisons holds on these series now (a clause, or the condition
    of a join): the health verdict without a cause, as for a consumer group's partition. ``clauses`` and
    ``joins``: a part of the table's (``Split``), all of it unless told.

    ``samples``: ``(metric, labels beyond the series' own key, value)``, as for ``unhealthy``."""
    by_name: dict[str, list] = {}
    for name, labels, v in samples:
        by_name.setdefault(name, []).append((labels, v))
    if any(_clause_holds(c, by_name, t) for c in clauses if c.metric in by_name):
        return True
    return any(OPS[j.op](v, j.value) for j in joins for _, v in by_name.get(j.metric, ()))


def _reads(c: Clause) -> frozenset:
    """The series a clause compares: its own, and any it is compared with one-to-one."""
    return frozenset([c.metric] + [cmp.threshold.metric for cmp in c.compare if cmp.threshold.metric is not None])


class Split:
    """The rule table's conditions cut in two by the series they read: ``steady`` those that read none of
    ``moving`` (series whose values move between two renders of the same inputs: an age, a forecast), the rest
    ``moving``. Why: a partition whose report did not change keeps its steady verdict (``series_fire`` over
    ``steady_clauses`` and ``steady_joins`` on its steady series gives the same as over all its series: a
    steady condition reads no other), and only the moving conditions are checked again, on the series they
    read (``moving_reads``), so the render costs what changed (issue 43). ``series_fire`` of the whole is the
    ``or`` of the two."""

    def __init__(self, moving: frozenset):
        self.moving = frozenset(moving)
        self.steady_clauses = tuple(c for c in CLAUSES if not _reads(c) & self.moving)
        self.moving_clauses = tuple(c for c in CLAUSES if _reads(c) & self.moving)
        self.steady_joins = tuple(j for j in JOINS if j.metric not in self.moving)
        self.moving_joins = tuple(j for j in JOINS if j.metric in self.moving)
        self.moving_reads = frozenset().union(*map(_reads, self.moving_clauses),
                                              (j.metric for j in self.moving_joins))

    def steady_fire(self, samples, t: Thresholds) -> bool:
        """``series_fire`` of the steady conditions (``samples``: the steady series, or more)."""
        return series_fire(samples, t, self.steady_clauses, self.steady_joins)

    def moving_fire(self, samples, t: Thresholds) -> bool:
        """``series_fire`` of the moving conditions (``samples``: at least those of ``moving_reads``)."""
        return series_fire(samples, t, self.moving_clauses, self.moving_joins)

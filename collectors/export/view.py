"""What every area collector of the exporter shares: the metric family as ``collectors.export.metrics`` declares
it, the ``View`` (granularity, health thresholds, topic filter) and the base collector reading the
refresh's facts (``collectors.export.facts``).

What goes out is the ``View``'s: at granularity topic (the default) a healthy partition keeps
``metrics.PARTITION_DEFAULT``'s series only and a healthy consumer group's partition
``metrics.GROUP_DEFAULT``'s (``monitor.verdicts.health`` says which are healthy), and the topic allow/deny
patterns drop whole topics, in ``StoreCollector.collect``: the one place each applies. The collector's role
(``monitor.settings.roles``) drops the families another role exports (``metrics.OWNER``), there too.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from collectors.export import metrics as M
from collectors.export.facts import Facts, FactsCache
from collectors.export.lines import LineFamily
from collectors.serving.runner import Store
from monitor.settings.config import Thresholds
from monitor.settings.roles import ALL, BROKER, exports
from monitor.verdicts.health import series_fire, unhealthy
from monitor.settings.topicfilter import TopicFilter

DEFAULT = frozenset(M.PARTITION_DEFAULT) - {M.P_CAUSE}  # the cause series is added apart, always
GROUP_DEFAULT = frozenset(M.GROUP_DEFAULT)
EXTRA = {name: labels[4:] for name, (_, _, labels) in M.METRICS.items()}  # labels beyond the partition's


def _base(name: str) -> str:
    return name[: -len("_total")] if name.endswith("_total") else name


OWNER = {_base(n): owner for n, owner in M.OWNER.items()}  # by the family's name (a counter's without _total)


def family(name: str):
    """The empty family of a declared metric (a counter's name without ``_total``, as prometheus_client)."""
    kind, help_, labels = M.METRICS[name]
    cls = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
    return cls(_base(name), help_, labels=list(labels))


def families(names) -> dict:
    return {n: family(n) for n in names}


MAX_LABEL = 200  # a message label's length: one series per source or broker, of bounded size
_PATH = re.compile(r"(?<![\w.:/])/[^\s:;,'\"()]+")


def message_label(text: str | None) -> str:
    """A message as a label value: each absolute path of three parts or more shortened to ``.../`` and its last
    two (the partition folder and the file: what a reader acts on; the collector's log line has the whole
    path), then cut to ``MAX_LABEL`` characters. Cut as it came, a long log-dir path ran the label out before
    the reason was reached (``its segments kept changing ...: /tm``)."""
    def short(m: re.Match) -> str:
        parts = m.group(0).rstrip("/").split("/")
        return m.group(0) if len(parts) <= 3 else ".../" + "/".join(parts[-2:])
    return _PATH.sub(short, text or "")[:MAX_LABEL]


def sample_name(name: str) -> str:
    """The name of a declared metric's samples (a counter's with ``_total``, as prometheus_client)."""
    return _base(name) + "_total" if M.METRICS[name][0] == "counter" else name


def line_family(name: str) -> LineFamily:
    """The empty ``LineFamily`` of a declared per-partition metric (``collectors.export.lines``)."""
    kind, help_, labels = M.METRICS[name]
    return LineFamily(name, _base(name), help_, kind, labels, sample_name(name))


@dataclass
class View:
    """What goes out: the granularity (``monitor.settings.config``'s ``granularity``), the thresholds the health
    verdict compares with (``monitor.verdicts.health``: the rule table's), and the topic filter."""

    granularity: str = "topic"
    thresholds: Thresholds = field(default_factory=Thresholds)
    topics: TopicFilter = field(default_factory=TopicFilter)
    role: str = ALL  # monitor.settings.roles: the families of the other role are not exported

    @classmethod
    def of(cls, config) -> "View":
        return cls(config.granularity, config.thresholds, TopicFilter(config.topics_allow, config.topics_deny),
                   config.role)

    def exports(self, family_name: str) -> bool:
        """Whether this collector's role exports the family (``metrics.OWNER``)."""
        return exports(self.role, OWNER[family_name])

    @property
    def broker_role(self) -> bool:
        return self.role == BROKER

    @property
    def keep_all(self) -> bool:
        return self.granularity == "partition"

    def select(self, cause: str, rows: list) -> tuple[list, bool]:
        """The series of one partition that go out, and whether it is unhealthy (``monitor.verdicts.health``):
        all of them for an unhealthy partition or at granularity partition, else only
        ``metrics.PARTITION_DEFAULT``'s. ``rows``: ``(metric, labels beyond the partition's, value)``,
        its cause series apart."""
        bad = unhealthy(cause, rows, self.thresholds)
        return self._cut(rows, bad, DEFAULT), bad

    def select_group(self, rows: list) -> tuple[list, bool]:
        """As ``select`` for one consumer group's partition, which has no cause: unhealthy when a rule's
        comparison holds on its series (``monitor.verdicts.health.series_fire``), else ``metrics.GROUP_DEFAULT``'s."""
        bad = series_fire(rows, self.thresholds)
        return self._cut(rows, bad, GROUP_DEFAULT), bad

    def _cut(self, rows: list, bad: bool, default: frozenset) -> list:
        return rows if bad or self.keep_all else [r for r in rows if r[0] in default]


class StoreCollector(Collector):
    """An area's collector: ``_collect(facts)`` maps the refresh's facts to its metric families and keeps
    no state of its own; a source that is down contributes nothing but its ``source_up 0``. Collectors
    registered together share one ``FactsCache`` (the joins made once per refresh)."""

    names: tuple[str, ...] = ()

    def __init__(self, store: Store, clock=time.time, view: View | None = None, facts: FactsCache | None = None):
        self.store = store
        self.clock = clock
        self.view = view or View()
        self.facts = facts or FactsCache(store, clock)

    def describe(self):  # cheap: no refresh at registration
        return [fam for fam in (family(n) for n in self.names) if self.view.exports(fam.name)]

    def collect(self):
        """The families of ``_collect`` this role exports, each series of a topic the filter leaves out
        dropped: the one place the role and the topic allow and deny patterns apply."""
        keep = self.view.topics
        for fam in self._collect(self.facts.get()):
            if not self.view.exports(fam.name):
                continue
            if keep.everything:
                pass
            elif isinstance(fam, LineFamily):  # a partition's series, by its topic
                fam.keep_topics(keep)
            else:
                fam.samples = [s for s in fam.samples if "topic" not in s.labels or keep(s.labels["topic"])]
            yield fam

    def _collect(self, facts: Facts):
        return iter(())

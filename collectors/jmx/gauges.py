"""The broker's log-cleaner gauges, from a JMX exporter page or a Jolokia endpoint.

Both give the same MBeans (kafka.log:type=LogCleaner / LogCleanerManager); both
become one ``CleanerGauges`` with Kafka's units turned into base units: the dirty
percent into a 0..1 ratio, milliseconds into seconds. The MBeans, and so the page's
names, are the same in Kafka 3.9 (ZooKeeper) and 4.x (KRaft), whose pages differ in
their controller metrics only, none read here (tests/compat checks the page of each).
"""

from __future__ import annotations

import difflib
import json
import re
import time
from dataclasses import dataclass, field, replace

from prometheus_client.parser import text_string_to_metric_families

from boundedhttp import FetchError
from monitor.model.cleanerio import IoRate, IoSample, windowed
from monitor.settings.config import ClusterConfig

GAUGE_KEYS = ("max_dirty_percent", "time_since_last_run_ms", "max_compaction_delay_secs", "max_clean_time_secs",
              "max_buffer_utilization_percent", "cleaner_recopy_percent", "dead_thread_count")
PER_LOG_DIR = ("uncleanable_partitions_count", "uncleanable_bytes")
# the cleaner throttler's Meter count: bytes the cleaner read and wrote since the broker started
# (org.apache.kafka.storage.internals.utils.Throttler registers kafka.utils:type=Throttler,name=cleaner-io,
# made by LogCleaner with the unit "bytes", and marks every amount Cleaner hands to maybeThrottle)
CLEANER_IO = "cleaner_io_bytes"
LOG_DIR_LABELS = ("logdirectory", "logDirectory", "log_directory", "logdir")

# MBean name attribute -> our key (Jolokia gives MBean names, not Prometheus names)
MBEAN_NAMES = {
    "max-dirty-percent": "max_dirty_percent",
    "time-since-last-run-ms": "time_since_last_run_ms",
    "uncleanable-partitions-count": "uncleanable_partitions_count",
    "uncleanable-bytes": "uncleanable_bytes",
    "max-compaction-delay-secs": "max_compaction_delay_secs",
    "max-clean-time-secs": "max_clean_time_secs",
    "max-buffer-utilization-percent": "max_buffer_utilization_percent",
    "cleaner-recopy-percent": "cleaner_recopy_percent",
    "DeadThreadCount": "dead_thread_count",
}


@dataclass(frozen=True)
class CleanerGauges:
    """Raw values in Kafka's units, as the broker reports them (None: not on the page)."""

    values: dict = field(default_factory=dict)  # key -> float
    per_log_dir: dict = field(default_factory=dict)  # key -> {log_dir: float}
    shape: str = ""  # the shape they were read in: rule_named, catch_all, jolokia
    also_on_page: tuple[str, ...] = ()  # other shapes the same page carried (not used)
    io_rate: IoRate | None = None  # the throttler count's rate since the source's previous refresh (IoSampler)

    @property
    def empty(self) -> bool:
        """No cleaner gauge (the throttler's count alone does not make a page a cleaner page)."""
        return not (set(self.values) - {CLEANER_IO}) and not self.per_log_dir

    def cleaner_io_bytes(self):
        """The throttler's byte count (read and written): a load figure, not the speed of a clean."""
        return self.values.get(CLEANER_IO)

    # base units
    def dirty_ratio(self):
        v = self.values.get("max_dirty_percent")
        return None if v is None else v / 100.0

    def time_since_last_run_seconds(self):
        v = self.values.get("time_since_last_run_ms")
        return None if v is None else v / 1000.0

    def max_clean_time_seconds(self):
        v = self.values.get("max_clean_time_secs")
        # Kafka 4.x reports a large negative number before the first clean
        return None if v is None or v < 0 else v

    def buffer_utilization_ratio(self):
        v = self.values.get("max_buffer_utilization_percent")
        return None if v is None else v / 100.0

    def recopy_ratio(self):
        v = self.values.get("cleaner_recopy_percent")
        return None if v is None else v / 100.0

    def compaction_delay_seconds(self):
        return self.values.get("max_compaction_delay_secs")

    def dead_threads(self):
        return self.values.get("dead_thread_count")


class IoSampler:
    """The cleaner-io count's rate over one JMX (or Jolokia) source's successive refreshes: keeps the
    samples of the last few minutes and puts the rate (``monitor.model.cleanerio.windowed``) on each new
    ``CleanerGauges``."""

    def __init__(self, clock=time.monotonic):
        self.clock, self.samples = clock, []

    def __call__(self, gauges: CleanerGauges) -> CleanerGauges:
        count = gauges.cleaner_io_bytes()
        current = None if count is None else IoSample(self.clock(), count)
        self.samples, rate = windowed(self.samples, current)
        return replace(gauges, io_rate=rate)


def _clean_dir(value: str) -> str:
    """Kafka quotes the logDirectory key of its MBean names; the exporters keep the quotes."""
    return value.strip().strip('"').replace('\\"', "")


# The exporter page shapes, in the order one is chosen when a page carries several (two rule sets
# at once): the names the operator's rules (or ``metric_names``) give first, then the catch-all.
RULE_NAMED, CATCH_ALL, JOLOKIA = "rule_named", "catch_all", "jolokia"
PAGE_SHAPES = (RULE_NAMED, CATCH_ALL)

# The catch-all rule (``rules: [{pattern: ".*"}]``) names a sample domain_type_attribute and keeps the
# other key properties as labels: kafka.log:type=LogCleaner,name=max-clean-time-secs -> (lowercased
# or not) kafka_log_LogCleaner_Value{name="max-clean-time-secs"}. Names are compared lowercased.
CATCH_ALL_FAMILIES = {"kafka_log_logcleaner_value", "kafka_log_logcleanermanager_value"}
CATCH_ALL_IO = ("kafka_utils_throttler_count", "cleaner-io")  # the throttler Meter's Count, name label


def _log_dir(labels: dict) -> str:
    return _clean_dir(next((labels[label] for label in LOG_DIR_LABELS if label in labels), ""))


def _read_rule_named(samples, cluster: ClusterConfig) -> CleanerGauges:
    wanted = {}
    for key in GAUGE_KEYS + PER_LOG_DIR + (CLEANER_IO,):
        for name in cluster.metric_name_candidates(key):
            wanted.setdefault(name.lower(), key)
    values, per_dir = {}, {}
    for name, labels, value in samples:
        key = wanted.get(name.lower())
        if key in PER_LOG_DIR:
            per_dir.setdefault(key, {})[_log_dir(labels)] = value
        elif key is not None:
            values.setdefault(key, value)
    return CleanerGauges(values, per_dir, RULE_NAMED)


def _read_catch_all(samples) -> CleanerGauges:
    values, per_dir = {}, {}
    for name, labels, value in samples:
        low = name.lower()
        if low == CATCH_ALL_IO[0] and labels.get("name") == CATCH_ALL_IO[1]:
            values.setdefault(CLEANER_IO, value)
            continue
        key = MBEAN_NAMES.get(labels.get("name", "")) if low in CATCH_ALL_FAMILIES else None
        if key in PER_LOG_DIR:
            per_dir.setdefault(key, {})[_log_dir(labels)] = value
        elif key is not None:
            values.setdefault(key, value)
    return CleanerGauges(values, per_dir, CATCH_ALL)


def looked_for(cluster: ClusterConfig) -> list[str]:
    """The names a page is searched for, rule-named first (what an error about a page names)."""
    names = [n for key in GAUGE_KEYS + PER_LOG_DIR for n in cluster.metric_name_candidates(key)]
    return names + [f'{f}{{name="..."}}' for f in sorted(CATCH_ALL_FAMILIES)]


def parse_exposition(text: str, cluster: ClusterConfig, endpoint: str = "<page>") -> CleanerGauges:
    """Cleaner gauges out of a Prometheus text page (the JMX exporter's), in whichever shape it has.

    Every shape found is read; the first of ``PAGE_SHAPES`` that has cleaner gauges is used (the
    same every time), and the others are named in ``also_on_page``."""
    try:
        samples = [(s.name, s.labels, float(s.value)) for family in text_string_to_metric_families(text)
                   for s in family.samples]
    except (ValueError, TypeError, IndexError) as exc:
        raise FetchError(endpoint, "parse", f"not a Prometheus text page: {str(exc)[:200]}") from None
    readers = {RULE_NAMED: lambda: _read_rule_named(samples, cluster), CATCH_ALL: lambda: _read_catch_all(samples)}
    found = [g for g in (readers[shape]() for shape in PAGE_SHAPES) if not g.empty]
    if not found:
        names = {name.lower(): name for name, _, _ in samples}  # compared lowercased, shown as on the page
        close = sorted({names[c] for want in looked_for(cluster)
                        for c in difflib.get_close_matches(want.split("{")[0].lower(), list(names), n=2, cutoff=0.75)})
        raise FetchError(endpoint, "no_cleaner_metrics",
                         "the page has no log-cleaner metrics in any known shape: looked for "
                         f"{', '.join(looked_for(cluster))}; closest names on the page: "
                         f"{', '.join(close[:6]) if close else 'none'} (a renamed gauge goes in metric_names)")
    chosen = found[0]
    return replace(chosen, also_on_page=tuple(g.shape for g in found[1:]))


MBEAN_PROPS = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,]*)')


def _jolokia_answers(text: str, endpoint: str) -> list:
    try:
        data = json.loads(text)
    except ValueError:
        raise FetchError(endpoint, "parse", "not JSON") from None
    answers = data if isinstance(data, list) else [data]
    if not all(isinstance(a, dict) for a in answers):
        raise FetchError(endpoint, "parse", "unexpected Jolokia answer")
    return answers


def _jolokia_io_count(text: str | None) -> float | None:
    """The throttler's Count from a read of ``jolokia_io_url`` (None: no such MBean, or no answer)."""
    if text is None:
        return None
    try:
        answers = _jolokia_answers(text, "")
    except FetchError:
        return None
    for ans in answers:
        for mbean, attrs in ((ans.get("value") or {}).items() if ans.get("status") == 200 else ()):
            props = dict(MBEAN_PROPS.findall(mbean.split(":", 1)[-1]))
            if props.get("name") == CATCH_ALL_IO[1] and isinstance(attrs, dict) and "Count" in attrs:
                return float(attrs["Count"])
    return None


def parse_jolokia(text: str, endpoint: str = "<jolokia>", io_text: str | None = None) -> CleanerGauges:
    """Cleaner gauges out of Jolokia ``read`` answers (one JSON object or a bulk list); ``io_text``
    the answer to ``jolokia_io_url`` (the throttler's count), if read."""
    values, per_dir = {}, {}
    for ans in _jolokia_answers(text, endpoint):
        if ans.get("status") != 200:
            raise FetchError(endpoint, "jolokia", f"Jolokia status {ans.get('status')}: {ans.get('error', '')[:200]}")
        value = ans.get("value") or {}
        for mbean, attrs in value.items():
            props = dict(MBEAN_PROPS.findall(mbean.split(":", 1)[-1]))
            key = MBEAN_NAMES.get(props.get("name", ""))
            if key is None or not isinstance(attrs, dict) or "Value" not in attrs:
                continue
            v = float(attrs["Value"])
            if key in PER_LOG_DIR:
                per_dir.setdefault(key, {})[_clean_dir(props.get("logDirectory", ""))] = v
            else:
                values[key] = v
    io = _jolokia_io_count(io_text)
    if io is not None:
        values[CLEANER_IO] = io
    gauges = CleanerGauges(values, per_dir, JOLOKIA)
    if gauges.empty:
        raise FetchError(endpoint, "no_cleaner_metrics", "Jolokia returned no log-cleaner MBeans")
    return gauges


def jolokia_read_url(base: str) -> str:
    """One read of every LogCleaner / LogCleanerManager MBean's Value (an ObjectName pattern)."""
    return f"{base.rstrip('/')}/read/kafka.log:type=LogCleaner*,*/Value"


def jolokia_io_url(base: str) -> str:
    """The cleaner throttler's Count (a second GET: Jolokia's GET reads one ObjectName pattern)."""
    return f"{base.rstrip('/')}/read/kafka.utils:type=Throttler,name=cleaner-io,*/Count"

"""The JMX exporter pages recorded from a real Kafka broker in each agent config's shape
(tests/collectors/pages, made by its record.py after a real clean) read by the collector's parser: the
shape it reports, and each cleaner gauge equal to the page's own sample of that MBean (the test's literal
lookup, tests/jmxshapes.py's tables). The live version of this test starts
a broker per shape; these pages keep the parser checked against real pages in the fast suite."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from collectors.jmx.gauges import parse_exposition
from monitor.settings.config import ClusterConfig
from jmxshapes import CASES, page_value

PAGES = Path(__file__).parent / "pages"
# the collector's reading of each MBean, in Kafka's unit (what CleanerGauges holds)
READ = {"max-clean-time-secs": "max_clean_time_secs", "DeadThreadCount": "dead_thread_count",
        "max-buffer-utilization-percent": "max_buffer_utilization_percent",
        "cleaner-recopy-percent": "cleaner_recopy_percent", "cleaner-io": "cleaner_io_bytes"}


def recorded(config: str) -> str:
    [path] = PAGES.glob(f"{config.removesuffix('.yaml')}.kafka-*.prom.gz")
    return gzip.decompress(path.read_bytes()).decode()


@pytest.mark.parametrize("config", list(CASES))
def test_a_recorded_page_is_read_in_its_shape_with_the_pages_values(config):
    shape, lookup = CASES[config]
    page = recorded(config)
    g = parse_exposition(page, ClusterConfig(), config)
    assert (g.shape, g.also_on_page) == (shape, ())
    for mbean, (name, labels) in lookup.items():
        assert g.values[READ[mbean]] == page_value(page, name, labels), mbean
    assert g.cleaner_io_bytes() > 0  # a real clean went through the throttler
    assert len(g.per_log_dir["uncleanable_partitions_count"]) == 1  # the broker's one log dir


def test_two_real_rule_sets_on_one_page_read_the_rule_named_one_and_say_so():
    """Two agents' pages at once (an operator's rules plus the catch-all): the rule-named shape is read,
    whichever comes first on the page, and the other is named."""
    named, catch_all = recorded("jmx-exporter.yaml"), recorded("jmx-exporter-catchall.yaml")
    for page in (named + catch_all, catch_all + named):
        g = parse_exposition(page, ClusterConfig())
        assert (g.shape, g.also_on_page) == ("rule_named", ("catch_all",))
        assert g.values == parse_exposition(named, ClusterConfig()).values

"""``promtool check metrics`` (Prometheus' own lint of metric names, types, units and help, which users
run on exporters in their CI) passes on a page that carries every family the collector declares
(``collectors.export.metrics.METRICS``), each with one sample, rendered by the collector's own families
(``collectors.export.view.family``) and prometheus_client's exposition. And it can fail: a counter
without ``_total`` and a name with a non-base unit are caught."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily

from collectors.export import metrics as M
from collectors.export.view import family

PROMTOOL = shutil.which("promtool")


class Every:
    """A collector yielding each declared family with one sample."""

    def __init__(self, names):
        self.names = names

    def collect(self):
        for name in self.names:
            fam = family(name)
            fam.add_metric(["x"] * len(fam._labelnames), 1.0)
            yield fam


def check_metrics(page: bytes) -> subprocess.CompletedProcess:
    if PROMTOOL is None:
        pytest.fail("promtool is missing: ./dev installs Debian's prometheus package")
    return subprocess.run([PROMTOOL, "check", "metrics"], input=page, capture_output=True)


def test_every_family_of_the_collector_passes_promtool_check_metrics():
    reg = CollectorRegistry(auto_describe=False)
    reg.register(Every(sorted(M.METRICS)))
    page = generate_latest(reg)
    assert page.count(b"# TYPE ") == len(M.METRICS)
    r = check_metrics(page)
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), (r.stdout + r.stderr).decode()


def test_promtool_check_metrics_fails_on_a_badly_named_family():
    class Bad:
        def collect(self):
            g = GaugeMetricFamily("kafka_compaction_cleaner_time_milliseconds", "A time in ms, not seconds.")
            g.add_metric([], 1.0)
            yield g

    reg = CollectorRegistry(auto_describe=False)
    reg.register(Bad())
    r = check_metrics(generate_latest(reg))
    assert b"milliseconds" in r.stdout + r.stderr, (r.stdout + r.stderr).decode()

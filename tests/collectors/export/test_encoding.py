"""collectors.export.encoding writes the very bytes prometheus_client writes (the independent reference here),
for the collector's own families and for odd ones, in every format choose_encoder negotiates."""

from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from collectors.app import build
from collectors.export.encoding import encode_openmetrics, encode_text, fast
from collectors.export.exporter import register_all
from collectors.export.view import View
from faultserver import FaultServer
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from recordfixtures import items, v2, write

ACCEPTS = ["", "text/plain;version=0.0.4", "application/openmetrics-text;version=1.0.0",
           "application/openmetrics-text;version=1.0.0;escaping=underscores",
           "application/openmetrics-text;version=2.0.0", "application/openmetrics-text",
           "text/plain;version=1.0.0;escaping=underscores", "text/plain;version=1.0.0;escaping=allow-utf-8",
           "application/openmetrics-text;version=1.0.0;escaping=dots",
           "application/openmetrics-text;version=1.0.0;escaping=values"]


class Odd(Collector):
    """Label values and help texts that need escaping, unusual numbers, a counter."""

    def collect(self):
        g = GaugeMetricFamily("odd_gauge", 'help with \\ backslash, "quotes"\nand a newline',
                              labels=["topic", "le_thing", "z"])
        for i, (v, value) in enumerate([('a"b', 1.0), ("back\\slash", -0.0), ("new\nline", math.inf),
                                        ("ünïcödé ✓", -math.inf), ("", math.nan), ("x", 1e21), ("y", 12345678.9),
                                        ("z", 3), ("t", True)]):
            g.add_metric([v, str(i), "last"], value)
        yield g
        c = CounterMetricFamily("odd_events", "a counter", labels=["cluster"])
        c.add_metric(["c1"], 7)
        c.add_metric(["c2"], 0.5)
        yield c
        yield GaugeMetricFamily("odd_empty", "a family without samples")
        yield GaugeMetricFamily("odd_unlabelled", "no labels", value=2.5)


def registries(tmp_path):
    """The collector's registry over a log dir (two partitions, cleaned and active segments) and a JMX
    page; a registry of odd families; and ones prometheus_client only can encode (the fallback)."""
    d = tmp_path / "logdir"
    for t, p in (("orders.v2-eu", 0), ("orders_v2", 3)):
        write(d / f"{t}-{p}" / "00000000000000000000.log",
              [v2(items(range(0, 10), distinct=6)), v2(items(range(10, 20), tombstone_every=5, distinct=6))])
        write(d / f"{t}-{p}" / "00000000000000000020.log", [v2(items(range(20, 24), distinct=6))])
    (d / "cleaner-offset-checkpoint").write_text("0\n2\norders.v2-eu 0 10\norders_v2 3 10\n")
    fs = FaultServer()
    col = build(Config(clusters=(ClusterConfig(name="c", brokers=(
        BrokerConfig(id="1", jmx_url=fs.url, log_dirs=(str(d),)),)),)))
    try:
        assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
    finally:
        fs.close()
    every = CollectorRegistry(auto_describe=False)  # granularity partition: every series of each partition
    register_all(every, col.store, view=View("partition"))
    odd = CollectorRegistry()
    odd.register(Odd())
    hist = CollectorRegistry()
    Histogram("latency_seconds", "a histogram", registry=hist).observe(0.3)
    Gauge("g", "gauge", registry=hist).set(1)
    info = CollectorRegistry()
    Info("build", "an info", registry=info).info({"version": "1"})
    created = CollectorRegistry()
    Counter("made", "a counter with _created", registry=created).inc()
    unit = CollectorRegistry()
    Gauge("size_bytes", "with a unit", unit="bytes", registry=unit).set(3)
    return {"collector": col.registry, "collector-partition": every, "odd": odd, "histogram": hist, "info": info, "created": created,
            "unit": unit}


@pytest.fixture(scope="module")
def regs(tmp_path_factory):
    return registries(tmp_path_factory.mktemp("encoding"))


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("which", ["collector", "collector-partition", "odd", "histogram", "info", "created", "unit"])
def test_the_same_bytes_as_prometheus_client(regs, accept, which):
    families = list(regs[which].collect())  # one collect: both encoders see the same values

    class Fixed(Collector):
        def collect(self):
            return iter(families)

    encoder, _ = choose_encoder(accept)
    assert fast(encoder)(Fixed()) == encoder(Fixed())


def test_the_collector_and_odd_families_take_the_fast_path(regs):
    """The comparison above is not vacuous: these pages are written by this module, not the fallback."""
    from collectors.export import encoding

    for which in ("collector", "collector-partition", "odd"):
        assert encoding._ours(list(regs[which].collect()))  # False where the page goes to prometheus_client
    for which in ("histogram", "info", "created", "unit"):
        assert not encoding._ours(list(regs[which].collect()))
    assert fast(choose_encoder("")[0]) is encode_text
    assert fast(choose_encoder("application/openmetrics-text;version=1.0.0")[0]) is encode_openmetrics
    dots = choose_encoder("application/openmetrics-text;version=1.0.0;escaping=dots")[0]
    assert fast(dots) is dots

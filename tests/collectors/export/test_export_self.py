"""collectors.export.own: the collector's own area: each source's health from the statuses the
refresh's facts were built from. A source that failed is down with its error counted by kind and its
last error's text kept (cut to a bounded label), after it recovers too."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

import factsfixtures as ff
from collectors.export import metrics as M
from collectors.export.own import SelfCollector
from collectors.logdirs.scanner import LogDirScanner


def test_a_failed_source_is_down_with_its_error_and_the_jmx_shape_is_said(tmp_path):
    store = ff.store(tmp_path)
    reg = CollectorRegistry(auto_describe=False)
    reg.register(SelfCollector(store, clock=lambda: 200.0))
    jmx = {"cluster": "c", "source": "jmx:c:1", "kind": "jmx"}
    assert reg.get_sample_value(M.SRC_UP, jmx) == 1.0
    assert reg.get_sample_value(M.SRC_SHAPE, jmx | {"shape": ff.gauges().shape, "also_on_page": ""}) == 1.0
    store.failure("jmx:c:1", OSError("connection refused " + "x" * 300), 1.5)
    assert reg.get_sample_value(M.SRC_UP, jmx) == 0.0
    assert reg.get_sample_value(M.SRC_ERRORS + "_total", jmx | {"error": "io"}) == 1.0
    [fam] = [f for f in reg.collect() if f.name == M.SRC_LAST_ERROR]
    [last] = [s for s in fam.samples if s.labels["source"] == "jmx:c:1"]
    assert last.labels["error"] == "io" and len(last.labels["message"]) == SelfCollector.MAX_LABEL
    # the log dirs' part that could not be read (a segment swap) is counted while the source is up
    logdirs = {"cluster": "c", "source": "log_dirs:c:1", "kind": "log_dirs"}
    assert reg.get_sample_value(M.SRC_UP, logdirs) == 1.0
    store.success("log_dirs:c:1", LogDirScanner([tmp_path / "b1"], broker_id="1").refresh(), 0.0, 300.0)
    assert reg.get_sample_value(M.SRC_ERRORS + "_total", logdirs | {"error": "segments_changing"}) == 2.0

"""collectors.export.own: the collector's own area: each source's health from the statuses the
refresh's facts were built from. A source that failed is down with its error counted by kind and its
last error's text kept (cut to a bounded label), after it recovers too."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

import factsfixtures as ff
from collectors.export import metrics as M
from collectors.export.own import SelfCollector
from collectors.export.view import MAX_LABEL, message_label
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
    assert last.labels["error"] == "io" and len(last.labels["message"]) == MAX_LABEL
    # the log dirs' part that could not be read (a segment swap) is counted while the source is up
    logdirs = {"cluster": "c", "source": "log_dirs:c:1", "kind": "log_dirs"}
    assert reg.get_sample_value(M.SRC_UP, logdirs) == 1.0
    store.success("log_dirs:c:1", LogDirScanner([tmp_path / "b1"], broker_id="1").refresh(), 0.0, 300.0)
    assert reg.get_sample_value(M.SRC_ERRORS + "_total", logdirs | {"error": "segments_changing"}) == 2.0


def test_a_message_label_keeps_the_reason_behind_a_long_path():
    """A log dir under a long path used to run the 200-character label out before the reason; the paths are
    shortened to their last two parts (the log line has them whole), an endpoint's URL is kept as it is."""
    deep = "/" + "/".join(["tmp", "pytest-of-root", "pytest-42", "popen-gw1", "x" * 90, "logs", "golden-disk-0"])
    msg = f"golden-disk-0: {deep}: its segments kept changing through 3 re-listings: {deep}/orders-0/00000000000000000000.log"
    assert len(msg) > MAX_LABEL
    label = message_label(msg)
    assert label == ("golden-disk-0: .../logs/golden-disk-0: its segments kept changing through 3 re-listings: "
                     ".../orders-0/00000000000000000000.log")
    assert message_label("GET http://127.0.0.1:9404/metrics/a/b failed") == "GET http://127.0.0.1:9404/metrics/a/b failed"
    assert message_label("cannot read /a/b: denied") == "cannot read /a/b: denied"  # a short path stays whole
    assert message_label(None) == "" and len(message_label("y" * 500)) == MAX_LABEL

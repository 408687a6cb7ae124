"""The cleaner gauges read from a real broker's JMX exporter page in each shape its agent config can give
it: the project's rule-named set, and the bare catch-all rule (``rules: [{pattern: ".*"}]``) lowercased
and not. Each test starts its own broker with that agent config, records the page the broker serves
(``<tmp>/<config>.prom``, made at test time, so it follows the exporter version in localkafka/pom.xml),
and checks that ``collect --once`` reports the JMX source up, in that shape, with the gauge values on
the page, read by the test's own literal lookup of the MBean's sample. It also checks the cleaner
throttler's byte counter against the bytes of the segments the cleaner had to read."""

from __future__ import annotations


import pytest
from prometheus_client.parser import text_string_to_metric_families

from boundedhttp import get_text
from clirun import run_cli
from jmxshapes import CASES, EXPORTED, page_value
from collectors.jmx.gauges import jolokia_io_url, jolokia_read_url, parse_jolokia
from kafkatools import (compacted, create_topic, own_broker, partition_dir, segment_bases,
                        set_topic_config, unique_topic, wait_cleaned_up_to_active, write_rounds)

def collect_once(state) -> tuple[dict, str]:
    proc = run_cli("collect", "--once", "--jmx-url", state.jmx_url)
    assert proc.returncode == 0, proc.stderr
    series = {}
    for f in text_string_to_metric_families(proc.stdout):
        for s in f.samples:
            series[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return series, proc.stdout


def one(series: dict, name: str, **labels) -> float | None:
    hits = [v for (n, lb), v in series.items() if n == name and labels.items() <= dict(lb).items()]
    assert len(hits) <= 1, name
    return hits[0] if hits else None


@pytest.mark.parametrize("agent_config", list(CASES))
def test_collect_reads_the_cleaner_gauges_in_the_page_shape(tmp_path, agent_config):
    shape, lookup = CASES[agent_config]
    with own_broker(tmp_path / "broker", jmx_exporter_config=agent_config) as state:
        # dirty segments the cleaner may not touch yet (min.compaction.lag.ms), measured before it may
        t = create_topic(state.bootstrap, unique_topic("shape"), **compacted(**{"min.compaction.lag.ms": 3_600_000}))
        write_rounds(state.bootstrap, t, 3)
        folder = partition_dir(state.log_dir, t)
        bases = segment_bases(folder)
        dirty_bytes = sum((folder / f"{b:020d}.log").stat().st_size for b in bases[:-1])
        assert dirty_bytes > 0
        before, _ = collect_once(state)
        io_before = one(before, "kafka_compaction_broker_cleaner_io_bytes_total")
        assert io_before is not None

        set_topic_config(state.bootstrap, t, **{"min.compaction.lag.ms": 0})
        wait_cleaned_up_to_active(state.log_dir, t)  # one clean took every dirty segment: no other follows

        page = get_text(state.jmx_url, deadline=30, max_bytes=1 << 24)
        (tmp_path / f"{agent_config}.prom").write_text(page)  # the recorded page of this shape
        series, out = collect_once(state)
        again = get_text(state.jmx_url, deadline=30, max_bytes=1 << 24)
        jolokia = parse_jolokia(get_text(jolokia_read_url(state.jolokia_url), deadline=30, max_bytes=1 << 24), "j",
                                get_text(jolokia_io_url(state.jolokia_url), deadline=30, max_bytes=1 << 24))

    assert one(series, "kafka_compaction_source_up", kind="jmx") == 1.0, out
    assert one(series, "kafka_compaction_source_shape_info", kind="jmx", shape=shape, also_on_page="") == 1.0
    for mbean, (name, labels) in lookup.items():
        want = page_value(page, name, labels)
        assert want == page_value(again, name, labels), f"{mbean} moved during the test: not comparable"
        exported, factor = EXPORTED[mbean]
        assert one(series, exported) == pytest.approx(want * factor), mbean
    # the cleaner read every dirty segment at least once (Cleaner hands each read buffer to the throttler)
    io_after = one(series, "kafka_compaction_broker_cleaner_io_bytes_total")
    assert io_after - io_before >= dirty_bytes
    # Jolokia reads the same MBean
    assert jolokia.shape == "jolokia" and jolokia.cleaner_io_bytes() == io_after

"""The cause ``throttled_cleaner`` on a real broker whose log cleaner is throttled.

The broker's own setting is changed the way an operator does (``kafka-configs.sh --alter --entity-type
brokers --entity-default``, a dynamic config: LogCleaner.reconfigure updates its Throttler), then four
compacted topics with about a minute of throttled cleaning are released at once: the cleaner takes one at
a time at the throttle, the others wait.

Kafka's Throttler lets the cleaner run at full speed for 300 ms, then sleeps until those bytes fit the
setting (from the page cache that is tens of MB, then seconds of sleep), so the count grows in steps and
stays between the line "setting x time" and one step above it. The collector reads the broker through
Jolokia here (one MBean read, fast, where the JMX exporter's page takes seconds to build on a loaded
machine); the test takes the collector's first sample as a step begins and its last after a step is
complete. The verdict must follow the measurement by the model's own comparison (at the throttle: every
partition still waiting is throttled_cleaner; below it: none is); how far above the setting the rate
lands is Kafka's Throttler's and the machine's, and is not asserted (it was a non-strict xfail: a test
that could not fail). When the cleaner finishes every topic before the window ends, the test says so as
a skip."""

from __future__ import annotations

import json
import time

import pytest

from boundedhttp import get_text
from collectors.app import build
from collectors.jmx.gauges import jolokia_io_url
from collectors.serving.runner import refresh_once
from kafkatools import compacted, create_topic, own_broker, set_topic_config, unique_topic, write_rounds
from localkafka.kafkatools import configs_tool
from monitor.model.cleanerio import at_throttle
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from waiting import wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

THROTTLE = 4_000_000  # bytes/s of read plus write: the four topics below take the cleaner about a minute
IO_MAX = "log.cleaner.io.max.bytes.per.second"
WINDOW_BYTES = 15 * THROTTLE  # the collector's window: fifteen seconds of throttled I/O, several steps, half the work


def io_count(state) -> float:
    """The cleaner throttler's Count, read by the test itself (Jolokia, one MBean)."""
    answer = json.loads(get_text(jolokia_io_url(state.jolokia_url), deadline=60, max_bytes=1 << 20))
    [attrs] = answer["value"].values()
    return float(attrs["Count"])


def step_begins(state, what: str) -> float:
    """The count just after it moved: the cleaner's next full-speed burst has begun."""
    before = io_count(state)
    return wait_for(lambda: (lambda c: c if c > before else None)(io_count(state)), 90, what, interval=0.02)


def step_done(state, what: str) -> tuple[float, float]:
    """(time, count) once the count has stood still for half a second: a burst is over, the cleaner
    sleeps (300 ms of bursting, then seconds of sleep)."""
    seen = [(time.monotonic(), io_count(state))]

    def still():
        now, c = time.monotonic(), io_count(state)
        if c != seen[-1][1]:
            seen.append((now, c))
            return None
        return (now, c) if now - seen[-1][0] >= 0.5 else None

    return wait_for(still, 90, what, interval=0.02)


def causes(reg, topics) -> dict:
    return {s.labels["topic"]: s.labels["cause"] for metric in reg.collect() for s in metric.samples
            if s.name == "kafka_compaction_partition_compaction_cause" and s.labels["topic"] in topics}


def test_partitions_waiting_behind_a_throttled_cleaner(tmp_path):
    # a small I/O buffer and small batches keep each read the cleaner marks small (it reads a segment a
    # buffer at a time, growing the buffer only for a batch that does not fit)
    with own_broker(tmp_path / "broker", **{"log.cleaner.io.buffer.size": 65536}) as state:
        b = str(state.node_id)
        topics = [create_topic(state.bootstrap, unique_topic(f"throttled{i}"),
                               **compacted(**{"min.compaction.lag.ms": 3_600_000})) for i in range(4)]
        for t in topics:  # 30 MB each, dirty, held back by min.compaction.lag.ms until the throttle is in force
            write_rounds(state.bootstrap, t, 3, keys=20_000, value=lambda r, i: bytes([65 + r]) * 500,
                         **{"batch.size": 16384})
        proc = configs_tool(state.bootstrap, "--alter", "--entity-type", "brokers", "--entity-default",
                            "--add-config", f"{IO_MAX}={THROTTLE}")
        assert proc.returncode == 0, proc.stderr[-2000:]
        cfg = Config(clusters=(ClusterConfig(name="local", bootstrap_servers=state.bootstrap, consumer_groups=False,
                                             brokers=(BrokerConfig(id=b, jolokia_url=state.jolokia_url,
                                                                   log_dirs=(state.log_dir,)),)),))
        col = build(cfg)
        sources = {s.kind: s for s in col.runner.sources}
        try:
            def refreshed(*kinds):
                for k in kinds:
                    assert refresh_once(col.store, sources[k]), col.store.statuses()
                return col.registry

            wait_for(lambda: refreshed("admin").get_sample_value(
                "kafka_compaction_broker_cleaner_io_max_bytes_per_second",
                {"cluster": "local", "broker": b, "source": "admin"}) == THROTTLE, 60,
                "the broker to describe the throttle as in force")
            for t in topics:
                set_topic_config(state.bootstrap, t, **{"min.compaction.lag.ms": 0})
            refreshed("admin")  # the topics' configs as released

            step_begins(state, "the cleaner to start on the released topics")
            first = refreshed("jolokia", "log_dirs")  # the collector's first sample, as a step begins: no rate yet
            c0 = io_count(state)
            first_causes = causes(first, topics)
            assert "waiting" in first_causes.values(), first_causes  # eligible, the throttle not yet measured
            assert col.store.snapshot(f"jolokia:local:{b}").io_rate.bytes_per_second is None

            wait_for(lambda: io_count(state) - c0 >= WINDOW_BYTES, 120, "fifteen seconds of throttled cleaner I/O")
            _, c1 = step_done(state, "the cleaner's step to end in a throttle sleep")
            second = refreshed("log_dirs", "jolokia")  # the last sample: a whole step in
            io = col.store.snapshot(f"jolokia:local:{b}").io_rate
            got = causes(second, topics)
            eligible = {t for t in topics if second.get_sample_value(
                "kafka_compaction_partition_eligible",
                {"cluster": "local", "broker": b, "topic": t, "partition": "0"}) == 1}
        finally:
            col.close()

    assert "throttled_cleaner" not in first_causes.values(), first_causes
    # Strict, and not timed: the collector measured the cleaner's I/O over the window (a rate, from the
    # broker's own count) and judged each partition still waiting by the model's own comparison
    # (monitor.model.cleanerio.at_throttle). How far the measured rate lands above the setting depends on
    # Kafka's Throttler (it averages idle time into its period: 74 MB in 0.6 s was seen at 2 MB/s after an
    # idle spell) and on the machine's load; that the verdict follows the measurement does not.
    assert io.bytes_per_second is not None and io.window_seconds >= 5, io
    assert c1 > c0, "the broker's cleaner I/O count moved over the window"
    if not eligible:
        pytest.skip(f"no partition left waiting when the window ended: the cleaner finished first ({got})")
    if at_throttle(io, THROTTLE):
        assert {t: got[t] for t in eligible} == {t: "throttled_cleaner" for t in eligible}, (io, got)
    else:
        assert "throttled_cleaner" not in {got[t] for t in eligible}, (io, got)

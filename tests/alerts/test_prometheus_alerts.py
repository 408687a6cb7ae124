"""A real Prometheus, configured from deploy/prometheus.yml, scrapes the real collector with the
rendered rules loaded. CompactionLagging is Kafka's own test held too long (cleanable ratio above
min.cleanable.dirty.ratio): on a real broker whose log cleaner is off, a log past its ratio goes
pending, then firing; on the session broker, a log whose uncleaned bytes min.compaction.lag.ms holds
back (uncleaned ratio 1, nothing cleanable) never does. The collector runs at its default granularity
(topic): the held-back partition is healthy (min_compaction_lag is configured behaviour), so only its
default series go out, and the lagging one is unhealthy, so its every series does."""

from __future__ import annotations

import json
import shutil
import urllib.request

import pytest

from kafkatools import compacted, create_topic, unique_topic, write_rounds_min_lag
from procs import free_port, prometheus_query
from promstack import collector_and_prometheus
from waiting import wait_for

pytestmark = pytest.mark.kafka


@pytest.fixture
def cleaner_off(kafka_cleaner_off):
    """The session's broker whose log cleaner is off (tests/conftest.py ``kafka_cleaner_off``)."""
    return kafka_cleaner_off


def alerts_for(prom: str, name: str, topic: str) -> list[dict]:
    data = json.load(urllib.request.urlopen(f"{prom}/api/v1/alerts", timeout=5))["data"]["alerts"]
    return [a for a in data if a["labels"].get("alertname") == name and a["labels"].get("topic") == topic]


def test_compaction_lagging_goes_pending_then_firing_only_where_the_cleaner_falls_behind(kafka, cleaner_off,
                                                                                           tmp_path):
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.fail("prometheus is missing: ./dev installs Debian's prometheus package")
    behind = create_topic(cleaner_off.bootstrap, unique_topic("behind"), **compacted(**{"min.cleanable.dirty.ratio": 0.5}))
    write_rounds_min_lag(cleaner_off.bootstrap, behind)
    held = create_topic(kafka.bootstrap, unique_topic("held"),
                        **compacted(**{"min.compaction.lag.ms": 3_600_000, "min.cleanable.dirty.ratio": 0.5}))
    write_rounds_min_lag(kafka.bootstrap, held)

    cport = free_port()
    cfg = {
        "listen": {"address": "127.0.0.1", "port": cport},
        "clusters": [{"name": "local", "bootstrap_servers": kafka.bootstrap,
                      "brokers": [{"id": 1, "jmx_url": kafka.jmx_url, "log_dirs": [kafka.log_dir]}]},
                     {"name": "cleaner-off", "brokers": [{"id": 1, "log_dirs": [cleaner_off.log_dir]}],
                      "topics": {behind: {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.5}}}],
        "intervals": {"jmx": 1, "log_dirs": 1, "admin": 2, "consumer_groups": 5},
        "thresholds": {"lagging_for": "4s"},
    }
    with collector_and_prometheus(cfg, tmp_path, prometheus) as prom:
        states = []  # the alert's states in the order seen

        def firing():
            found = alerts_for(prom, "CompactionLagging", behind)
            if found and (not states or states[-1] != found[0]["state"]):
                states.append(found[0]["state"])
                print("CompactionLagging:", states[-1])  # shown with a failure
            return states[-1:] == ["firing"]

        wait_for(firing, 90, f"CompactionLagging firing for {behind}", interval=0.5)
        assert states == ["pending", "firing"], states
        alert = alerts_for(prom, "CompactionLagging", behind)[0]
        assert alert["labels"]["severity"] == "warning" and alert["labels"]["partition"] == "0"
        assert alert["labels"]["cluster"] == "cleaner-off"
        assert behind in alert["annotations"]["description"]
        assert alert["annotations"]["runbook"].endswith("#compactionlagging")
        # the held-back log: scraped all along, all uncleaned, nothing cleanable, no alert in any state;
        # healthy, so its detail stays home (granularity topic) and its topic's aggregate says how much waits
        held_sel = f'{{topic="{held}"}}'
        assert prometheus_query(prom, f"kafka_compaction_partition_cleanable_ratio{held_sel}")[0]["value"][1] == "0"
        assert prometheus_query(prom, f"kafka_compaction_partition_uncleaned_ratio{held_sel}") == []
        assert float(prometheus_query(prom, f"kafka_compaction_topic_uncleaned_bytes{held_sel}")[0]["value"][1]) > 0
        cause = prometheus_query(prom, f"kafka_compaction_partition_compaction_cause{held_sel}")
        assert [c["metric"]["cause"] for c in cause] == ["min_compaction_lag"]
        # the lagging one is unhealthy: every series of it is there
        behind_sel = f'{{topic="{behind}"}}'
        assert prometheus_query(prom, f"kafka_compaction_partition_uncleaned_ratio{behind_sel}")[0]["value"][1] == "1"
        assert alerts_for(prom, "CompactionLagging", held) == []
        # the collector's own health is visible to Prometheus too
        assert prometheus_query(prom, "min(kafka_compaction_source_up)")[0]["value"][1] == "1"

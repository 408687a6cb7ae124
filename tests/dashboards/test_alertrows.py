"""The pages' alerts (``dashboards.alertrows``): with a collector as the source, the rule table evaluated
on the current samples (state ``active``, the rules that need history said so); ``alerting`` the keys an
alert is raised for, in the states that count as firing."""

from __future__ import annotations

import pandas as pd

from dashboards import alertrows, sources
from monitor.settings.config import Thresholds
from monitor.contract.rules import ALERT

PAGE = "\n".join([
    "# TYPE kafka_compaction_broker_cleaner_dead_threads gauge",
    'kafka_compaction_broker_cleaner_dead_threads{cluster="c",broker="1"} 1.0',
    'kafka_compaction_broker_cleaner_dead_threads{cluster="c",broker="2"} 0.0',
    "",
])


def test_the_rule_table_evaluated_on_a_collectors_samples():
    alerts = alertrows.evaluated_alerts(sources.samples_from_text(PAGE, "page"), Thresholds())
    dead = alerts[alerts["alert"] == ALERT.LogCleanerThreadDead]
    assert dead[["broker", "state", "severity"]].values.tolist() == [["1", "active", "critical"]]
    # the annotations rendered from the rule's templates, as Prometheus renders them
    assert dead.iloc[0]["summary"] == "A log cleaner thread died on broker 1 (cluster c)"
    assert dead.iloc[0]["runbook"].endswith("#logcleanerthreaddead")
    assert list(alerts.columns) == alertrows.ALERT_COLUMNS
    assert ALERT.TombstonesPilingUp in alerts.attrs["unknown"]  # a delta over 1h: no history here


def test_alerting_counts_the_firing_states_only():
    alerts = pd.DataFrame([
        {"alert": ALERT.CompactionLagging, "state": "firing", "topic": "t", "partition": "0"},
        {"alert": ALERT.CompactionLagging, "state": "firing", "topic": "t", "partition": "0"},  # two brokers
        {"alert": ALERT.CompactionLagging, "state": "pending", "topic": "t", "partition": "1"},
        {"alert": ALERT.CompactionOverdue, "state": "firing", "topic": "t", "partition": "2"},
    ], columns=alertrows.ALERT_COLUMNS)
    keys = ["topic", "partition"]
    assert alertrows.alerting(alerts, ALERT.CompactionLagging, keys).values.tolist() == [["t", "0"]]
    assert len(alertrows.alerting(alerts, ALERT.CompactionLagging, keys, states=("pending", "firing"))) == 2
    assert alertrows.alerting(None, ALERT.CompactionLagging, keys).empty

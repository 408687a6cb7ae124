"""The demo's scenario, checked without a broker: the healthy changelog stays healthy by arithmetic on its
own settings (``cli.demo_scenario.healthy_worst_case``) judged by the alert rules themselves
(``monitor.contract.rule_eval`` over the rule table, with the thresholds the demo's monitor.yaml gives),
and the monitor.yaml the demo writes keeps every folder under its ``--dir``. The demo run itself, with
its Prometheus asked whether anything fired on the healthy topic, is tests/cli/test_demo.py (slow)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from cli.demo import monitor_config
from cli.demo_scenario import (FAST, HEALTHY_MIN_CLEANABLE_DIRTY_RATIO, Names, Timing, healthy_key, healthy_worst_case,
                               topic_configs)
from monitor.contract.metricnames import PREFIX as NS
from monitor.contract.rule_eval import Sample, evaluate
from monitor.contract.rules import ALERT, RULES
from monitor.settings.config import parse_config
from monitor.settings.configschema import PROMETHEUS_DURATION

UNITS = (365 * 86400, 7 * 86400, 86400, 3600, 60, 1, 0.001)  # PROMETHEUS_DURATION's groups: y w d h m s ms


def seconds(duration: str) -> float:
    m = re.match(PROMETHEUS_DURATION, duration)
    assert m, duration
    groups = [g for g in m.groups()[1:]]
    return sum(float(re.match(r"\d+", g).group()) * u for g, u in zip(groups, UNITS) if g)


def demo_thresholds(t: Timing, workdir: Path):
    state = SimpleNamespace(bootstrap="127.0.0.1:9092", node_id=1, jmx_url="http://127.0.0.1:1/metrics",
                            log_dir=str(workdir / "broker" / "data"))
    cfg = monitor_config(state, t, 9690, "http://127.0.0.1:9090", workdir / "audits", workdir / "state")
    return parse_config(cfg)


def test_seconds_reads_prometheus_durations():
    assert [seconds(d) for d in ("30s", "3s", "1m", "15m", "1h30m", "250ms")] == [30, 3, 60, 900, 5400, 0.25]


@pytest.mark.parametrize("t", [Timing(), FAST], ids=["demo", "fast"])
def test_the_healthy_topic_at_its_dirtiest_fires_no_alert(t, tmp_path):
    """Its cleanable ratio at its worst stays below its min.cleanable.dirty.ratio, so CompactionLagging's
    comparison never holds; a comparison that can hold while the cleaner is busy elsewhere (past
    max.compaction.lag.ms, the forecast, the throttle) holds for less than its rule's window."""
    names = Names()
    worst = healthy_worst_case(t)
    cfg = topic_configs(t, names)[names.healthy]
    assert float(cfg["min.cleanable.dirty.ratio"]) == HEALTHY_MIN_CLEANABLE_DIRTY_RATIO
    thresholds = demo_thresholds(t, tmp_path).thresholds
    labels = {"cluster": "demo", "broker": "1", "topic": names.healthy, "partition": "0"}
    samples = [
        Sample(NS + "partition_cleanable_ratio", labels, worst.cleanable_ratio),
        Sample(NS + "partition_min_cleanable_dirty_ratio", labels, float(cfg["min.cleanable.dirty.ratio"])),
        Sample(NS + "partition_uncleaned_ratio", labels, worst.cleanable_ratio),
        Sample(NS + "partition_compaction_delay_seconds", labels, worst.compaction_delay_s),
        Sample(NS + "partition_next_clean_forecast_late_seconds", labels, worst.compaction_delay_s),
        Sample(NS + "partition_eligible", labels, 1.0),
        Sample(NS + "partition_compaction_cause", {**labels, "cause": "throttled_cleaner"}, 1.0),
        Sample(NS + "partition_uncleanable", labels, 0.0),
        Sample(NS + "partition_tombstones", {**labels, "section": "dirty"}, 0.0),
        Sample(NS + "partition_tombstones_past_delete_horizon", labels, 0.0),
        Sample(NS + "partition_hanging_transactions", labels, 0.0),
        Sample(NS + "partition_oldest_open_transaction_age_seconds", labels, 0.0),
    ]
    fired = [a for a in evaluate(samples, thresholds) if a.labels.get("topic") == names.healthy]
    assert ALERT.CompactionLagging not in {a.alert for a in fired}, worst
    windows = {(r.alert, r.severity): seconds(r.window(thresholds)) for r in RULES}
    for a in fired:  # held at most from the deadline until the cleaner gets there
        assert worst.compaction_delay_s < windows[(a.alert, a.severity)], (a.alert, worst)
    # the comparisons that can hold are those of a busy cleaner: none is about the topic's own state
    assert {a.alert for a in fired} <= {ALERT.CompactionOverdue, ALERT.CompactionWillBeOverdue, ALERT.CleanerThrottled}


@pytest.mark.parametrize("t", [Timing(), FAST], ids=["demo", "fast"])
def test_the_old_healthy_settings_would_have_lagged(t):
    """The settings before (min.cleanable.dirty.ratio 0.1, no max.compaction.lag.ms, 100 or 200 updates a
    second over 2000 keys, filled as they come) put the ratio above its minimum at every segment roll: the
    check above can fail."""
    from dataclasses import replace

    old = replace(t, healthy_updates_per_second=100, healthy_keys=2000,
                  healthy_max_compaction_lag_ms=7 * 86400 * 1000)
    assert healthy_worst_case(old).cleanable_ratio > 0.1


def test_the_prefill_writes_every_healthy_key_once():
    for t in (Timing(), FAST):
        assert len({healthy_key(i, t) for i in range(t.healthy_keys)}) == t.healthy_keys


def test_the_demo_keeps_its_state_and_audits_under_its_dir(tmp_path):
    """The collector's summary cache defaults to /var/lib/compaction-monitor (or ~/.local/state): the demo's
    monitor.yaml names a folder under --dir, as it does for the audits."""
    cfg = demo_thresholds(FAST, tmp_path)
    assert cfg.state_dir and Path(cfg.state_dir).is_relative_to(tmp_path)
    assert cfg.audit_dir and Path(cfg.audit_dir).is_relative_to(tmp_path)
    for b in cfg.clusters[0].brokers:
        assert all(Path(d).is_relative_to(tmp_path) for d in b.log_dirs)

"""The alert rules: rendered from the one rule table, promtool-valid, a firing and a near-miss test per
alert and severity, the same verdicts from promtool and the Python evaluator, a runbook section per
alert, and only metric names the collector defines."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from dataclasses import replace

from alerts.promtool_tests import cases, evaluated, render_tests
from alerts.render import render_rules
from clirun import run_cli
from collectors.export.metrics import METRICS
from monitor.settings.config import Thresholds, parse_config
from monitor.contract.rules import RULES as TABLE

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "alerts" / "compaction.rules.yml"
TESTS = ROOT / "alerts" / "compaction.rules.test.yml"
PROMTOOL = shutil.which("promtool")


def test_committed_rules_are_the_render_of_the_default_config():
    assert RULES.read_text() == render_rules(Thresholds()), "run: compaction-monitor rules render --out " \
        "alerts/compaction.rules.yml --tests alerts/compaction.rules.test.yml"
    assert TESTS.read_text() == render_tests(Thresholds())


def _promtool(*args, cwd=None):
    if PROMTOOL is None:
        pytest.fail("promtool is missing: ./dev installs Debian's prometheus package")
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, cwd=cwd)


def test_promtool_and_the_python_evaluator_agree_on_every_case():
    """The agreement test: each promtool case expects exactly the alerts (labels, annotations with
    $value) the Python evaluator finds on the same samples; promtool runs the PromQL and must agree."""
    r = _promtool("check", "rules", str(RULES))
    assert r.returncode == 0, r.stdout + r.stderr
    r = _promtool("test", "rules", TESTS.name, cwd=RULES.parent)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_rules_and_the_prometheusrule_pass_promtools_fatal_lint(tmp_path):
    """What users run in their own CI: ``promtool check rules --lint-fatal`` (duplicate rules, among the
    lints) on the rule file and on the PrometheusRule's groups."""
    from alerts.render import render_prometheusrule

    r = _promtool("check", "rules", "--lint-fatal", str(RULES))
    assert r.returncode == 0, r.stdout + r.stderr
    spec = yaml.safe_load(render_prometheusrule(Thresholds()))["spec"]
    (tmp_path / "operator.rules.yml").write_text(yaml.safe_dump(spec))
    r = _promtool("check", "rules", "--lint-fatal", str(tmp_path / "operator.rules.yml"))
    assert r.returncode == 0, r.stdout + r.stderr


def test_an_alert_of_two_rules_tells_them_apart_by_a_label():
    """Two rules of one alert name carry distinct static labels (``evidence``), or promtool's lint and
    Prometheus take them for one rule twice."""
    by_name: dict[str, list] = {}
    for r in TABLE:
        by_name.setdefault(r.alert, []).append(r.labels())
    for name, label_sets in by_name.items():
        assert len({tuple(sorted(x.items())) for x in label_sets}) == len(label_sets), (name, label_sets)


def test_the_evaluator_fires_exactly_on_the_firing_cases():
    t = Thresholds()
    for case in cases(t):
        fired = {(a.alert, a.severity) for a in evaluated(case, t)}
        assert ((case.alert, case.severity) in fired) == case.fires, (case.alert, case.severity, case.series)


def test_a_rule_file_that_disagrees_with_the_evaluator_fails_promtool(tmp_path):
    """The agreement test can fail: PromQL rendered with another threshold than the evaluator's."""
    t = Thresholds()
    (tmp_path / "compaction.rules.yml").write_text(render_rules(replace(t, buffer_utilization_ratio=0.95)))
    (tmp_path / "t.yml").write_text(render_tests(t))
    r = _promtool("test", "rules", "t.yml", cwd=tmp_path)
    assert r.returncode != 0 and "CleanerBufferSaturated" in r.stdout + r.stderr


def test_every_alert_has_a_firing_and_a_near_miss_test():
    names = [t["name"] for t in yaml.safe_load(TESTS.read_text())["tests"]]
    for r in TABLE:
        assert f"{r.alert} ({r.severity}) fires" in names
        assert f"{r.alert} ({r.severity}) near miss does not fire" in names


def test_alerts_have_severity_summary_description_and_a_runbook_section():
    runbook = (ROOT / "alerts" / "RUNBOOK.md").read_text()
    sections = {m.lower() for m in re.findall(r"^## (\w+)$", runbook, re.M)}
    doc = yaml.safe_load(RULES.read_text())
    seen = set()
    for g in doc["groups"]:
        for r in g["rules"]:
            if "alert" not in r:
                continue
            seen.add(r["alert"])
            assert r["labels"]["severity"] in ("info", "warning", "critical")
            ann = r["annotations"]
            assert ann["summary"] and ann["description"]
            anchor = ann["runbook"].split("#", 1)[1]
            assert anchor in sections, f"RUNBOOK.md has no section for {r['alert']}"
    assert seen >= {"LogCleanerThreadDead", "LogCleanerStalled", "CompactionLagging", "CompactionOverdue",
                    "UncleanablePartitions", "CleanerBufferSaturated", "CleanerSlow", "TombstonesPilingUp",
                    "TombstonesPastDeleteHorizon", "ConsumerMayMissTombstones", "CompactionMonitorDown",
                    "CompactionBlockedByTransaction", "HangingTransaction",
                    "ConsumerMayMissUpdates"}


def test_expressions_use_only_metrics_the_collector_defines():
    doc = yaml.safe_load(RULES.read_text())
    recorded = {r["record"] for g in doc["groups"] for r in g["rules"] if "record" in r}
    exported = {n + ("_total" if kind == "counter" else "") for n, (kind, _, _) in METRICS.items()}
    for g in doc["groups"]:
        for r in g["rules"]:
            for name in re.findall(r"\b(kafka_compaction[:a-z_]*)", r["expr"]):
                assert name in exported or name in recorded, f"{name} in {r.get('alert', r.get('record'))}"


def test_thresholds_from_config_reach_the_rules_and_still_pass_promtool(tmp_path):
    cfg = parse_config({"thresholds": {"consumer_lag_warning_fraction": 0.25, "lagging_for": "2h",
                                       "buffer_utilization_ratio": 0.7, "tombstone_growth_per_hour": 5000}})
    text = render_rules(cfg.thresholds)
    assert "kafka_compaction_consumer_group_lag_retention_ratio > 0.25" in text
    assert "for: 2h" in text and "max_buffer_utilization_ratio > 0.7" in text
    assert "tombstones:sum[1h]) > 5000" in text
    (tmp_path / "compaction.rules.yml").write_text(text)
    (tmp_path / "t.yml").write_text(render_tests(cfg.thresholds))
    r = _promtool("test", "rules", "t.yml", cwd=tmp_path)
    assert r.returncode == 0, r.stdout


def test_rules_render_cli(tmp_path):
    import sys

    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("thresholds: {cleaner_stalled_seconds: 1200}\n")
    out = tmp_path / "r.yml"
    r = run_cli("rules", "render", "--config", str(cfg), "--out", str(out), "--tests", str(tmp_path / "r.test.yml"))
    assert r.returncode == 0, r.stderr
    assert "time_since_last_run_seconds > 1200" in out.read_text()
    assert _promtool("test", "rules", "r.test.yml", cwd=tmp_path).returncode == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("thresholds: {lagging_forr: 1h}\n")
    r = run_cli("rules", "render", "--config", str(bad))
    assert r.returncode == 2 and "thresholds.lagging_forr" in r.stderr


def test_example_configs_parse():
    am = yaml.safe_load((ROOT / "alerts" / "alertmanager.example.yml").read_text())
    # a route for every severity of the rule table
    assert {r["matchers"][0] for r in am["route"]["routes"]} == {f'severity="{r.severity}"' for r in TABLE}
    prom = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text())
    assert prom["scrape_configs"][0]["job_name"] == Thresholds().monitor_job

"""deploy/k8s/prometheusrule.yaml is ``rules render --format prometheusrule`` of the default thresholds: the same
groups as alerts/compaction.rules.yml (one rule table), promtool-valid."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

import k8smanifests as m
from alerts.render import render_prometheusrule
from clirun import run_cli
from monitor.settings.config import Thresholds

COMMITTED = m.K8S / "prometheusrule.yaml"
RULE_FILE = m.ROOT / "alerts" / "compaction.rules.yml"


def test_committed_prometheusrule_is_the_render_of_the_default_config():
    assert COMMITTED.read_text() == render_prometheusrule(Thresholds()), \
        "run: compaction-monitor rules render --format prometheusrule --out deploy/k8s/prometheusrule.yaml"


def test_its_groups_are_the_rule_files():
    assert yaml.safe_load(COMMITTED.read_text())["spec"]["groups"] == yaml.safe_load(RULE_FILE.read_text())["groups"]


def test_promtool_checks_its_rules(tmp_path):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing: ./dev installs Debian's prometheus package")
    rules = tmp_path / "spec.groups.yml"
    rules.write_text(yaml.safe_dump({"groups": yaml.safe_load(COMMITTED.read_text())["spec"]["groups"]}))
    r = subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr  # (its lint notes the two alerts with two rules each, by design)
    broken = yaml.safe_load(rules.read_text())
    broken["groups"][1]["rules"][0]["expr"] += " +"
    rules.write_text(yaml.safe_dump(broken))
    assert subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True).returncode != 0


def test_rules_render_format_prometheusrule_cli(tmp_path):
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("thresholds: {monitor_job: kcm, cleaner_stalled_seconds: 1200}\n")
    out = tmp_path / "rule.yaml"
    r = run_cli("rules", "render", "--format", "prometheusrule", "--config", str(cfg), "--out", str(out))
    assert r.returncode == 0, r.stderr
    doc = yaml.safe_load(out.read_text())
    assert doc["kind"] == "PrometheusRule" and m.problems(doc) == []
    text = "\n".join(r["expr"] for g in doc["spec"]["groups"] for r in g["rules"])
    assert 'up{job="kcm"}' in text and "time_since_last_run_seconds > 1200" in text
    r = run_cli("rules", "render", "--format", "prometheusrule", "--tests", str(tmp_path / "t.yml"))
    assert r.returncode == 2 and "--tests goes with --format rules" in r.stderr
    assert not (tmp_path / "t.yml").exists()

"""The monitoring mixin (mixin/mixin.libsonnet), evaluated with the jsonnet package as jsonnet users evaluate it:
its rules are `rules render`'s with the job selector applied as alerts/mixin.py documents (every series selected
by it too, in place of up's job match; the annotation runbook named runbook_url), its dashboard is `grafana
render`'s, its rules pass promtool's fatal lint, and its generated files are current."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from alerts import mixin
from alerts.grafana import render_dashboard
from alerts.render import render_rules
from cli import docgen
from monitor.settings.config import Thresholds

try:
    import _jsonnet  # the jsonnet package (the [test] extra)
except ImportError:  # a failure naming the fix, not a skip: a skipped mixin test proves nothing
    _jsonnet = None

ROOT = Path(__file__).resolve().parents[2]
LIBSONNET = ROOT / "mixin" / "mixin.libsonnet"


def evaluate(config: dict | None = None) -> dict:
    """The mixin's fields (its hidden ones, as mixtool and `jsonnet -e` users read them), ``config`` laid over
    its ``_config``: fresh objects each call, the evaluation made once per config (0.3 s of CPU each)."""
    if _jsonnet is None:
        pytest.fail("the jsonnet package is missing: pip install -e '.[test]'")
    return json.loads(_evaluated(json.dumps(config or {}, sort_keys=True)))


@functools.lru_cache(maxsize=None)
def _evaluated(config: str) -> str:
    snippet = (f"local m = (import 'mixin.libsonnet') + {{ _config+:: {config} }};\n"
               "{config: m._config, rules: m.prometheusRules, alerts: m.prometheusAlerts, "
               "dashboards: m.grafanaDashboards}")
    return _jsonnet.evaluate_snippet("test", snippet, jpathdir=[str(LIBSONNET.parent)])


def rule_groups(doc: dict) -> list[dict]:
    return doc["rules"]["groups"] + doc["alerts"]["groups"]


def test_the_mixin_gives_the_rule_files_rules_with_the_job_selector():
    """Rule for rule, `rules render`'s file with the selector taken out again: nothing else differs, bar up's
    job match (the selector stands in for it) and runbook's name."""
    doc = evaluate()
    assert doc["config"] == mixin.default_config()
    assert {k: doc["config"][k] for k in ("selector", "runbookURLBase", "laggingFor", "bufferUtilizationRatio")} == {
        "selector": 'job="kafka-compaction-monitor"', "runbookURLBase": "alerts/RUNBOOK.md", "laggingFor": "30m",
        "bufferUtilizationRatio": "0.85"}
    assert [g["name"] for g in doc["rules"]["groups"]] == [mixin.RECORDING_GROUP]
    assert all("record" in r for g in doc["rules"]["groups"] for r in g["rules"])
    assert all("alert" in r for g in doc["alerts"]["groups"] for r in g["rules"])
    selector = doc["config"]["selector"]
    rendered = yaml.safe_load(render_rules(Thresholds()))["groups"]
    got = rule_groups(doc)
    assert [g["name"] for g in got] == [g["name"] for g in rendered]
    selected = 0
    for g_mixin, g_file in zip(got, rendered):
        assert len(g_mixin["rules"]) == len(g_file["rules"])
        for mine, theirs in zip(g_mixin["rules"], g_file["rules"]):
            selected += mine["expr"].count(selector)
            unselected = mine["expr"].replace("{" + selector + "}", "").replace(selector + ",", "")
            assert unselected == theirs["expr"].replace('up{job="kafka-compaction-monitor"}', "up"), mine
            if "annotations" in theirs:
                notes = dict(theirs["annotations"])
                notes["runbook_url"] = notes.pop("runbook")
                assert mine == {**theirs, "expr": mine["expr"], "annotations": notes}
    assert selected >= 40  # every series: the count of selectors in the rules
    [down] = [r for g in got for r in g["rules"] if r.get("alert") == "CompactionMonitorDown"]
    assert "up{" + selector + "} == 0" in down["expr"]


def test_the_config_reaches_every_rule():
    config = {"selector": 'job="kcm",namespace="kafka"', "runbookURLBase": "https://runbooks.example/kafka.md"}
    doc = evaluate(config)
    assert rule_groups(doc) == mixin.groups(config)
    text = json.dumps(rule_groups(doc))
    assert "job=\\\"kafka-compaction-monitor" not in text and "alerts/RUNBOOK.md" not in text
    assert 'kafka_compaction_source_up{job=\\"kcm\\",namespace=\\"kafka\\"} == 0' in text
    notes = [r["annotations"] for g in doc["alerts"]["groups"] for r in g["rules"]]
    assert notes and all(n["runbook_url"].startswith("https://runbooks.example/kafka.md#") for n in notes)
    assert all("runbook" not in n for n in notes)
    assert doc["dashboards"] == evaluate()["dashboards"]  # the dashboard selects by the cluster variable only
    assert evaluate()["alerts"] == {"groups": mixin.groups(mixin.default_config())[1:]}


def test_the_thresholds_reach_the_rules_as_rules_render_writes_them_from_monitor_yaml():
    """Each of monitor.yaml's thresholds is a _config key: laid over, the rules are the rule file rendered
    from a monitor.yaml with those thresholds (numbers where a rule compares, windows in for and in the
    summary and description); a number given as a jsonnet number works too."""
    config = {"laggingFor": "2h", "bufferUtilizationRatio": "0.9", "tombstoneGrowthPerHour": "250000",
              "consumerLagWarningFraction": "0.25", "replicasDisagreeFor": "45m"}
    doc = evaluate(config)
    t = mixin.thresholds(config)
    assert (t.lagging_for, t.buffer_utilization_ratio, t.tombstone_growth_per_hour) == ("2h", 0.9, 250000.0)
    assert rule_groups(doc) == mixin.groups({**mixin.default_config(), **config})
    rendered = yaml.safe_load(render_rules(t))["groups"]
    by_alert = {r["alert"]: r for g in rendered for r in g["rules"] if "alert" in r}
    mine = {r["alert"]: r for g in doc["alerts"]["groups"] for r in g["rules"]}
    assert mine["CompactionLagging"]["for"] == by_alert["CompactionLagging"]["for"] == "2h"
    assert "for 2h" in mine["CompactionLagging"]["annotations"]["description"]
    assert "> 0.9" in mine["CleanerBufferSaturated"]["expr"] and "> 250000" in mine["TombstonesPilingUp"]["expr"]
    for alert, r in mine.items():  # the rule file's, bar the selector and runbook's name
        assert r["for"] == by_alert[alert]["for"] and r["annotations"]["description"] == \
            by_alert[alert]["annotations"]["description"], alert
    numbers = evaluate({"bufferUtilizationRatio": 0.5})  # a jsonnet number: however the implementation prints it
    [saturated] = [r for g in numbers["alerts"]["groups"] for r in g["rules"] if r["alert"] == "CleanerBufferSaturated"]
    assert float(saturated["expr"].rsplit("> ", 1)[1]) == 0.5


def test_every_threshold_is_a_config_key_and_reaches_a_rule():
    """A threshold added to monitor.yaml is a _config key by itself (THRESHOLD_KEYS: every field of the
    thresholds but the job and the runbook's base), and rendering fails if one reaches no rule."""
    import dataclasses

    fields = {f.name for f in dataclasses.fields(Thresholds)} - {"monitor_job", "runbook_base"}
    assert set(mixin.THRESHOLD_KEYS) == fields
    text = (ROOT / mixin.ALERTS).read_text()
    assert all(f"%({key})s" in text for key in mixin.THRESHOLD_KEYS.values())
    assert set(mixin.default_config()) == {"selector", "runbookURLBase", *mixin.THRESHOLD_KEYS.values()}


def test_the_dashboard_is_the_grafana_rendering():
    doc = evaluate()
    assert list(doc["dashboards"]) == [mixin.DASHBOARD_FILE]
    assert doc["dashboards"][mixin.DASHBOARD_FILE] == json.loads(render_dashboard(Thresholds()))


def test_a_percent_sign_survives_the_format():
    """The libsonnet formats expr with jsonnet's %: a literal % (PromQL's modulo) is doubled when rendered."""
    template = mixin._slotted("x{\x00selector\x00} % 2 > 0")
    assert template == "x{%(selector)s} %% 2 > 0"
    evaluate()  # (fails when jsonnet is missing)
    got = _jsonnet.evaluate_snippet("t", f"{json.dumps(template)} % {{selector: 'job=\"a\"'}}")
    assert json.loads(got) == 'x{job="a"} % 2 > 0'


def test_the_generated_files_are_current_and_docgen_lists_them():
    listed = {p for p in docgen.PAGES if p.startswith("mixin/")}
    assert listed == set(mixin.files())
    for path, text in mixin.files().items():
        assert (ROOT / path).read_text() == text, f"{path} is stale: python -m cli.docgen --write"


def test_the_mixins_rules_pass_promtools_fatal_lint(tmp_path):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing: ./dev installs Debian's prometheus package")
    for config in ({}, {"selector": 'job="kcm",namespace=~"kafka-.*"'}):
        path = tmp_path / "mixin.rules.yml"
        path.write_text(yaml.safe_dump({"groups": rule_groups(evaluate(config))}))
        r = subprocess.run([promtool, "check", "rules", "--lint-fatal", str(path)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        assert re.search(r"SUCCESS: \d+ rules found", r.stdout + r.stderr), r.stdout + r.stderr


def test_the_docs_example_evaluates_with_its_settings():
    """docs/mixin.md's jsonnet, as a user copies it: it evaluates, and its _config reaches the rules."""
    evaluate()  # (fails when jsonnet is missing)
    example, thresholds = re.findall(r"```jsonnet\n(.*?)```", (ROOT / "docs" / "mixin.md").read_text(), re.S)
    out = json.loads(_jsonnet.evaluate_snippet("docs/mixin.md", example, jpathdir=[str(LIBSONNET.parent)]))
    config = {"selector": 'job="kafka-compaction-monitor",namespace="kafka"',
              "runbookURLBase": "https://git.example.com/ops/kafka-compaction-monitor/blob/main/alerts/RUNBOOK.md"}
    assert out["compaction-rules.json"]["groups"] + out["compaction-alerts.json"]["groups"] == mixin.groups(config)
    assert out["compaction-dashboard.json"] == json.loads(render_dashboard(Thresholds()))
    alerts = json.loads(_jsonnet.evaluate_snippet("docs/mixin.md", thresholds, jpathdir=[str(LIBSONNET.parent)]))
    assert alerts["groups"] == mixin.groups({**mixin.default_config(), "laggingFor": "2h",
                                             "tombstoneGrowthPerHour": "250000"})[1:]


def _with_job(series: str, job: str) -> str:
    """An input series of promtool's tests scraped under ``job`` (``up`` names its job itself)."""
    if series.startswith("up{"):
        return re.sub(r'job="[^"]*"', f'job="{job}"', series) if job == "other" else series
    name, _, rest = series.partition("{")
    return f'{name}{{job="{job}",{rest}' if rest else f'{name}{{job="{job}"}}'


def test_the_mixins_rules_fire_as_the_rule_files_on_the_same_samples_and_only_for_its_job(tmp_path):
    """promtool runs the rule file's own cases (alerts.promtool_tests: the Python evaluator's verdicts) against
    the mixin's rules, every sample scraped under the mixin's job: each alert fires as it does from the rule
    file (with the job label, runbook_url for runbook). Scraped under another job, none fires."""
    from alerts.promtool_tests import render_tests

    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing: ./dev installs Debian's prometheus package")
    (tmp_path / "mixin.rules.yml").write_text(yaml.safe_dump({"groups": rule_groups(evaluate())}))
    doc = yaml.safe_load(render_tests(Thresholds()))
    doc["rule_files"] = ["mixin.rules.yml"]
    theirs, fired = [], 0
    for case in doc["tests"]:
        other = json.loads(json.dumps(case))
        for s in case["input_series"]:
            s["series"] = _with_job(s["series"], "kafka-compaction-monitor")
        for check in case["alert_rule_test"]:
            for alert in check["exp_alerts"]:
                alert["exp_labels"].setdefault("job", "kafka-compaction-monitor")
                notes = alert["exp_annotations"]
                notes["runbook_url"] = notes.pop("runbook")
                fired += 1
        if not any(check["exp_alerts"] for check in case["alert_rule_test"]):
            continue  # a near miss fires under no job
        other["name"] += " (scraped under another job)"
        for s in other["input_series"]:
            s["series"] = _with_job(s["series"], "other")
        for check in other["alert_rule_test"]:
            check["exp_alerts"] = []
        theirs.append(other)
    doc["tests"] += theirs
    assert fired >= 20  # the cases do expect alerts
    (tmp_path / "mixin.rules.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    r = subprocess.run([promtool, "test", "rules", "mixin.rules.test.yml"], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]


def test_the_mixin_needs_no_other_jsonnet_library():
    """jsonnet-bundler reads mixin/jsonnetfile.json for what to fetch with it: nothing, as the libsonnet imports
    only its own generated files."""
    assert json.loads((LIBSONNET.parent / "jsonnetfile.json").read_text())["dependencies"] == []
    imported = re.findall(r"import '([^']+)'", LIBSONNET.read_text())
    assert imported and all((LIBSONNET.parent / path).is_file() for path in imported), imported

"""The monitoring mixin (``mixin/``): the alert rules and the Grafana dashboard packaged as the Prometheus
community's mixins are (``_config``, ``prometheusRules``, ``prometheusAlerts``, ``grafanaDashboards``), for
jsonnet users (jsonnet-bundler, ``jsonnet -J``). Nothing of it is written twice: ``mixin/mixin.libsonnet`` (by
hand) imports the files this module renders under ``mixin/generated/`` from the same tables as ``rules render``
and ``grafana render`` (``alerts.render``, ``alerts.grafana``), and only fills in ``_config``:

* ``selector``: PromQL label matchers every series the rules select carries (``alerts.render``'s ``selector``),
  in place of the job match of CompactionMonitorDown's ``up``: the selector names the collector's job itself.
  Its default is ``job="<monitor_job>"``, monitor.yaml's default job. The rule file has none: it is loaded into
  one Prometheus, the mixin into a shared one.
* ``runbookURLBase``: where the ``runbook_url`` annotations point, then ``#<alert name in lower case>``
  (``Rule.runbook``; default: monitor.yaml's ``runbook_base``). The mixin names the annotation ``runbook_url``,
  the mixins' convention that kube-prometheus' Alertmanager templates and Grafana's alert list link from; the
  rule file keeps ``runbook``, which the Alertmanager templates of its existing users read.

The dashboard is the Grafana rendering as it is: its queries select by the Kafka ``cluster`` variable, not by job.
The thresholds are monitor.yaml's defaults (the mixin holds no threshold of its own); ``python -m cli.docgen
--write`` regenerates the files, ``tests/alerts/test_mixin.py`` evaluates the mixin and compares.

In the generated rules a ``%`` slot stands for each ``_config`` value (``%(selector)s``), as in the community's
mixins; the libsonnet formats ``expr`` and ``runbook_url`` with ``_config`` (jsonnet's ``%``), so a literal ``%``
in either is written ``%%`` here.
"""

from __future__ import annotations

import dataclasses

from alerts.grafana import render_dashboard
from alerts.render import rule_groups
from monitor.fileio import strictjson
from monitor.settings.config import Thresholds

RECORDING_GROUP = "kafka-compaction-recording"  # alerts.render.rule_groups' first group: prometheusRules
DASHBOARD_FILE = "kafka-compaction.json"  # the key under grafanaDashboards, as mixtool writes it out
# mixin/'s generated files, relative to the repository (cli.docgen lists them with the reference pages)
CONFIG, RULES, ALERTS, DASHBOARD = ("mixin/generated/config.json", "mixin/generated/rules.json",
                                    "mixin/generated/alerts.json", f"mixin/generated/dashboards/{DASHBOARD_FILE}")
# _config's keys that fill slots: never in PromQL or a URL, so a placeholder replaced after rendering is exact
_SLOTS = {"selector": "\x00selector\x00", "runbookURLBase": "\x00runbookURLBase\x00"}


def default_config(t: Thresholds | None = None) -> dict[str, str]:
    """``_config``'s defaults, from monitor.yaml's: the collector's job and the runbook's location."""
    t = t or Thresholds()
    return {"selector": f'job="{t.monitor_job}"', "runbookURLBase": t.runbook_base}


def groups(config: dict[str, str], t: Thresholds | None = None) -> list[dict]:
    """The rule groups the mixin gives under ``config`` (``_config``): ``rules render``'s groups with every series
    selected by ``config["selector"]`` too, and the annotation ``runbook`` named ``runbook_url`` and pointing
    under ``config["runbookURLBase"]``."""
    t = dataclasses.replace(t or Thresholds(), runbook_base=config["runbookURLBase"])
    out = []
    for g in rule_groups(t, selector=config["selector"]):
        rules = []
        for r in g["rules"]:
            if "annotations" in r:
                notes = dict(r["annotations"])
                notes["runbook_url"] = notes.pop("runbook")
                r = {**r, "annotations": notes}
            rules.append(r)
        out.append({"name": g["name"], "rules": rules})
    return out


def _slotted(text: str) -> str:
    """``text`` as a jsonnet format string: its ``%`` doubled, each placeholder a ``%(key)s`` slot."""
    text = text.replace("%", "%%")
    for key, mark in _SLOTS.items():
        text = text.replace(mark, f"%({key})s")
    return text


def _templates(t: Thresholds) -> list[dict]:
    """``groups`` with a slot for each ``_config`` value in ``expr`` and ``runbook_url`` (and only there)."""
    out = []
    for g in groups(_SLOTS, t):
        rules = []
        for r in g["rules"]:
            r = {**r, "expr": _slotted(r["expr"])}
            if "annotations" in r:
                r["annotations"] = {**r["annotations"], "runbook_url": _slotted(r["annotations"]["runbook_url"])}
            rules.append(r)
        out.append({"name": g["name"], "rules": rules})
    leftover = [g["name"] for g in out if "\x00" in strictjson.dumps(g)]
    assert not leftover, f"a _config placeholder outside expr and runbook_url in {leftover}"
    return out


def _json(doc) -> str:
    return strictjson.dumps(doc, indent=2, sort_keys=False) + "\n"


def files(t: Thresholds | None = None) -> dict[str, str]:
    """Each generated file of ``mixin/`` (path relative to the repository) and its text."""
    t = t or Thresholds()
    rendered = _templates(t)
    return {
        CONFIG: _json(default_config(t)),
        RULES: _json({"groups": [g for g in rendered if g["name"] == RECORDING_GROUP]}),
        ALERTS: _json({"groups": [g for g in rendered if g["name"] != RECORDING_GROUP]}),
        DASHBOARD: render_dashboard(t),  # grafana render's file, byte for byte
    }

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

* each threshold the rules read (monitor.yaml's ``thresholds``, camelCased: ``laggingFor``,
  ``bufferUtilizationRatio``, ...; ``THRESHOLD_KEYS``), its default monitor.yaml's, as a string (``_text``): a
  number where the rule compares, a Prometheus duration in its ``for`` and in its summary and description.

The dashboard is the Grafana rendering as it is (monitor.yaml's default thresholds drawn as its lines): its
queries select by the Kafka ``cluster`` variable, not by job. ``python -m cli.docgen --write`` regenerates the
files, ``tests/alerts/test_mixin.py`` evaluates the mixin and compares.

In the generated rules a ``%`` slot stands for each ``_config`` value (``%(selector)s``), as in the community's
mixins; the libsonnet formats ``expr``, ``for`` and the annotations with ``_config`` (jsonnet's ``%``), so a
literal ``%`` in them is written ``%%`` here. A threshold's slot is found by rendering the rules with each
threshold set to a value of its own that nothing else in them is (``_marked``) and replacing it.
"""

from __future__ import annotations

import dataclasses
import re

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


def _camel(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(w.capitalize() for w in rest)


# The thresholds a rule reads, as _config keys: every field of monitor.yaml's thresholds but the two _config
# has its own way (monitor_job: selector; runbook_base: runbookURLBase). A test checks each reaches a rule.
THRESHOLD_KEYS = {f.name: _camel(f.name) for f in dataclasses.fields(Thresholds)
                  if f.name not in ("monitor_job", "runbook_base")}
_MARK_NUMBER, _MARK_WINDOW = 271800, 271900  # (a threshold's own value: _marked)


def default_config(t: Thresholds | None = None) -> dict:
    """``_config``'s defaults, from monitor.yaml's: the collector's job, the runbook's location and each
    threshold."""
    t = t or Thresholds()
    return {"selector": f'job="{t.monitor_job}"', "runbookURLBase": t.runbook_base,
            **{key: _text(getattr(t, name)) for name, key in THRESHOLD_KEYS.items()}}


def _text(value) -> str:
    """A threshold as _config holds it: a string, as it goes into the rules (a number as the rule file writes
    it). A number given in jsonnet works too, but jsonnet implementations print one differently (the C++
    one 0.85 as 0.84999999999999998): a string goes in as written."""
    return value if isinstance(value, str) else f"{value:g}"


def thresholds(config: dict, t: Thresholds | None = None) -> Thresholds:
    """The thresholds ``config`` (``_config``) sets, over ``t``'s."""
    t = t or Thresholds()
    return dataclasses.replace(t, **{name: type(getattr(t, name))(config[key]) for name, key in THRESHOLD_KEYS.items()
                                     if key in config})


def _marked() -> tuple[Thresholds, dict[str, str]]:
    """Thresholds each set to a value of its own that no rule holds otherwise (a number from 271800, a window
    from 271900s), and the text of each value -> its ``%(key)s`` slot."""
    marks, values = {}, {}
    for i, f in enumerate(dataclasses.fields(Thresholds)):
        if f.name not in THRESHOLD_KEYS:
            continue
        if f.type in ("str", str):
            values[f.name] = text = f"{_MARK_WINDOW + i}s"
        else:
            values[f.name] = _MARK_NUMBER + i
            text = f"{_MARK_NUMBER + i:g}"
        marks[text] = f"%({THRESHOLD_KEYS[f.name]})s"
    return dataclasses.replace(Thresholds(), **values), marks


def groups(config: dict, t: Thresholds | None = None) -> list[dict]:
    """The rule groups the mixin gives under ``config`` (``_config``): ``rules render``'s groups under the
    thresholds ``config`` sets, with every series selected by ``config["selector"]`` too, and the annotation
    ``runbook`` named ``runbook_url`` and pointing under ``config["runbookURLBase"]``."""
    t = dataclasses.replace(thresholds(config, t), runbook_base=config["runbookURLBase"])
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


def _slotted(text: str, marks: dict[str, str] | None = None) -> str:
    """``text`` as a jsonnet format string: its ``%`` doubled, each placeholder a ``%(key)s`` slot, and each
    threshold's mark (``_marked``) its slot."""
    text = text.replace("%", "%%")
    for key, mark in _SLOTS.items():
        text = text.replace(mark, f"%({key})s")
    for mark, slot in (marks or {}).items():
        text = re.sub(rf"(?<![\w.]){mark}(?!\w|\.\d)", slot, text)
    return text


FORMATTED = ("expr", "for")  # a rule's fields the libsonnet formats with _config, and every annotation


def _templates() -> list[dict]:
    """``groups`` with a slot for each ``_config`` value in ``expr``, ``for`` and the annotations (and only
    there)."""
    t, marks = _marked()
    out = []
    for g in groups(_SLOTS, t):
        rules = []
        for r in g["rules"]:
            r = {**r, **{k: _slotted(r[k], marks) for k in FORMATTED if k in r}}
            if "annotations" in r:
                r["annotations"] = {k: _slotted(v, marks) for k, v in r["annotations"].items()}
            rules.append(r)
        out.append({"name": g["name"], "rules": rules})
    text = strictjson.dumps(out)
    leftover = [g["name"] for g in out if "\x00" in strictjson.dumps(g)]
    assert not leftover, f"a _config placeholder outside the formatted fields in {leftover}"
    unused = [slot for slot in marks.values() if slot not in text]
    assert not unused, f"thresholds no rule reads: {unused}"
    left = [mark for mark in marks if mark.rstrip("s") in text]  # (as a plain substring: found anywhere)
    assert not left, f"a threshold's mark left unslotted: {left}"
    return out


def _json(doc) -> str:
    return strictjson.dumps(doc, indent=2, sort_keys=False) + "\n"


def files(t: Thresholds | None = None) -> dict[str, str]:
    """Each generated file of ``mixin/`` (path relative to the repository) and its text."""
    t = t or Thresholds()
    rendered = _templates()
    return {
        CONFIG: _json(default_config(t)),
        RULES: _json({"groups": [g for g in rendered if g["name"] == RECORDING_GROUP]}),
        ALERTS: _json({"groups": [g for g in rendered if g["name"] != RECORDING_GROUP]}),
        DASHBOARD: render_dashboard(t),  # grafana render's file, byte for byte
    }

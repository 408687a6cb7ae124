"""A stable metric family keeps its name, type and labels (collectors/export/metrics.py, STABLE): they are pinned in
stable_metrics.txt beside this file, and what the shipped alert rules and Grafana dashboard query is stable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collectors.export import metrics as M
from collectors.export.metricsdoc import exported_name

PINNED = Path(__file__).with_name("stable_metrics.txt")
HOW = ("a stable metric's name, type and labels change only through a deprecation cycle: export the new family "
       "beside the old one, say \"Deprecated: use <new>\" in the old one's help for at least one minor release and "
       "in CHANGELOG.md, then remove the old one and its line in stable_metrics.txt (collectors/export/metrics.py, "
       "above STABLE)")


def pinned(text: str) -> dict[str, tuple[str, frozenset[str]]]:
    """stable_metrics.txt's lines: exported name -> (type, labels); a malformed line fails naming it."""
    out = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        assert len(parts) in (2, 3), f"stable_metrics.txt line {number}: want 'name type labels', got {line!r}"
        out[parts[0]] = (parts[1], frozenset(parts[2].split(",")) if len(parts) == 3 else frozenset())
    return out


def registry(metrics: dict, stable: frozenset) -> dict[str, tuple[str, frozenset[str]]]:
    """The registry's stable families as stable_metrics.txt states them: by the registry's name (a counter's
    samples add ``_total``), label order no part of a series."""
    return {n: (kind, frozenset(labels)) for n, (kind, _, labels) in metrics.items() if n in stable}


def differences(want: dict, have: dict) -> list[str]:
    """Each way the registry's stable families differ from the pinned ones, said with what to do."""
    out = []
    for name, (kind, labels) in want.items():
        if name not in have:
            out.append(f"{name}: pinned stable, but the registry has no stable family of that name; {HOW}")
        elif have[name] != (kind, labels):
            now_kind, now_labels = have[name]
            out.append(f"{name}: pinned as {kind} with labels {sorted(labels)}, the registry has {now_kind} with "
                       f"labels {sorted(now_labels)}; {HOW}")
    for name in have.keys() - want.keys():
        out.append(f"{name}: stable in the registry but not pinned: add its line to stable_metrics.txt "
                   f"('{name} {have[name][0]} {','.join(sorted(have[name][1]))}')")
    return out


def test_every_stable_family_is_pinned_as_it_is():
    problems = differences(pinned(PINNED.read_text()), registry(M.METRICS, M.STABLE))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("change, said", [
    (lambda m: m.update({M.SRC_UP: ("gauge", m[M.SRC_UP][1], ("cluster", "source"))}), "deprecation cycle"),
    (lambda m: m.update({M.P_CAUSE: ("counter",) + m[M.P_CAUSE][1:]}), "the registry has counter"),
    (lambda m: m.pop(M.BROKER_DEAD), "no stable family of that name"),
])
def test_a_changed_stable_family_fails_saying_how_to_deprecate(change, said):
    """The comparison catches a dropped label, a changed type and a removed family (so the test above can fail)."""
    changed = dict(M.METRICS)
    change(changed)
    problems = differences(pinned(PINNED.read_text()), registry(changed, M.STABLE))
    assert len(problems) == 1 and said in problems[0], problems


def test_a_family_made_stable_must_be_pinned():
    problems = differences(pinned(PINNED.read_text()), registry(M.METRICS, M.STABLE | {M.P_DETAIL_PENDING}))
    assert problems == [f"{M.P_DETAIL_PENDING}: stable in the registry but not pinned: add its line to "
                        f"stable_metrics.txt ('{M.P_DETAIL_PENDING} gauge broker,cluster,partition,topic')"]


def test_what_the_rules_and_the_dashboard_query_is_stable():
    """The shipped alert rules and Grafana dashboard are what users copy and keep across upgrades: a family
    they query may not be renamed under them."""
    from alerts.grafana import render_dashboard
    from alerts.render import render_rules

    text = render_rules() + render_dashboard()
    queried = {n for n, (kind, _, _) in M.METRICS.items()
               if re.search(re.escape(exported_name(n, kind)) + r"\b", text)}
    assert len(queried) > 30  # the search finds them at all
    assert not {n for n in queried if M.stability(n) != M.STABLE_LEVEL}, "queried but experimental"


def test_every_family_has_one_of_the_two_levels():
    """(Stability is documentation, not a label: the goldens under tests/golden pin that the exposition did not
    change with it.)"""
    assert {M.stability(n) for n in M.METRICS} == {M.STABLE_LEVEL, M.EXPERIMENTAL_LEVEL}
    assert M.stability(M.SRC_UP) == M.STABLE_LEVEL and M.stability(M.P_DETAIL_PENDING) == M.EXPERIMENTAL_LEVEL

"""The reference pages under docs/ are generated from the code (``python -m cli.docgen --write``): each equals
what its generator gives now, so a metric, a config key, a flag or an alert changed in the code and not on the
page fails here (``DOCS_UPDATE=1`` rewrites the pages). And each generator follows what it documents: a changed
registry, schema, parser or rule table gives a different page (the checks can fail)."""

from __future__ import annotations

import argparse
import copy
import dataclasses
import os

import pytest
import yaml

from cli import docgen

ROOT = docgen.ROOT


@pytest.mark.parametrize("page", list(docgen.PAGES))
def test_each_page_is_its_generators_output(page):
    current, want = docgen.wanted(page)
    if os.environ.get("DOCS_UPDATE") == "1" and current != want:
        (ROOT / page).write_text(want)
        current = want
    assert current == want, f"{page} differs from the code: regenerate it with `python -m cli.docgen --write` " \
                            "(or DOCS_UPDATE=1)"


def test_docgen_check_names_a_stale_page(tmp_path, monkeypatch):
    """``--check``'s list and ``--write``: a page edited by hand (or not regenerated) is stale, one not written
    yet too; written, neither is (the generators themselves are the other tests' business)."""
    monkeypatch.setattr(docgen, "PAGES", {"docs/a.md": lambda now: now.split("<!-- end -->")[0] + "<!-- end -->\n",
                                          "docs/b.yaml": lambda now: "b: 1\n"})
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n<!-- end -->\n")
    assert docgen.stale(tmp_path) == ["docs/b.yaml"]
    (tmp_path / "docs" / "a.md").write_text("# A\n<!-- end -->\nedited by hand\n")
    assert docgen.stale(tmp_path) == ["docs/a.md", "docs/b.yaml"]
    assert docgen.write(tmp_path) == ["docs/a.md", "docs/b.yaml"] and docgen.stale(tmp_path) == []
    assert (tmp_path / "docs" / "a.md").read_text() == "# A\n<!-- end -->\n"
    monkeypatch.setattr(docgen, "ROOT", tmp_path)
    assert docgen.main(["--check"]) == 0 and docgen.main(["--bogus"]) == 2


# --- metrics ---

@pytest.mark.parametrize("name, kind, help_, unit", [
    ("x_partition_next_delete_horizon_timestamp_seconds", "gauge", "Unix time of", "Unix time (s)"),
    ("x_partition_eligible_seconds", "gauge", "How long", "seconds"),
    ("x_broker_cleaner_io_bytes_total", "counter", "Bytes", "bytes"),
    ("x_cleaner_log_learned_throughput_bytes_per_second", "gauge", "The rate", "bytes/s"),
    ("x_partition_cleanable_ratio", "gauge", "cleanableBytes / ...", "ratio (0..1)"),
    ("x_source_last_error_info", "gauge", "1, labelled with", "info (1; the labels say)"),
    ("x_source_up", "gauge", "1 when the source's last refresh succeeded.", "1 up / 0 down"),
    ("x_partition_log_end_offset", "gauge", "Next offset", "offset"),
    ("x_partition_keyless_records", "gauge", "Records on disk", "records"),
    ("x_source_errors_total", "counter", "Refresh errors", "count"),
    ("x_broker_cleaner_enabled", "gauge", "log.cleaner.enable: 1 when the broker runs", "1 / 0 (flag)"),
    ("x_partition_uncleanable", "gauge", "1 while log-cleaner.log says", "1 / 0 (flag)"),
    ("x_partition_tombstones", "gauge", "Tombstones on disk", "count"),
])
def test_a_metrics_unit_is_read_from_its_name(name, kind, help_, unit):
    from collectors.export.metricsdoc import unit as unit_of

    assert unit_of(name, kind, help_) == unit


def test_the_metrics_table_follows_the_registry(monkeypatch):
    from collectors.export import metricsdoc

    before = metricsdoc.markdown_table()
    monkeypatch.setitem(metricsdoc.METRICS, "kafka_compaction_test_widget_bytes", ("gauge", "A widget's size.",
                                                                                   ("cluster",)))
    after = metricsdoc.markdown_table()
    assert after != before
    assert "`kafka_compaction_test_widget_bytes`\n:   *gauge, bytes; labels: cluster; experimental.* A widget's size." in after


# --- configuration ---

def _config_classes():
    """Config and every dataclass under it (a section, or the items of a list of mappings)."""
    from typing import get_args, get_type_hints

    from monitor.settings.config import Config

    seen, todo = [], [Config]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        for tp in get_type_hints(cls).values():
            todo += [t for t in (tp, *get_args(tp)) if dataclasses.is_dataclass(t) and t not in seen + todo]
    return seen


def test_every_config_key_says_what_it_does_once_and_the_schema_carries_it():
    from monitor.settings.configschema import dataclass_schema

    classes = _config_classes()
    assert {c.__name__ for c in classes} >= {"Config", "Thresholds", "Intervals", "Timeouts", "ClusterConfig",
                                             "BrokerConfig"}
    for cls in classes:
        props = dataclass_schema(cls)["properties"]
        for f in dataclasses.fields(cls):
            doc = f.metadata.get("doc")
            assert doc and doc.strip(), f"{cls.__name__}.{f.name} has no description (monitor.settings.config.key)"
            assert props[f.name]["description"] == doc


def test_config_check_accepts_the_reference_file_as_it_is(capsys):
    from cli.main import main

    path = ROOT / "docs" / "reference-config.yaml"
    assert main(["config", "check", str(path)]) == 0
    assert "valid" in capsys.readouterr().out


def test_the_reference_file_holds_every_default():
    """Read back, the file is the defaults (its one example cluster and broker at theirs): no value in it is
    a guess at a default the code does not have."""
    from monitor.settings.config import BrokerConfig, ClusterConfig, Config, parse_config

    data = yaml.safe_load((ROOT / "docs" / "reference-config.yaml").read_text())
    assert parse_config(data) == Config(clusters=(ClusterConfig(brokers=(BrokerConfig(id="1"),)),))


def test_the_config_pages_follow_the_schema():
    from monitor.settings.configdoc import markdown_page, reference_yaml
    from monitor.settings.configschema import config_schema

    schema = copy.deepcopy(config_schema())
    before_yaml, before_page = reference_yaml(schema), markdown_page(schema)
    schema["properties"]["thresholds"]["properties"]["lagging_for"]["default"] = "45m"
    schema["properties"]["brand_new_key"] = {"type": "integer", "shape": "a whole number", "default": 3,
                                             "description": "A key added to the schema."}
    after_yaml, after_page = reference_yaml(schema), markdown_page(schema)
    assert after_yaml != before_yaml and after_page != before_page
    assert "  lagging_for: 45m\n" in after_yaml and "# A key added to the schema." in after_yaml
    assert "| `brand_new_key` | a whole number | `3` | A key added to the schema. |" in after_page


def test_the_configuration_page_links_the_file_mkdocs_copies():
    page = (ROOT / "docs" / "reference" / "configuration.md").read_text()
    assert "](../reference-config.yaml)" in page and (ROOT / "docs" / "reference-config.yaml").is_file()


# --- command line ---

def test_the_cli_page_lists_every_subcommand_and_flag_help_shows():
    from cli.audit_cmd import audit_parser
    from cli.clidoc import _subcommands
    from cli.main import build_parser

    page = (ROOT / "docs" / "reference" / "cli.md").read_text()

    def check(parser):
        assert f"## {parser.prog}\n" in page
        for action in parser._actions:
            if action.help is not argparse.SUPPRESS and not isinstance(action, argparse._SubParsersAction):
                for option in action.option_strings:
                    assert option in page, f"{parser.prog}: {option} is not on the page"
        for name, _, sub in _subcommands(parser):
            check(audit_parser() if name == "audit" else sub)

    check(build_parser())
    assert "## compaction-monitor audit\n" in page and "`--input PATH\\|TOPIC`" in page  # the audit's own parser


def _toy_parser(extra: bool = False) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tool", description="A tool.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run it", epilog="examples:\n  tool run --speed 3\n")
    run.add_argument("--speed", type=int, default=2, help="how fast (default: %(default)s)")
    run.add_argument("--old-speed", dest="speed", type=int, help=argparse.SUPPRESS)  # a hidden alias
    sub.add_parser("walk", help=argparse.SUPPRESS)  # a hidden alias of a subcommand
    if extra:
        run.add_argument("--colour", choices=["red", "blue"], default="red", help="the colour")
    return p


def test_the_cli_page_follows_the_parser():
    from cli.clidoc import markdown_page

    before, after = markdown_page(_toy_parser(), {}), markdown_page(_toy_parser(extra=True), {})
    assert after != before
    assert "| `--colour {red,blue}` | `red` | the colour |" in after
    assert "| `--speed SPEED` | `2` | how fast (default: 2) |" in before
    assert "tool run --speed 3" in before  # the examples (epilog)
    assert "--old-speed" not in before and "## tool walk" not in before and "walk" not in before


def test_the_cli_page_does_not_depend_on_the_terminal(monkeypatch):
    from cli.clidoc import markdown_page

    monkeypatch.setenv("COLUMNS", "40")
    narrow = markdown_page(_toy_parser(), {})
    monkeypatch.setenv("COLUMNS", "250")
    assert markdown_page(_toy_parser(), {}) == narrow and os.environ["COLUMNS"] == "250"


# --- alerts ---

def test_the_alerts_page_has_every_rule_and_its_runbook_section():
    from alerts.alertsdoc import RUNBOOK, runbook_sections
    from alerts.render import expr
    from monitor.contract.rules import RULES
    from monitor.settings.config import Thresholds

    page = (ROOT / "docs" / "reference" / "alerts.md").read_text()
    _, sections = runbook_sections(RUNBOOK.read_text())
    for r in RULES:
        assert f"## {r.alert}\n" in page and expr(r, Thresholds()) in page and sections[r.alert] in page


def test_the_alerts_page_follows_the_rule_table_thresholds_and_runbook():
    from alerts.alertsdoc import RUNBOOK, markdown_page
    from monitor.contract.rules import RULES
    from monitor.settings.config import Thresholds

    runbook = RUNBOOK.read_text()
    page = markdown_page(runbook)
    assert markdown_page(runbook, rules=RULES[:-1]) != page
    assert markdown_page(runbook, t=Thresholds(lagging_for="45m")) != page
    assert markdown_page(runbook.replace("**Means.** A log cleaner thread died", "**Means.** A thread died")) != page
    with pytest.raises(ValueError, match="RUNBOOK.md has no section for LogCleanerThreadDead"):
        markdown_page(runbook.replace("## LogCleanerThreadDead", "## SomethingElse"))

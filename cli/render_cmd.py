"""``compaction-monitor rules render`` and ``grafana render``: the alert rules (a Prometheus rule file with
its promtool tests, or the same groups as a Prometheus Operator PrometheusRule) and the Grafana dashboard
rendered from the rule and panel tables under monitor.yaml's thresholds, printed or written whole
(``cli.outputs``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli.common import config_error as _config_error
from cli.common import err as _err


def cmd_rules(args: argparse.Namespace) -> int:
    from monitor.settings.config import ConfigError, load_config

    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        return _config_error(exc)
    from alerts.promtool_tests import render_tests
    from alerts.render import render_prometheusrule, render_rules

    from cli.outputs import OutputError, write_all

    if args.tests and args.format == "prometheusrule":
        _err("rules: --tests goes with --format rules (promtool tests a rule file, not a PrometheusRule)")
        return 2
    text = (render_prometheusrule if args.format == "prometheusrule" else render_rules)(cfg.thresholds)
    files = [("--out", args.out, text)] if args.out else []
    if args.tests:
        rule_file = Path(args.out).name if args.out else "compaction.rules.yml"
        files.append(("--tests", args.tests, render_tests(cfg.thresholds, rule_file=rule_file)))
    try:
        write_all(files)  # every destination checked first; each written whole
    except OutputError as exc:
        _err(f"rules: {exc}")
        return 2
    if not args.out:
        sys.stdout.write(text)
    for flag, path, _ in files:
        print(f"wrote {path}" + (f" (run: promtool test rules {path})" if flag == "--tests" else ""), file=sys.stderr)
    return 0


def cmd_grafana(args: argparse.Namespace) -> int:
    from monitor.settings.config import ConfigError, load_config

    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        return _config_error(exc)
    from alerts.grafana import render_dashboard

    from cli.outputs import OutputError, write_all

    text = render_dashboard(cfg.thresholds)
    if not args.out:
        sys.stdout.write(text)
        return 0
    try:
        write_all([("--out", args.out, text)])
    except OutputError as exc:
        _err(f"grafana: {exc}")
        return 2
    print(f"wrote {args.out}", file=sys.stderr)
    return 0

"""``compaction-monitor dashboard`` and ``demo``: the Streamlit dashboard, served by the one command
both use (``cli.dashboard_launch.dashboard_command``), and the demo that runs it beside a local broker
(``cli/demo.py``, imported when the demo runs)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli.common import config_error as _config_error
from cli.common import err as _err
from cli.dashboard_launch import dashboard_command


def cmd_dashboard(args: argparse.Namespace) -> int:
    import os
    import subprocess

    env = dict(os.environ)
    if args.config:
        from monitor.settings.config import ConfigError, load_config

        try:
            load_config(args.config)
        except ConfigError as exc:
            return _config_error(exc)
        env["COMPACTION_MONITOR_CONFIG"] = str(Path(args.config).resolve())
    for flag, var in (("prometheus_url", "COMPACTION_MONITOR_PROMETHEUS_URL"),
                      ("collector_url", "COMPACTION_MONITOR_COLLECTOR_URL"), ("audit_dir", "COMPACTION_MONITOR_AUDIT_DIR")):
        if getattr(args, flag):
            env[var] = getattr(args, flag)
    print(f"dashboard: http://{args.address}:{args.port}/", file=sys.stderr)
    try:
        return subprocess.run(dashboard_command(args.port, args.address, args.log_level or "warning"),
                              env=env).returncode
    except KeyboardInterrupt:
        return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from cli.demo import run_demo
    from dashboards.auditruns import audit_run, records
    from localkafka.broker import BrokerError

    def partitions(run: Path) -> list[dict]:  # an audit run's partitions, read as the Audit page reads them
        return records(audit_run(str(run.parent), run.name)["partitions"])

    try:
        return run_demo(Path(args.dir), args.duration, fast=args.fast, partitions=partitions)
    except BrokerError as exc:  # the broker would not start (jars, ports, Java): said in one line, as `broker`
        _err(f"demo: {exc}")
        return 1

"""A real collector scraped by a real Prometheus that evaluates the rendered alert rules: the stack the
alert, fault-suite and Grafana tests run their checks against (each its own cluster config)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import yaml

from alerts.render import render_rules
from monitor.settings.config import parse_config
from procs import free_port, process

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def collector_and_prometheus(cfg: dict, tmp: Path, prometheus: str,
                             extra_targets: tuple[str, ...] = ()) -> Iterator[str]:
    """``collect`` over ``cfg`` (monitor.yaml; its ``listen.port`` is the collector's) and Prometheus
    scraping it every second with the rules rendered from ``cfg``'s thresholds, from the deployed
    ``deploy/prometheus.yml`` less its Alertmanager; both stopped on exit. Yields Prometheus' base URL.
    ``extra_targets``: more host:port targets of the same job (a port nobody serves: a collector down)."""
    cport, pport = cfg["listen"]["port"], free_port()
    (tmp / "monitor.yaml").write_text(yaml.safe_dump(cfg))
    rules = tmp / "compaction.rules.yml"
    rules.write_text(render_rules(parse_config(cfg).thresholds))
    prom_cfg = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text())
    prom_cfg["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    prom_cfg["rule_files"] = [str(rules)]
    prom_cfg.pop("alerting")
    prom_cfg["scrape_configs"][0]["static_configs"] = [{"targets": [f"127.0.0.1:{cport}", *extra_targets]}]
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(prom_cfg))
    # a child: a serving collector, scraped until the stack stops
    collector = [sys.executable, "-m", "cli", "collect", "--config", str(tmp / "monitor.yaml")]
    prom_cmd = [prometheus, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{pport}", "--log.level=warn"]
    prom = f"http://127.0.0.1:{pport}"
    with process(collector, tmp / "collector.log", f"http://127.0.0.1:{cport}/metrics"), \
            process(prom_cmd, tmp / "prometheus.log", f"{prom}/-/ready"):
        yield prom

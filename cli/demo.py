"""``compaction-monitor demo``: a real broker, compacted topics of different health, a workload,
the collector, Prometheus with the alert rules, a first Spark audit and the dashboard.

Part of the command line package (it wires the local broker, the collector, the alert rules and the
dashboard together, each started as its own process), so it may import several edges and Kafka's
client; the tests drive the same scenario.

Topics (named from one prefix, ``demo`` here; the tests pass their own, see ``Names``):
* ``demo.healthy-changelog``: a changelog the cleaner keeps clean for the whole demo: written once per key
  first, then updated at its own slow rate, with a max.compaction.lag.ms that has the cleaner over it long
  before its cleanable ratio could pass its min.cleanable.dirty.ratio (``healthy_worst_case`` has the
  arithmetic; the monitor starts once its first clean is done, so a never-cleaned log's ratio of 1.0 is
  never shown for it);
* ``demo.lagging-cdc``: kept dirty by a long ``min.compaction.lag.ms`` (held back: uncleaned, nothing
  cleanable, so CompactionLagging rightly stays quiet; ``compaction_blocked`` names the reason);
* ``demo.tombstone-flood``: waves of deletes, short ``delete.retention.ms``;
* consumer group ``demo-reporting`` reads ``demo.tombstone-flood`` once, commits and stops
  (ConsumerMayMissTombstones fires once its lag passes ``delete.retention.ms``);
* ``demo.eos-changelog``: an exactly-once producer's transactions, committed and (every fifth) aborted,
  and on partition 0 one transaction no coordinator will ever end (KIP-664: a transactional batch of a
  producer id the coordinator never gave out, which a broker the demo starts accepts because its
  ``transaction.partition.verification.enable`` is off). It holds the partition's last stable offset,
  and the cleaner with it, until ``kafka-transactions.sh abort``; once older than the broker's
  ``transaction.max.timeout.ms`` (lowered by the demo) it is hanging;
* ``demo.cleaner-backlog``: a burst of keyed updates (``Timing.backlog_bytes``, most of it superseded),
  held from the cleaner by ``min.cleanable.dirty.ratio=1.0`` (Kafka's eligibility test is a strict
  ``cleanableRatio > min.cleanable.dirty.ratio``, LogCleanerManager; a never-cleaned log's ratio is 1.0)
  until the first audit has read it, so that audit shows real reclaimable bytes; then released to a
  cleaner throttled by ``log.cleaner.io.max.bytes.per.second`` (a dynamic config set on the demo's broker
  alone), so the estimate is seconds. A second audit once the cleaner has been over it pairs the two
  (``monitor.verdicts.accuracy``): predicted against reclaimed, on the dashboard's Audit page.

The scenario (topics, timing, workloads, faults) is ``cli/demo_scenario.py``; this module starts and
stops what runs around it (through ``localkafka.processes``) and tells the user where to look.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from boundedhttp import get_text
from cli.dashboard_launch import dashboard_command
from cli.demo_scenario import (DEMO, FAST, FLOOD, GROUP, LAGGING, RELEASED, Names, Timing, TransactionalWorkload,
                               Workload, broker_config, create_topics, leave_hanging_transaction, prefill_healthy, say,
                               set_backlog_ratio, stopped_consumer, throttle_cleaner, write_backlog)
from monitor.contract.rules import ALERT
from monitor.contract.units import bytes_iec, duration_ms, duration_s, rate

ROOT = Path(__file__).resolve().parent.parent


def wait_cleaned(log_dir: str, names: Names, targets: dict, timeout: float, stop: threading.Event) -> bool:
    """Until the cleaner's checkpoint (cleaner-offset-checkpoint) of every partition of ``targets`` reaches its
    offset (for the backlog, the first audit's first uncleanable offset), ``timeout`` passes or ``stop`` is set."""
    from monitor.kafka.checkpoint import CheckpointError, parse_checkpoint

    path = Path(log_dir) / "cleaner-offset-checkpoint"
    deadline = time.monotonic() + timeout
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            got = parse_checkpoint(path.read_text(), str(path)) if path.exists() else {}
        except (CheckpointError, OSError):
            got = {}  # being rewritten: read it again
        if all(got.get(tp, -1) >= off for tp, off in targets.items()):
            return True
        stop.wait(2)
    return False


def audits_with_release(state, audit_dir: Path, log: Path, t: Timing, names: Names, stop: threading.Event,
                        partitions) -> None:
    """The first audit over the held backlog; then the backlog released to the throttled cleaner; once
    the cleaner has been over it, a second audit, and the two compared (``monitor.verdicts.accuracy``).
    ``partitions``: run folder -> its partition table as rows (the command line passes the Audit page's
    reader, ``cmd_demo``)."""
    try:
        _audits_with_release(state, audit_dir, log, t, names, stop, partitions)
    except Exception as exc:  # noqa: BLE001 - the demo goes on without its audits; the log says why
        say(f"the audits stopped: {exc}")


def _known_sum(rows, column: str) -> float:
    """The sum over the rows that have the figure: a partition whose topic config the audit could not
    read has it unknown (None), and is named apart by ``_unknown_note``, never counted as 0."""
    return sum(r[column] for r in rows if r[column] is not None)


def _unknown_note(rows) -> str:
    n = sum(1 for r in rows if r["reclaimable_bytes"] is None)
    return f" ({n} partition(s) unknown: their topic config could not be read)" if n else ""


def _audits_with_release(state, audit_dir: Path, log: Path, t: Timing, names: Names, stop: threading.Event,
                         partitions) -> None:
    from monitor.verdicts.accuracy import compare_runs, totals

    def latest() -> Path | None:
        runs = sorted(p for p in audit_dir.glob("run-*") if (p / "_SUCCESS").exists())
        return runs[-1] if runs else None

    if run_audit(state, audit_dir, log, stop) not in (0, 1) or (first := latest()) is None:  # 1: faults listed
        say(f"the first audit failed: see {log}")
        return
    rows = partitions(first)
    backlog = [r for r in rows if r["topic"] == names.backlog]
    say(f"first audit: {bytes_iec(_known_sum(rows, 'reclaimable_bytes'))} reclaimable "
        f"({bytes_iec(_known_sum(backlog, 'reclaimable_bytes'))} in {names.backlog}), "
        f"{duration_s(_known_sum(backlog, 'estimated_clean_seconds'))} estimated cleaning time{_unknown_note(rows)}; "
        f"releasing {names.backlog} to the cleaner (throttled to {rate(t.cleaner_throttle_bytes_per_second)})")
    set_backlog_ratio(state.bootstrap, names, RELEASED)
    targets = {(r["topic"], r["partition"]): r["first_uncleanable_offset"] for r in backlog}
    if not wait_cleaned(state.log_dir, names, targets, t.cleaned_within_s, stop):
        if not stop.is_set():
            say(f"the cleaner has not been over {names.backlog} within {duration_s(t.cleaned_within_s)}: no second audit")
        return
    say("the cleaner has been over the backlog: a second audit, to compare with the first ...")
    if run_audit(state, audit_dir, log, stop) not in (0, 1) or (second := latest()) is None or second == first:
        say(f"the second audit failed: see {log}")
        return
    tot = totals(compare_runs(backlog, partitions(second)))
    ratio = "" if tot.error_ratio is None else f", {tot.error_ratio * 100:+.2g} %"
    say(f"predicted {bytes_iec(tot.predicted_bytes)} reclaimable in {names.backlog}, the broker reclaimed "
        f"{bytes_iec(tot.actual_bytes)} (error {'+' if tot.error_bytes >= 0 else ''}{bytes_iec(tot.error_bytes)}"
        f"{ratio}): the Audit page shows it per partition")


def monitor_config(state, t: Timing, port: int, prometheus_url: str | None, audit_dir: Path, state_dir: Path) -> dict:
    """The collector's and the dashboard's monitor.yaml; every folder it names is under the demo's
    ``--dir`` (``state_dir`` too: else the collector's summary cache would go to its default,
    /var/lib/compaction-monitor or ~/.local/state, outside what the demo says it keeps)."""
    return {
        "listen": {"address": "127.0.0.1", "port": port},
        "clusters": [{"name": "demo", "bootstrap_servers": state.bootstrap,
                      "brokers": [{"id": state.node_id, "jmx_url": state.jmx_url, "log_dirs": [state.log_dir]}]}],
        "intervals": {"jmx": t.scrape_s, "log_dirs": t.scrape_s, "admin": t.scrape_s * 2,
                      "consumer_groups": t.scrape_s * 2},
        "thresholds": {"lagging_for": t.lagging_for, "consumer_lag_for": t.consumer_lag_for,
                       "monitor_down_for": "1m"},
        "prometheus_url": prometheus_url,
        "collector_url": f"http://127.0.0.1:{port}/metrics",
        "audit_dir": str(audit_dir),
        "state_dir": str(state_dir),
        # a handful of partitions, each showing a fault or its near miss: every series of each (the
        # collector's default, granularity topic, keeps 4 series of a healthy partition)
        "granularity": "partition",
    }


def prometheus_config(rules: Path, collector_port: int, t: Timing) -> dict:
    import yaml

    cfg = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text())
    cfg["global"] = {"scrape_interval": f"{t.scrape_s}s", "evaluation_interval": f"{t.scrape_s}s"}
    cfg["rule_files"] = [str(rules)]
    cfg.pop("alerting", None)
    cfg["scrape_configs"][0]["static_configs"] = [{"targets": [f"127.0.0.1:{collector_port}"]}]
    return cfg


@dataclass
class Running:
    config_path: Path
    collector_url: str
    prometheus_url: str | None
    dashboard_url: str | None
    audit_dir: Path


@contextmanager
def stack(state, workdir: Path, t: Timing, *, prometheus: bool = True, dashboard: bool = True):
    """Collector, Prometheus (when installed) and the dashboard over a running broker."""
    import yaml

    from alerts.render import render_rules
    from monitor.settings.config import parse_config

    from localkafka.processes import free_port, process

    workdir.mkdir(parents=True, exist_ok=True)
    cport = free_port()
    prom_bin = shutil.which("prometheus") if prometheus else None
    pport = free_port() if prom_bin else None
    prom_url = f"http://127.0.0.1:{pport}" if prom_bin else None
    audit_dir = workdir / "audits"
    audit_dir.mkdir(exist_ok=True)
    cfg = monitor_config(state, t, cport, prom_url, audit_dir, workdir / "state")
    cfg_path = workdir / "monitor.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    with ExitStack() as es:
        say(f"starting the collector on :{cport}")
        es.enter_context(process([sys.executable, "-m", "cli", "collect", "--config", str(cfg_path)],
                                 workdir / "collector.log", f"http://127.0.0.1:{cport}/metrics"))
        if prom_bin:
            rules = workdir / "compaction.rules.yml"
            rules.write_text(render_rules(parse_config(cfg).thresholds))
            (workdir / "prometheus.yml").write_text(yaml.safe_dump(prometheus_config(rules, cport, t)))
            say(f"starting Prometheus on :{pport} with the alert rules")
            es.enter_context(process([prom_bin, f"--config.file={workdir / 'prometheus.yml'}",
                                      f"--storage.tsdb.path={workdir / 'prometheus-data'}",
                                      f"--web.listen-address=127.0.0.1:{pport}", "--log.level=warn"],
                                     workdir / "prometheus.log", f"{prom_url}/-/ready"))
        elif prometheus:
            say("Debian's prometheus is not installed: the dashboard reads the collector directly (no history)")
        dash_url = None
        if dashboard:
            dport = free_port()
            dash_url = f"http://127.0.0.1:{dport}"
            say(f"starting the dashboard on :{dport}")
            es.enter_context(process(dashboard_command(dport, "127.0.0.1"), workdir / "dashboard.log",
                                     f"{dash_url}/_stcore/health", timeout=90,
                                     env={"COMPACTION_MONITOR_CONFIG": str(cfg_path),
                                          "COMPACTION_MONITOR_REFRESH": str(max(t.scrape_s * 2, 5))}))
        yield Running(cfg_path, f"http://127.0.0.1:{cport}/metrics", prom_url, dash_url, audit_dir)


def run_audit(state, audit_dir: Path, log: Path, stop: threading.Event | None = None) -> int:
    """An audit of the broker's log dir, with its log-cleaner.log for calibration; stopped (its process
    group) when ``stop`` is set first."""
    cmd = [sys.executable, "-m", "cli", "audit", "--input", state.log_dir, "--out", str(audit_dir),
           "--master", "local[2]", "--bootstrap-server", state.bootstrap]
    if Path(state.cleaner_log).exists():
        cmd += ["--cleaner-log", str(state.cleaner_log)]
    from localkafka.processes import spawn, stop as stop_process

    p = spawn(cmd, log)
    while p.poll() is None:
        if stop is not None and stop.wait(1):
            stop_process(p, grace=20)
            return 130
        elif stop is None:
            p.wait()
    return p.returncode


# Where Prometheus serves its alerts page: the React UI's ``/alerts`` (Prometheus 3, and 2.x built with its
# React assets), else the classic UI's ``/classic/alerts`` (Debian's 2.x packages, built without the React
# UI, answer 404 on ``/alerts``). Asked of the Prometheus that runs, in this order: the version alone does
# not say whether its React UI was built in.
ALERTS_PAGES = ("/alerts", "/classic/alerts")


def alerts_page(prom_url: str) -> str | None:
    """The URL of the running Prometheus' alerts page that answers 200; None when none does."""
    from boundedhttp import FetchError, get
    from localkafka.processes import MAX_PAGE_BYTES

    for path in ALERTS_PAGES:
        try:
            if get(prom_url + path, deadline=5, max_bytes=MAX_PAGE_BYTES).status == 200:
                return prom_url + path
        except (FetchError, OSError):
            continue
    return None


def alerts(prom_url: str) -> list[dict]:
    from localkafka.processes import MAX_PAGE_BYTES

    return json.loads(get_text(f"{prom_url}/api/v1/alerts", deadline=5, max_bytes=MAX_PAGE_BYTES))["data"]["alerts"]


# --------------------------------------------------------------------------- demo


def _hanging_note(state, hanging: tuple[int, int] | None, t: Timing) -> str:
    if not hanging:
        return ""
    return (f"""
  {DEMO.eos}-0 holds an open transaction of producer {hanging[0]} from offset {hanging[1]}: its last
  stable offset, and the cleaner, stay there; hanging once older than transaction.max.timeout.ms
  ({duration_ms(t.transaction_max_timeout_ms)} on a broker the demo starts). The fix, as for a real one:
    kafka-transactions.sh --bootstrap-server {state.bootstrap} abort --topic {DEMO.eos} --partition 0 \\
        --start-offset {hanging[1]}""")


def first_clean_within(t: Timing) -> float:
    """How long the demo waits for the healthy topic's first clean: its first segment rolls after
    segment.ms, the cleaner looks within log.cleaner.backoff.ms, and is given a minute more."""
    return (t.segment_ms + t.cleaner_backoff_ms) / 1000 + 60


def _prometheus_line(prom_url: str | None) -> str:
    if prom_url is None:
        return "(not installed)"
    page = alerts_page(prom_url)
    return page or f"{prom_url}  (no alerts page answered at {' or '.join(ALERTS_PAGES)}: its API is /api/v1/alerts)"


def run_demo(directory: Path, duration: float | None, fast: bool = False, *, partitions) -> int:
    """The demo; ``partitions``: how to read an audit run's partition table (see ``audits_with_release``)."""
    from localkafka import broker

    t = FAST if fast else Timing()
    directory = directory.resolve()
    broker_dir = directory / "broker"
    state = broker.read_state(broker_dir)
    started_broker = False
    if state is None or not broker.is_alive(state.pid):
        say("starting a local Apache Kafka broker (KRaft) ...")
        state = broker.start(broker_dir, extra_config=broker_config(t), progress=say)
        started_broker = True
    workload = eos = audit_thread = None
    stop = threading.Event()
    audit_dir, audit_log = directory / "run" / "audits", directory / "run" / "audit.log"
    try:
        say("creating compacted topics: healthy, lagging (min.compaction.lag.ms), tombstone flood, exactly-once")
        create_topics(state.bootstrap, t)
        healthy_written = prefill_healthy(state.bootstrap, t)
        throttle_cleaner(state.bootstrap, state.node_id, t.cleaner_throttle_bytes_per_second)
        say(f"writing {bytes_iec(t.backlog_bytes)} of updates to {DEMO.backlog}, held from the cleaner "
            f"(throttled to {rate(t.cleaner_throttle_bytes_per_second)}) until the first audit")
        write_backlog(state.bootstrap, t)
        say("running a first Spark audit in the background ...")
        audit_dir.mkdir(parents=True, exist_ok=True)
        audit_thread = threading.Thread(target=audits_with_release,
                                        args=(state, audit_dir, audit_log, t, DEMO, stop, partitions), daemon=True)
        audit_thread.start()  # now: Spark starts while the rest comes up
        hanging = leave_hanging_transaction(state.bootstrap)
        if hanging:
            say(f"left a transaction of producer {hanging[0]} open on {DEMO.eos}-0 from offset {hanging[1]}")
        workload = Workload(state.bootstrap, t)
        workload.start()
        eos = TransactionalWorkload(state.bootstrap, t)
        eos.start()
        time.sleep(2)
        say(f"consumer group {GROUP} reads {FLOOD} once, commits, and stops")
        stopped_consumer(state.bootstrap)
        # Until its first clean the healthy topic is a never-cleaned log (Kafka's cleanable ratio 1.0): the
        # monitor starts once the cleaner has been over it, so what it shows of that topic is its steady state
        say(f"waiting for the cleaner's first pass over {DEMO.healthy} ...")
        if not wait_cleaned(state.log_dir, DEMO, healthy_written, first_clean_within(t), stop) and not stop.is_set():
            say(f"the cleaner has not been over {DEMO.healthy} within {duration_s(first_clean_within(t))}: "
                "it may show as lagging until it has")
        with stack(state, directory / "run", t) as run:
            print(f"""
  Kafka bootstrap      {state.bootstrap}
  Broker JMX metrics   {state.jmx_url}
  Collector metrics    {run.collector_url}
  Prometheus           {_prometheus_line(run.prometheus_url)}
  Dashboard            {run.dashboard_url}
  Audit reports        {run.audit_dir}  (first one in about a minute, a second once the cleaner has
                       been over {DEMO.backlog}: the Audit page compares them; log: {audit_log})
  Broker logs          {state.logs_dir}

  Within a few minutes: {LAGGING} shows as held back by min.compaction.lag.ms and {GROUP} as at
  risk of missing tombstones ({ALERT.ConsumerMayMissTombstones} fires).{_hanging_note(state, hanging, t)}
  Press Ctrl-C to stop everything this demo started.
""", file=sys.stderr, flush=True)
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: stop.set())
            stop.wait(duration)
            say("stopping ...")
    finally:
        stop.set()  # an audit under way is stopped too
        if audit_thread is not None:
            audit_thread.join(30)
        if workload is not None:
            workload.stop()
        if eos is not None:
            eos.stop()
        if started_broker:
            broker.stop(broker_dir, progress=say)
    say(f"stopped. Data kept in {directory} (broker data and logs, audits, Prometheus data, process logs).")
    return 0

"""``compaction-monitor demo``: a real broker, compacted topics of different health, a workload,
the collector, Prometheus with the alert rules, a first Spark audit and the dashboard.

Part of the command line package (it wires the local broker, the collector, the alert rules and the
dashboard together, each started as its own process), so it may import several edges and Kafka's
client; the tests drive the same scenario.

Topics (named from one prefix, ``demo`` here; the tests pass their own, see ``Names``):
* ``demo.healthy-changelog``: a changelog the cleaner keeps clean;
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
  (``monitor.accuracy``): predicted against reclaimed, on the dashboard's Audit page.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from boundedhttp import FetchError, get, get_text

ROOT = Path(__file__).resolve().parent.parent
MAX_PAGE_BYTES = 16 * 1024 * 1024  # the demo's own Prometheus and collector: Timeouts.max_page_bytes' default


def say(msg: str) -> None:
    print(f"[demo] {msg}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Timing:
    """How fast the scenario moves: seconds for the demo, faster for tests."""

    segment_ms: int = 5_000
    flood_retention_ms: int = 60_000
    updates_per_second: int = 200
    flood_every_s: float = 10.0
    lagging_for: str = "30s"
    consumer_lag_for: str = "10s"
    scrape_s: int = 5
    txn_every_s: float = 1.0  # one exactly-once transaction per this many seconds
    transaction_max_timeout_ms: int = 180_000  # the demo broker's transaction.max.timeout.ms
    backlog_bytes: int = 16 << 20  # the cleaner-backlog topic's burst, over its partitions
    cleaner_throttle_bytes_per_second: int = 1 << 20  # the demo broker's log.cleaner.io.max.bytes.per.second
    cleaned_within_s: float = 240.0  # how long the demo waits for the cleaner before its second audit


FAST = Timing(segment_ms=1_000, flood_retention_ms=4_000, updates_per_second=100, flood_every_s=2.0,
              lagging_for="3s", consumer_lag_for="2s", scrape_s=1, txn_every_s=0.5, transaction_max_timeout_ms=20_000,
              backlog_bytes=8 << 20)


def broker_config(t: Timing) -> dict[str, str]:
    """Settings of a broker the demo starts: it accepts the crashed producer's transactional batch
    (no verification with the coordinator), and calls transactions hanging sooner than Kafka's 15 min."""
    return {"transaction.partition.verification.enable": "false",
            "transaction.max.timeout.ms": str(t.transaction_max_timeout_ms)}


@dataclass(frozen=True)
class Names:
    """The scenario's topics and consumer group, all named from one prefix: ``demo`` for the demo; the
    tests pass prefixes of their own, so each owns its topics on a shared broker."""

    prefix: str = "demo"

    @property
    def healthy(self) -> str:
        return f"{self.prefix}.healthy-changelog"

    @property
    def lagging(self) -> str:
        return f"{self.prefix}.lagging-cdc"

    @property
    def flood(self) -> str:
        return f"{self.prefix}.tombstone-flood"

    @property
    def group(self) -> str:
        return f"{self.prefix}-reporting"

    @property
    def topics(self) -> tuple[str, str, str]:
        """The topics the plain workload writes to."""
        return self.healthy, self.lagging, self.flood

    @property
    def eos(self) -> str:
        """The exactly-once producer's topic (with the hanging transaction on partition 0)."""
        return f"{self.prefix}.eos-changelog"

    @property
    def transactional_id(self) -> str:
        return f"{self.prefix}-eos-producer"

    @property
    def crashed_transactional_id(self) -> str:
        return f"{self.prefix}-eos-crashed"

    @property
    def backlog(self) -> str:
        """A burst of updates the cleaner is kept from until the first audit (see the module)."""
        return f"{self.prefix}.cleaner-backlog"


DEMO = Names()
HEALTHY, LAGGING, FLOOD, GROUP = DEMO.healthy, DEMO.lagging, DEMO.flood, DEMO.group


def topic_configs(t: Timing, names: Names = DEMO) -> dict[str, dict]:
    base = {"cleanup.policy": "compact", "segment.ms": str(t.segment_ms)}
    return {
        names.healthy: {**base, "min.cleanable.dirty.ratio": "0.1", "delete.retention.ms": "3600000"},
        names.lagging: {**base, "min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": str(24 * 3600 * 1000)},
        names.flood: {**base, "min.cleanable.dirty.ratio": "0.3", "delete.retention.ms": str(t.flood_retention_ms)},
        names.eos: {**base, "min.cleanable.dirty.ratio": "0.1"},
    }


def create_topics(bootstrap: str, t: Timing, partitions: int = 3, names: Names = DEMO) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    wanted = [NewTopic(name, partitions, 1, config=cfg) for name, cfg in topic_configs(t, names).items()]
    for name, fut in admin.create_topics(wanted).items():
        try:
            fut.result(30)
        except Exception as exc:  # noqa: BLE001 - an existing topic is fine on a second run
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise
    deadline = time.time() + 30
    while time.time() < deadline:
        md = admin.list_topics(timeout=5)
        if all(n in md.topics and all(p.leader >= 0 for p in md.topics[n].partitions.values())
               for n in topic_configs(t, names)):
            return
        time.sleep(0.2)
    raise TimeoutError("demo topics have no leaders")


# --------------------------------------------------------- the cleaner backlog

CLEANER_THROTTLE = "log.cleaner.io.max.bytes.per.second"
BACKLOG_SEGMENT_BYTES = 1 << 20  # segment.bytes' minimum (LogConfig, Kafka 4.x): many rolled, cleanable segments
HELD, RELEASED = "1.0", "0.1"  # the backlog's min.cleanable.dirty.ratio before and after the first audit


def _alter(bootstrap: str, resource) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until its futures are done
    for fut in admin.incremental_alter_configs([resource]).values():
        fut.result(30)


def throttle_cleaner(bootstrap: str, node_id: int, bytes_per_second: int) -> None:
    """``log.cleaner.io.max.bytes.per.second`` as a dynamic config of this broker alone (not the
    cluster-wide default): one throttle for all its cleaner threads' reads and writes (LogCleaner)."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    _alter(bootstrap, ConfigResource(ResourceType.BROKER, str(node_id), incremental_configs=[
        ConfigEntry(CLEANER_THROTTLE, str(bytes_per_second), incremental_operation=AlterConfigOpType.SET)]))


def set_backlog_ratio(bootstrap: str, names: Names, ratio: str) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    _alter(bootstrap, ConfigResource(ResourceType.TOPIC, names.backlog, incremental_configs=[
        ConfigEntry("min.cleanable.dirty.ratio", ratio, incremental_operation=AlterConfigOpType.SET)]))


def write_backlog(bootstrap: str, t: Timing, names: Names = DEMO, partitions: int = 3, keys: int = 600,
                  value_bytes: int = 1000) -> int:
    """Create the backlog topic, held from the cleaner, and write ``t.backlog_bytes`` of updates to
    ``keys`` keys per partition: all but the last round superseded. Returns the records written."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    cfg = {"cleanup.policy": "compact", "segment.bytes": str(BACKLOG_SEGMENT_BYTES), "min.cleanable.dirty.ratio": HELD}
    try:
        admin.create_topics([NewTopic(names.backlog, partitions, 1, config=cfg)])[names.backlog].result(30)
    except Exception as exc:  # noqa: BLE001 - a second run of the demo: hold it again
        if "TOPIC_ALREADY_EXISTS" not in str(exc):
            raise
        set_backlog_ratio(bootstrap, names, HELD)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 256_000,
                         "compression.type": "none"})
    pad = "x" * value_bytes
    rounds = max(2, t.backlog_bytes // (partitions * keys * (value_bytes + 40)))
    errors: list = []
    sent = 0
    for r in range(rounds):
        for p in range(partitions):
            for k in range(keys):
                while True:
                    try:
                        producer.produce(names.backlog, key=f"key-{k}".encode(), value=f"{r}:{pad}".encode(),
                                         partition=p, on_delivery=lambda err, _m: err and errors.append(err))
                        break
                    except BufferError:
                        producer.poll(0.1)
                sent += 1
        producer.poll(0)
    producer.flush(60)
    if errors:
        raise RuntimeError(f"writing {names.backlog}: {errors[0]}")
    return sent


def wait_cleaned(log_dir: str, names: Names, targets: dict, timeout: float, stop: threading.Event) -> bool:
    """Until the cleaner's checkpoint (cleaner-offset-checkpoint) of every backlog partition reaches its
    ``targets`` offset (the first audit's first uncleanable offset), ``timeout`` passes or ``stop`` is set."""
    from monitor.checkpoint import CheckpointError, parse_checkpoint

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
    the cleaner has been over it, a second audit, and the two compared (``monitor.accuracy``).
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
    from monitor.accuracy import compare_runs, totals

    def latest() -> Path | None:
        runs = sorted(p for p in audit_dir.glob("run-*") if (p / "_SUCCESS").exists())
        return runs[-1] if runs else None

    if run_audit(state, audit_dir, log, stop) not in (0, 1) or (first := latest()) is None:  # 1: faults listed
        say(f"the first audit failed: see {log}")
        return
    rows = partitions(first)
    backlog = [r for r in rows if r["topic"] == names.backlog]
    say(f"first audit: {_known_sum(rows, 'reclaimable_bytes') / 2**20:,.1f} MiB reclaimable "
        f"({_known_sum(backlog, 'reclaimable_bytes') / 2**20:,.1f} MiB in {names.backlog}), "
        f"{_known_sum(backlog, 'estimated_clean_seconds'):,.1f} s estimated cleaning time{_unknown_note(rows)}; releasing "
        f"{names.backlog} to the cleaner (throttled to {t.cleaner_throttle_bytes_per_second / 2**20:g} MiB/s)")
    set_backlog_ratio(state.bootstrap, names, RELEASED)
    targets = {(r["topic"], r["partition"]): r["first_uncleanable_offset"] for r in backlog}
    if not wait_cleaned(state.log_dir, names, targets, t.cleaned_within_s, stop):
        if not stop.is_set():
            say(f"the cleaner has not been over {names.backlog} within {t.cleaned_within_s:.0f} s: no second audit")
        return
    say("the cleaner has been over the backlog: a second audit, to compare with the first ...")
    if run_audit(state, audit_dir, log, stop) not in (0, 1) or (second := latest()) is None or second == first:
        say(f"the second audit failed: see {log}")
        return
    tot = totals(compare_runs(backlog, partitions(second)))
    ratio = "" if tot.error_ratio is None else f", {tot.error_ratio * 100:+.2g} %"
    say(f"predicted {tot.predicted_bytes / 2**20:,.2f} MiB reclaimable in {names.backlog}, the broker reclaimed "
        f"{tot.actual_bytes / 2**20:,.2f} MiB (error {tot.error_bytes:+,.0f} B{ratio}): the Audit page shows it "
        "per partition")


class Workload(threading.Thread):
    """Steady keyed updates to every topic, and waves of tombstones on the flood topic."""

    def __init__(self, bootstrap: str, t: Timing, keys: int = 2000, names: Names = DEMO):
        super().__init__(name="demo-workload", daemon=True)
        from confluent_kafka import Producer

        self.t = t
        self.names = names
        self.keys = keys
        self.stop_event = threading.Event()
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
        self.sent = 0

    def run(self) -> None:
        i = 0
        last_flood = time.monotonic()
        period = 1.0 / max(self.t.updates_per_second, 1)
        while not self.stop_event.is_set():
            k = f"key-{(i * 7919) % self.keys}".encode()
            value = (f'{{"n": {i}, "status": "updated", "payload": "' + "x" * 200 + '"}').encode()
            for topic in self.names.topics:
                self.producer.produce(topic, key=k, value=value)
            self.sent += 3
            i += 1
            if time.monotonic() - last_flood > self.t.flood_every_s:
                for j in range(0, self.keys, 3):
                    self.producer.produce(self.names.flood, key=f"key-{j}".encode(), value=None)
                self.sent += self.keys // 3
                last_flood = time.monotonic()
            self.producer.poll(0)
            self.stop_event.wait(period)
        self.producer.flush(10)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(15)
        self.producer = None  # release the client now, before the broker goes away


class TransactionalWorkload(threading.Thread):
    """An exactly-once producer (a transactional.id, confluent_kafka's transactions): a transaction of
    ``batch`` keyed updates every ``txn_every_s``, every fifth aborted, the rest committed. Each
    transaction ends before the next wait, so stopping leaves none open."""

    def __init__(self, bootstrap: str, t: Timing, names: Names = DEMO, keys: int = 500, batch: int = 20):
        super().__init__(name="demo-eos-workload", daemon=True)
        from confluent_kafka import Producer

        self.t, self.names, self.keys, self.batch = t, names, keys, batch
        self.stop_event = threading.Event()
        self.producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": names.transactional_id,
                                  "transaction.timeout.ms": min(60_000, t.transaction_max_timeout_ms),
                                  "linger.ms": 5})
        self.committed = self.aborted = 0
        self.error: str | None = None

    def run(self) -> None:
        from confluent_kafka import KafkaException

        try:
            self.producer.init_transactions(30)
            n = 0
            while not self.stop_event.is_set():
                self.producer.begin_transaction()
                for j in range(self.batch):
                    k = f"key-{(n * self.batch + j) % self.keys}".encode()
                    self.producer.produce(self.names.eos, key=k, value=f'{{"txn": {n}, "i": {j}}}'.encode())
                if n % 5 == 4:
                    self.producer.abort_transaction(30)
                    self.aborted += 1
                else:
                    self.producer.commit_transaction(30)
                    self.committed += 1
                n += 1
                self.stop_event.wait(self.t.txn_every_s)
        except KafkaException as exc:  # the demo goes on without it; the log says why
            self.error = str(exc)
            say(f"the exactly-once producer stopped: {exc}")

    def stop(self) -> None:
        self.stop_event.set()
        self.join(60)
        self.producer = None


# Kafka's error codes (Errors.java) a produce may meet while a new topic's leadership settles
RETRIABLE = {3, 5, 6}  # UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER
CRASHED_PRODUCER_ID = 1_000_000_000_000  # far above the ids a demo broker's coordinator hands out (from 0 on)


def leave_hanging_transaction(bootstrap: str, names: Names = DEMO) -> tuple[int, int] | None:
    """Write the KIP-664 fault: a transactional batch on ``names.eos`` partition 0 of a producer id the
    coordinator never gave out, as a producer that crashed after its write would leave it if the
    coordinator had lost its state. Returns (producer id, first offset), or None when the broker refuses
    it (a broker that verifies transactions with the coordinator, as Kafka does by default)."""
    from localkafka.rawproduce import produce_raw, transactional_batch

    records = [(f"key-{i}".encode(), b'{"status": "in-flight, never committed"}') for i in range(10)]
    batch = transactional_batch(records, CRASHED_PRODUCER_ID, 0, int(time.time() * 1000))
    deadline = time.time() + 30
    while True:
        error, offset = produce_raw(bootstrap, names.eos, batch, partition=0,
                                    transactional_id=names.crashed_transactional_id)
        if error not in RETRIABLE or time.time() > deadline:
            break
        time.sleep(0.5)  # a new topic's leader is not serving yet
    if error:
        say(f"the broker refused the crashed producer's batch (error code {error}): no hanging transaction")
        return None
    return CRASHED_PRODUCER_ID, offset


def stopped_consumer(bootstrap: str, topic: str = FLOOD, group: str = GROUP, records: int = 50) -> None:
    """A group that reads a little of every partition, commits, and goes away."""
    from confluent_kafka import Consumer

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    got = 0
    deadline = time.time() + 30
    while got < records and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got += 1
    c.commit(asynchronous=False)
    c.close()


# --------------------------------------------------------------------- processes


def free_port() -> int:
    from localkafka.broker import free_port as fp

    return fp()


def wait_http(url: str, timeout: float, proc: subprocess.Popen | None = None, log: Path | None = None) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered:\n{tail}")
        try:
            if get(url, deadline=2, max_bytes=MAX_PAGE_BYTES).status == 200:
                return
        except FetchError:
            pass
        time.sleep(0.25)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s")


@contextmanager
def process(cmd: list[str], log: Path, ready_url: str | None = None, timeout: float = 60, env: dict | None = None):
    """Run ``cmd`` in its own process group; stop it (TERM, then KILL) when the block ends."""
    p = _spawn(cmd, log, env)
    try:
        if ready_url:
            wait_http(ready_url, timeout, p, log)
        yield p
    finally:
        _stop(p, grace=15)


def _spawn(cmd: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    """``cmd`` in its own process group (so ``_stop`` ends its children too), output appended to ``log``."""
    with open(log, "ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env={**os.environ, **(env or {})})


def _stop(p: subprocess.Popen, grace: float) -> None:
    """TERM to the process group, KILL after ``grace`` seconds; a group already gone is fine."""
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(grace)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(5)


def monitor_config(state, t: Timing, port: int, prometheus_url: str | None, audit_dir: Path) -> dict:
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
    from monitor.config import parse_config

    workdir.mkdir(parents=True, exist_ok=True)
    cport = free_port()
    prom_bin = shutil.which("prometheus") if prometheus else None
    pport = free_port() if prom_bin else None
    prom_url = f"http://127.0.0.1:{pport}" if prom_bin else None
    audit_dir = workdir / "audits"
    audit_dir.mkdir(exist_ok=True)
    cfg = monitor_config(state, t, cport, prom_url, audit_dir)
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


VIEWER = ["--client.toolbarMode", "viewer"]  # an SRE's dashboard: no "Deploy" button, no developer menu


def dashboard_command(port: int, address: str) -> list[str]:
    """The one command that serves the dashboard (``compaction-monitor dashboard`` and the demo)."""
    return [sys.executable, "-m", "streamlit", "run", str(ROOT / "dashboards" / "app.py"),
            "--server.port", str(port), "--server.address", address, "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--theme.base", "light", *VIEWER]


def run_audit(state, audit_dir: Path, log: Path, stop: threading.Event | None = None) -> int:
    """An audit of the broker's log dir, with its log-cleaner.log for calibration; stopped (its process
    group) when ``stop`` is set first."""
    cmd = [sys.executable, "-m", "cli", "audit", "--input", state.log_dir, "--out", str(audit_dir),
           "--master", "local[2]", "--bootstrap-servers", state.bootstrap]
    if Path(state.cleaner_log).exists():
        cmd += ["--cleaner-log", str(state.cleaner_log)]
    p = _spawn(cmd, log)
    while p.poll() is None:
        if stop is not None and stop.wait(1):
            _stop(p, grace=20)
            return 130
        elif stop is None:
            p.wait()
    return p.returncode


def alerts(prom_url: str) -> list[dict]:
    return json.loads(get_text(f"{prom_url}/api/v1/alerts", deadline=5, max_bytes=MAX_PAGE_BYTES))["data"]["alerts"]


# --------------------------------------------------------------------------- demo


def _hanging_note(state, hanging: tuple[int, int] | None, t: Timing) -> str:
    if not hanging:
        return ""
    return (f"""
  {DEMO.eos}-0 holds an open transaction of producer {hanging[0]} from offset {hanging[1]}: its last
  stable offset, and the cleaner, stay there; hanging once older than transaction.max.timeout.ms
  ({t.transaction_max_timeout_ms / 1000:.0f} s on a broker the demo starts). The fix, as for a real one:
    kafka-transactions.sh --bootstrap-server {state.bootstrap} abort --topic {DEMO.eos} --partition 0 \\
        --start-offset {hanging[1]}""")


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
        throttle_cleaner(state.bootstrap, state.node_id, t.cleaner_throttle_bytes_per_second)
        say(f"writing {t.backlog_bytes / 2**20:,.0f} MiB of updates to {DEMO.backlog}, held from the cleaner "
            f"(throttled to {t.cleaner_throttle_bytes_per_second / 2**20:g} MiB/s) until the first audit")
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
        with stack(state, directory / "run", t) as run:
            print(f"""
  Kafka bootstrap      {state.bootstrap}
  Broker JMX metrics   {state.jmx_url}
  Collector metrics    {run.collector_url}
  Prometheus           {run.prometheus_url or '(not installed)'}{'/alerts' if run.prometheus_url else ''}
  Dashboard            {run.dashboard_url}
  Audit reports        {run.audit_dir}  (first one in about a minute, a second once the cleaner has
                       been over {DEMO.backlog}: the Audit page compares them; log: {audit_log})
  Broker logs          {state.logs_dir}

  Within a few minutes: {LAGGING} shows as held back by min.compaction.lag.ms and {GROUP} as at
  risk of missing tombstones (ConsumerMayMissTombstones fires).{_hanging_note(state, hanging, t)}
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

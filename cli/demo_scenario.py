"""The demo's scenario as Kafka sees it: the topics (``Names``, their configs), how fast it moves
(``Timing``), the workloads that write to them (steady updates, tombstone waves, an exactly-once
producer), the faults it leaves (a consumer group that stops, a transaction no coordinator will end, a
backlog held from a throttled cleaner). ``cli/demo.py`` runs it with the collector, Prometheus, the
audits and the dashboard around it (its docstring tells the story); the tests drive the same pieces on
their own broker, each with its own ``Names``.

Why apart from ``cli/demo.py``: what is written to Kafka is one job, starting and watching the processes
around it another; the tests use the first without the second.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass


def _logged(bootstrap: str) -> dict:
    """A client's settings: the bootstrap servers, and librdkafka's lines through logging, rate-limited
    (``collectors.admin.clientlog``), never straight to stderr."""
    from collectors.admin.clientlog import LIBRDKAFKA_LOG

    return {"bootstrap.servers": bootstrap, "logger": LIBRDKAFKA_LOG}


def say(msg: str) -> None:
    print(f"[demo] {msg}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Timing:
    """How fast the scenario moves: seconds for the demo, faster for tests."""

    segment_ms: int = 5_000
    flood_retention_ms: int = 60_000
    # the lagging and flood topics' updates; the flood topic's keep the one (throttled) cleaner thread busy,
    # and Kafka's cleaner takes the dirtiest eligible log first: written faster, it would leave the healthy
    # topic waiting for minutes (see healthy_worst_case)
    updates_per_second: int = 50
    flood_every_s: float = 10.0
    lagging_for: str = "30s"
    consumer_lag_for: str = "10s"
    scrape_s: int = 5
    txn_every_s: float = 1.0  # one exactly-once transaction per this many seconds
    transaction_max_timeout_ms: int = 180_000  # the demo broker's transaction.max.timeout.ms
    backlog_bytes: int = 16 << 20  # the cleaner-backlog topic's burst, over its partitions
    cleaner_throttle_bytes_per_second: int = 1 << 20  # the demo broker's log.cleaner.io.max.bytes.per.second
    cleaned_within_s: float = 240.0  # how long the demo waits for the cleaner before its second audit
    # The healthy changelog (see ``healthy_worst_case``): its own, slower update rate over a larger key space
    # written once first, and a max.compaction.lag.ms that has the cleaner over it long before its
    # cleanable ratio could reach its min.cleanable.dirty.ratio.
    healthy_updates_per_second: float = 3.0
    healthy_keys: int = 6000
    healthy_max_compaction_lag_ms: int = 30_000
    # The demo broker's log.cleaner.backoff.ms: a second, not Kafka's 15 s, so that a log past its
    # max.compaction.lag.ms is picked within a second (the healthy topic is never seen overdue for long)
    # and what the demo shows moves at a demo's pace. Each clean of the healthy topic is small (its
    # clean section, 6,000 keys, about half a MiB a partition), so it holds the throttled cleaner a second or so.
    cleaner_backoff_ms: int = 1_000
    # How long the one cleaner thread may be busy with other logs, beyond cleaning the backlog at the
    # throttle, before it gets to the healthy topic once it is overdue: Kafka's cleaner picks the dirtiest
    # eligible log (LogToClean compares the cleanable ratio alone), so an overdue log waits behind every
    # dirtier one, and the flood and exactly-once topics are dirtier most of the time. Measured: up to
    # 343 s with the flood written at 200 updates/s, on 2 cores running two demos and a Spark audit.
    busy_cleaner_slack_s: float = 300.0


FAST = Timing(segment_ms=1_000, flood_retention_ms=4_000, updates_per_second=100, flood_every_s=2.0,
              lagging_for="3s", consumer_lag_for="2s", scrape_s=1, txn_every_s=0.5, transaction_max_timeout_ms=20_000,
              backlog_bytes=8 << 20, healthy_max_compaction_lag_ms=10_000)


def broker_config(t: Timing) -> dict[str, str]:
    """Settings of a broker the demo starts: it accepts the crashed producer's transactional batch
    (no verification with the coordinator), calls transactions hanging sooner than Kafka's 15 min, and
    its cleaner looks for work every ``cleaner_backoff_ms`` (stated, so ``healthy_worst_case`` uses it)."""
    return {"transaction.partition.verification.enable": "false",
            "transaction.max.timeout.ms": str(t.transaction_max_timeout_ms),
            "log.cleaner.backoff.ms": str(t.cleaner_backoff_ms)}


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


HEALTHY_MIN_CLEANABLE_DIRTY_RATIO = 0.5  # Kafka's default


def topic_configs(t: Timing, names: Names = DEMO) -> dict[str, dict]:
    base = {"cleanup.policy": "compact", "segment.ms": str(t.segment_ms)}
    return {
        # cleaned because max.compaction.lag.ms passes, never because its ratio passed the minimum:
        # CompactionLagging compares that ratio with that minimum (see healthy_worst_case)
        names.healthy: {**base, "min.cleanable.dirty.ratio": str(HEALTHY_MIN_CLEANABLE_DIRTY_RATIO),
                        "max.compaction.lag.ms": str(t.healthy_max_compaction_lag_ms), "delete.retention.ms": "3600000"},
        names.lagging: {**base, "min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": str(24 * 3600 * 1000)},
        names.flood: {**base, "min.cleanable.dirty.ratio": "0.3", "delete.retention.ms": str(t.flood_retention_ms)},
        names.eos: {**base, "min.cleanable.dirty.ratio": "0.1"},
    }


def create_topics(bootstrap: str, t: Timing, partitions: int = 3, names: Names = DEMO) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(_logged(bootstrap))
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

    admin = AdminClient(_logged(bootstrap))  # kept alive until its futures are done
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

    admin = AdminClient(_logged(bootstrap))
    cfg = {"cleanup.policy": "compact", "segment.bytes": str(BACKLOG_SEGMENT_BYTES), "min.cleanable.dirty.ratio": HELD}
    try:
        admin.create_topics([NewTopic(names.backlog, partitions, 1, config=cfg)])[names.backlog].result(30)
    except Exception as exc:  # noqa: BLE001 - a second run of the demo: hold it again
        if "TOPIC_ALREADY_EXISTS" not in str(exc):
            raise
        set_backlog_ratio(bootstrap, names, HELD)
    producer = Producer({**_logged(bootstrap), "linger.ms": 50, "batch.size": 256_000,
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


def update_value(i: int) -> bytes:
    """The value of the workload's ``i``-th update (every topic's)."""
    return (f'{{"n": {i}, "status": "updated", "payload": "' + "x" * 200 + '"}').encode()


def healthy_key(i: int, t: Timing) -> bytes:
    """The healthy topic's ``i``-th key: a stride through all ``t.healthy_keys``, each once per round."""
    return f"key-{(i * 7919) % t.healthy_keys}".encode()  # 7919 is prime: coprime with any key count below it


@dataclass(frozen=True)
class HealthyWorstCase:
    """The healthy topic at its dirtiest, per partition, as the monitor exports it: the cleanable ratio just
    before the cleaner gets to it, and how long past max.compaction.lag.ms that can be."""

    cleanable_ratio: float
    compaction_delay_s: float
    window_s: float  # the longest stretch of updates one clean has to cover


def healthy_worst_case(t: Timing, partitions: int = 3) -> HealthyWorstCase:
    """Why the healthy topic stays healthy, as arithmetic. After its first clean (the demo waits for it,
    over ``prefill_healthy``'s one record per key) its clean section holds every key at least once, at
    no less than the key and value bytes with the smallest record header each. The cleaner's next pass
    comes at the latest when max.compaction.lag.ms has passed for the first dirty batch (written up to one
    segment.ms before the last clean), plus one log.cleaner.backoff.ms, plus the time its one thread is
    busy elsewhere: the whole backlog at the throttle (read to build the offset map, read again and
    written to copy: three times its bytes at most), and ``busy_cleaner_slack_s`` for dirtier logs. Every
    update written in that window counts as dirty, each in a record batch of its own (61 bytes of header,
    the largest record header). Keys spread over the partitions as their updates do (the same keys), so the
    ratio is the same on each."""
    from monitor.kafka.record.v2 import HEADER_SIZE

    key_len = len(f"key-{t.healthy_keys - 1}")
    smallest = len("key-0") + len(update_value(0)) + 7  # attributes, and 1-byte varints: length, deltas, sizes, headers
    largest = key_len + len(update_value(10 ** 12)) + HEADER_SIZE + 21  # 5-byte length and offset delta, 10-byte time delta
    busy = 3 * t.backlog_bytes / t.cleaner_throttle_bytes_per_second + t.busy_cleaner_slack_s
    delay = t.cleaner_backoff_ms / 1000 + busy
    window = t.segment_ms / 1000 + t.healthy_max_compaction_lag_ms / 1000 + delay
    clean = t.healthy_keys / partitions * smallest
    dirty = t.healthy_updates_per_second / partitions * window * largest
    return HealthyWorstCase(dirty / (clean + dirty), delay, window)


def prefill_healthy(bootstrap: str, t: Timing, names: Names = DEMO) -> dict[tuple[str, int], int]:
    """Write every key of the healthy topic once (its clean section, once cleaned: ``healthy_worst_case``).
    Returns (topic, partition) -> the offset after the last record written there: once the cleaner's
    checkpoint reaches it, the topic has had its first clean."""
    from confluent_kafka import Producer

    producer = Producer({**_logged(bootstrap), "linger.ms": 50, "batch.size": 256_000})
    ends: dict[tuple[str, int], int] = {}
    errors: list = []

    def delivered(err, msg):
        if err:
            errors.append(err)
        else:
            key = (msg.topic(), msg.partition())
            ends[key] = max(ends.get(key, 0), msg.offset() + 1)

    for i in range(t.healthy_keys):
        while True:
            try:
                producer.produce(names.healthy, key=healthy_key(i, t), value=update_value(i), on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush(60)
    if errors:
        raise RuntimeError(f"writing {names.healthy}: {errors[0]}")
    return ends


class Workload(threading.Thread):
    """Steady keyed updates to every topic (the healthy one at its own rate, over its own keys), and waves of
    tombstones on the flood topic."""

    def __init__(self, bootstrap: str, t: Timing, keys: int = 2000, names: Names = DEMO):
        super().__init__(name="demo-workload", daemon=True)
        from confluent_kafka import Producer

        self.t = t
        self.names = names
        self.keys = keys
        self.stop_event = threading.Event()
        self.producer = Producer({**_logged(bootstrap), "linger.ms": 20})
        self.sent = 0

    def run(self) -> None:
        i = healthy = 0
        start = last_flood = time.monotonic()
        period = 1.0 / max(self.t.updates_per_second, 1)
        while not self.stop_event.is_set():
            k = f"key-{(i * 7919) % self.keys}".encode()
            value = update_value(i)
            for topic in (self.names.lagging, self.names.flood):
                self.producer.produce(topic, key=k, value=value)
            self.sent += 2
            while healthy < (time.monotonic() - start) * self.t.healthy_updates_per_second:
                self.producer.produce(self.names.healthy, key=healthy_key(healthy, self.t), value=update_value(i))
                self.sent += 1
                healthy += 1
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
        self.producer = Producer({**_logged(bootstrap), "transactional.id": names.transactional_id,
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

    c = Consumer({**_logged(bootstrap), "group.id": group, "auto.offset.reset": "earliest",
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

"""Faults made on a real broker, seen through the real collector by a real Prometheus with the rendered
rules: each case ends with its alert firing, labelled with the case's broker or partition, and with a
near miss on the same broker (a topic, or the same broker a moment before) that never alerts.

One broker of the module's own serves every case (one JVM start for the suite). It appends
transactional batches without asking the coordinator (``transaction.partition.verification.enable``
false), so a batch of a producer id no coordinator knows makes a real KIP-664 hanging transaction, and
its ``transaction.max.timeout.ms`` is below Kafka's default, so only the value the collector's admin
source reads from the broker makes that transaction hanging. The collector follows the broker's
log-cleaner.log (localkafka's log4j2.yaml writes it under kafka.logs.dir). Its cleaner has a
dedupe buffer at its minimum (``log.cleaner.dedupe.buffer.size``; Kafka 4.3's KafkaConfig.validateValues
requires size / log.cleaner.threads > 1048576, "at least 1MB per cleaner thread"), so some 40,000
distinct keys fill it. The cases run in file order because the cleaner's gauges are the last clean's:
the buffer case reads its gauge before anything else is cleaned, and the throttle case
(``log.cleaner.io.max.bytes.per.second``, a dynamic broker config) comes last, since the throttle slows
every clean after it. Each case has a helper that makes its fault and returns its
``Case`` (topic, partition, near-miss topic), for assertions that name the cause of that partition.

Thresholds and ``for`` windows are shortened through the collector's monitor.yaml, as an operator
would; the rule file is rendered from the same thresholds.

Every case also asks ``compaction-monitor explain --format json`` (a subprocess, as an operator runs it,
on the broker's log dir with its bootstrap server and log-cleaner.log) for the cause of the case's
partition and of its near miss, while the fault is in place, and checks that the collector exports the
same cause to Prometheus (``kafka_compaction_partition_compaction_cause``): both ask monitor.verdicts.causes.
"""

from __future__ import annotations

import json
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from dataclasses import dataclass

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, OffsetSpec,
                                   ResourceType)

from clirun import run_cli
from kafkatools import (cleaner_checkpoint, commit_offsets, compacted, create_topic, damage_first_record, localtools,
                       own_broker, partition_dir, produce, produce_raw, producer, roll, roll_at, set_topic_config,
                       transactional_batch, unique_topic, wait_cleaned, write_rounds)
from monitor.model.estimate import CleanerParams, estimate_clean
from procs import free_port, prometheus_query
from promstack import collector_and_prometheus
from waiting import wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
CLUSTER = "faults"

# The cleaner's offset map (Kafka 4.3: CleanerConfig.HASH_ALGORITHM "MD5", SkimpyOffsetMap): a slot is
# the 16-byte hash plus an 8-byte offset; a pass stops adding keys at slots x
# log.cleaner.io.buffer.load.factor (Cleaner.buildOffsetMapForSegment's maxDesiredMapSize).
DEDUPE_BUFFER_BYTES = 1024 * 1024 + 1  # the minimum, with one cleaner thread
MAP_SLOTS = DEDUPE_BUFFER_BYTES // (16 + 8)
KEYS_PER_PASS = int(MAP_SLOTS * 0.9)  # log.cleaner.io.buffer.load.factor default

THRESHOLDS = {
    "lagging_for": "2s", "overdue_for": "2s", "buffer_saturated_for": "2s", "cleaner_slow_for": "2s",
    "clean_time_seconds": 5, "consumer_lag_for": "2s", "open_transaction_seconds": 5,
    "open_transaction_for": "2s", "uncleanable_for": "2s", "hanging_transaction_for": "2s",
}
ROLL_AFTER_MS = 1000  # more than compacted()'s segment.ms
# The broker's transaction.max.timeout.ms (TransactionStateManagerConfig: an int, at least 1): below
# Kafka's default of 900000, and above the module's run time, so the killed producer's transaction
# (transaction.timeout.ms at this maximum) stays open, not hanging, for as long as the module runs.
TXN_MAX_TIMEOUT_MS = 600_000
KAFKA_DEFAULT_TXN_MAX_TIMEOUT_MS = 900_000  # TransactionStateManagerConfig.TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT


@dataclass(frozen=True)
class Case:
    """Where a fault was made: its topic and partition, and the near-miss topic beside it."""

    topic: str
    partition: int
    near_miss: str


@dataclass(frozen=True)
class Faults:
    broker: object  # localkafka BrokerState
    prom: str  # Prometheus' URL


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    """The module's broker, a collector scraping it every second and a Prometheus evaluating the rules
    rendered from the same thresholds every second; all stopped at the end of the module."""
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.fail("prometheus is missing: ./dev installs Debian's prometheus package")
    tmp = tmp_path_factory.mktemp("faults")
    with own_broker(tmp / "kafka", "kafka faults", **{"log.cleaner.dedupe.buffer.size": DEDUPE_BUFFER_BYTES,
                                                      "transaction.partition.verification.enable": "false",
                                                      "transaction.max.timeout.ms": TXN_MAX_TIMEOUT_MS}) as b:
        cport = free_port()
        cfg = {
            "listen": {"address": "127.0.0.1", "port": cport},
            "clusters": [{"name": CLUSTER, "bootstrap_servers": b.bootstrap,
                          "brokers": [{"id": b.node_id, "jmx_url": b.jmx_url, "log_dirs": [b.log_dir],
                                       "cleaner_log": str(b.cleaner_log)}]}],
            "intervals": {"jmx": 1, "log_dirs": 1, "admin": 1, "consumer_groups": 1, "cleaner_log": 1},
            "thresholds": THRESHOLDS,
            "granularity": "partition",  # the near misses' detail is compared too (healthy partitions)
        }
        with collector_and_prometheus(cfg, tmp, prometheus) as prom:
            yield Faults(b, prom)


# ------------------------------------------------------------------ reading Prometheus

def alerts(prom: str, name: str, **labels) -> list[dict]:
    """The alerts named ``name`` (pending or firing) whose labels include ``labels``."""
    data = json.load(urllib.request.urlopen(f"{prom}/api/v1/alerts", timeout=5))["data"]["alerts"]
    return [a for a in data if a["labels"].get("alertname") == name
            and all(a["labels"].get(k) == str(v) for k, v in labels.items())]


def wait_firing(prom: str, name: str, timeout: float = 120, **labels) -> dict:
    """The alert, once Prometheus says it fires."""
    found = wait_for(lambda: [a for a in alerts(prom, name, **labels) if a["state"] == "firing"], timeout,
                     f"{name} firing for {labels}", interval=0.5)
    return found[0]


def _selector(**labels) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def never_alerted(prom: str, name: str, **labels) -> bool:
    """True when Prometheus never had the alert pending or firing for these labels (its ALERTS series,
    kept for both states, is empty over the module's lifetime)."""
    return prometheus_query(prom, f"count_over_time(ALERTS{_selector(alertname=name, **labels)}[1h])") == []


def value(prom: str, metric: str, **labels) -> float | None:
    got = prometheus_query(prom, metric + _selector(cluster=CLUSTER, **labels))
    return float(got[0]["value"][1]) if got else None


def wait_value(prom: str, metric: str, ok, what: str, timeout: float = 90, **labels) -> float:
    """The metric's value in Prometheus once ``ok(value)`` holds (a failure names the last value)."""
    seen = []

    def check():
        v = value(prom, metric, **labels)
        seen[:] = [v]
        return v is not None and ok(v)

    try:
        wait_for(check, timeout, what, interval=0.5)
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}; {metric} was {seen}") from None
    return seen[0]


def held_for(prom: str, expr: str, seconds: int) -> bool:
    """True when the PromQL condition ``expr`` held at every second of the last ``seconds``."""
    got = prometheus_query(prom, f"count_over_time(({expr})[{seconds}s:1s])")
    return bool(got) and float(got[0]["value"][1]) >= seconds


def explain(b, *topics: str) -> dict[str, dict]:
    """``compaction-monitor explain --format json`` for partition 0 of each topic, on the broker's log dir
    with its bootstrap server (topic configs, the fixes' command lines, transaction.max.timeout.ms) and
    its log-cleaner.log: topic -> its entry."""
    got = run_cli("explain", *(f"{t}-0" for t in topics), "--log-dir", b.log_dir, "--bootstrap-server", b.bootstrap,
                  "--cleaner-log", str(b.cleaner_log), "--format", "json")
    assert got.returncode in (0, 1), got.stderr  # 1: a data fault met somewhere in the log dir
    found = {c["topic"]: c for c in json.loads(got.stdout) if c["partition"] == 0}
    assert sorted(found) == sorted(topics), got.stderr
    return found


def exported_cause(prom: str, topic: str, was: bool = False) -> set[str]:
    """The causes the collector exported for the topic's partition 0: now, or (``was``) at any time in
    the last hour."""
    series = f"kafka_compaction_partition_compaction_cause{_selector(cluster=CLUSTER, topic=topic, partition=0)}"
    got = prometheus_query(prom, f"last_over_time({series}[1h])" if was else series)
    return {g["metric"]["cause"] for g in got}


def wait_exported(prom: str, topic: str, cause: str, was: bool = False) -> None:
    """Until Prometheus has the collector's cause of the topic's partition 0 as ``cause`` (alone, unless
    ``was``: among those it had)."""
    try:
        wait_for(lambda: cause in exported_cause(prom, topic, was) if was else exported_cause(prom, topic) == {cause},
                 60, f"the collector's cause of {topic}-0 to be {cause}", interval=0.5)
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}; it had {exported_cause(prom, topic, True)}") from None


def set_broker_config(bootstrap: str, broker_id: int, **cfg) -> None:
    """A numeric dynamic per-broker config (as ``kafka-configs --entity-type brokers --entity-name N
    --alter``), waited for until the broker describes it as set."""
    want = {k.replace("_", "."): str(v) for k, v in cfg.items()}
    admin = AdminClient({"bootstrap.servers": bootstrap})
    res = ConfigResource(ResourceType.BROKER, str(broker_id), incremental_configs=[
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in want.items()])
    for fut in admin.incremental_alter_configs([res]).values():
        fut.result(30)

    def in_force():
        d = ConfigResource(ResourceType.BROKER, str(broker_id))
        entries = admin.describe_configs([d])[d].result(30)
        return all(entries[k].value is not None and float(entries[k].value) == float(v)  # a DOUBLE: "100000.0"
                   for k, v in want.items())

    wait_for(in_force, 30, f"broker {broker_id} to put {want} in force")


# ------------------------------------------------------------------ the dedupe buffer

def now_ms() -> int:
    return int(time.time() * 1000)


def distinct_keys(bootstrap: str, topic: str, keys: int) -> None:
    """``keys`` records with distinct keys in one segment (one timestamp: no time-based roll among them),
    then a roll: all of them below the active segment."""
    t = now_ms()
    produce(bootstrap, topic, [(f"key-{i:06d}".encode(), b"v") for i in range(keys)], timestamp_ms=t)
    roll_at(bootstrap, topic, t + ROLL_AFTER_MS)


def buffer_saturated_case(b) -> Case:
    """A near-miss topic whose keys fit the offset map, written and cleaned in one pass; and the case's
    topic, created empty (the test writes it, more distinct keys than one pass maps, once it has seen
    the near miss). Its min.cleanable.dirty.ratio of 0.9 keeps the cleaner from a second pass (after
    the first, half its bytes count as clean), so the last clean stays the saturated one."""
    near = create_topic(b.bootstrap, unique_topic("buffer-fits"), **compacted())
    distinct_keys(b.bootstrap, near, KEYS_PER_PASS * 4 // 5)
    wait_cleaned(b.log_dir, near, past=KEYS_PER_PASS * 4 // 5 - 1)
    full = create_topic(b.bootstrap, unique_topic("buffer-full"), **compacted(**{"min.cleanable.dirty.ratio": 0.9}))
    return Case(full, 0, near)


def test_a_dedupe_buffer_too_small_for_the_keys_fires_cleaner_buffer_saturated(faults):
    b, prom = faults.broker, faults.prom
    case = buffer_saturated_case(b)
    util = "kafka_compaction_broker_cleaner_max_buffer_utilization_ratio"
    fits = int(100 * (KEYS_PER_PASS * 4 // 5) / MAP_SLOTS) / 100  # Kafka's int percent of entries / slots
    # the near miss: the clean whose keys fit, shown for longer than the rule's window, never alerts
    wait_value(prom, util, lambda v: abs(v - fits) < 0.011, f"buffer utilization {fits} of the near miss's clean")
    wait_for(lambda: held_for(prom, f'abs({util}{{cluster="{CLUSTER}"}} - {fits}) < 0.011', 5), 60,
             "the near miss's utilization held for 5 s (more than the rule's window)")
    assert never_alerted(prom, "CleanerBufferSaturated", cluster=CLUSTER)

    distinct_keys(b.bootstrap, case.topic, KEYS_PER_PASS + 500)
    # one pass maps KEYS_PER_PASS keys and stops there: the checkpoint is the first offset not mapped
    mapped = wait_cleaned(b.log_dir, case.topic)
    assert mapped == KEYS_PER_PASS
    # the audit's cleaner model (monitor.model.estimate) maps as many keys per pass as the broker's cleaner
    # did, so it estimates two passes for the case's keys, one for the near miss's
    model = CleanerParams(dedupe_buffer_size=DEDUPE_BUFFER_BYTES)
    seg0 = (partition_dir(b.log_dir, case.topic) / "00000000000000000000.log").stat().st_size
    assert model.keys_per_pass == mapped
    assert estimate_clean(0, seg0, KEYS_PER_PASS + 500, model).passes == 2
    assert estimate_clean(0, seg0, KEYS_PER_PASS * 4 // 5, model).passes == 1
    alert = wait_firing(prom, "CleanerBufferSaturated", cluster=CLUSTER)
    assert alert["labels"]["broker"] == str(b.node_id) and alert["labels"]["severity"] == "warning"
    assert value(prom, util) == pytest.approx(0.9, abs=0.011)
    assert cleaner_checkpoint(b.log_dir, case.topic) == KEYS_PER_PASS  # no second pass cleared the gauge

    # The cause: below_threshold. A buffer too small is the cleaner's fault (its gauge, the alert), not a
    # state of the partition; the partition shows where the pass stopped. Its keys past the map stay
    # dirty, and Kafka counts the partly cleaned segment on both sides (LogCleanerManager.cleanableOffsets /
    # LogToClean: logSegments(-1, firstDirty) and logSegments(firstDirty, firstUncleanable) both hold
    # it), a ratio of 0.5, not above the topic's 0.9: the cleaner waits, as configured. The near miss,
    # cleaned whole, is dirty in its active segment only (the roll record).
    causes = explain(b, case.topic, case.near_miss)
    full, ev = causes[case.topic], causes[case.topic]["evidence"]
    assert full["cause"] == "below_threshold", full["summary"]
    assert ev["checkpoint_offset"] == ev["first_dirty_offset"] == KEYS_PER_PASS
    assert ev["clean_bytes"] == ev["cleanable_bytes"] == seg0 and ev["cleanable_ratio"] == 0.5
    assert float(ev["configs"]["min.cleanable.dirty.ratio"]["value"]) == 0.9
    near = causes[case.near_miss]
    assert near["cause"] == "active_segment_only", near["summary"]
    assert near["evidence"]["checkpoint_offset"] == KEYS_PER_PASS * 4 // 5  # the roll record's offset
    wait_exported(prom, case.topic, "below_threshold")
    wait_exported(prom, case.near_miss, "active_segment_only")


# ------------------------------------------------------------------ an open transaction

KILLED_PRODUCER = textwrap.dedent("""
    import signal, sys
    from confluent_kafka import Producer
    bootstrap, topic, txn_id, timeout_ms = sys.argv[1:5]
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                  "transaction.timeout.ms": int(timeout_ms)})  # the coordinator must not abort it during the test
    p.init_transactions(30)
    p.begin_transaction()
    offsets = []
    for i in range(5):
        p.produce(topic, key=b"open-%d" % i, value=b"uncommitted", partition=0,
                  on_delivery=lambda err, msg: offsets.append(msg.offset()) if err is None else None)
    p.flush(30)
    print(min(offsets), flush=True)  # the open transaction's first offset, acknowledged by the broker
    signal.pause()  # killed here by SIGKILL, before any commit
""")


def transactional_writes(bootstrap: str, topic: str, kill: bool) -> int | None:
    """A committed transaction, then a second producer's transaction, left open by SIGKILL (``kill``)
    or committed; then non-transactional records and a roll. Returns the open transaction's first offset."""
    p = producer(bootstrap, **{"transactional.id": f"{topic}-committed"})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(10):
        p.produce(topic, key=f"k{i}".encode(), value=b"committed", partition=0)
    p.commit_transaction(30)
    first_open = None
    if kill:
        proc = subprocess.Popen([sys.executable, "-c", KILLED_PRODUCER, bootstrap, topic, f"{topic}-killed",
                                 str(TXN_MAX_TIMEOUT_MS)],
                                stdout=subprocess.PIPE, text=True)
        try:
            first_open = int(proc.stdout.readline())
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            proc.stdout.close()
    else:
        q = producer(bootstrap, **{"transactional.id": f"{topic}-finished"})
        q.init_transactions(30)
        q.begin_transaction()
        for i in range(5):
            q.produce(topic, key=f"open-{i}".encode(), value=b"committed", partition=0)
        q.commit_transaction(30)
    produce(bootstrap, topic, [(f"k{i}".encode(), b"after") for i in range(10)])
    roll(bootstrap, topic)
    return first_open


def open_transaction_case(b) -> tuple[Case, int]:
    """A topic whose transaction a killed producer left open, and a near-miss topic written the same
    way whose producer committed. Returns the case and the open transaction's first offset."""
    held = create_topic(b.bootstrap, unique_topic("txn-open"), **compacted())
    near = create_topic(b.bootstrap, unique_topic("txn-committed"), **compacted())
    first_open = transactional_writes(b.bootstrap, held, kill=True)
    transactional_writes(b.bootstrap, near, kill=False)
    return Case(held, 0, near), first_open


def end_offset(bootstrap: str, topic: str, isolation: IsolationLevel, partition: int = 0) -> int:
    """The broker's end offset (ListOffsets latest) for consumers of that isolation level: the last
    stable offset for READ_COMMITTED, the high watermark for READ_UNCOMMITTED."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, partition)
    res = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=isolation)
    return res[tp].result(30).offset


def test_a_producer_killed_inside_a_transaction_fires_compaction_blocked_by_transaction(faults):
    b, prom = faults.broker, faults.prom
    case, first_open = open_transaction_case(b)
    alert = wait_firing(prom, "CompactionBlockedByTransaction", topic=case.topic)
    assert alert["labels"]["partition"] == "0" and alert["labels"]["broker"] == str(b.node_id)
    assert alert["labels"]["severity"] == "warning" and case.topic in alert["annotations"]["description"]
    # the LSO the collector read from the log is the broker's, and the open transaction's first offset
    lso = end_offset(b.bootstrap, case.topic, IsolationLevel.READ_COMMITTED)
    assert lso == first_open
    assert value(prom, "kafka_compaction_partition_last_stable_offset", topic=case.topic) == lso
    assert end_offset(b.bootstrap, case.topic, IsolationLevel.READ_UNCOMMITTED) > lso
    assert value(prom, "kafka_compaction_partition_open_transactions", topic=case.topic) == 1
    # the near miss: every transaction ended, its LSO is its log end, no open transaction, no alert
    end = end_offset(b.bootstrap, case.near_miss, IsolationLevel.READ_UNCOMMITTED)
    assert end_offset(b.bootstrap, case.near_miss, IsolationLevel.READ_COMMITTED) == end
    assert value(prom, "kafka_compaction_partition_last_stable_offset", topic=case.near_miss) == end
    assert value(prom, "kafka_compaction_partition_open_transactions", topic=case.near_miss) == 0
    assert never_alerted(prom, "CompactionBlockedByTransaction", topic=case.near_miss)

    # explain names the open transaction at the broker's LSO, and the abort of exactly that partition
    # and offset (kafka-transactions.sh's own syntax, TransactionsCommand.AbortTransactionCommand)
    causes = explain(b, case.topic, case.near_miss)
    held = causes[case.topic]
    assert held["cause"] == "open_transaction", held["summary"]
    assert held["evidence"]["transaction"]["first_offset"] == held["evidence"]["last_stable_offset"] == lso
    abort = (f"kafka-transactions.sh --bootstrap-server {b.bootstrap} abort --topic {case.topic} --partition 0 "
             f"--start-offset {lso}")
    assert any(abort in fix for fix in held["fix"]), held["fix"]
    assert held["evidence"]["configs"] == {"transaction.max.timeout.ms": {"value": str(TXN_MAX_TIMEOUT_MS),
                                                                         "source": "admin"}}
    near = causes[case.near_miss]
    assert near["cause"] != "open_transaction" and "transaction" not in near["evidence"], near["summary"]
    wait_exported(prom, case.topic, "open_transaction")
    assert "open_transaction" not in exported_cause(prom, case.near_miss, was=True)
    assert near["evidence"]["open_transactions"] == 0 and near["evidence"]["last_stable_offset"] == end


# ------------------------------------------------------------------ a stopped consumer group

def stopped_group(bootstrap: str, topic: str, group: str, committed: int = 1) -> None:
    """20 records, and a group that committed offset ``committed`` and stopped: it consumes no more."""
    produce(bootstrap, topic, [(f"k{i}".encode(), b"v") for i in range(20)])
    commit_offsets({"bootstrap.servers": bootstrap, "group.id": group}, [TopicPartition(topic, 0, committed)])


def stopped_consumer_case(b) -> tuple[Case, str]:
    """A group stopped on a topic with delete.retention.ms of 5 s, and the same on a near-miss topic
    whose delete.retention.ms is a day. Returns the case and the group."""
    short = create_topic(b.bootstrap, unique_topic("retention-short"), **compacted(**{"delete.retention.ms": 5000}))
    day = create_topic(b.bootstrap, unique_topic("retention-day"), **compacted(**{"delete.retention.ms": 86_400_000}))
    group = unique_topic("stopped-group")
    stopped_group(b.bootstrap, short, group)
    stopped_group(b.bootstrap, day, group)
    return Case(short, 0, day), group


def test_a_consumer_group_stopped_past_delete_retention_fires_consumer_may_miss_tombstones(faults):
    """explain's cause is the same for the case and its near miss, active_segment_only: a stopped group is
    a fault of the consumer, not of compaction, and both partitions hold their 20 records in a segment
    that has not rolled (segment.ms has passed, but a segment rolls only on an append, and none came).
    The alert tells the two apart, not the cause."""
    b, prom = faults.broker, faults.prom
    case, group = stopped_consumer_case(b)
    alert = wait_firing(prom, "ConsumerMayMissTombstones", severity="critical", topic=case.topic)
    assert alert["labels"]["group"] == group and alert["labels"]["partition"] == "0"
    assert value(prom, "kafka_compaction_consumer_group_lag_retention_ratio", topic=case.topic) >= 1
    assert value(prom, "kafka_compaction_consumer_group_lag_records", topic=case.topic) == 20 - 1
    # the near miss: stopped as long, as far behind, well within its delete.retention.ms
    assert value(prom, "kafka_compaction_consumer_group_lag_records", topic=case.near_miss) == 20 - 1
    assert value(prom, "kafka_compaction_consumer_group_lag_retention_ratio", topic=case.near_miss) < 0.01
    assert never_alerted(prom, "ConsumerMayMissTombstones", topic=case.near_miss)

    causes = explain(b, case.topic, case.near_miss)
    for topic in (case.topic, case.near_miss):
        c = causes[topic]
        assert c["cause"] == "active_segment_only", c["summary"]
        assert c["evidence"]["log_end_offset"] == 20 and c["evidence"]["active_segment"] == "00000000000000000000.log"
        roll_due = c["forecast"]["active_segment_roll"]  # segment.ms (200) is past: the next append rolls it
        assert roll_due["in_seconds"] == 0 and "segment.ms=200 " in roll_due["reason"], roll_due
        wait_exported(prom, topic, "active_segment_only")


# ------------------------------------------------------------------ a record damaged on disk



def uncleanable_case(b) -> Case:
    """Two topics written alike and held dirty (min.compaction.lag.ms 1 h) while the first record of the
    first segment of one of them is made to declare one byte more than it holds (its length varint,
    zigzag-encoded, + 2); then both are released to the cleaner. Kafka 4.3's cleaner reads that record
    while building its offset map: DefaultRecord.readFrom throws InvalidRecordException ("Invalid record
    size"), and LogCleaner.CleanerThread.tryCleanFilthiestLog logs it to log-cleaner.log and marks the
    partition uncleanable (tests/collectors/test_uncleanable_kafka.py). The other is the near miss."""
    held = compacted(**{"min.compaction.lag.ms": 3_600_000})
    damaged = create_topic(b.bootstrap, unique_topic("damaged"), **held)
    healthy = create_topic(b.bootstrap, unique_topic("healthy"), **held)
    for t in (damaged, healthy):
        write_rounds(b.bootstrap, t, 3, keys=50)
    damage_first_record(partition_dir(b.log_dir, damaged))
    for t in (damaged, healthy):
        set_topic_config(b.bootstrap, t, **{"min.compaction.lag.ms": 0})
    return Case(damaged, 0, healthy)


def test_a_record_damaged_on_disk_fires_uncleanable_partitions_naming_the_partition(faults):
    b, prom = faults.broker, faults.prom
    case = uncleanable_case(b)
    alert = wait_firing(prom, "UncleanablePartitions", topic=case.topic)
    assert alert["labels"]["partition"] == "0" and alert["labels"]["broker"] == str(b.node_id)
    assert alert["labels"]["exception"] == "InvalidRecordException" and alert["labels"]["severity"] == "critical"
    assert "InvalidRecordException" in alert["annotations"]["description"]
    assert case.topic in alert["annotations"]["description"]
    # the broker's own count (LogCleanerManager's uncleanable-partitions-count) agrees and stays above 0
    # longer than the rule's window: the log-dir form of the alert would fire, but for its `unless`
    # (the partition is named); it never fires while the named one does
    count = "kafka_compaction_broker_uncleanable_partitions"
    wait_value(prom, count, lambda v: v == 1, "the broker's uncleanable-partitions-count at 1", broker=b.node_id)
    wait_for(lambda: held_for(prom, f'{count}{{cluster="{CLUSTER}"}} > 0', 5), 60,
             "the broker's uncleanable count above 0 for 5 s (more than the rule's window)")
    firing = [a["labels"] for a in alerts(prom, "UncleanablePartitions") if a["state"] == "firing"]
    assert [(x.get("topic"), x.get("partition")) for x in firing] == [(case.topic, "0")], firing
    log_dir_form = 'ALERTS{alertname="UncleanablePartitions",alertstate="firing",topic=""}'
    assert prometheus_query(prom, f"count_over_time({log_dir_form}[1h])") == []
    # the near miss: cleaned by the same cleaner, never uncleanable
    wait_cleaned(b.log_dir, case.near_miss)
    assert never_alerted(prom, "UncleanablePartitions", topic=case.near_miss)

    causes = explain(b, case.topic, case.near_miss)
    u, ev = causes[case.topic], causes[case.topic]["evidence"]
    assert u["cause"] == "uncleanable", u["summary"]
    assert ev["exception"] == "InvalidRecordException" and ev["message"].startswith("Invalid record size"), ev
    path, _, line = ev["cleaner_log"].rpartition(":")
    assert path == str(b.cleaner_log)
    assert f"Marking its partition ({case.topic}-0) as uncleanable" in \
        b.cleaner_log.read_text().splitlines()[int(line) - 1]
    assert any("restart the broker" in fix for fix in u["fix"]), u["fix"]
    near = causes[case.near_miss]
    assert near["cause"] != "uncleanable" and "uncleanable" not in near["unchecked"], near["summary"]
    wait_exported(prom, case.topic, "uncleanable")
    assert "uncleanable" not in exported_cause(prom, case.near_miss, was=True)


# ------------------------------------------------------------------ a hanging transaction

GHOST_PID, GHOST_EPOCH = 424_242, 5  # far above the ids the module's coordinator hands out (from 0 on)
HANGING_AGE_MS = 720_000  # past the broker's transaction.max.timeout.ms, within Kafka's default


def ghost_transaction(bootstrap: str, topic: str, producer_id: int, age_ms: int) -> int:
    """10 records, a transactional batch of ``producer_id`` (no coordinator knows it: nothing will ever
    end it) stamped ``age_ms`` back, 10 records after it, and a roll. Returns the batch's first offset."""
    produce(bootstrap, topic, [(f"k{i}".encode(), b"before") for i in range(10)])
    batch = transactional_batch([(f"ghost-{i}".encode(), b"never ends") for i in range(5)], producer_id,
                                GHOST_EPOCH, now_ms() - age_ms)
    error, first = produce_raw(bootstrap, topic, batch, transactional_id=f"{topic}-ghost")
    assert error == 0, f"the broker refused the raw transactional batch: error code {error}"
    produce(bootstrap, topic, [(f"k{i}".encode(), b"after") for i in range(10)])
    roll(bootstrap, topic)
    return first


def hanging_transaction_case(b) -> tuple[Case, int]:
    """A transaction no coordinator will end, begun ``HANGING_AGE_MS`` ago: hanging by the broker's
    transaction.max.timeout.ms, not by Kafka's default, which the collector would assume without the
    admin source. The near miss: the same write begun now, open but not hanging (for the next 10 min).
    Returns the case and the hanging transaction's first offset."""
    hanging = create_topic(b.bootstrap, unique_topic("hanging"), **compacted())
    young = create_topic(b.bootstrap, unique_topic("open-young"), **compacted())
    first = ghost_transaction(b.bootstrap, hanging, GHOST_PID, HANGING_AGE_MS)
    ghost_transaction(b.bootstrap, young, GHOST_PID + 1, 0)
    return Case(hanging, 0, young), first


def broker_setting(bootstrap: str, broker_id: int, name: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    d = ConfigResource(ResourceType.BROKER, str(broker_id))
    return admin.describe_configs([d])[d].result(30)[name].value


def test_a_transaction_no_coordinator_ends_fires_hanging_transaction_until_aborted(faults):
    b, prom = faults.broker, faults.prom
    assert broker_setting(b.bootstrap, b.node_id, "transaction.max.timeout.ms") == str(TXN_MAX_TIMEOUT_MS)
    assert TXN_MAX_TIMEOUT_MS < HANGING_AGE_MS < KAFKA_DEFAULT_TXN_MAX_TIMEOUT_MS
    case, first = hanging_transaction_case(b)
    alert = wait_firing(prom, "HangingTransaction", topic=case.topic)
    assert alert["labels"]["partition"] == "0" and alert["labels"]["broker"] == str(b.node_id)
    lso = end_offset(b.bootstrap, case.topic, IsolationLevel.READ_COMMITTED)
    assert lso == first and end_offset(b.bootstrap, case.topic, IsolationLevel.READ_UNCOMMITTED) > lso
    assert value(prom, "kafka_compaction_partition_hanging_transactions", topic=case.topic) == 1
    assert value(prom, "kafka_compaction_partition_last_stable_offset", topic=case.topic) == lso
    # the near miss: open (its LSO held the same way), not hanging
    assert value(prom, "kafka_compaction_partition_open_transactions", topic=case.near_miss) == 1
    assert value(prom, "kafka_compaction_partition_hanging_transactions", topic=case.near_miss) == 0
    assert never_alerted(prom, "HangingTransaction", topic=case.near_miss)

    causes = explain(b, case.topic, case.near_miss)
    h = causes[case.topic]
    assert h["cause"] == "hanging_transaction", h["summary"]
    txn = h["evidence"]["transaction"]
    assert (txn["producer_id"], txn["producer_epoch"], txn["first_offset"]) == (GHOST_PID, GHOST_EPOCH, lso)
    assert txn["age_ms"] >= HANGING_AGE_MS
    # the value that decided, as the broker has it (Kafka's default would have called it open)
    assert h["evidence"]["configs"] == {"transaction.max.timeout.ms": {"value": str(TXN_MAX_TIMEOUT_MS),
                                                                      "source": "admin"}}
    assert causes[case.near_miss]["cause"] == "open_transaction", causes[case.near_miss]["summary"]
    wait_exported(prom, case.topic, "hanging_transaction")
    wait_exported(prom, case.near_miss, "open_transaction")
    abort = (f"kafka-transactions.sh --bootstrap-server {b.bootstrap} abort --topic {case.topic} --partition 0 "
             f"--start-offset {lso}")
    assert h["fix"][0] == abort

    # the fix, run as printed: Kafka's own kafka-transactions.sh (TransactionsCommand)
    argv = shlex.split(h["fix"][0])
    assert argv[:3] == ["kafka-transactions.sh", "--bootstrap-server", b.bootstrap]
    proc = localtools.transactions_tool(argv[2], *argv[3:])
    assert proc.returncode == 0, proc.stderr[-2000:]
    end = wait_for(lambda: (lambda lo, hi: hi if lo == hi else None)(
        end_offset(b.bootstrap, case.topic, IsolationLevel.READ_COMMITTED),
        end_offset(b.bootstrap, case.topic, IsolationLevel.READ_UNCOMMITTED)), 60,
        f"{case.topic}'s LSO to reach its log end after the abort")
    assert end > lso
    wait_for(lambda: not alerts(prom, "HangingTransaction", topic=case.topic), 60,
             "HangingTransaction to resolve after the abort", interval=0.5)
    assert value(prom, "kafka_compaction_partition_hanging_transactions", topic=case.topic) == 0
    assert value(prom, "kafka_compaction_partition_last_stable_offset", topic=case.topic) == end
    assert value(prom, "kafka_compaction_partition_log_end_offset", topic=case.topic) == end
    assert "hanging_transaction" not in exported_cause(prom, case.topic)


# ------------------------------------------------------------------ a throttled cleaner; segments that never roll

# Kafka's Throttler (storage.internals.utils.Throttler, used by Cleaner for every read and write) checks
# the rate only when 300 ms have passed since its last check; it then sleeps observed / rate - elapsed
# and starts a new period. An unthrottled cleaner here reads cached segments at 100+ MB/s, so within a
# clean only the first read (after an idle cleaner) is checked; with 256 KiB reads that first check
# observes too little to sleep, and cleans of several MB ran unthrottled (seen: 16 MB in 0.1 s under
# 2 MB/s). So the suite raises log.cleaner.io.buffer.size (dynamic too) until one read takes in the
# whole backlog segment: the first check of its clean then observes all of it and sleeps
# BACKLOG_BYTES / THROTTLE - (time since the cleaner's previous check), which a clean just before it
# (``tick``) keeps to seconds.
BACKLOG_KEYS, BACKLOG_ROUNDS = 1000, 4  # 1 KiB values: a 4 MB segment
BACKLOG_BYTES = BACKLOG_KEYS * BACKLOG_ROUNDS * 1024
THROTTLE_BYTES_PER_SECOND = 250_000  # read + write: the backlog's first read alone costs ~16 s
IO_BUFFER_BYTES = 16 * 1024 * 1024  # split in a read and a write buffer: 8 MiB reads, one per backlog segment
NEVER_ROLLS_ROUNDS = 2


OVERDUE_BY_MS = 60_000  # the overdue backlog's timestamps lie this far back: overdue as soon as written


def backlog(bootstrap: str, topic: str, rolled: bool = True, rounds: int = BACKLOG_ROUNDS,
            timestamp_ms: int | None = None) -> None:
    """``rounds`` updates of ``BACKLOG_KEYS`` keys, 1 KiB each, in one segment (all stamped
    ``timestamp_ms``, default now), then a roll (``rolled``)."""
    t = now_ms() if timestamp_ms is None else timestamp_ms
    produce(bootstrap, topic, [(f"k{i}".encode(), bytes([65 + r]) * 1024)
                               for r in range(rounds) for i in range(BACKLOG_KEYS)], timestamp_ms=t)
    if rolled:
        roll_at(bootstrap, topic, t + ROLL_AFTER_MS)


def tick(b, prefix: str) -> None:
    """A small clean, waited for: the cleaner's last check of its throttle is now."""
    t = create_topic(b.bootstrap, unique_topic(prefix), **compacted())
    distinct_keys(b.bootstrap, t, 100)
    wait_cleaned(b.log_dir, t, past=99)


def throttled_backlog_case(b) -> tuple[Case, Case]:
    """A backlog on a topic with max.compaction.lag.ms of 3 s under the throttled cleaner, and the same
    backlog on a near-miss topic without max.compaction.lag.ms, which min.compaction.lag.ms (1 h) keeps
    from the cleaner: uncleaned as long, never overdue, and never cleaned after the backlog (the cleaner's
    gauges keep the backlog's clean). The backlog's timestamps lie ``OVERDUE_BY_MS`` back, so it is
    overdue from its first read through the whole of its throttled clean. Also returns the
    active_segment_only case, written before the tick (the tick must be the last clean before the backlog)."""
    near = create_topic(b.bootstrap, unique_topic("no-max-lag"), **compacted(**{"min.compaction.lag.ms": 3_600_000}))
    backlog(b.bootstrap, near)
    overdue = unique_topic("overdue")
    never = active_segment_only_case(b, overdue)
    tick(b, "tick")
    create_topic(b.bootstrap, overdue, **compacted(**{"max.compaction.lag.ms": 3000}))
    backlog(b.bootstrap, overdue, timestamp_ms=now_ms() - OVERDUE_BY_MS)
    return Case(overdue, 0, near), never


def active_segment_only_case(b, rolled_twin: str) -> Case:
    """A backlog on a topic whose segment.ms (7 days) is far beyond its traffic: it never rolls, so all
    of it stays in the active segment, which the cleaner never cleans. ``rolled_twin`` is a rolled
    backlog on the same broker that does lag (the case's contrast, written after this one)."""
    never = create_topic(b.bootstrap, unique_topic("never-rolls"), **compacted(**{"segment.ms": 604_800_000}))
    backlog(b.bootstrap, never, rolled=False, rounds=NEVER_ROLLS_ROUNDS)
    return Case(never, 0, rolled_twin)


def wait_fired(prom: str, name: str, timeout: float = 120, **labels) -> dict:
    """The labels of the alert once Prometheus has had it firing (it may have resolved since: the
    backlog's alerts end when its clean does)."""
    q = f'last_over_time(ALERTS{_selector(alertname=name, alertstate="firing", **labels)}[1h])'
    return wait_for(lambda: prometheus_query(prom, q), timeout, f"{name} firing for {labels}",
                    interval=0.5)[0]["metric"]


def peak(prom: str, metric: str, **labels) -> float | None:
    got = prometheus_query(prom, f"max_over_time({metric}{_selector(cluster=CLUSTER, **labels)}[1h])")
    return float(got[0]["value"][1]) if got else None


def test_a_throttled_cleaner_under_a_backlog_fires_overdue_and_slow_and_an_unrolled_segment_never_lags(faults):
    b, prom = faults.broker, faults.prom
    slow = "kafka_compaction_broker_cleaner_max_clean_time_seconds"
    limit = THRESHOLDS["clean_time_seconds"]
    # the near miss for CleanerSlow: the same broker, unthrottled, with a clean behind it
    tick(b, "unthrottled")
    wait_value(prom, slow, lambda v: v < limit, "a clean time below the threshold before the throttle")
    assert never_alerted(prom, "CleanerSlow", cluster=CLUSTER)

    set_broker_config(b.bootstrap, b.node_id, **{"log.cleaner.io.max.bytes.per.second": THROTTLE_BYTES_PER_SECOND,
                                                 "log.cleaner.io.buffer.size": IO_BUFFER_BYTES})
    case, never = throttled_backlog_case(b)

    # explain at once, while the throttled clean of the backlog runs: overdue (eligible, past
    # max.compaction.lag.ms, not cleaned yet: the cleaner is slow, the partition waits for it); its near
    # miss, as far behind, is held by min.compaction.lag.ms instead; the unrolled backlog is
    # active_segment_only (the rolled backlog is not), with the roll forecast no later than segment.ms after
    # its first batch
    causes = explain(b, case.topic, case.near_miss, never.topic)
    late = causes[case.topic]
    assert late["evidence"]["checkpoint_offset"] is None, "explain read the backlog after its clean: too late"
    assert late["cause"] == "overdue", late["summary"]
    assert late["evidence"]["compaction_delay_ms"] >= OVERDUE_BY_MS - 3000
    assert late["evidence"]["configs"]["max.compaction.lag.ms"]["value"] == "3000"
    assert late["forecast"]["next_clean_due"]["in_seconds"] == 0  # due already
    assert causes[case.near_miss]["cause"] == "min_compaction_lag", causes[case.near_miss]["summary"]
    assert causes[case.near_miss]["evidence"]["eligible"] is False
    unrolled = causes[never.topic]
    assert unrolled["cause"] == "active_segment_only", unrolled["summary"]
    assert unrolled["evidence"]["configs"]["segment.ms"]["value"] == "604800000"
    roll_due = unrolled["forecast"]["active_segment_roll"]
    first_ts = unrolled["evidence"]["active_segment_first_timestamp"]
    assert roll_due["at_ms"] is not None and 0 < roll_due["in_seconds"], roll_due
    assert roll_due["at_ms"] <= first_ts + 604_800_000, roll_due  # segment.ms bounds it; segment.bytes may come first
    wait_exported(prom, case.topic, "overdue", was=True)  # the collector's, until the clean ended it
    wait_exported(prom, never.topic, "active_segment_only")
    assert "overdue" not in exported_cause(prom, case.near_miss, was=True)

    overdue = wait_fired(prom, "CompactionOverdue", topic=case.topic)
    assert overdue["partition"] == "0" and overdue["broker"] == str(b.node_id)
    assert peak(prom, "kafka_compaction_partition_compaction_delay_seconds", topic=case.topic) > 0
    lagging = wait_fired(prom, "CompactionLagging", topic=case.topic)  # eligible, behind the throttle
    assert lagging["partition"] == "0"
    cleaner_slow = wait_fired(prom, "CleanerSlow", cluster=CLUSTER)
    assert cleaner_slow["broker"] == str(b.node_id)
    assert value(prom, slow) > limit
    assert wait_cleaned(b.log_dir, case.topic) == BACKLOG_KEYS * BACKLOG_ROUNDS  # the backlog, up to the roll
    # the near miss: as far behind, never eligible (min.compaction.lag.ms), never overdue without a maximum
    near = {"topic": case.near_miss}
    assert value(prom, "kafka_compaction_partition_uncleaned_bytes", **near) > BACKLOG_BYTES
    assert peak(prom, "kafka_compaction_partition_compaction_delay_seconds", **near) == 0
    assert never_alerted(prom, "CompactionOverdue", topic=case.near_miss)
    assert cleaner_checkpoint(b.log_dir, case.near_miss) is None

    # segment.ms far beyond the traffic: every byte is in the active segment, nothing is cleanable or
    # uncleaned below it, the log is never eligible, and CompactionLagging never fires for it
    active = partition_dir(b.log_dir, never.topic) / "00000000000000000000.log"
    sel = {"topic": never.topic, "partition": "0"}
    assert [p.name for p in partition_dir(b.log_dir, never.topic).glob("*.log")] == [active.name]
    assert value(prom, "kafka_compaction_partition_log_bytes", **sel) == active.stat().st_size
    assert value(prom, "kafka_compaction_partition_not_yet_cleanable_bytes", **sel) == active.stat().st_size
    assert value(prom, "kafka_compaction_partition_log_end_offset", **sel) == BACKLOG_KEYS * NEVER_ROLLS_ROUNDS
    assert value(prom, "kafka_compaction_partition_first_uncleanable_offset", **sel) == 0
    for metric in ("cleanable_bytes", "cleanable_ratio", "uncleaned_bytes", "eligible"):
        assert peak(prom, f"kafka_compaction_partition_{metric}", **sel) == 0, metric
    assert never_alerted(prom, "CompactionLagging", topic=never.topic)

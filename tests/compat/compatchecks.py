"""The compatibility tier's checks, run by each module of tests/compat against its own broker (the ``family``
fixture: one Kafka version, the topics of compatscenario). Each compares what the project says (``logdir``,
``explain``, ``collect --once`` with every source) with what that broker and its own tools say: its
meta.properties, its cleaner checkpoint, its log end (ListOffsets), ``kafka-dump-log`` and
``kafka-transactions`` of the same version, its JMX exporter page, its log-cleaner.log.

A module imports this one's names (``from compatchecks import *``) and sets ``KAFKA_VERSION``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from prometheus_client.parser import text_string_to_metric_families

from boundedhttp import get_text
from clirun import run_cli
from compatscenario import EXPECTED_CAUSES, TOMBSTONES, cli_json, log_files
from dumpcompare import compare, dump, inspect_jsonl
from kafkatools import CLI_MODULE, cleaner_checkpoint, copy_partition, localbroker, localtools, partition_dir, watermarks
from localkafka.jars import ZOOKEEPER, family as family_of
from monitor.kafka.cleanerlog import read_cleaner_log
from monitor.kafka.logdir import load_meta_properties, meta_node_id
from waiting import wait_for

# what each family's stock log4j config writes into log-cleaner.log, and how its cleaner prints the
# segments it swapped (Scala's List in 3.x, Java's List.toString in 4.x)
CLEANER_LOGGERS = {
    ZOOKEEPER: {"kafka.log.LogCleaner"},
    "kraft": {"org.apache.kafka.storage.internals.log.LogCleaner",
              "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread",
              "org.apache.kafka.storage.internals.log.Cleaner"},
}
SWAPPED = {ZOOKEEPER: "for segment(s) List(LogSegment(", "kraft": "for segment(s) [LogSegment("}
SOURCES = ("admin", "consumer_groups", "jmx", "log_dirs", "cleaner_log")


def _settled(family) -> None:
    """Wait until the cleaner has done what it may: the open transaction's topic cleaned up to its last
    stable offset (the other topics were waited for while they were built)."""
    st, t = family.state, family.topics["txn"]
    wait_for(lambda: cleaner_checkpoint(st.log_dir, t) == family.txn_start, 120,
             f"the cleaner to clean {t}-0 up to its open transaction at {family.txn_start}")


def _damaged(family) -> str:
    return str(partition_dir(family.state.log_dir, family.topics["uncleanable"]))


@pytest.fixture(scope="module")
def explained(family) -> dict:
    """``explain`` over the broker (admin API, log dir, cleaner log): topic -> its one partition's row."""
    _settled(family)
    st = family.state
    rows = cli_json("explain", "--bootstrap-server", st.bootstrap, "--log-dir", st.log_dir,
                    "--cleaner-log", str(st.cleaner_log), fault_in=_damaged(family))
    return {r["topic"]: r for r in rows}


@pytest.fixture(scope="module")
def logdir_rows(family) -> dict:
    """``logdir --all`` over the broker's log dir: topic -> its one partition's row."""
    _settled(family)
    st = family.state
    rows = cli_json("logdir", "--all", "--cleaner-log", str(st.cleaner_log), st.log_dir, fault_in=_damaged(family))
    return {r["topic"]: r for r in rows}


def test_the_broker_is_of_its_family_and_its_log_dir_is_read_so(family):
    st = family.state
    meta = load_meta_properties(Path(st.log_dir) / "meta.properties")
    assert meta_node_id(meta) == str(st.node_id)
    metadata_log = Path(st.log_dir) / "__cluster_metadata-0"
    if family_of(st.kafka_version) == ZOOKEEPER:
        assert meta["version"] == "0" and "node.id" not in meta and "directory.id" not in meta, meta
        assert not metadata_log.exists()
        assert st.zookeeper and localbroker.is_alive(st.zookeeper_pid)
    else:
        assert meta["version"] == "1" and "broker.id" not in meta and meta.get("directory.id"), meta
        assert metadata_log.is_dir()  # KRaft's metadata log: not a user topic, never a compacted one


def test_broker_status_names_the_version_and_a_zookeeper_broker_s_node(family):
    """The broker the fixture started with ``broker start --kafka-version``, as ``broker status`` prints it."""
    st = family.state
    r = run_cli("broker", "status", "--dir", st.dir)
    assert r.returncode == 0, r.stderr
    zk = family_of(family.version) == ZOOKEEPER
    assert f"kafka:       {family.version} ({'ZooKeeper' if zk else 'KRaft'})" in r.stdout.splitlines()
    assert (f"zookeeper:   {st.zookeeper} (pid {st.zookeeper_pid}, stopped with the broker)" in r.stdout) == zk
    assert bool(st.zookeeper) == zk and f"bootstrap:   {st.bootstrap}" in r.stdout


def test_explain_names_the_cause_of_each_state(family, explained):
    got = {name: explained[family.topics[name]]["cause"] for name in EXPECTED_CAUSES}
    assert got == EXPECTED_CAUSES
    assert not any(t.startswith("__cluster_metadata") for t in explained)
    # the killed producer's transaction, as the broker's own tool lists it
    proc = localtools.transactions_tool(family.state.bootstrap, "describe-producers", "--topic",
                                        family.topics["txn"], "--partition", "0", kafka_version=family.version)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()]
    head = lines[0]
    open_txns = [dict(zip(head, row)) for row in lines[1:] if dict(zip(head, row))["CurrentTransactionStartOffset"] != "-1"]
    assert len(open_txns) == 1, proc.stdout
    ev = explained[family.topics["txn"]]["evidence"]
    assert ev["transaction"]["producer_id"] == int(open_txns[0]["ProducerId"])
    assert ev["transaction"]["first_offset"] == int(open_txns[0]["CurrentTransactionStartOffset"]) == family.txn_start
    admin = AdminClient({"bootstrap.servers": family.state.bootstrap})
    tp = TopicPartition(family.topics["txn"], 0)
    lso = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=IsolationLevel.READ_COMMITTED)[tp].result(30)
    assert ev["last_stable_offset"] == lso.offset == family.txn_start


def test_logdir_agrees_with_the_cleaner_checkpoint_and_the_log_end(family, logdir_rows):
    st = family.state
    assert "__cluster_metadata" not in logdir_rows, sorted(logdir_rows)  # 4.x's metadata log: no topic's
    for name, topic in family.topics.items():
        row = logdir_rows[topic]
        assert row["checkpoint_offset"] == cleaner_checkpoint(st.log_dir, topic), name
        assert row["log_end_offset"] == watermarks(st.bootstrap, topic)[1], name
    assert cleaner_checkpoint(st.log_dir, family.topics["lag"]) is None  # held from its first segment on


def test_tombstones_counted_as_the_versions_kafka_dump_log_shows_them(family, logdir_rows):
    st, topic = family.state, family.topics["tombstones"]
    dump = localtools.dump_log(log_files(st.log_dir, topic), "--print-data-log", kafka_version=family.version)
    on_disk = len(re.findall(r"\bvalueSize: -1\b", dump))
    assert on_disk == len(TOMBSTONES)  # delete.retention.ms of a day: every one kept
    assert logdir_rows[topic]["tombstones"] == on_disk


def test_the_versions_kafka_dump_log_reads_as_inspect_reads_the_segments(family, tmp_path):
    """What the audit and ``inspect`` read from a pasted or streamed dump (``DumpParser``) is what this
    version's own kafka-dump-log prints, record by record equal to what the binary reader reads: cleaned
    batches with tombstones, and a transaction's batches."""
    for name in ("tombstones", "txn"):
        files = sorted(copy_partition(partition_dir(family.state.log_dir, family.topics[name]), tmp_path / name)
                       .glob("*.log"))
        _, batches = dump(files, kafka_version=family.version)
        compare(inspect_jsonl(files), batches)


def _series(page: str) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(page) for s in f.samples}


def _one(series: dict, name: str, **labels):
    hits = [v for (n, lb), v in series.items() if n == name and labels.items() <= dict(lb).items()]
    assert len(hits) == 1, f"{name}{labels}: {len(hits)} samples"
    return hits[0]


def test_collect_once_reads_every_source_of_the_broker(family, explained):
    st = family.state
    proc = subprocess.run([sys.executable, "-m", CLI_MODULE, "collect", "--once", "--bootstrap-server", st.bootstrap,
                           "--jmx-url", st.jmx_url, "--log-dir", st.log_dir, "--cleaner-log", str(st.cleaner_log),
                           "--granularity", "partition"], capture_output=True, text=True, timeout=300)
    # 1: the uncleanable topic's damaged record is a partition fault met (collect --once exits 1 for one, as
    # logdir and explain do), named in a line of its own; no other topic of the family has one
    assert proc.returncode == 1, proc.stderr[-3000:]
    faulty = {m[1] for m in re.finditer(r"^(\S+)-\d+: ", proc.stderr, re.M)}
    assert family.topics["uncleanable"] in faulty, proc.stderr[-3000:]
    assert not faulty & (set(family.topics.values()) - {family.topics["uncleanable"]}), proc.stderr[-3000:]
    got = _series(proc.stdout)
    for kind in SOURCES:
        assert _one(got, "kafka_compaction_source_up", kind=kind) == 1.0, (kind, proc.stderr[-2000:])
    for name, topic in family.topics.items():
        assert _one(got, "kafka_compaction_partition_log_end_offset", topic=topic) == watermarks(st.bootstrap, topic)[1]
    for name, cause in EXPECTED_CAUSES.items():
        assert _one(got, "kafka_compaction_partition_compaction_cause", topic=family.topics[name], cause=cause) == 1.0
    # the admin API's topic config (describe_configs) and broker config, as this version answers them
    assert _one(got, "kafka_compaction_partition_min_cleanable_dirty_ratio", topic=family.topics["ratio"]) == 0.9
    assert _one(got, "kafka_compaction_broker_cleaner_threads") == 1.0
    # the cleaner gauges, as this version's JMX exporter page names them
    page = _series(get_text(st.jmx_url, deadline=30, max_bytes=1 << 24))
    assert _one(got, "kafka_compaction_broker_cleaner_dead_threads") == _one(page, "kafka_log_logcleaner_deadthreadcount")
    # the damaged topic's, and any a module's own test made uncleanable on the same broker before this one ran
    marked = read_cleaner_log(st.cleaner_log.read_text().splitlines()).uncleanable
    assert (family.topics["uncleanable"], 0) in marked
    assert _one(got, "kafka_compaction_broker_uncleanable_partitions") == _one(
        page, "kafka_log_logcleanermanager_uncleanable_partitions_count") == len(marked)
    assert _one(got, "kafka_compaction_partition_uncleanable", topic=family.topics["uncleanable"],
                exception="InvalidRecordException") == 1.0


def test_the_cleaner_log_is_read_as_the_versions_stock_config_writes_it(family):
    st, kind = family.state, family_of(family.version)
    text = st.cleaner_log.read_text()
    loggers = set(re.findall(r"\(([\w.$]+)\)$", text, re.M))
    assert loggers == CLEANER_LOGGERS[kind], loggers
    assert SWAPPED[kind] in text
    read = read_cleaner_log(text.splitlines(), source=str(st.cleaner_log))
    assert read.malformed == () and read.broker_starts == 1
    damaged = family.topics["uncleanable"]
    u = read.uncleanable[(damaged, 0)]
    assert (u.exception, u.log_dir) == ("InvalidRecordException", st.log_dir)
    assert f"Marking its partition ({damaged}-0) as uncleanable" in text.splitlines()[int(u.source.rsplit(":", 1)[1]) - 1]
    for name in ("cleaned", "tombstones"):
        topic = family.topics[name]
        ends = [c.dirty_end for c in read.cleans if c.log == f"{topic}-0"]
        assert ends and max(ends) == cleaner_checkpoint(st.log_dir, topic), (name, ends)

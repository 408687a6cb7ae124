"""Helpers the tests use to drive the real broker: topics and their configs, writing rounds,
copying a partition while the cleaner may swap its files, waiting for the cleaner.

This module (with tests/waiting.py and tests/dumpcompare.py) is the one set of such helpers; test
modules import them from here rather than writing their own. It is also the one place the tests
name the local-broker package and the command line (they move in issue 20)."""

from __future__ import annotations

import os
import shutil
import struct
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic,
                                   ResourceType)

from monitor.kafka.checkpoint import read_checkpoint
from localkafka import broker as localbroker  # noqa: F401  (re-exported: the one import of the package)
from localkafka import cluster as localcluster  # noqa: F401  (re-exported)
from localkafka import kafkatools as localtools  # noqa: F401  (re-exported: Kafka's own tools)
from localkafka import security as localsecurity
from localkafka.rawproduce import produce_raw, transactional_batch  # noqa: F401  (re-exported)
from waiting import wait_for

CLI_MODULE = "cli"  # what ``python -m`` runs for the command line


def cli_main(argv: list[str]) -> int:
    """The command line's ``main`` (imported late: it pulls in every edge)."""
    from cli.main import main

    return main(argv)


@contextmanager
def own_broker(directory: str | Path, name: str = "own broker", jmx_exporter_config: str = "jmx-exporter.yaml",
               jmx_http_server: dict | None = None, **extra_config):
    """A broker of the test's own (a ``BrokerState``), for checks whose expected values cover every
    partition on a broker (a broker-wide gauge, a page's counts): no other test's topic is on it.
    ``extra_config`` are broker settings (use dots via **{"a.b": v}); ``jmx_exporter_config`` one of
    localkafka.broker.JMX_EXPORTER_CONFIGS, ``jmx_http_server`` the agent's httpServer settings (see
    localkafka.broker.start). Stopped when the block ends."""
    state = localbroker.start(Path(directory), extra_config={k: str(v) for k, v in extra_config.items()} or None,
                              progress=lambda m: print(f"[{name}] {m}", file=sys.stderr),
                              jmx_exporter_config=jmx_exporter_config, jmx_http_server=jmx_http_server)
    try:
        yield state
    finally:
        localbroker.stop(Path(directory), progress=lambda *_: None)


def unique_topic(prefix: str) -> str:
    """A topic name no other test uses: every test owns its topics."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(bootstrap: str, name: str, partitions: int = 1, **configs) -> str:
    """Create ``name`` with topic ``configs`` (use dots: pass a dict via **{"a.b": v}) and wait until
    every partition has a leader."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    cfg = {k: str(v) for k, v in configs.items()}
    admin.create_topics([NewTopic(name, partitions, 1, config=cfg)])[name].result(timeout=30)

    def led():
        t = admin.list_topics(name, timeout=5).topics.get(name)
        return bool(t and not t.error and len(t.partitions) == partitions
                    and all(p.leader >= 0 for p in t.partitions.values()))

    wait_for(led, 30, f"a leader for every partition of topic {name}")
    return name


def compacted(**extra) -> dict:
    """Topic configs that let the local broker compact within seconds."""
    cfg = {
        "cleanup.policy": "compact",
        "segment.ms": 200,
        "min.cleanable.dirty.ratio": 0.01,
        "delete.retention.ms": 1000,
        "min.compaction.lag.ms": 0,
    }
    cfg.update(extra)
    return cfg


def topic_config(bootstrap: str, topic: str) -> dict[str, str]:
    """The topic's configs as the broker describes them (what it has in force)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    res = ConfigResource(ResourceType.TOPIC, topic)
    entries = admin.describe_configs([res])[res].result(30)
    return {k: e.value for k, e in entries.items()}


def set_topic_config(bootstrap: str, topic: str, **cfg) -> None:
    """Set topic configs (``min_cleanable_dirty_ratio=0.5`` or ``**{"min.cleanable.dirty.ratio": 0.5}``)
    and wait until the broker describes them as set: it applies config changes asynchronously."""
    want = {k.replace("_", "."): str(v) for k, v in cfg.items()}
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive its futures
    res = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in want.items()])
    for fut in admin.incremental_alter_configs([res]).values():
        fut.result(30)
    wait_for(lambda: all(topic_config(bootstrap, topic).get(k) == v for k, v in want.items()), 30,
             f"the broker to put {want} in force on {topic}")


def producer(bootstrap: str, **conf) -> Producer:
    base = {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"}
    base.update(conf)
    return Producer(base)


def transactional_producer(bootstrap: str, transactional_id: str, **conf) -> Producer:
    """A transactional producer, initialised. Its transaction.timeout.ms (10 min) is far longer than a
    test, so the coordinator never aborts a transaction the test leaves open on purpose; a broker's
    transaction.max.timeout.ms must allow it."""
    p = producer(bootstrap, **{"transactional.id": transactional_id, "transaction.timeout.ms": 600_000, **conf})
    p.init_transactions(30)
    return p


def produce(bootstrap: str, topic: str, items, partition: int = 0, timestamp_ms: int | None = None, **conf) -> int:
    """Produce ``(key, value)`` pairs (bytes/str/None) and flush; returns how many. ``timestamp_ms``
    gives every record that CreateTime (else the producer's clock)."""
    return produce_timed(bootstrap, topic, ((k, v, timestamp_ms or 0) for k, v in items), partition, **conf)


def produce_timed(bootstrap: str, topic: str, records, partition: int = 0, **conf) -> int:
    """Produce ``(key, value, timestamp ms)`` records in order (0: the producer's clock) and flush;
    returns how many."""
    p = producer(bootstrap, **conf)
    errors = []
    n = 0
    for key, value, ts in records:
        p.produce(topic, key=key, value=value, partition=partition, timestamp=ts,
                  on_delivery=lambda err, msg: errors.append(err) if err else None)
        n += 1
        if n % 1000 == 0:
            p.poll(0)
    left = p.flush(30)
    if left or errors:
        raise KafkaException(f"produce to {topic}: {left} undelivered, errors {errors[:3]}")
    return n


def produce_aged_segments(bootstrap: str, topic: str, ages_ms, now_ms: int, records: int = 30, keys: int = 20,
                          partition: int = 0) -> None:
    """One segment per age in ``ages_ms`` (oldest first), its records timestamped that long before
    ``now_ms``: a topic whose ``segment.ms`` is below the gaps rolls at each group's first batch, since
    Kafka rolls on the incoming batch's timestamp against the segment's first (LogSegment.shouldRoll),
    so no wall-clock time has to pass."""
    p = producer(bootstrap)
    for g, age in enumerate(ages_ms):
        ts = now_ms - int(age)
        for i in range(records):
            p.produce(topic, key=f"k{i % keys}".encode(), value=b"v" * (50 + g), partition=partition, timestamp=ts + i)
        if p.flush(30):  # one group at a time: each group's first batch rolls a segment of its own
            raise KafkaException(f"produce to {topic}: undelivered records")


ROLL_KEY = b"__roll__"


def roll(bootstrap: str, topic: str, partition: int = 0, wait: float = 0.3, key: bytes = ROLL_KEY) -> None:
    """Make the broker roll the active segment: let ``wait`` seconds pass (more than the topic's
    segment.ms), then append one record, which the broker writes to a new segment."""
    time.sleep(wait)  # time passes on purpose: the segment must be older than segment.ms to roll
    produce(bootstrap, topic, [(key, b"x")], partition=partition)


def roll_at(bootstrap: str, topic: str, timestamp_ms: int, partition: int = 0, key: bytes = ROLL_KEY) -> None:
    """Roll the active segment without waiting: append one record whose timestamp is more than the
    topic's segment.ms after the segment's first batch. Kafka compares record timestamps, not the
    clock, when the segment's batches carry them (LogSegment.shouldRoll / timeWaitedForRoll), so records
    written with one ``timestamp_ms`` before it stay in one segment however long writing them took."""
    produce(bootstrap, topic, [(key, b"x")], partition=partition, timestamp_ms=timestamp_ms)


def write_rounds(bootstrap: str, topic: str, rounds: int, keys: int = 200, tombstones=(), partition: int = 0,
                 value=lambda r, i: f"value-{r}-{i}".encode() * 4, roll_wait: float = 0.3, **conf) -> int:
    """``rounds`` rounds of one update to each of ``keys`` keys ``k0``, ``k1``, ..., each round rolled
    into its own segment (see ``roll``); then, if given, a tombstone for each key index in
    ``tombstones``, rolled too. Returns how many records were written (roll records included)."""
    n = 0
    for r in range(rounds):
        n += produce(bootstrap, topic, [(f"k{i}".encode(), value(r, i)) for i in range(keys)], partition, **conf)
        roll(bootstrap, topic, partition, wait=roll_wait)
        n += 1
    if tombstones:
        n += produce(bootstrap, topic, [(f"k{i}".encode(), None) for i in tombstones], partition, **conf)
        roll(bootstrap, topic, partition, wait=roll_wait)
        n += 1
    return n


def write_rounds_min_lag(bootstrap: str, topic: str, rounds: int = 3, keys: int = 100) -> None:
    """Several rolled segments of keyed updates (for topics kept dirty by min.compaction.lag.ms)."""
    write_rounds(bootstrap, topic, rounds, keys, value=lambda r, i: f"v{r}".encode() * 20)


def consume_all(bootstrap: str, topic: str, partition: int = 0, timeout: float = 20.0) -> list:
    """Every record from the start of the partition to its end offset now."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"t-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "enable.partition.eof": True, "isolation.level": "read_uncommitted"})
    try:
        lo, hi = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
        out = []
        if hi <= lo:
            return out
        c.assign([TopicPartition(topic, partition, lo)])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    if out and out[-1].offset() >= hi - 1 or m.offset() >= hi:
                        return out
                    continue
                raise KafkaException(m.error())
            out.append(m)
            if m.offset() >= hi - 1:
                return out
        raise TimeoutError(f"read {len(out)} records of {topic}-{partition} up to offset {hi} in {timeout:g}s")
    finally:
        c.close()


_COORDINATOR_BUSY = (KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.NOT_COORDINATOR,
                     KafkaError.COORDINATOR_NOT_AVAILABLE)


def commit_offsets(config: dict, offsets: list[TopicPartition]) -> None:
    """Commit ``offsets`` for the group of ``config`` (a consumer's config: bootstrap.servers, group.id,
    security) and go away; a coordinator still loading its partition of __consumer_offsets (a
    retriable error) is waited out."""
    c = Consumer({**config, "enable.auto.commit": False})

    def commit():
        try:
            c.commit(offsets=offsets, asynchronous=False)
            return True
        except KafkaException as exc:
            # librdkafka flags a commit's coordinator errors as not retriable, though Kafka's protocol
            # says they are (a coordinator loading its __consumer_offsets partition, or moved): waited out
            if exc.args[0].retriable() or exc.args[0].code() in _COORDINATOR_BUSY:
                return False
            raise

    try:
        wait_for(commit, 60, f"group {config['group.id']} to commit {offsets}")
    finally:
        c.close()


def watermarks(bootstrap: str, topic: str, partition: int = 0) -> tuple[int, int]:
    """The broker's (log start offset, high watermark) of the partition. read_uncommitted: librdkafka's
    default, read_committed, would give the last stable offset where a transaction is open."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"t-{uuid.uuid4().hex[:6]}",
                  "isolation.level": "read_uncommitted"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
    finally:
        c.close()


def wait_records(bootstrap: str, topic: str, partitions: int, count: int, timeout: float = 60.0) -> int:
    """Wait until the topic's ``partitions`` hold ``count`` records or more between them (by their high
    watermarks), as when another thread writes to it; return how many. A new partition whose leader does
    not serve yet counts as holding none."""
    def records():
        try:
            return sum(watermarks(bootstrap, topic, p)[1] for p in range(partitions))
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.NOT_LEADER_FOR_PARTITION:
                raise
            return 0

    return wait_for(lambda: (lambda n: n if n >= count else None)(records()), timeout,
                    f"{count} records on {topic}'s {partitions} partitions")


def partition_dir(log_dir: str | Path, topic: str, partition: int = 0) -> Path:
    return Path(log_dir) / f"{topic}-{partition}"


def segment_bases(folder: str | Path) -> list[int]:
    """The base offsets of a partition folder's segments, from the file names (Kafka's own naming)."""
    return sorted(int(f.name[:-4]) for f in Path(folder).glob("*.log"))


V2_HEADER = 61  # bytes of a v2 batch header: the first record's length varint follows


def damage_first_record(folder: str | Path) -> tuple[Path, bytes]:
    """The partition folder's first segment with its first record declaring one byte more than it holds (its
    length varint + 1; zigzag: + 2), the CRC left as it was: Kafka's cleaner fails on it building its offset
    map and marks the partition uncleanable. (the segment, its bytes before) for a test that repairs it."""
    folder = Path(folder)
    seg = folder / f"{segment_bases(folder)[0]:020d}.log"
    original = seg.read_bytes()
    assert original[16] == 2 and original[V2_HEADER] < 0x7E  # a v2 batch; a one-byte length varint
    with open(seg, "r+b") as fh:
        fh.seek(V2_HEADER)
        fh.write(bytes([original[V2_HEADER] + 2]))
    return seg, original


def cleaner_checkpoint(log_dir: str | Path, topic: str, partition: int = 0) -> int | None:
    return read_checkpoint(Path(log_dir) / "cleaner-offset-checkpoint").get((topic, partition))


def wait_cleaned(log_dir, topic: str, partition: int = 0, past: int = 0, timeout: float = 90.0) -> int:
    """Wait until the cleaner's checkpoint for the partition is beyond ``past``; return it."""
    return wait_for(lambda: (lambda v: v if v is not None and v > past else None)(
        cleaner_checkpoint(log_dir, topic, partition)), timeout, f"the cleaner to clean {topic}-{partition} past {past}")


def wait_cleaned_up_to_active(log_dir, topic: str, partition: int = 0, timeout: float = 90.0) -> int:
    """Wait until the cleaner has cleaned everything below the active segment: its checkpoint equals
    the base offset of the newest segment file. Returns that offset."""
    folder = partition_dir(log_dir, topic, partition)
    return wait_for(lambda: (lambda cp: cp if cp is not None and cp == segment_bases(folder)[-1] else None)(
        cleaner_checkpoint(log_dir, topic, partition)), timeout,
        f"the cleaner's checkpoint of {topic}-{partition} to reach its active segment")


# ------------------------------------------------------------------ copying a partition

def whole_batches(data: bytes) -> bytes:
    """``data`` cut after its last complete batch (each is 12 + its int32 length bytes), so a copy of
    an active segment taken mid-append holds only whole batches."""
    pos = 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        if length <= 0 or pos + 12 + length > len(data):
            break
        pos += 12 + length
    return data[:pos]


def _listing(folder: Path, suffixes) -> dict[str, int] | None:
    """name -> inode of the folder's files with ``suffixes``; None while a segment swap is under way
    (a ``.swap`` file exists: the old segment may already be renamed away, the new not yet in place)."""
    out = {}
    with os.scandir(folder) as it:
        for e in it:
            if e.name.endswith(".swap"):
                return None
            if e.name.endswith(tuple(suffixes)):
                out[e.name] = e.inode()
    return out


def copy_partition(src: str | Path, dst_root: str | Path, suffixes=(".log",), timeout: float = 60.0,
                   keep_mtimes: bool = False) -> Path:
    """Copy a live partition folder's files (segments by default) into ``dst_root/<folder name>``, as
    one consistent state although the cleaner may swap segments meanwhile.

    The cleaner replaces segments by renaming (``.cleaned`` -> ``.swap``, old segment -> ``.deleted``,
    ``.swap`` -> ``.log``), so a copy is kept only when no swap was under way and the same files (by
    name and inode) were there before and after it; otherwise it is taken again. Segments are cut
    after their last whole batch (the active one may be appended to mid-copy). ``keep_mtimes``: each copy
    keeps its source's mtime (an index copied before its log is otherwise older than it)."""
    src, dst = Path(src), Path(dst_root) / Path(src).name

    def attempt():
        before = _listing(src, suffixes)
        if not before:
            return None
        if dst.exists():
            shutil.rmtree(dst)
        dst.mkdir(parents=True)
        try:
            for name in sorted(before):
                st = os.stat(src / name)
                data = (src / name).read_bytes()
                (dst / name).write_bytes(whole_batches(data) if name.endswith(".log") else data)
                if keep_mtimes:
                    os.utime(dst / name, ns=(st.st_atime_ns, st.st_mtime_ns))
        except FileNotFoundError:  # renamed away by a swap: take it again
            return None
        return dst if _listing(src, suffixes) == before else None

    return wait_for(attempt, timeout, f"a copy of {src} that no segment swap cut through")



# ------------------------------------------------------------------ the secured cluster (tests/conftest.py kafka_cluster)


def client_config(cluster, user: str, **extra) -> dict:
    """A confluent_kafka client config for ``user`` (admin, monitor or blind) of the local cluster
    ``cluster`` (a ``localcluster.ClusterState``): SASL/SCRAM-SHA-512 over TLS, the cluster's CA, the
    password read from its mode-0600 file. A plaintext cluster gets the bootstrap servers only."""
    conf = {"bootstrap.servers": cluster.bootstrap}
    if cluster.security == "sasl_ssl":
        conf.update({"security.protocol": "SASL_SSL", "sasl.mechanism": localsecurity.MECHANISM,
                     "ssl.ca.location": cluster.ca_pem, "sasl.username": user,
                     "sasl.password": cluster.password(user)})
    conf.update(extra)
    return conf


def cluster_brokers(cluster, **extra) -> list[dict]:
    """monitor.yaml's ``brokers`` for the local cluster: each node's JMX exporter page and log dir, with
    the agents' basic-auth user and its password by reference to its file (when the cluster has one)."""
    auth = {}
    if cluster.jmx_username:
        folder, name = os.path.split(cluster.jmx_password_file)
        auth = {"jmx_username": cluster.jmx_username, "jmx_password": "${directory:%s:%s}" % (folder, name)}
    return [{"id": b.node_id, "jmx_url": b.jmx_url, "log_dirs": [b.log_dir], **auth, **extra}
            for b in cluster.brokers()]


def cluster_admin(cluster, user: str = "admin", **extra) -> AdminClient:
    return AdminClient(client_config(cluster, user, **extra))

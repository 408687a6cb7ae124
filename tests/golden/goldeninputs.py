"""The golden tests' fixed inputs, made at test time (nothing here is a committed log dir): the same
bytes, names and file times every run.

- ``log_dir``: one broker log dir (node.id 1), written with kafka-python's record builders
  (tests/recordfixtures.py) with chosen offsets, timestamps and keys:
  ``golden-orders-0``: three segments with tombstones, codecs mixed, a cleaner checkpoint inside them;
  ``golden-orders-1``: a small active segment only, null keys;
  ``golden-orders-2``: a batch with a bad CRC between good ones (a read fault);
  ``golden-lagged-0``: a min.compaction.lag.ms nothing has reached;
  ``golden-calm-0``: dirty bytes below the topic's min.cleanable.dirty.ratio;
  ``golden-txn-0``: committed, aborted and open transactions, the ``.txnindex`` and a producer snapshot;
  ``golden-tombs-0``: tombstones far past a short delete horizon and a cleaner's emptied batch, marked
  uncleanable by the cleaner log;
  ``golden-disk-0``: a topic only on disk, with a segment swap in progress (a partition fault);
  ``golden-disk-1``: the same topic, readable (its configs are not the admin API's: the file's, or unknown);
  ``golden-events-0``: cleanup.policy=delete, on disk only (``logdir --all`` lists it);
  the temporary files a clean leaves (``.cleaned``, ``.swap``, ``.deleted``) and a replica pending
  deletion (``-delete``). Every file's mtime is set to a fixed time, so "changed how long ago" is the
  same long-past age every run (leftovers are stale, segments long unchanged).
- ``cleaner_log``: a log-cleaner.log naming one partition uncleanable, with a clean's stats block.
- ``JmxPage``: a recorded JMX exporter page of a real Kafka 4.3 broker (tests/collectors/pages), served
  on a loopback port the kernel hands out.
- ``broker_scenario``: on the session broker, the same topics (less ``golden-disk``, plus
  ``golden-broker-only``) with fixed topic configs, each partition filled to the log dir's log end
  offset with fixed records (one per batch, no idempotence, fixed CreateTime: the same bytes every run),
  and a consumer group committed at fixed offsets. The broker never cleans them: nothing rolls. Its
  answers are then the same every run but for what truly varies, which tests/golden/goldenfiles.py
  normalises: its address (a free port), the group's time lag (now minus a fixed CreateTime) and the
  counts of everything the shared session broker lists (other tests' topics and groups).
"""

from __future__ import annotations

import gzip
import http.server
import os
import struct
import threading
from pathlib import Path

from crc32c import crc32c

from cleanerlogfixtures import START, head, stats_block, uncleanable
from recordfixtures import T0, Rec, control, empty_v2, items, v2, write

PREFIX = "golden-"
# file.delete.delay.ms of every topic: far longer than any run, so that the temporary files planted now
# (.cleaned, .deleted, a .swap in progress: their age is the inode's change time, which cannot be pinned)
# are never stale. With Kafka's 60 s default a slow run (the full suite on a loaded machine) read them
# more than 60 s after they were made, and the pages changed.
NEVER_STALE = {"file.delete.delay.ms": str(10 * 365 * 86_400_000)}
TOPICS = {  # the topic configs, on the broker (admin API) and in monitor.yaml for runs without it
    "golden-orders": {**NEVER_STALE, "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.1",
                      "segment.bytes": "1048576"},
    "golden-txn": {**NEVER_STALE, "cleanup.policy": "compact", "min.compaction.lag.ms": "0"},
    "golden-tombs": {**NEVER_STALE, "cleanup.policy": "compact", "delete.retention.ms": "1000", "min.cleanable.dirty.ratio": "0.9"},
    "golden-lagged": {**NEVER_STALE, "cleanup.policy": "compact", "min.compaction.lag.ms": str(20 * 365 * 86_400_000)},
    "golden-calm": {**NEVER_STALE, "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.99"},
}
BROKER_ONLY = {"golden-broker-only": {**NEVER_STALE, "cleanup.policy": "compact"}}
DISK_ONLY = "golden-disk"
DISK_ONLY_CONFIGS = {DISK_ONLY: {**NEVER_STALE, "cleanup.policy": "compact"},  # in monitor.yaml (or --topic-config)
                     "golden-events": {**NEVER_STALE, "cleanup.policy": "delete", "retention.ms": "86400000"}}
PARTITIONS = {"golden-lagged": 1, "golden-calm": 1, "golden-orders": 3, "golden-txn": 1, "golden-tombs": 1, "golden-broker-only": 1}
GROUP = "golden-readers"
COMMITTED = {("golden-orders", 0): 150, ("golden-orders", 1): 5, ("golden-tombs", 0): 40}
NODE_ID = "1"
CLUSTER_ID = "goldenClusterId0000000"
FILE_TIME_S = (T0 + 3_600_000) // 1000  # every file's mtime: fixed, long past
NOW_MS = T0 + 30 * 86_400_000  # the audit's --now-ms


def _snapshot(entries: list[tuple]) -> bytes:
    """A producer snapshot as ProducerStateManager writes it (version 1, CRC-32C over the rest)."""
    from monitor.kafka.producer_snapshot import ENTRY

    body = struct.pack(">i", len(entries)) + b"".join(ENTRY.pack(*e) for e in entries)
    return struct.pack(">hI", 1, crc32c(body)) + body


def _aborted_txn(pid, first, last, lso) -> bytes:
    """Kafka's AbortedTxn entry: version int16 0, then producer id, first, last and last stable offset."""
    return struct.pack(">hqqqq", 0, pid, first, last, lso)


def log_dir(root: Path) -> Path:
    """The fixed broker log dir under ``root``; returns its path."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "meta.properties").write_text(f"version=1\nnode.id={NODE_ID}\ncluster.id={CLUSTER_ID}\n")
    # golden-orders-0: three segments of 100 records (keys updated, every 9th a tombstone), codecs mixed,
    # cleaned up to 100 (the first segment is its clean section)
    orders0 = root / "golden-orders-0"
    for s, codec in enumerate(("gzip", "none", "lz4")):
        base = 100 * s
        write(orders0 / f"{base:020d}.log",
              [v2(items(range(base + b, base + b + 25), "o", tombstone_every=9, distinct=40, step_ms=60_000), codec)
               for b in range(0, 100, 25)])
    (orders0 / "00000000000000000100.log.cleaned").write_bytes(b"\0" * 100)  # a clean stopped midway
    # golden-orders-1: one small active segment
    write(root / "golden-orders-1" / f"{0:020d}.log", [v2(items(range(0, 10), "p", null_key_every=4))])
    # golden-orders-2: a batch whose CRC does not match between two good ones (a read fault)
    bad = bytearray(v2(items(range(5, 10), "q")).data)
    bad[-3] ^= 0xFF
    write(root / "golden-orders-2" / f"{0:020d}.log", [v2(items(range(0, 5), "q"))])
    with open(root / "golden-orders-2" / f"{0:020d}.log", "ab") as fh:
        fh.write(bytes(bad) + v2(items(range(10, 15), "q")).data)
    # golden-lagged-0 (min.compaction.lag.ms of 20 years: nothing old enough) and golden-calm-0 (dirty
    # below its min.cleanable.dirty.ratio 0.99): two segments each, never cleaned
    for topic in ("golden-lagged", "golden-calm"):
        write(root / f"{topic}-0" / f"{0:020d}.log", [v2(items(range(0, 30), topic[7], distinct=10), "gzip")])
        write(root / f"{topic}-0" / f"{30:020d}.log", [v2(items(range(30, 40), topic[7], distinct=10))])
    # golden-events-0: a topic with cleanup.policy=delete, on disk only (``logdir --all`` lists it)
    write(root / "golden-events-0" / f"{0:020d}.log", [v2(items(range(0, 20), "e", step_ms=3_600_000), "gzip")])
    # golden-txn-0: producer 4000 commits 0..4, aborts 6..8, then opens a transaction at 10 never ended;
    # a plain batch in between
    pid, ep = 4000, 1
    txn = root / "golden-txn-0"
    write(txn / f"{0:020d}.log", [
        v2(items(range(0, 5), "t"), producer_id=pid, producer_epoch=ep, base_sequence=0, transactional=True),
        control(5, "COMMIT", pid, ep, T0 + 100),
        v2(items(range(6, 9), "t"), producer_id=pid, producer_epoch=ep, base_sequence=5, transactional=True),
        control(9, "ABORT", pid, ep, T0 + 200),
    ])
    (txn / f"{0:020d}.txnindex").write_bytes(_aborted_txn(pid, 6, 9, 10))
    write(txn / f"{10:020d}.log", [
        v2(items(range(10, 13), "t"), producer_id=pid, producer_epoch=ep, base_sequence=8, transactional=True),
        v2(items(range(13, 16), "u")),
    ])
    # the snapshot at the roll (offset 10): producer 4000's last batch was its marker, no transaction open
    (txn / f"{10:020d}.snapshot").write_bytes(_snapshot([(pid, ep, 7, 9, 0, T0 + 200, 0, -1)]))
    # golden-tombs-0: tombstones for half the keys, old; a cleaner's emptied batch; cleaned to 40
    tombs = root / "golden-tombs-0"
    recs = items(range(0, 40), "d", distinct=20)
    recs += [Rec(off, T0 + off * 7, f"d-{off - 40}".encode(), None) for off in range(40, 50)]
    write(tombs / f"{0:020d}.log", [v2(recs[:40], "zstd"), empty_v2(40, 41, 77, 0, 30, T0 + 500),
                                    v2(recs[42:])])
    write(tombs / f"{50:020d}.log", [v2(items(range(50, 60), "d", distinct=20))])
    (tombs / f"{50:020d}.log.deleted").write_bytes(b"\0" * 64)
    # golden-disk-0: a topic the broker does not have (deleted there, or another cluster's)
    # and a segment swap in progress (a clean's last step): its figures unknown, with the reason
    disk = root / f"{DISK_ONLY}-0"
    write(disk / f"{0:020d}.log", [v2(items(range(0, 6), "x", tombstone_every=2))])
    (disk / f"{0:020d}.index.swap").write_bytes(b"\0" * 16)
    # golden-disk-1 readable: with the broker asked, its configs are the ones the admin API does not give
    write(root / f"{DISK_ONLY}-1" / f"{0:020d}.log", [v2(items(range(0, 30), "y", tombstone_every=5, distinct=8))])
    write(root / f"{DISK_ONLY}-1" / f"{30:020d}.log", [v2(items(range(30, 35), "y", distinct=8))])
    # a replica pending deletion: not live, skipped and named
    write(root / "golden-gone-0.0123456789abcdef0123456789abcdef-delete" / f"{0:020d}.log", [v2(items(range(0, 3)))])
    (root / "cleaner-offset-checkpoint").write_text("0\n2\ngolden-orders 0 100\ngolden-tombs 0 40\n")
    (root / "log-start-offset-checkpoint").write_text("0\n1\ngolden-orders 0 0\n")
    (root / "recovery-point-offset-checkpoint").write_text(
        "0\n5\ngolden-orders 0 300\ngolden-orders 1 10\ngolden-orders 2 15\ngolden-txn 0 16\ngolden-tombs 0 60\n")
    (root / "replication-offset-checkpoint").write_text(
        "0\n5\ngolden-orders 0 300\ngolden-orders 1 10\ngolden-orders 2 15\ngolden-txn 0 16\ngolden-tombs 0 60\n")
    for d, _, files in os.walk(root):
        for name in files:
            os.utime(Path(d) / name, (FILE_TIME_S, FILE_TIME_S))
    return root


LOG_END = {("golden-lagged", 0): 40, ("golden-calm", 0): 40, ("golden-orders", 0): 300, ("golden-orders", 1): 10, ("golden-orders", 2): 15, ("golden-txn", 0): 16, ("golden-tombs", 0): 60,
           ("golden-broker-only", 0): 3}


def cleaner_log(path: Path) -> Path:
    """A log-cleaner.log: one clean of golden-orders-0 (its stats) and golden-tombs-0 marked uncleanable."""
    lines = [*START,
             *stats_block("2023-11-14 23:00:00,000", 0, "golden-orders-0", 0, 100, 40_000, 0.5, 0.1, 0.02,
                          20_000, 100, 40),
             *uncleanable("2023-11-14 23:05:00,000", "UnifiedLog(dir=/var/lib/kafka/data/golden-tombs-0)",
                          "golden-tombs-0", "org.apache.kafka.common.errors.CorruptRecordException",
                          "Record size 0 is less than the minimum record overhead (14)"),
             head("2023-11-14 23:06:00,000", "INFO", "[kafka-log-cleaner-thread-0]: \tCleanable partitions: 0, Delayed partitions: 0, max delay: 0")]
    path.write_text("\n".join(lines) + "\n")
    return path


class JmxPage:
    """A recorded JMX exporter page (the rule-named agent config's, Kafka 4.3) on a loopback port."""

    def __init__(self):
        page = Path(__file__).resolve().parent.parent / "collectors" / "pages" / "jmx-exporter.kafka-4.3.0.prom.gz"
        body = gzip.decompress(page.read_bytes())

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/metrics"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def broker_scenario(bootstrap: str) -> None:
    """The golden topics on the session broker, filled and committed at fixed offsets (see the docstring)."""
    from confluent_kafka import TopicPartition

    from kafkatools import commit_offsets, create_topic, produce_timed

    for topic, cfg in {**TOPICS, **BROKER_ONLY}.items():
        create_topic(bootstrap, topic, PARTITIONS[topic], **cfg)
    for (topic, p), end in LOG_END.items():
        records = [(f"{topic}-{p}-{i % 7}".encode(), f"v{i}".encode(), T0 + i * 1000) for i in range(end)]
        produce_timed(bootstrap, topic, records, partition=p, **{"enable.idempotence": False, "linger.ms": 0,
                                                                 "batch.num.messages": 1, "max.in.flight": 1})
    commit_offsets({"bootstrap.servers": bootstrap, "group.id": GROUP},
                   [TopicPartition(t, p, o) for (t, p), o in sorted(COMMITTED.items())])

"""The compatibility tier's topics: one per state the causes name, put there on a real broker of the version
under test, with what the broker itself says about each (the expected side of the checks).

States (topic -> the cause ``explain`` must give):

* ``cleaned``: rounds of updates rolled and cleaned up to the active segment (the roll record alone is dirty);
* ``lag``: the same rounds under ``min.compaction.lag.ms`` of an hour: nothing may be cleaned yet;
* ``ratio``: cleaned once, then a few updates under ``min.cleanable.dirty.ratio`` 0.9: below it;
* ``tombstones``: rounds then tombstones, cleaned, kept by a ``delete.retention.ms`` of a day;
* ``txn``: a transaction left open by a producer killed with SIGKILL, committed records after it: the last
  stable offset holds the cleaner;
* ``active``: updates never rolled: every dirty record is in the active segment;
* ``uncleanable``: the first record of a dirty segment declares one byte more than it holds (its length
  varint + 1, as tests/collectors/test_uncleanable_kafka.py does on 4.3): the cleaner fails on it while
  building its offset map and marks the partition uncleanable (its WARN line and Kafka's gauge say so).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field

from kafkatools import (compacted, create_topic, damage_first_record, partition_dir, produce, roll, set_topic_config,
                       wait_cleaned_up_to_active, watermarks, write_rounds)
from waiting import wait_for

EXPECTED_CAUSES = {"lag": "min_compaction_lag", "ratio": "below_threshold", "txn": "open_transaction",
                   "active": "active_segment_only", "uncleanable": "uncleanable"}
KEYS = 30  # keys per round: a few kilobytes a segment
TOMBSTONES = tuple(range(0, KEYS, 3))  # the keys deleted on ``tombstones``
DAY_MS, HOUR_MS = 86_400_000, 3_600_000

# The killed producer: a transaction begun, its records flushed to the broker, then nothing (SIGKILL) while
# its transaction.timeout.ms (10 min) runs; "open" on stdout once the records are on the broker.
OPEN_TXN = r"""
import sys, time
from confluent_kafka import Producer
bootstrap, topic, txid = sys.argv[1:4]
p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txid, "transaction.timeout.ms": 600000,
              "acks": "all"})
p.init_transactions(30)
p.begin_transaction()
for i in range(5):
    p.produce(topic, key=f"t{i}".encode(), value=b"open" * 8, partition=0)
p.flush(30)
print("open", flush=True)
time.sleep(3600)
"""


@dataclass
class Scenario:
    state: object  # localkafka.broker.BrokerState
    topics: dict = field(default_factory=dict)  # state name -> topic
    txn_start: int = -1  # the open transaction's first offset (where the producer began it)

    @property
    def version(self) -> str:
        return self.state.kafka_version


def _txn_child(bootstrap: str, topic: str, children: list) -> None:
    """Run the producer of ``OPEN_TXN`` until its transaction is open on the broker, then kill it."""
    proc = subprocess.Popen([sys.executable, "-c", OPEN_TXN, bootstrap, topic, f"compat-{topic}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    children.append(proc)
    line = proc.stdout.readline()  # blocks until the child says so or exits (its stdout closes)
    if line.strip() != "open":
        proc.kill()
        raise AssertionError(f"the transactional producer did not open its transaction: {proc.stderr.read()[-2000:]}")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)


def stop_children(children: list) -> None:
    for proc in children:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def build(state, children: list) -> Scenario:
    b = state.bootstrap
    sc = Scenario(state)
    t = sc.topics

    t["cleaned"] = create_topic(b, "cleaned", **compacted())
    write_rounds(b, t["cleaned"], 3, keys=KEYS)

    t["lag"] = create_topic(b, "lag", **compacted(**{"min.compaction.lag.ms": HOUR_MS}))
    write_rounds(b, t["lag"], 3, keys=KEYS)

    t["ratio"] = create_topic(b, "ratio", **compacted())
    write_rounds(b, t["ratio"], 3, keys=KEYS)

    t["tombstones"] = create_topic(b, "tombstones", **compacted(**{"delete.retention.ms": DAY_MS}))
    write_rounds(b, t["tombstones"], 2, keys=KEYS, tombstones=TOMBSTONES)

    t["txn"] = create_topic(b, "txn", **compacted())
    write_rounds(b, t["txn"], 2, keys=KEYS)

    t["active"] = create_topic(b, "active", **compacted(**{"segment.ms": 7 * DAY_MS}))
    produce(b, t["active"], [(f"k{i % 5}".encode(), f"v{i}".encode()) for i in range(KEYS)])

    t["uncleanable"] = create_topic(b, "uncleanable", **compacted(**{"min.compaction.lag.ms": HOUR_MS}))
    write_rounds(b, t["uncleanable"], 3, keys=KEYS)  # held dirty until the damage is in place
    damage_first_record(partition_dir(state.log_dir, t["uncleanable"]))

    # the cleaner takes them in turn: each waited for by its checkpoint, never by the clock
    for name in ("cleaned", "ratio", "tombstones", "txn"):
        wait_cleaned_up_to_active(state.log_dir, t[name], timeout=120)

    set_topic_config(b, t["uncleanable"], **{"min.compaction.lag.ms": 0})
    marked = f"Marking its partition ({t['uncleanable']}-0) as uncleanable"
    wait_for(lambda: marked in state.cleaner_log.read_text(), 120, f"the cleaner's line {marked!r}")

    # below the ratio: a few updates the cleaner may not take under a ratio of 0.9
    set_topic_config(b, t["ratio"], **{"min.cleanable.dirty.ratio": 0.9})
    produce(b, t["ratio"], [(f"k{i}".encode(), b"again") for i in range(3)])
    roll(b, t["ratio"])

    # an open transaction at the start of a segment, committed updates after it, rolled: the cleaner stops
    # at the transaction's first offset, the last stable offset
    sc.txn_start = watermarks(b, t["txn"])[1]
    _txn_child(b, t["txn"], children)
    produce(b, t["txn"], [(f"k{i}".encode(), b"after") for i in range(KEYS)])
    roll(b, t["txn"])
    return sc


def cli_json(*args: str, fault_in: str, timeout: float = 300) -> object:
    """``python -m cli ARGS --format json`` as its own process: its parsed stdout. Its exit is 1 for the data
    fault the damaged partition is (the command line's rule), and every line it says on stderr names that
    partition's folder ``fault_in``: no other fault."""
    proc = subprocess.run([sys.executable, "-m", "cli", *args, "--format", "json"], capture_output=True, text=True,
                          timeout=timeout)
    said = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 1 and said and all(fault_in in ln for ln in said), \
        f"{args}: exit {proc.returncode}: {proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def log_files(log_dir: str, topic: str) -> list[str]:
    return sorted(str(p) for p in partition_dir(log_dir, topic).glob("*.log"))

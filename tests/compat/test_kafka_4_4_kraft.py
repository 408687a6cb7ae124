"""The compatibility checks (compatchecks.py) on Kafka 4.4 in KRaft, the newest release and the version the
rest of the suite runs (localkafka/pom.xml): meta.properties version 1 (node.id, directory.id), the metadata
log __cluster_metadata-0 in the log dir, the cleaner's loggers under org.apache.kafka.storage.internals.log,
its dump tool org.apache.kafka.tools.DumpLogSegments. Then what 4.x added to compaction, on the same broker:
4.4's max.decompressed.message.bytes and 4.2's empty cleanup.policy (KIP-1161). Its own broker, not the
session's: the checks read the whole log dir and the cleaner's log, which other tests' topics would fill."""

KAFKA_VERSION = "4.4.0"

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from compatchecks import *  # noqa: E402,F401,F403  (the checks, run against this module's broker)
from kafkatools import compacted, create_topic, set_topic_config, write_rounds  # noqa: E402
from waiting import wait_for  # noqa: E402

VALUE_BYTES = 4000  # each record's value: its decompressed record is a little larger
LIMIT = 2048  # the setting lowered below every stored record
HOUR_MS = 3_600_000


def _cli(*args: str) -> tuple[int, object, str]:
    proc = subprocess.run([sys.executable, "-m", "cli", *args, "--format", "json"], capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None, proc.stderr


def test_a_lowered_limit_is_found_before_the_cleaner_fails_and_named_after(family):
    """Kafka 4.4's max.decompressed.message.bytes: gzip batches of records of a few kilobytes, held dirty by
    min.compaction.lag.ms while the topic's setting is lowered below their size, then let go. The config review
    finds it first (the cleaner has not failed yet); then the cleaner fails on the records
    (InvalidRecordException) and marks the partition uncleanable (its WARN line), and ``explain`` and ``logdir``
    name the cause ``record_over_decompressed_limit`` with the largest record's size. On the module's broker,
    in a topic of its own and by topic-level settings only: the checks above hold in any order."""
    broker = family.state
    b = broker.bootstrap
    topic = create_topic(b, "decompressed", **compacted(**{"min.compaction.lag.ms": HOUR_MS}))
    write_rounds(b, topic, 3, keys=5, value=lambda r, i: (f"{r}-{i}-" + "x" * VALUE_BYTES).encode(),
                 **{"compression.type": "gzip"})
    set_topic_config(b, topic, **{"max.decompressed.message.bytes": LIMIT})

    # before: the cleaner may not touch the records yet (min.compaction.lag.ms); the config review finds them
    code, rows, err = _cli("explain", f"{topic}-0", "--bootstrap-server", b, "--log-dir", broker.log_dir,
                           "--cleaner-log", str(broker.cleaner_log))
    assert rows is not None, err[-3000:]
    row = rows[0] if isinstance(rows, list) else rows
    text = json.dumps(row)
    assert "decompressed_limit_below_records" in text, text[:3000]
    assert row["cause"] == "record_over_decompressed_limit", row["cause"]  # the next clean fails: not marked yet
    assert "the next clean of" in row["summary"]
    largest = row["evidence"]["max_decompressed_record_bytes"]
    assert VALUE_BYTES < largest < VALUE_BYTES + 100  # the record's length field: key, value, a few varints

    # let the cleaner go: it fails on the first record above the limit and marks the partition uncleanable
    set_topic_config(b, topic, **{"min.compaction.lag.ms": 0})
    marked = f"Marking its partition ({topic}-0) as uncleanable"
    wait_for(lambda: marked in broker.cleaner_log.read_text(), 120, f"the cleaner's line {marked!r}")
    said = broker.cleaner_log.read_text()
    assert "InvalidRecordException" in said and f"exceeds the configured maximum record size of {LIMIT}" in said, \
        said[-3000:]

    code, rows, err = _cli("explain", f"{topic}-0", "--bootstrap-server", b, "--log-dir", broker.log_dir,
                           "--cleaner-log", str(broker.cleaner_log))
    row = rows[0] if isinstance(rows, list) else rows
    assert row["cause"] == "record_over_decompressed_limit", (row["cause"], row["summary"])
    ev = row["evidence"]
    assert ev["exception"].endswith("InvalidRecordException") and ev["max_decompressed_record_bytes"] == largest
    assert ev["configs"]["max.decompressed.message.bytes"]["value"] == str(LIMIT)
    assert "--add-config max.decompressed.message.bytes=" in row["fix"][0]

    # logdir reads no admin API: the topic's setting given on the command line
    code, rows, err = _cli("logdir", "--all", "--cleaner-log", str(broker.cleaner_log),
                           "--topic-config", f"{topic}:max.decompressed.message.bytes={LIMIT}", broker.log_dir)
    assert rows is not None, err[-3000:]
    mine = [r for r in rows if r["topic"] == topic]
    assert mine and mine[0]["cause"]["cause"] == "record_over_decompressed_limit", mine
    assert mine[0]["max_decompressed_record_bytes"] == largest


def test_an_empty_cleanup_policy_is_neither_compacted_nor_deleted(family):
    """Kafka 4.2+ (KIP-1161): a topic created with ``cleanup.policy=`` (nothing) keeps every record. The broker
    describes it as the empty string; read as the admin source reads it, it is neither compacted nor deleted,
    and ``explain`` says so in words rather than a blank or Kafka's default (delete)."""
    from monitor.model.topicconfig import TopicConfig
    from kafkatools import produce, topic_config

    broker = family.state
    b = broker.bootstrap
    topic = create_topic(b, "forever", **{"cleanup.policy": ""})
    produce(b, topic, [(b"k", b"v")])
    described = topic_config(b, topic)
    assert described["cleanup.policy"] == "", described["cleanup.policy"]
    cfg = TopicConfig.from_strings({"cleanup.policy": described["cleanup.policy"]})
    assert not cfg.compacted and not cfg.deletes and "neither compacted nor deleted" in cfg.policy_text
    # explain takes compacted topics only: this one is not, as the broker's own config says (not taken for one)
    code, rows, err = _cli("explain", f"{topic}-0", "--bootstrap-server", b, "--log-dir", broker.log_dir)
    assert code == 2 and f"{topic}-0: no such compacted topic" in err, (code, rows, err[-2000:])

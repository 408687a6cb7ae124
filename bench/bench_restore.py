"""A consumer's restore throughput, measured: the figure the audit's restore-time estimate divides each
compacted topic's projected size by when neither ``--restore-throughput`` nor monitor.yaml states one
(``monitor.verdicts.restore``).

A restore is a consumer reading a partition from its log start offset to the end (Kafka Streams'
``StoreChangelogReader`` does exactly that), so that is what is timed: a fresh consumer assigned every
partition of a real topic at its low watermark, reading to the high watermark seen at the start. The
broker sends the record batches as they lie on disk, so the throughput is the partitions' on-disk
``.log`` bytes over that time (the audit's projected size is on-disk bytes too) when the log dir is at
hand, else the keys' and values' bytes (a lower figure: batch headers are not counted).

``./dev bench restore`` starts the local broker, writes a compacted topic (``--mb``), measures it and
writes ``bench/out/restore.json`` with when and where it was measured; ``--bootstrap`` and ``--topic``
measure an existing topic instead. The figure depends on the machine and its load: it is a stated
measurement, not a test.
"""

from __future__ import annotations

import argparse
import datetime as dt
import socket
import tempfile
import time
import uuid
from pathlib import Path

from bench.common import OUT, broker, log, produce_bulk
from monitor.fileio import strictjson


def log_bytes(log_dir: str | Path, topic: str) -> int:
    """The topic's ``.log`` segment bytes in a log dir (its partition folders ``<topic>-<n>``)."""
    return sum(f.stat().st_size for d in Path(log_dir).glob(f"{topic}-*")
               if d.name[len(topic) + 1:].isdigit() for f in d.glob("*.log"))


def measure_restore(bootstrap: str, topic: str, log_dir: str | Path | None = None, timeout: float = 600.0) -> dict:
    """Consume every partition of ``topic`` from its log start to its high watermark (taken first), timed.
    Returns records, bytes (keys' and values' bytes consumed), log_bytes (on-disk, with ``log_dir``),
    seconds and bytes_per_second (log_bytes' when known, else bytes'; ``basis`` says which)."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-restore-{uuid.uuid4().hex[:8]}",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "isolation.level": "read_uncommitted", "fetch.max.bytes": 52_428_800})
    try:
        meta = c.list_topics(topic, timeout=30).topics[topic]
        if meta.error is not None:
            raise KafkaException(meta.error)
        ends, starts = {}, []
        for p in sorted(meta.partitions):
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            if hi > lo:
                ends[p] = hi
                starts.append(TopicPartition(topic, p, lo))
        disk = log_bytes(log_dir, topic) if log_dir is not None else None
        records = payload = 0
        t0 = time.perf_counter()
        c.assign(starts)
        deadline = time.monotonic() + timeout
        while ends:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: partitions {sorted(ends)} not read to their end in {timeout:g}s")
            for m in c.consume(num_messages=10_000, timeout=1.0):
                if m.error():
                    raise KafkaException(m.error())
                records += 1
                payload += len(m.key() or b"") + len(m.value() or b"")
                if m.partition() in ends and m.offset() >= ends[m.partition()] - 1:
                    del ends[m.partition()]
        seconds = time.perf_counter() - t0
    finally:
        c.close()
    basis = "log_bytes" if disk is not None else "bytes"
    return {"topic": topic, "bootstrap": bootstrap, "records": records, "bytes": payload, "log_bytes": disk,
            "seconds": seconds, "basis": basis,
            "bytes_per_second": (disk if disk is not None else payload) / seconds if seconds > 0 else None}


def stamped(result: dict) -> dict:
    """The measurement with when and where it was made, as ``monitor.verdicts.restore.read_measurement`` reads it."""
    return {**result, "measured_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "host": socket.gethostname()}


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench restore")
    ap.add_argument("--mb", type=float, default=64, help="MiB written to the local broker's topic (default 64)")
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--bootstrap", help="measure --topic on this running cluster instead of the local broker")
    ap.add_argument("--topic")
    ap.add_argument("--log-dir", help="with --bootstrap: the broker's log dir, for on-disk bytes")
    ap.add_argument("--out", default=str(OUT / "restore.json"))
    args = ap.parse_args(argv)
    if args.bootstrap:
        if not args.topic:
            ap.error("--bootstrap needs --topic")
        res = measure_restore(args.bootstrap, args.topic, args.log_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-restore-") as tmp, broker(Path(tmp) / "kafka") as st:
            from confluent_kafka.admin import AdminClient, NewTopic

            topic = args.topic or "restore-changelog"
            admin = AdminClient({"bootstrap.servers": st.bootstrap})
            admin.create_topics([NewTopic(topic, args.partitions, 1, config={  # ratio 1.0: no clean meanwhile
                "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "1.0"})])[
                topic].result(30)
            produce_bulk(st.bootstrap, topic, int(args.mb * (1 << 20)), "none", partitions=args.partitions)
            log(f"consuming {topic} from offset 0 ...")
            res = measure_restore(st.bootstrap, topic, st.log_dir)
            res["bootstrap"] = f"{st.bootstrap} (the local broker of ./dev bench restore)"
    res = stamped(res)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(strictjson.dumps(res, indent=2))
    log(f"{res['records']:,} records, {res['log_bytes'] or res['bytes']:,} bytes in {res['seconds']:.2f} s: "
        f"{res['bytes_per_second'] / (1 << 20):,.1f} MiB/s ({res['basis']}); written to {out}")
    return 0

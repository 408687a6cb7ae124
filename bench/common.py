"""Shared benchmark plumbing: a real broker, producing bulk data, timing, progress."""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@contextmanager
def broker(directory: Path):
    from localkafka import broker as lk

    directory.mkdir(parents=True, exist_ok=True)
    state = lk.start(directory, progress=log, heap="1g")
    try:
        yield state
    finally:
        lk.stop(directory, progress=log)


def dir_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in Path(folder).glob("*-*/*.log"))


def produce_bulk(bootstrap: str, topic: str, total_bytes: int, codec: str, keys: int = 200_000,
                 partitions: int = 1, on_disk: Path | None = None, value_sizes: tuple[int, int] = (100, 1000),
                 tombstone_every: int = 0, records: int | None = None) -> int:
    """Write keyed records (values ``value_sizes`` bytes, default 100..1000, partly compressible; a
    tombstone every ``tombstone_every``-th record when set) until ``total_bytes`` were sent, or, with
    ``on_disk`` (a log dir), until the topic's segments hold that many bytes; with ``records``, that many
    records (a topic a cleaner cleans as it is written may never hold ``total_bytes``). Returns the
    records written."""
    from confluent_kafka import Producer
    from tqdm import tqdm

    p = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 20,
                  "batch.size": 1_000_000, "queue.buffering.max.kbytes": 512_000, "acks": "1"})
    rnd = os.urandom(1 << 16)
    words = b"customer order invoice shipment payment refund status updated created "

    def progress(sent: int) -> int:
        if on_disk is None:
            return sent
        return sum(f.stat().st_size for f in Path(on_disk).glob(f"{topic}-*/*.log"))

    sent = n = done = 0
    with tqdm(total=total_bytes, unit="B", unit_scale=True, desc=f"produce {topic}", file=sys.stderr) as bar:
        while (n < records) if records is not None else (done < total_bytes):
            size = value_sizes[0] + (n * 7919) % (value_sizes[1] - value_sizes[0])
            half = size // 2
            off = (n * 131) % (len(rnd) - half)
            value = rnd[off: off + half] + (words * (size // len(words) + 1))[: size - half]
            if tombstone_every and n % tombstone_every == tombstone_every - 1:
                value, size = None, 0
            key = f"key-{(n * 2654435761) % keys:08d}".encode()
            while True:
                try:
                    p.produce(topic, key=key, value=value, partition=n % partitions)
                    break
                except BufferError:
                    p.poll(0.05)
            n += 1
            sent += size + len(key)
            if n % 20000 == 0:
                p.poll(0)
                if on_disk is not None and records is None:
                    p.flush(60)
                done = progress(sent) if records is None else n * total_bytes // records
                bar.update(min(done, total_bytes) - bar.n)
        if p.flush(300):
            raise SystemExit(f"{topic}: the broker did not take every record in 300 s")
        bar.update(min(progress(sent) if records is None else total_bytes, total_bytes) - bar.n)
    return n



class Timer:
    def __enter__(self):
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0

"""Write a record batch to the local broker exactly as given, past what any client allows.

What it is for today: the KIP-664 fault, a transaction no coordinator will ever end. A broker with
``transaction.partition.verification.enable=false`` appends a transactional batch of a producer id the
coordinator never gave out; no marker ever follows, the partition's last stable offset stays at the
batch and the cleaner with it, until ``kafka-transactions.sh abort``. The demo leaves one so the
monitor has a hanging transaction to show; the tests use the same request.

Encoded by hand from Kafka's message definitions: ProduceRequest/ProduceResponse v3 (the oldest Kafka
4 accepts, KIP-896; request header v1, not flexible) and the record batch v2 layout
(DefaultRecordBatch.java: the header of ``monitor.kafka.record.v2.HEADER``, CRC-32C from the attributes on).
"""

from __future__ import annotations

import socket
import struct

from crc32c import crc32c

from monitor.kafka.record.v2 import CRC_START, HEADER, LOG_OVERHEAD, TRANSACTIONAL_MASK
from monitor.kafka.record.varint import encode_varint

PRODUCE_API_KEY, PRODUCE_VERSION = 0, 3


def transactional_batch(records: list[tuple[bytes, bytes]], producer_id: int, producer_epoch: int,
                        timestamp_ms: int, base_sequence: int = 0) -> bytes:
    """One uncompressed transactional record batch v2 of ``(key, value)`` records, all at ``timestamp_ms``
    (CreateTime); base offset 0 and leader epoch -1, which the broker assigns."""
    body = bytearray()
    for i, (key, value) in enumerate(records):
        rec = (b"\x00" + encode_varint(0) + encode_varint(i) + encode_varint(len(key)) + key
               + encode_varint(len(value)) + value + encode_varint(0))  # attributes, deltas, key, value, 0 headers
        body += encode_varint(len(rec)) + rec
    n = len(records)
    header = bytearray(HEADER.pack(0, HEADER.size - LOG_OVERHEAD + len(body), -1, 2, 0, TRANSACTIONAL_MASK, n - 1,
                                   timestamp_ms, timestamp_ms, producer_id, producer_epoch, base_sequence, n))
    crc = crc32c(bytes(body), crc32c(bytes(header[CRC_START:])))
    struct.pack_into(">I", header, CRC_START - 4, crc)
    return bytes(header + body)


def _string(s: str | None) -> bytes:
    return struct.pack(">h", -1) if s is None else struct.pack(">h", len(s.encode())) + s.encode()


def produce_raw(bootstrap: str, topic: str, batch: bytes, partition: int = 0, transactional_id: str | None = None,
                timeout: float = 30.0) -> tuple[int, int]:
    """Send ``batch`` (the bytes of one v2 batch) in a ProduceRequest v3 with acks=all and return the
    partition's (error code, base offset). A transactional batch needs a ``transactional_id`` (the broker
    checks it is authorized, not that the coordinator knows it)."""
    body = (_string(transactional_id) + struct.pack(">hi", -1, int(timeout * 1000))
            + struct.pack(">i", 1) + _string(topic) + struct.pack(">i", 1)
            + struct.pack(">ii", partition, len(batch)) + batch)
    request = struct.pack(">hhi", PRODUCE_API_KEY, PRODUCE_VERSION, 1) + _string("compaction-monitor") + body
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)

        def read(n: int) -> bytes:
            buf = b""
            while len(buf) < n:
                chunk = sock.recv(n - len(buf))
                if not chunk:
                    raise ConnectionError(f"{bootstrap} closed the connection after {len(buf)} of {n} bytes")
                buf += chunk
            return buf

        (size,) = struct.unpack(">i", read(4))
        resp = read(size)
    pos = 4 + 4  # correlation id, topics count (1)
    (name_len,) = struct.unpack_from(">h", resp, pos)
    pos += 2 + name_len + 4  # topic name, partitions count (1)
    _, error, base_offset = struct.unpack_from(">ihq", resp, pos)
    return error, base_offset

"""``inspect --format jsonl`` without a general JSON encoder: the bytes ``json.dumps`` would write.

Why: the record reader decodes a segment several times faster than ``kafka-dump-log``, and building a
19-key dict per record for ``json.dumps`` took nearly all of inspect's time. Of the 19 fields of a
line (``record_json``, the contract scripts rely on) 13 are facts of the batch: they are encoded
once per batch, with ``json.dumps`` itself, into the text around the per-record fields; per record
only integers (``str``), two booleans, the base64 key (ASCII) and, when a record has headers, its
header keys (``json.dumps`` again) are written. The result is the very text
``strictjson.dumps(record_json(...))`` gives (same keys, order, separators and escapes; strict JSON), which
``tests/cli/test_inspect_jsonl.py`` checks on broker-written segments.

The fast path takes a v2 data batch's columns (``BatchV2.columns()``: no object per record); control
batches, legacy message sets and batches parsed from dump text go through ``record_json``.
"""

from __future__ import annotations

import json
from binascii import b2a_base64
from typing import Iterator

from monitor.kafka.record.v2 import BatchV2, RecordColumns
from monitor.fileio import strictjson

CHUNK = 1 << 16  # lines joined into one write (smaller chunks measured slower)


def record_json(path: str, batch, rec) -> dict:
    """One record as inspect prints it: the field names and their order are the contract."""
    key = rec.key
    return {
        "file": path,
        "batch_base_offset": batch.base_offset,
        "batch_last_offset": batch.last_offset,
        "batch_position": batch.position,
        "magic": batch.magic,
        "offset": rec.offset,
        "timestamp": rec.timestamp,
        "timestamp_type": batch.timestamp_type,
        "key": None if key is None else b2a_base64(key, newline=False).decode("ascii"),
        "key_size": rec.key_size,
        "value_size": rec.value_size,
        "tombstone": rec.is_tombstone,
        "control": batch.is_control,
        "control_type": rec.control_type,
        "transactional": batch.is_transactional,
        "compression": batch.compression,
        "producer_id": batch.producer_id,
        "delete_horizon_ms": batch.delete_horizon_ms,
        "header_keys": rec.header_keys,
    }


def slow_lines(path: str, batch, records) -> Iterator[str]:
    """The lines of ``records`` through ``record_json`` and ``json.dumps`` (the reference encoding)."""
    for r in records:
        yield strictjson.dumps(record_json(path, batch, r)) + "\n"


def fast_lines(path_json: str, batch: BatchV2, cols) -> Iterator[str]:
    """The lines of a v2 data batch from its columns, in chunks; ``path_json`` is ``strictjson.dumps(path)``.
    Byte for byte what ``slow_lines`` gives for the same records."""
    d = json.dumps
    head = (f'{{"file": {path_json}, "batch_base_offset": {batch.base_offset}, '
            f'"batch_last_offset": {batch.last_offset}, "batch_position": {batch.position}, '
            f'"magic": {batch.magic}, "offset": ')
    ts_type = f', "timestamp_type": {d(batch.timestamp_type)}, "key": '
    tail = (f', "control": false, "control_type": null, "transactional": {d(batch.is_transactional)}, '
            f'"compression": {d(batch.compression)}, "producer_id": {batch.producer_id}, '
            f'"delete_horizon_ms": {d(batch.delete_horizon_ms)}, "header_keys": ')
    n = len(cols)
    for start in range(0, n, CHUNK):  # a batch of a million records (zstd inflates) is not one string
        end = min(start + CHUNK, n)
        rows = zip(cols.offsets[start:end], cols.timestamps[start:end], cols.keys[start:end],
                   cols.value_sizes[start:end], cols.headers[start:end]) if n > CHUNK else \
            zip(cols.offsets, cols.timestamps, cols.keys, cols.value_sizes, cols.headers)
        # one f-string per line, for a null key and for a key (no intermediate strings: the fastest form)
        yield "".join([
            f'{head}{o}, "timestamp": {t}{ts_type}null, "key_size": -1, "value_size": {v}, '
            f'"tombstone": {"true" if v < 0 else "false"}{tail}{d([hk for hk, _ in h]) if h else "[]"}}}\n'
            if k is None else
            f'{head}{o}, "timestamp": {t}{ts_type}"{b2a_base64(k, newline=False).decode()}", "key_size": {len(k)}, '
            f'"value_size": {v}, "tombstone": {"true" if v < 0 else "false"}{tail}'
            f'{d([hk for hk, _ in h]) if h else "[]"}}}\n'
            for o, t, k, v, h in rows])


def batch_lines(path: str, path_json: str, batch, records) -> Iterator[str]:
    """The jsonl text of one batch, in pieces: ``records`` is a ``RecordColumns`` for a v2 batch read
    with ``columns=True``, else the batch's records."""
    if type(batch) is BatchV2 and not batch.is_control and isinstance(records, RecordColumns):
        return fast_lines(path_json, batch, records)
    if isinstance(records, RecordColumns):  # columns of a control batch or a legacy set: take its records
        records = batch.records()
    return slow_lines(path, batch, records)

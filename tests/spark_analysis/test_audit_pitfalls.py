"""Producer pitfalls in the audit (issue 16, point 5) against a real broker: a topic of three partitions
written as a new user would, with deletes sent as empty strings instead of null, keys sent to more
than one partition explicitly, records without a key from before the topic became compacted, and
values of known sizes. The expected counts are what the test wrote, checked against what
kafka-dump-log prints for the same segments."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dumpcompare import dump
from kafkatools import copy_partition, create_topic, partition_dir, produce, set_topic_config, unique_topic
from monitor.contract import valuesizes
from spark_analysis.audit import AuditInputs, pitfalls, run_audit
from spark_analysis.inputs import list_inputs

pytestmark = pytest.mark.kafka

PARTITIONS = 3


def write(bootstrap: str, topic: str, seed: int) -> dict:
    """Per partition: the (key, value) pairs written, in order. Segments never roll (segment.ms is
    Kafka's default week): the cleaner leaves everything as written."""
    rnd = random.Random(seed)
    written: dict[int, list] = {p: [] for p in range(PARTITIONS)}

    def put(p, items):
        produce(bootstrap, topic, items, partition=p)
        written[p] += items

    # written while the topic still had cleanup.policy=delete: records without a key
    put(0, [(None, b"no key %d" % i) for i in range(7)])
    put(2, [(None, b"")] * 3)  # keyless and empty
    set_topic_config(bootstrap, topic, **{"cleanup.policy": "compact"})
    for p in range(PARTITIONS):
        # small values (exact buckets) on 0 and 1, large ones (log buckets) on 2
        size = (lambda: rnd.randrange(1, 120)) if p < 2 else (lambda: rnd.randrange(128, 20_000))
        put(p, [(f"p{p}-k{i}".encode(), b"v" * size()) for i in range(60)])
    put(0, [(f"p0-k{i}".encode(), b"") for i in range(0, 60, 6)])  # deletes sent as empty strings: 10
    put(0, [(f"p0-k{i}".encode(), None) for i in range(1, 60, 12)])  # real tombstones: 5
    put(0, [(b"p0-k0", b"back again")])  # an empty string superseded: p0-k0's latest is not empty
    put(1, [(f"p1-k{i}".encode(), b"") for i in range(4)])  # 4 more
    # the same keys sent to two partitions explicitly (and one to all three)
    put(1, [(f"p0-k{i}".encode(), b"w" * 40) for i in range(20, 28)])  # 8 keys of p0 also on p1
    put(2, [(b"p0-k20", b"x" * 300), (b"p1-k3", b"y" * 300)])  # p0-k20: on all three; p1-k3: on 1 and 2
    return written


def expected(written: dict) -> tuple[dict, dict]:
    """Per partition and per topic, from what was written."""
    parts = {}
    holders: dict[bytes, set] = {}
    for p, items in written.items():
        for k, _ in items:
            if k is not None:
                holders.setdefault(k, set()).add(p)
    for p, items in written.items():
        last = {k: v for k, v in items if k is not None}
        values = [len(v) for _, v in items if v is not None]
        parts[p] = {
            "keyless_records": sum(k is None for k, _ in items),
            "empty_value_records": sum(v == b"" for _, v in items),
            "keys_last_empty_value": sum(v == b"" for v in last.values()),
            "keys_in_several_partitions": sum(len(holders[k]) > 1 for k in last),
            "value_bytes_max": max(values), "sizes": values,
        }
    topic = {k: sum(parts[p][k] for p in parts) for k in ("keyless_records", "empty_value_records",
                                                           "keys_last_empty_value")}
    topic["keys_in_several_partitions"] = sum(len(h) > 1 for h in holders.values())
    topic["value_bytes_max"] = max(parts[p]["value_bytes_max"] for p in parts)
    topic["sizes"] = [s for p in parts for s in parts[p]["sizes"]]
    return parts, topic


def check_percentiles(row: dict, sizes: list) -> None:
    for name, q in valuesizes.PERCENTILES:
        want = float(np.percentile(sizes, q * 100, method="inverted_cdf"))
        got = row[f"value_bytes_{name}"]
        if want < valuesizes.EXACT_BELOW:
            assert got == want, name
        else:
            assert got == pytest.approx(want, rel=valuesizes.RELATIVE_ERROR), name


def test_audit_counts_empty_value_deletes_keys_in_several_partitions_keyless_records_and_value_sizes(
        spark, kafka, tmp_path, seed, monkeypatch):
    t = create_topic(kafka.bootstrap, unique_topic("pitfalls"), PARTITIONS, **{"cleanup.policy": "delete"})
    written = write(kafka.bootstrap, t, seed)
    root = tmp_path / "copy"
    folders = [copy_partition(partition_dir(kafka.log_dir, t, p), root) for p in range(PARTITIONS)]
    parts, topic = expected(written)

    # what was written is what is on disk, as kafka-dump-log prints it
    for p, folder in enumerate(folders):
        _, batches = dump(sorted(folder.glob("*.log")))
        recs = [r for b in batches for r in b.records()]
        assert [(r.key, r.value_size) for r in recs] == [(k, -1 if v is None else len(v)) for k, v in written[p]]
        assert sum(r.value_size == 0 for r in recs) == parts[p]["empty_value_records"]
        assert sum(r.key_size < 0 for r in recs) == parts[p]["keyless_records"]

    res = run_audit(spark, AuditInputs(kind="segments", files=list_inputs("segments", [str(root)])))
    rows = {r["partition"]: r.asDict() for r in res.partitions.collect()}
    assert sorted(rows) == list(range(PARTITIONS))
    for p in range(PARTITIONS):
        for k in ("keyless_records", "empty_value_records", "keys_last_empty_value", "keys_in_several_partitions",
                  "value_bytes_max"):
            assert rows[p][k] == parts[p][k], (p, k)
        check_percentiles(rows[p], parts[p]["sizes"])
    assert parts[0]["empty_value_records"] == 10 and parts[1]["empty_value_records"] == 4  # the test's own plan
    assert parts[2]["empty_value_records"] == 3  # the keyless empty records count too
    [trow] = [r.asDict() for r in res.topics.collect()]
    for k in ("keyless_records", "empty_value_records", "keys_last_empty_value", "keys_in_several_partitions",
              "value_bytes_max"):
        assert trow[k] == topic[k], k
    assert topic["keys_in_several_partitions"] == 9  # p0-k20..27 and p1-k3
    check_percentiles(trow, topic["sizes"])
    for k in ("keyless_records", "empty_value_records", "keys_last_empty_value", "keys_in_several_partitions"):
        assert res.summary[k] == topic[k], k
    assert "exact below" in res.summary["value_size_method"]

    # the same counts when each task sends its key table to Spark in parts (more keys than it holds)
    # and folds a few records at a time: key parts carry the key hashes, windows add up
    parted = run_audit(spark, AuditInputs(kind="segments", files=list_inputs("segments", [str(root)]),
                                          max_keys=16, window=25))
    got = {r["partition"]: r.asDict() for r in parted.partitions.collect()}
    for p in range(PARTITIONS):
        for k in ("keyless_records", "empty_value_records", "keys_last_empty_value", "keys_in_several_partitions",
                  "value_bytes_p50", "value_bytes_p90", "value_bytes_p99", "value_bytes_max"):
            assert got[p][k] == rows[p][k], (p, k)
    assert [r.asDict()["keys_in_several_partitions"] for r in parted.topics.collect()] == [9]

    # and when the topic's hashes are cut into ranges, each counted by its own task (a topic with more
    # keys than one task of the count holds): the ranges' counts add up to the same
    monkeypatch.setattr(pitfalls, "GROUP_HASHES", 7)
    ranged = run_audit(spark, AuditInputs(kind="segments", files=list_inputs("segments", [str(root)])))
    got = {r["partition"]: r["keys_in_several_partitions"] for r in ranged.partitions.collect()}
    assert got == {p: rows[p]["keys_in_several_partitions"] for p in range(PARTITIONS)}
    assert [r["keys_in_several_partitions"] for r in ranged.topics.collect()] == [9]


def test_packed_key_hashes_counted_by_range_as_by_sets(seed):
    """The count of keys in several partitions from packed hashes (``key_hash_batch``), cut into ranges
    (``split_ranges``) and counted per range (``shared_in_range``), against Python sets; hashes at
    both ends of the int64 range and a partition sent in two parts that repeat a hash."""
    import pyarrow as pa

    from spark_analysis.partition_fold import key_hash_batch

    rnd = np.random.default_rng(seed)
    pool = np.concatenate([rnd.integers(-2**63, 2**63 - 1, 3000, dtype=np.int64),
                           np.array([-2**63, 2**63 - 1, 0, -1], dtype=np.int64)])
    held = {p: np.unique(rnd.choice(pool, 1200)) for p in range(4)}
    batches = [key_hash_batch("t", p, h).column("key_hashes").flatten() for p, h in held.items()]
    batches.append(key_hash_batch("t", 3, held[3][:100]).column("key_hashes").flatten())  # a part again
    packed = pa.RecordBatch.from_arrays(
        [pa.concat_arrays([b[i] for b in batches]) for i in (0, 1, 2)], names=["topic", "partition", "hashes"])
    sets = {p: set(h.tolist()) for p, h in held.items()}
    want = {p: sum(any(h in sets[q] for q in sets if q != p) for h in sets[p]) for p in sets}
    want_topic = len({h for p in sets for h in sets[p] if sum(h in s for s in sets.values()) > 1})
    assert pitfalls.shared_counts(pitfalls.unpack(packed)) == (want, want_topic) and want_topic > 0
    for n in (1, 5):
        cut = pa.Table.from_batches(list(pitfalls.split_ranges({"t": n})([packed])))
        assert sorted(set(cut.column("range").to_pylist())) == list(range(n))
        per: dict = {}
        for i in range(n):
            out = pitfalls.shared_in_range(cut.filter(pa.compute.equal(cut.column("range"), i)))
            for p, k in zip(out.column("partition").to_pylist(), out.column("shared").to_pylist()):
                per[p] = per.get(p, 0) + k
        assert per == {**want, None: want_topic}

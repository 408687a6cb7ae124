"""``./dev bench restore``'s measurement on the session broker: a real consume from offset 0 to the end,
its counts those of the topic, its file one the audit reads (``monitor.verdicts.restore``). No timing threshold:
only that time passed."""

from __future__ import annotations

import json

from kafkatools import create_topic, partition_dir, produce, unique_topic


def test_the_restore_measurement_reads_the_whole_topic_and_writes_a_file_the_audit_reads(kafka, tmp_path):
    from bench.bench_restore import measure_restore, stamped
    from monitor.verdicts.restore import resolve

    t = create_topic(kafka.bootstrap, unique_topic("bench-restore"), 2, **{"cleanup.policy": "compact",
                                                                           "min.cleanable.dirty.ratio": "1.0"})
    items = {0: [(f"k{i}".encode(), b"v" * (i % 50)) for i in range(300)],
             1: [(f"key-{i}".encode(), b"value-" * (i % 7)) for i in range(200)]}
    for p, recs in items.items():
        produce(kafka.bootstrap, t, recs, partition=p)
    res = measure_restore(kafka.bootstrap, t, kafka.log_dir)
    assert res["records"] == 500
    assert res["bytes"] == sum(len(k) + len(v) for recs in items.values() for k, v in recs)
    on_disk = sum(f.stat().st_size for p in items for f in partition_dir(kafka.log_dir, t, p).glob("*.log"))
    assert res["log_bytes"] == on_disk and res["basis"] == "log_bytes"
    assert res["seconds"] > 0 and res["bytes_per_second"] == on_disk / res["seconds"]

    path = tmp_path / "restore.json"
    path.write_text(json.dumps(stamped(res)))
    got = resolve(measurement=path)
    assert got.bytes_per_second == res["bytes_per_second"]
    assert kafka.bootstrap in got.source and t in got.source and str(path) in got.source

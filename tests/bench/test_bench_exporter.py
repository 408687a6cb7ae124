"""``./dev bench exporter``'s measurement on a small log dir of the session broker's segments: the
series it counts are those of the exposition at each granularity (4 per healthy partition at topic, all
for the never-cleaned ones). No timing threshold: only that time passed."""

from __future__ import annotations

import shutil

from bench.bench_exporter import checkpoint_mix, measure
from kafkatools import compacted, copy_partition, create_topic, partition_dir, unique_topic, write_rounds


def test_the_exporter_bench_counts_four_series_per_healthy_partition(kafka, tmp_path):
    t = create_topic(kafka.bootstrap, unique_topic("bench-exporter"), **compacted(**{"min.cleanable.dirty.ratio": 1.0}))
    write_rounds(kafka.bootstrap, t, 2, keys=20)
    src = copy_partition(partition_dir(kafka.log_dir, t), tmp_path / "src")
    d = tmp_path / "logdir"
    d.mkdir()
    for p in range(10):
        shutil.copytree(src, d / f"orders.v2-eu-{p}")
    bad = checkpoint_mix(d, 5)
    assert bad == 2  # partitions 0 and 5
    full, cut = measure(d, "partition", 1), measure(d, "topic", 1)
    each = full["partition_series"] / 10
    assert each > 4 and each == int(each)
    assert cut["partition_series"] == 8 * 4 + 2 * each
    assert cut["series"] < full["series"] and cut["render_s"] > 0 and full["gzip_bytes"] < full["bytes"]

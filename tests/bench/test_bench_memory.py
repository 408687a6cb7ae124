"""``./dev bench memory``'s phases on a small log dir made as ``bench logdir --broker-size`` makes it: each phase
reads every partition, the record phase until nothing is pending and writes the cache the restart restores;
tracemalloc's lines and the types are reported. No memory threshold: figures only."""

from __future__ import annotations

import shutil
from pathlib import Path


def test_the_phases_read_every_partition_and_the_restart_restores_the_record_phases_cache(tmp_path):
    from bench.bench_logdir_broker import make_log_dir
    from bench.bench_memory import TOP, phase

    d, total, _ = make_log_dir(tmp_path, 0.0005, 6, 2)
    state = tmp_path / "state"
    cold = phase(d, state, "cold", trace=False)
    assert cold["partitions"] == 6 and cold["refreshes"] == 1 and cold["hwm_kb_per_partition"] >= 0
    shutil.rmtree(state)  # as the bench does: the record phase starts cold too
    records = phase(d, state, "records", trace=True)
    assert records["partitions"] == 6 and records["pending_bytes"] == 0 and records["refreshes"] > 1
    assert list(Path(state).glob("*.cache"))
    assert 0 < records["traced_bytes"] <= records["traced_peak_bytes"]
    assert 0 < len(records["lines"]) <= TOP and all(n > 0 for _, n, _ in records["types"])
    restart = phase(d, state, "restart", trace=False)
    assert restart["partitions"] == 6 and restart["pending_bytes"] == 0 and total > 0
    assert restart["restored_segments"] == 6 * 3 and cold["restored_segments"] == 0
    assert restart["first_refresh_cpu_s"] > 0

"""``./dev bench inspect``'s three commands run as the benchmark runs them (whole processes from the
project root) and succeed on a real segment: the figures it prints are of work that was done. No
timing threshold: only that time passed."""

from __future__ import annotations

import subprocess


def test_the_benchmarked_commands_run_and_time_real_work(record_gallery):
    from bench.bench_inspect import ROOT, best, commands

    f = record_gallery["magic2-zstd"].path
    cmds = commands(f)
    assert set(cmds) == {"jsonl", "stats", "kafka_dump_log"}
    outs = {name: subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
            for name, cmd in cmds.items()}
    assert all(o.returncode == 0 for o in outs.values()), {k: o.stderr[-500:] for k, o in outs.items()}
    assert len(outs["jsonl"].stdout.splitlines()) == 40  # the gallery's 40 records
    assert '"records": 40' in outs["stats"].stdout or "records         40" in outs["stats"].stdout
    assert outs["kafka_dump_log"].stdout.count("| offset: ") == 40
    t = best(cmds["stats"], 1)
    assert t["wall_s"] > 0 and t["cpu_s"] >= 0

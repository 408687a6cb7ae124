"""The audit's input listing (``spark_analysis.inputs``), on the driver before Spark starts."""

from __future__ import annotations

from pathlib import Path

from recordfixtures import three_v2_batches
from spark_analysis.inputs import list_inputs


def test_the_audit_lists_only_what_kafka_would_load_as_segments(tmp_path, capsys):
    """The audit's input listing follows the log-dir walk's rule (``monitor.kafka.kafkanames``): stray names
    and every folder of a duplicated partition are left out, one line each, never read."""
    logs = tmp_path / "logs"
    for folder in ("orders-0", "orders-3", "orders-03", "t-99999999999999999999"):
        three_v2_batches(logs / folder / "00000000000000000000.log")
    for stray in ("².log", "5.log", "99999999999999999999999.log"):
        (logs / "orders-0" / stray).write_bytes(b"x")
    files = list_inputs("segments", [str(logs)])
    assert [Path(u).relative_to(logs).as_posix() for u, _ in files] == ["orders-0/00000000000000000000.log"]
    lines = capsys.readouterr().err.splitlines()
    assert sorted(x.split(": ")[0] for x in lines) == sorted(
        [f"[audit] left out {logs}"] + [f"[audit] left out {logs}/orders-0/{s}" for s in ("².log", "5.log",
                                                                                       "99999999999999999999999.log")])
    assert any("duplicate log directories for orders-3: orders-03, orders-3" in x for x in lines)

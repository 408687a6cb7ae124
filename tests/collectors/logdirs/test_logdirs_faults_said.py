"""A partition's fault is said by the collector in one line naming its file (issue #35, point 5).

``logdir`` and ``explain`` print each faulty partition's file and reason; the collector's page carries
only the kind (``partition_state_unknown{reason="unreadable_file"}``, ``partition_read_faults``). Before,
``collect --once`` and the serving log said nothing at all, so an operator of the collector never learnt
which file was looped or damaged, or why. Now each fault is one line, once while it lasts (not once per
refresh). The command line in-process (tests/clirun.py), on files made here; the serving collector
as a process."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request

from clirun import run_cli
from monitor.kafka.checkpoint import format_checkpoint
from recordfixtures import three_v2_batches
from waiting import wait_for

SEG = "00000000000000000000.log"
LOOPED = "00000000000000000006.log"


def log_dir(tmp_path):
    """Compacted ``keep-0`` (healthy), ``looped-0`` (its second segment a symlink to itself) and
    ``damaged-0`` (a bit flipped in its first batch: a CRC mismatch)."""
    logs = tmp_path / "logs"
    for p in ("keep-0", "looped-0", "damaged-0"):
        three_v2_batches(logs / p / SEG)
    os.symlink(LOOPED, logs / "looped-0" / LOOPED)
    seg = logs / "damaged-0" / SEG
    data = bytearray(seg.read_bytes())
    data[70] ^= 0x01  # inside the first batch's records, past its 61-byte header
    seg.write_bytes(bytes(data))
    (logs / "cleaner-offset-checkpoint").write_text(
        format_checkpoint({("keep", 0): 0, ("looped", 0): 0, ("damaged", 0): 0}))
    return logs


def said(stderr: str) -> dict[str, list[str]]:
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert "Traceback" not in stderr and all(len(x) <= 400 for x in lines), stderr[-2000:]
    return {p: [x for x in lines if f"{p}-0: " in x] for p in ("keep", "looped", "damaged")}


def test_collect_once_names_each_faulty_partitions_file_in_one_line(tmp_path):
    logs = log_dir(tmp_path)
    r = run_cli("collect", "--once", "--log-dir", str(logs))
    # the log-dir source is up (source_up 1), and a partition's fault is a fault met: exit 1, as logdir's
    assert r.returncode == 1, r.stderr
    lines = said(r.stderr)
    assert lines["keep"] == []
    assert lines["looped"] == [f"looped-0: {logs / 'looped-0' / LOOPED}: too many levels of symbolic links"]
    assert len(lines["damaged"]) == 1 and f"{logs / 'damaged-0' / SEG}: byte 0: CRC-32C mismatch" in \
        lines["damaged"][0], r.stderr
    assert 'reason="unreadable_file",topic="looped"' in r.stdout
    assert any(x.startswith("kafka_compaction_source_up{") and 'kind="log_dirs"' in x and x.endswith(" 1.0")
               for x in r.stdout.splitlines()), r.stdout[-2000:]


def test_serving_says_a_fault_once_while_it_lasts(tmp_path):
    logs = log_dir(tmp_path)
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("intervals: {log_dirs: 0.3}\n")
    proc = subprocess.Popen([sys.executable, "-m", "cli", "collect", "--config", str(cfg), "--log-dir", str(logs),
                             "--address", "127.0.0.1", "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        before = []  # the first refresh may log before the serving line
        while "serving http://127.0.0.1:" not in (line := proc.stderr.readline()):
            assert line, before
            before.append(line)
        url = line.split("serving ", 1)[1].split()[0]
        stamps = set()

        def refreshed_six_times():
            page = urllib.request.urlopen(url, timeout=5).read().decode()
            stamps.update(x.rsplit(" ", 1)[1] for x in page.splitlines()
                          if x.startswith("kafka_compaction_source_last_success_timestamp_seconds{"))
            return len(stamps) >= 6

        wait_for(refreshed_six_times, 60, "six refreshes of the log dirs")  # each would have said a fault again
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        rest = proc.stderr.read()  # (not communicate(timeout=...): it reads the pipe past what readline buffered)
    rest = "".join(before) + rest
    lines = said(rest)
    assert lines["keep"] == [] and len(lines["looped"]) == 1 and len(lines["damaged"]) == 1, rest
    assert "too many levels of symbolic links" in lines["looped"][0]

"""Every bad input ends in one short line (issue #35): a bad flag value named with its flag before any
work (exit 2), a damaged file quoted as a short excerpt, a symlink loop called one, a live segment's
in-flight tail a note. The command line in-process (tests/clirun.py); a child only where its peak memory
is measured. The files are made here."""

from __future__ import annotations

import subprocess

import pytest

from clirun import Ran, run_cli
from procs import run_measured
from recordfixtures import three_v2_batches, v2, items

MAX_LINE = 400  # "at most a few hundred characters"


run = run_cli


def lines_of(r: Ran | subprocess.CompletedProcess) -> list[str]:
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert all(len(ln) <= MAX_LINE for ln in lines), [len(ln) for ln in lines]
    return lines


def one_line(r: Ran, code: int = 2) -> str:
    assert r.returncode == code, (r.returncode, r.stderr)
    lines = lines_of(r)
    assert len(lines) == 1, r.stderr
    return lines[0]


# ---------------------------------------------------------------- flags: exit 2 before any work


@pytest.mark.parametrize("args, flag, says", [
    (["collect", "--port", "70000", "--once"], "--port", "expected a port from 0 to 65535 (0: any), got '70000'"),
    (["collect", "--jmx-url", "http://[::1", "--once"], "--jmx-url", "'http://[::1' (the IPv6 address of the URL has "
                                                                     "no closing ])"),
    (["collect", "--jmx-url", "http://kafka-1:99999/metrics", "--once"], "--jmx-url", "port 99999 of the URL"),
    (["collect", "--jolokia-url", "http://monitor:hunter2@kafka-1:99999/jolokia", "--once"], "--jolokia-url",
     "'http://monitor:***@kafka-1:99999/jolokia'"),
    (["collect", "--bootstrap-servers", "k1:9092,k2:99999", "--once"], "--bootstrap-servers", "port 99999"),
    (["explain", "--bootstrap-server", "[::1:9092", "--log-dir", "{tmp}"], "--bootstrap-server", "no closing ]"),
    (["dashboard", "--port", "65536"], "--port", "got '65536' (out of range)"),
    (["dashboard", "--prometheus-url", "prom:9090"], "--prometheus-url", "no http:// or https:// in front"),
    (["demo", "--duration", "nan"], "--duration", "got 'nan' (not finite)"),
    (["broker", "start", "--brokers", "0"], "--brokers", "at least 1, got '0'"),
    (["audit", "--input", "{tmp}", "--out", "{tmp}/out", "--throughput", "inf"], "--throughput", "(not finite)"),
    (["audit", "--input", "{tmp}", "--out", "{tmp}/out", "--load-factor", "1.5"], "--load-factor", "(out of range)"),
    (["audit", "--input", "{tmp}", "--out", "{tmp}/out", "--bootstrap-servers", "k:0"], "--bootstrap-servers", "port 0"),
])
def test_a_bad_flag_value_is_one_line_naming_the_flag_exit_2(args, flag, says, tmp_path):
    line = one_line(run(*[a.replace("{tmp}", str(tmp_path)) for a in args]))
    assert f"error: argument {flag}: " in line and says in line, line
    assert "hunter2" not in line


def test_a_bad_url_or_port_in_the_config_is_named_as_the_flag_is(tmp_path):
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("listen: {port: 70000}\nclusters:\n  - brokers:\n      - {id: 1, jmx_url: 'http://[::1'}\n")
    r = run("collect", "--config", str(cfg), "--once")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert lines_of(r) == [
        f"compaction-monitor: config error: {cfg}: listen.port: expected a port from 0 to 65535 (0: any), got 70000 "
        "(out of range)",
        f"compaction-monitor: config error: {cfg}: clusters[0].brokers[0].jmx_url: expected an http:// or https:// "
        "URL, got 'http://[::1' (the IPv6 address of the URL has no closing ])"]


# ---------------------------------------------------------------- damaged files: an excerpt, bounded memory


def test_a_nul_filled_checkpoint_is_one_short_line_in_bounded_memory(tmp_path):
    """A power loss leaves a checkpoint of NUL bytes: was one line of 16,477 characters for 4 KiB, of
    268 MB (798 MB of memory) for 64 MiB. Memory is compared with the same command on a sound checkpoint:
    a child's ru_maxrss starts from its parent's at the fork (a test process that loaded Spark: ~600 MiB),
    so only the difference says what the file cost."""
    logs = tmp_path / "logs"
    three_v2_batches(logs / "orders-0" / "00000000000000000000.log")
    cp = logs / "cleaner-offset-checkpoint"
    args = ("logdir", str(logs), "--topic-config", "orders:cleanup.policy=compact")
    cp.write_text("0\n1\norders 0 0\n")
    code, _, stderr, sound = run_measured(*args)
    assert code == 0, stderr
    for size in (4096, 64 << 20):
        with open(cp, "wb") as fh:
            fh.truncate(size)  # NUL bytes (a sparse file reads as zeros)
        code, _, stderr, peak = run_measured(*args)
        assert code == 1, stderr
        lines = lines_of(subprocess.CompletedProcess((), code, "", stderr))
        assert lines[0] == (f"logdir: {cp}: line 1: more than 1024 bytes without a line end, no checkpoint line: '"
                            + "\\x00" * 15 + "...' (more follows)")
        assert peak - sound < 32 << 20, f"{(peak - sound) / (1 << 20):.0f} MiB more for a {size}-byte checkpoint"


def test_a_short_bad_checkpoint_line_is_quoted_escaped(tmp_path):
    logs = tmp_path / "logs"
    three_v2_batches(logs / "orders-0" / "00000000000000000000.log")
    (logs / "cleaner-offset-checkpoint").write_bytes(b"0\n1\norders\x00\x1b[31m 0 " + b"9" * 500 + b"\n")
    r = run("logdir", str(logs), "--topic-config", "orders:cleanup.policy=compact")
    line = lines_of(r)[0]
    assert "line 3: partition or offset is not a number in 'orders\\x00\\x1b[31m 0 999" in line and \
        "' (515 characters)" in line, line
    assert "\x1b" not in r.stderr and "\x00" not in r.stderr


# ---------------------------------------------------------------- errno: a loop is a loop


def test_a_symlink_loop_is_named_as_one(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    loop = tmp_path / "a"
    r = run("inspect", str(loop))  # was: "no such file or directory"
    assert r.returncode == 2 and lines_of(r)[0] == f"inspect: {loop}: too many levels of symbolic links"
    r = run("logdir", str(loop))
    assert r.returncode == 2 and "no such file" not in r.stderr and "not a directory" not in r.stderr
    assert lines_of(r)[0] == f"logdir: {loop}: cannot read log dir: {loop}: too many levels of symbolic links"
    r = run("logdir", str(tmp_path), "--cleaner-log", str(loop))
    assert f"logdir: {loop}: cannot read the cleaner log: too many levels of symbolic links" in lines_of(r)
    three_v2_batches(tmp_path / "logs" / "orders-0" / "00000000000000000000.log")
    for args, says in ((["--input", str(loop), "--out", str(tmp_path / "out")], f"{loop}: too many levels"),
                       (["--input", str(tmp_path / "logs"), "--out", str(loop)], f"--out {loop}: too many levels"),
                       (["--input", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--cleaner-log", str(loop)],
                        f"{loop}: cannot read the cleaner log (too many levels of symbolic links)")):
        assert one_line(run("audit", *args)).startswith(f"compaction-monitor: audit: {says}"), args


def test_a_looped_partition_folder_is_that_partitions_fault_not_the_log_dirs(tmp_path):
    logs = tmp_path / "logs"
    three_v2_batches(logs / "orders-0" / "00000000000000000000.log")
    (logs / "orders-1").symlink_to(logs / "orders-1")  # a link to itself
    r = run("logdir", str(logs), "--topic-config", "orders:cleanup.policy=compact", "--format", "json")
    assert r.returncode == 1, r.stderr
    assert lines_of(r) == [f"logdir: orders-1: {logs}/orders-1: too many levels of symbolic links"]
    assert '"orders"' in r.stdout and '"partition": 0' in r.stdout  # orders-0 still read


# ---------------------------------------------------------------- inspect: a live segment's in-flight tail


def test_inspect_leaves_a_live_segments_in_flight_tail_out_as_the_collector_does(tmp_path):
    """A producer's batch half appended (what `inspect` of a live segment meets): a note, exit 0; with
    --strict a fault, exit 1. Was: corrupt, exit 1, every time."""
    seg = tmp_path / "orders-0" / "00000000000000000000.log"
    three_v2_batches(seg)
    whole = seg.stat().st_size
    batch = v2(items(range(6, 8))).data
    with open(seg, "ab") as fh:
        fh.write(batch[:40])  # the next batch, cut where the writer is
    r = run("inspect", str(seg), "--format", "jsonl")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 6
    note = [ln for ln in lines_of(r) if ln.startswith("inspect: note: ")]
    assert note == [f"inspect: note: {seg}: byte {whole}: batch of {len(batch)} bytes runs past the end of the file "
                    "(40 bytes left): left out, as the collector does: the batch being appended to a live segment "
                    "(or a tail cut short); --strict counts it as corrupt"]
    assert "corrupt:" not in r.stderr
    for args in ((str(seg),), (str(seg.parent),), (str(seg), "--stats")):
        assert run("inspect", *args).returncode == 0
    strict = run("inspect", str(seg), "--strict")
    assert strict.returncode == 1 and f"inspect: corrupt: {seg}: byte {whole}: batch of " in strict.stderr
    assert "Traceback" not in strict.stderr


def test_a_cut_batch_that_is_not_the_tail_is_still_corrupt(tmp_path):
    """Only where the read stops: a damaged batch before readable ones stays a fault (exit 1)."""
    seg = tmp_path / "orders-0" / "00000000000000000000.log"
    written = three_v2_batches(seg)
    data = bytearray(seg.read_bytes())
    first = len(written.batches[0].data)
    data[first + 40] ^= 0xFF  # a byte of the second batch's records: its CRC fails
    seg.write_bytes(bytes(data))
    r = run("inspect", str(seg))
    assert r.returncode == 1 and "inspect: corrupt: " in r.stderr and "note:" not in r.stderr, r.stderr


def test_a_secret_that_breaks_its_url_is_named_without_any_piece_of_it(tmp_path):
    """``--jmx-url 'http://u:${env:JP}@h:1/metrics'`` with a password holding ``/`` and ``[``: checked once
    resolved, named without the secret (was: a source failing with ``Port could not be cast to integer
    value as 'a'``, a piece of the password)."""
    env = {"JP": "s3/cr[t"}
    r = run_cli("collect", "--jmx-url", "http://u:${env:JP}@127.0.0.1:1/metrics", "--once", env=env)
    assert one_line(r) == ("compaction-monitor: config error: --jmx-url: expected an http:// or https:// URL, got "
                           "'http://u:${env:JP}@127.0.0.1:1/metrics' (with its reference resolved it is no URL: "
                           "percent-encode the secret's / @ [ ] : ? # characters)")
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - brokers:\n      - {id: 1, jolokia_url: 'http://u:${env:JP}@h:1/jolokia'}\n")
    r = run_cli("config", "check", str(cfg), env=env)
    assert "clusters[0].brokers[0].jolokia_url: expected an http:// or https:// URL, got 'http://u:${env:JP}@h:1" \
           "/jolokia' (with its reference resolved it is no URL" in one_line(r)
    assert "s3" not in r.stderr + r.stdout and "cr[t" not in r.stderr + r.stdout

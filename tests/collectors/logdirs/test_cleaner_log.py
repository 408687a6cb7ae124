"""Following log-cleaner.log: appended lines only, through log4j2's rename-and-create and logrotate's
copytruncate, never counting a clean twice; bad lines counted, never fatal; --cleaner-log wiring."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from cli.logdir_cmd import run_logdir
from clirun import run_cli
from collectors.app import build
from collectors.logdirs.cleaner_log import CleanerLogFollower
from monitor.kafka.cleanerlog import MB
from monitor.settings.config import BrokerConfig, ClusterConfig, Config, ConfigError, parse_config
from monitor.settings.configflags import with_command_line
from cleanerlogfixtures import START, stats_block, uncleanable


def write(path, lines, mode="a"):
    with open(path, mode) as f:
        f.write("".join(ln + "\n" for ln in lines))


def clean(i, log="orders-0"):
    return stats_block(f"2026-11-22 12:00:{i % 60:02d},000", 0, log, i, i + 1, 2 * MB, 1.0, 0.5, 0.25, MB, 10, 5)


def test_incremental_reads_never_double_count(tmp_path):
    p = tmp_path / "log-cleaner.log"
    write(p, START + clean(0))
    f = CleanerLogFollower(str(p))
    a = f.refresh()
    assert a.state.cleans_total == 1 and a.bytes_read == p.stat().st_size
    assert f.refresh().bytes_read == 0 and f.refresh().state.cleans_total == 1
    write(p, clean(1))
    with open(p, "a") as fh:  # half a line: read when its end comes
        fh.write("[2026-11-22 12:00:05,000] WARN [kafka-log-cleaner-thread-0]: Unexpected exception")
    b = f.refresh()
    assert b.state.cleans_total == 2 and b.state.uncleanable == {}
    write(p, [" thrown when cleaning log Log(dir=/d/orders-0). Marking its partition (orders-0) as uncleanable "
              "(kafka.log.LogCleaner)", "org.apache.kafka.common.InvalidRecordException: bad size"])
    c = f.refresh()
    assert c.state.uncleanable[("orders", 0)].exception == "InvalidRecordException"
    assert c.state.cleans_total == 2 and c.state.processed_bytes_total == 4 * MB
    f.close()


def test_rename_and_create_rotation(tmp_path):
    """log4j2's RollingFile: log-cleaner.log is renamed to log-cleaner.log.1 and a new one created."""
    p = tmp_path / "log-cleaner.log"
    write(p, START + clean(0))
    f = CleanerLogFollower(str(p))
    assert f.refresh().state.cleans_total == 1
    write(p, clean(1))  # appended after the last read, before the rename: read from the old file
    os.rename(p, tmp_path / "log-cleaner.log.1")
    gone = f.refresh()  # renamed away, the new file not there yet
    assert gone.state.cleans_total == 2
    write(p, clean(2) + clean(3), mode="w")
    s = f.refresh()
    assert s.state.cleans_total == 4 and s.rotations == 1
    assert [c.dirty_start for c in s.state.cleans] == [0, 1, 2, 3]
    assert [c.source for c in s.state.cleans[-2:]] == [f"{p}:1", f"{p}:11"]  # lines numbered per file
    f.close()


def test_copytruncate_rotation(tmp_path):
    p = tmp_path / "log-cleaner.log"
    write(p, START + clean(0) + clean(1))
    f = CleanerLogFollower(str(p))
    assert f.refresh().state.cleans_total == 2
    shutil.copy(p, tmp_path / "log-cleaner.log.1")
    with open(p, "r+") as fh:
        fh.truncate(0)
    write(p, clean(7) + clean(8) + clean(9) + clean(10))  # longer than before: only its head tells
    s = f.refresh()
    assert s.state.cleans_total == 6 and s.rotations == 1
    assert [c.dirty_start for c in s.state.cleans][-4:] == [7, 8, 9, 10]
    f.close()


def test_bad_lines_are_counted_and_named(tmp_path):
    p = tmp_path / "log-cleaner.log"
    write(p, ["not a log4j line", *START, "\x00\xff"])
    p.write_bytes(p.read_bytes() + b"\xff\xfe binary junk\n" + b"x" * 300_000 + b"\n")
    f = CleanerLogFollower(str(p), chunk=4096, max_line=1000)
    s = f.refresh()
    assert s.error_kinds == ["malformed_line"] and s.new_malformed[0].startswith(f"{p}:1: ")
    write(p, clean(0))
    assert f.refresh().state.cleans_total == 1 and f.refresh().error_kinds == []
    f.close()


def test_missing_file_names_the_path(tmp_path):
    import errno

    with pytest.raises(OSError) as exc:
        CleanerLogFollower(str(tmp_path / "nope.log")).refresh()
    assert str(exc.value) == f"{tmp_path / 'nope.log'}: no such file or directory"
    assert exc.value.errno == errno.ENOENT


@pytest.mark.parametrize("case, says", [("missing", "no such file or directory"),
                                        ("loop", "too many levels of symbolic links")])
def test_collect_once_names_an_unusable_cleaner_log_as_the_system_does(case, says, tmp_path):
    """One line naming the path and the errno as the system names it, never Python's
    ``[Errno 2] No such file or directory: 'path'`` (issue #35, point 5); the CLI as a user runs it."""
    import subprocess
    import sys

    path = tmp_path / "log-cleaner.log"
    if case == "loop":
        os.symlink(path, path)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "cleaner-offset-checkpoint").write_text("0\n0\n")  # a log dir holding no partition yet
    r = run_cli("collect", "--once", "--log-dir", str(tmp_path / "logs"), "--cleaner-log", str(path))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    said = [line for line in r.stderr.splitlines() if " INFO " not in line]  # (collect's start-up and refresh lines)
    assert said == [f"collect: source cleaner_log:default:local failed: PathError: {path}: {says}"]


def test_config_and_flags():
    cfg = parse_config({"clusters": [{"name": "c", "brokers": [{"id": 1, "cleaner_log": "/var/log/k/log-cleaner.log"}]}]})
    assert cfg.clusters[0].brokers[0].cleaner_log == "/var/log/k/log-cleaner.log"
    with pytest.raises(ConfigError, match="cleaner_log"):
        parse_config({"clusters": [{"brokers": [{"id": 1, "cleaner_log": ["a", "b"]}]}]})
    c = with_command_line(Config(), jmx_urls=["http://h:7071/metrics"], cleaner_log="/l/log-cleaner.log")
    assert c.clusters[0].brokers[0].cleaner_log == "/l/log-cleaner.log"
    with pytest.raises(ConfigError, match="--cleaner-log"):
        with_command_line(Config(), jmx_urls=["http://a:1/m", "http://b:1/m"], cleaner_log="/l")


def test_collector_source_and_logdir_rows(tmp_path):
    p = tmp_path / "log-cleaner.log"
    write(p, START + uncleanable("2026-11-22 10:00:00,000", "Log(dir=/d/orders-0)", "orders-0",
                                 "org.apache.kafka.common.InvalidRecordException", "Invalid record size"))
    col = build(Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", cleaner_log=str(p)),)),)))
    try:
        assert col.runner.refresh_all()
        st = col.store.snapshot("cleaner_log:c:1").state
        assert set(st.uncleanable) == {("orders", 0)}
    finally:
        col.close()
    import io
    out, err = io.StringIO(), io.StringIO()
    rc = run_logdir([str(tmp_path / "nolog")], config=Config(), fmt="json", out=out, err=err, cleaner_log=str(p))
    assert rc == 2 and json.loads(out.getvalue()) == []  # no log dir there: the log alone is read, not fatal
    rc = run_logdir([str(tmp_path)], config=Config(), fmt="json", out=io.StringIO(), err=err,
                    cleaner_log=str(tmp_path / "missing.log"))
    assert "missing.log: cannot read the cleaner log" in err.getvalue()


def test_exported_in_base_units(tmp_path):
    from cleanerlogfixtures import L2, head

    p = tmp_path / "log-cleaner.log"
    write(p, START + uncleanable("2026-11-22 10:00:00,000", "Log(dir=/d/orders-0)", "orders-0",
                                 "org.apache.kafka.common.InvalidRecordException", "Invalid record size")
          + stats_block("2026-11-22 12:00:00,000", 0, "pay-1", 0, 9, 1536 * MB, 12.0, 4.0, 0.375, 512 * MB, 400, 100)
          + [head("2026-11-22 13:00:00,000", "ERROR", "[kafka-log-cleaner-thread-0]: Error due to", L2),
             "java.lang.IllegalStateException: " + "x" * 500, "\tat a.b(C.java:1)"])
    write(p, ["garbage"])  # inside the death's event: a stack trace line, not malformed
    col = build(Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", cleaner_log=str(p)),)),)))
    try:
        assert col.runner.refresh_all()
        reg = col.registry
        b = {"cluster": "c", "broker": "1"}
        assert reg.get_sample_value("kafka_compaction_partition_uncleanable", {
            **b, "topic": "orders", "partition": "0", "exception": "InvalidRecordException"}) == 1
        assert reg.get_sample_value("kafka_compaction_cleaner_log_cleans_total", b) == 1
        assert reg.get_sample_value("kafka_compaction_cleaner_log_processed_bytes_total", b) == 1536 * MB
        assert reg.get_sample_value("kafka_compaction_cleaner_log_last_clean_throughput_bytes_per_second", b) == 128 * MB
        assert reg.get_sample_value("kafka_compaction_cleaner_log_last_clean_buffer_utilization_ratio", b) == 0.375
        assert reg.get_sample_value("kafka_compaction_cleaner_log_last_clean_size_reduction_ratio", b) == \
            pytest.approx(2 / 3, abs=5e-4)
        assert reg.get_sample_value("kafka_compaction_cleaner_log_learned_throughput_bytes_per_second", b) == \
            pytest.approx(128 * MB)
        assert reg.get_sample_value("kafka_compaction_cleaner_log_thread_deaths_total", b) == 1
        info = [s for m in reg.collect() for s in m.samples if s.name == "kafka_compaction_cleaner_log_last_thread_error_info"]
        assert len(info) == 1 and info[0].labels["exception"] == "IllegalStateException"
        assert len(info[0].labels["message"]) == 200
        assert reg.get_sample_value("kafka_compaction_source_up", {"cluster": "c", "source": "cleaner_log:c:1",
                                                                   "kind": "cleaner_log"}) == 1
        write(p, START)  # the broker restarted: what was uncleanable is no more
        assert col.runner.refresh_all()
        assert reg.get_sample_value("kafka_compaction_partition_uncleanable", {
            **b, "topic": "orders", "partition": "0", "exception": "InvalidRecordException"}) is None
        assert reg.get_sample_value("kafka_compaction_cleaner_log_thread_deaths_total", b) == 1
    finally:
        col.close()

"""``explain`` states each fact once (issue 41): the write rate its forecast uses is the one its place in the
cleaner's queue uses (never "rate: 143 B/s" beside "its write rate is unknown"); a partition with no cleaner
checkpoint is never said to have a checkpoint of its log start; and a partition folder whose policy is not
known offline is said as ``logdir`` says it, not "no such partition". Log dirs of real segment files written
here; the expected figures follow from the offsets and timestamps written."""

from __future__ import annotations

import json
import time

from clirun import run_cli
from monitor.kafka.checkpoint import format_checkpoint
from recordfixtures import Rec, v2, write


def explain(*args):
    return run_cli("explain", *args)


def quiet_partition(folder, now_ms: int) -> None:
    """100 keys cleaned up to offset 100, then 5 updates in a rolled segment (a ratio far below 0.5: not
    eligible) over the last minute, and an active segment: the dirty section's timestamps give a rate."""
    write(folder / "00000000000000000000.log",
          [v2([Rec(i, now_ms - 600_000 + i, f"k{i}".encode(), b"v" * 500) for i in range(100)])])
    write(folder / "00000000000000000100.log",
          [v2([Rec(100 + i, now_ms - 60_000 + i * 10_000, f"k{i}".encode(), b"w" * 500)]) for i in range(5)])
    write(folder / "00000000000000000105.log", [v2([Rec(105, now_ms - 1000, b"k0", b"x")])])


def test_the_rate_the_forecast_uses_is_the_rate_the_queue_uses(tmp_path):
    from collectors.app import scan_once
    from collectors.export.facts import log_dir_facts
    from monitor.model.cleanerqueue import NOT_ELIGIBLE_RATE_UNKNOWN
    from monitor.model.topicconfig import BrokerSetting
    from monitor.settings.config import parse_config
    from monitor.verdicts.facts import BrokerFacts

    quiet_partition(tmp_path / "orders-0", int(time.time() * 1000))
    (tmp_path / "cleaner-offset-checkpoint").write_text(format_checkpoint({("orders", 0): 100}))
    snap, _ = scan_once([str(tmp_path)], parse_config({}), None)
    broker = BrokerFacts(cleaner_enabled=True, cleaner_threads=1,
                         backoff=BrokerSetting("log.cleaner.backoff.ms", 15_000, "admin"))
    facts = log_dir_facts(snap, snap.taken_at, broker_facts=broker, one_shot=True)
    [f] = facts.every()
    rate = f.cause.forecast["write_rate_bytes_per_second"]
    assert rate is not None and rate > 0, f.cause.forecast  # the one-shot estimate from the dirty section
    nxt = facts.queue.cleans[f.key]
    assert nxt.code != NOT_ELIGIBLE_RATE_UNKNOWN and "write rate is unknown" not in nxt.reason, nxt


def test_no_cleaner_checkpoint_is_never_shown_as_a_checkpoint(tmp_path):
    """An empty partition the cleaner never saw: first dirty offset = log start = log end. Said "clean", and
    both lines say there is no checkpoint yet (it read "the cleaner's checkpoint (0)")."""
    (tmp_path / "orders-0").mkdir()
    (tmp_path / "orders-0" / "00000000000000000000.log").write_bytes(b"")
    got = explain("orders", "--log-dir", str(tmp_path), "--topic-config", "orders:cleanup.policy=compact")
    assert got.returncode == 0, got.stderr
    assert "cause:     clean" in got.stdout
    assert "checkpoint (0)" not in got.stdout and "checkpoint 0" not in got.stdout, got.stdout
    assert got.stdout.count("no cleaner checkpoint yet") == 2, got.stdout


def test_a_partition_whose_policy_is_unknown_offline_is_said_as_logdir_says_it(tmp_path):
    """Never cleaned, no admin API: whether it is compacted cannot be told here. explain gives logdir's
    reason (and the way to have it judged) and what its folder shows, not "no such partition"."""
    quiet_partition(tmp_path / "cdc-0", int(time.time() * 1000))
    (tmp_path / "cleaner-offset-checkpoint").write_text(format_checkpoint({}))
    listed = run_cli("logdir", str(tmp_path), "--format", "json")
    [row] = [r for r in json.loads(listed.stdout) if r["topic"] == "cdc"]
    text = explain("cdc-0", "--log-dir", str(tmp_path))
    assert text.returncode == 0, text.stderr
    assert "no such" not in text.stderr
    assert "cdc-0" in text.stdout and "cause:     unknown" in text.stdout
    assert row["not_judged"] in text.stdout  # logdir's words, whole
    assert "--topic-config cdc:cleanup.policy=compact" in text.stdout
    assert "in 3 segment(s)" in text.stdout
    got = json.loads(explain("cdc", "--log-dir", str(tmp_path), "--format", "json").stdout)
    assert [(c["topic"], c["partition"], c["cause"], c["not_judged"], c["segments"]) for c in got] == \
        [("cdc", 0, "unknown", row["not_judged"], 3)]
    missing = explain("cdc-7", "--log-dir", str(tmp_path))  # no such folder: still "no such", exit 2
    assert missing.returncode == 2 and "cdc-7: no such compacted topic or partition" in missing.stderr

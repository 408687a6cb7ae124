"""One cause per partition (monitor.verdicts.causes) on real segment files: batches written by kafka-python's
record builders (tests/recordfixtures.py), read back by the summarizer, folded by the compaction model.
Expected values come from the files (their sizes, the batches' timestamps) and Kafka's rules, not from
the code under test."""

from __future__ import annotations

import pytest

from monitor.verdicts.causes import CAUSES, PRECEDENCE, explain, unknown_cause
from monitor.verdicts.facts import BrokerFacts, WriteRate
from monitor.verdicts.forecasts import max_segment_ms
from monitor.model.cleanerio import IoRate
from monitor.kafka.cleanerlog import CleanerLogState, ThreadDeath, Uncleanable
from monitor.model.compaction import partition_state
from monitor.model.summary import summarize
from monitor.model.topicconfig import (ADMIN, ADMIN_DOWN, DEFAULT, REFUSED, UNKNOWN, AdminRefusal, BrokerSetting,
                                 EffectiveConfig, TopicConfig, effective_config)
from causefixtures import COMPACT, T0, batch_max_ts, build, file_size, plain, txn_layout
from kafka.record.default_records import DefaultRecordBatchBuilder as B
from recordfixtures import Rec, items, v2


def cause(state, cfg, now, **kw):
    return explain(state, cfg, now_ms=now, **kw)


def test_clean_when_the_checkpoint_is_at_the_log_end(tmp_path):
    state, cfg, sums = build(tmp_path, [plain(0, 10), plain(10, 20), []], checkpoint=20)
    c = cause(state, cfg, T0 + 10_000)
    assert c.cause == "clean"
    assert c.evidence["first_dirty_offset"] == 20 == c.evidence["log_end_offset"]
    assert c.evidence["active_segment"] == "00000000000000000020.log"


def test_below_threshold_with_the_ratio_from_file_sizes(tmp_path):
    big, small = plain(0, 40), plain(40, 45)
    state, cfg, sums = build(tmp_path, [big, small, plain(45, 46)], checkpoint=40)
    c = cause(state, cfg, T0 + 10_000)
    sizes = [len(b.data) for b in big], [len(b.data) for b in small]
    expected = sum(sizes[1]) / (sum(sizes[0]) + sum(sizes[1]))
    assert c.cause == "below_threshold"
    assert c.evidence["cleanable_ratio"] == pytest.approx(expected) and expected < 0.5
    assert c.evidence["configs"]["min.cleanable.dirty.ratio"] == {"value": "0.5", "source": ADMIN}
    assert "--entity-name t --add-config min.cleanable.dirty.ratio=" in c.fix[0]
    # the forecast: the bytes it names bring the ratio to the threshold
    rate = 100.0
    c = explain(state, cfg, now_ms=T0 + 10_000, write_rate=WriteRate(rate, "given"))
    extra = c.forecast["threshold"]["in_seconds"] * rate
    assert (state.cleanable_bytes + extra) / (state.clean_bytes + state.cleanable_bytes + extra) == pytest.approx(0.5)


def test_active_segment_only_and_when_it_rolls(tmp_path):
    cfg = TopicConfig(cleanup_policy=("compact",), segment_ms=60_000)
    active = [v2(items(range(20, 25))), v2(items(range(25, 30)))]
    now = T0 + 30_000
    state, ecfg, _ = build(tmp_path, [plain(0, 20), active], cfg, now=now, checkpoint=20)
    c = cause(state, ecfg, now, write_rate=WriteRate(10.0, "given"))
    assert c.cause == "active_segment_only"
    assert c.evidence["active_segment"] == "00000000000000000020.log"
    roll = c.forecast["active_segment_roll"]
    # LogSegment.shouldRoll: the first batch's max timestamp + segment.ms (on the next append)
    assert roll["at_ms"] == batch_max_ts(20, 25) + 60_000
    assert "segment.ms=60000" in roll["reason"]
    # a compacted topic's max.compaction.lag.ms shortens the roll (LogConfig.maxSegmentMs)
    assert max_segment_ms(TopicConfig(cleanup_policy=("compact",), segment_ms=60_000,
                                      max_compaction_lag_ms=5_000)) == 5_000
    assert max_segment_ms(TopicConfig(segment_ms=60_000, max_compaction_lag_ms=5_000)) == 60_000
    # no writes: no roll, however old the segment
    c = explain(state, ecfg, now_ms=now, write_rate=WriteRate(0.0, "measured"))
    assert c.forecast["active_segment_roll"]["at_ms"] is None


def test_min_compaction_lag_holds_recent_segments(tmp_path):
    cfg = TopicConfig(cleanup_policy=("compact",), min_compaction_lag_ms=3_600_000)
    state, ecfg, _ = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], cfg)
    c = cause(state, ecfg, T0 + 10_000)
    assert c.cause == "min_compaction_lag"
    assert c.evidence["held_from_segment"] == "00000000000000000000.log"
    assert c.evidence["configs"]["min.compaction.lag.ms"]["value"] == "3600000"
    assert "min.compaction.lag.ms=" in c.fix[0]


def test_open_transaction_names_the_producer_and_the_abort(tmp_path):
    now = T0 + 60_000  # younger than transaction.max.timeout.ms
    state, cfg, _ = build(tmp_path, txn_layout(), now=now, checkpoint=20)  # cleaned up to the LSO
    c = cause(state, cfg, now, bootstrap="b:9092")
    assert state.cleanable_bytes == 0 and not state.eligible
    assert c.cause == "open_transaction"
    assert c.evidence["last_stable_offset"] == 20 == c.evidence["first_uncleanable_offset"]
    assert c.evidence["transaction"]["producer_id"] == 7 and c.evidence["transaction"]["first_offset"] == 20
    assert ("kafka-transactions.sh --bootstrap-server b:9092 abort --topic t --partition 0 --start-offset 20"
            in c.fix[0])
    assert c.forecast["threshold"]["at_ms"] is None and "last_stable_offset" in c.forecast["threshold"]["reason"]


def test_hanging_transaction_past_the_timeout(tmp_path):
    now = T0 + 1_000_000  # > 900 000 ms after the transaction's first batch
    state, cfg, _ = build(tmp_path, txn_layout(), now=now, checkpoint=20)
    c = cause(state, cfg, now)
    assert c.cause == "hanging_transaction" and state.hanging_transactions == 1
    assert c.fix[0].endswith("abort --topic t --partition 0 --start-offset 20")
    assert c.evidence["transaction"]["age_ms"] == now - batch_max_ts(20, 30)


def test_transaction_causes_name_the_broker_timeout_and_its_source(tmp_path):
    """A broker's transaction.max.timeout.ms below Kafka's default makes a transaction hanging that the
    default would call open: the evidence says which value decided, and where it came from."""
    now = batch_max_ts(20, 30) + 700_000  # open 700 s: past 600 s, within the default 900 s
    broker = BrokerSetting("transaction.max.timeout.ms", 600_000, ADMIN)
    state, cfg, _ = build(tmp_path / "broker", txn_layout(), now=now, checkpoint=20,
                          transaction_max_timeout_ms=600_000)
    c = cause(state, cfg, now, transaction_max_timeout=broker)
    assert c.cause == "hanging_transaction" and "10 min" in c.summary
    assert c.evidence["configs"] == {"transaction.max.timeout.ms": {"value": "600000", "source": "admin"}}
    default, cfg, _ = build(tmp_path / "default", txn_layout(), now=now, checkpoint=20)
    c = cause(default, cfg, now, transaction_max_timeout=BrokerSetting("transaction.max.timeout.ms", 900_000,
                                                                       DEFAULT))
    assert c.cause == "open_transaction"
    assert c.evidence["configs"] == {"transaction.max.timeout.ms": {"value": "900000", "source": "default"}}
    # a setting that is not the one the state was counted with is not vouched for
    c = cause(state, cfg, now, transaction_max_timeout=BrokerSetting("transaction.max.timeout.ms", 1, ADMIN))
    assert c.evidence["configs"]["transaction.max.timeout.ms"] == {"value": "600000", "source": "unknown"}


def test_committed_transaction_no_longer_blocks(tmp_path):
    now = T0 + 60_000
    state, cfg, _ = build(tmp_path, txn_layout(committed=True), now=now, checkpoint=0)
    assert explain(state, cfg, now_ms=now).cause == "waiting"


def test_waiting_says_for_how_long(tmp_path):
    state, cfg, _ = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    c = cause(state, cfg, T0 + 10_000, eligible_seconds=42.0)
    assert c.cause == "waiting" and "for 42 s" in c.summary and c.evidence["eligible_seconds"] == 42.0
    one_shot = explain(state, cfg, now_ms=T0 + 10_000)
    assert "unknown time" in one_shot.summary


def test_overdue_past_max_compaction_lag(tmp_path):
    cfg = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.99, max_compaction_lag_ms=1_000)
    now = T0 + 10_000
    state, ecfg, _ = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], cfg, now=now, checkpoint=20)
    c = cause(state, ecfg, now)
    assert c.cause == "overdue"
    # Kafka's maxCompactionDelay: now - lag - the dirty segment's first batch timestamp
    assert c.evidence["compaction_delay_ms"] == now - 1_000 - batch_max_ts(20, 40)
    assert c.forecast["next_clean_due"]["at_ms"] == batch_max_ts(20, 40) + 1_000


IO_MAX = "log.cleaner.io.max.bytes.per.second"


def throttled(rate: float | None, limit: float | None, source=ADMIN, window=15.0) -> BrokerFacts:
    io = IoRate(rate, window, "given") if rate is not None else IoRate(None, None, "one sample so far")
    return BrokerFacts(0.0, "jmx:c:1", True, 1, io, BrokerSetting(IO_MAX, limit, source))


def test_throttled_cleaner_where_an_eligible_partition_waits_at_the_throttle(tmp_path):
    """Eligible, and the broker's cleaner read and wrote at 95 % of log.cleaner.io.max.bytes.per.second over
    the window: throttled_cleaner, with the rate, its window, the setting and its source, and the command that
    raises the setting. Below 90 % of it, no throttle, or the rate unknown: an ordinary wait."""
    state, cfg, _ = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    assert state.eligible
    c = cause(state, cfg, T0 + 10_000, broker=throttled(95_000.0, 100_000.0), bootstrap="b:1")
    assert c.cause == "throttled_cleaner"
    ev = c.evidence
    assert ev["cleaner_io_bytes_per_second"] == 95_000.0 and ev["cleaner_io_window_seconds"] == 15.0
    assert ev["throttle_ratio"] == pytest.approx(0.95)
    assert ev["configs"] == {IO_MAX: {"value": "100000", "source": ADMIN}}
    assert ("kafka-configs.sh --bootstrap-server b:1 --alter --entity-type brokers --entity-default "
            f"--add-config {IO_MAX}=200000") in c.fix[0]
    assert "throttled_cleaner" not in c.unchecked
    for facts in (throttled(85_000.0, 100_000.0), throttled(95_000.0, 1.7976931348623157e308, DEFAULT)):
        assert cause(state, cfg, T0 + 10_000, broker=facts).cause == "waiting"
    unknown = cause(state, cfg, T0 + 10_000, broker=throttled(None, 100_000.0))
    assert unknown.cause == "waiting" and "one sample so far" in unknown.unchecked["throttled_cleaner"]
    refused = BrokerFacts(0.0, "jmx", True, 1, IoRate(95_000.0, 15.0, "given"),
                          BrokerSetting(IO_MAX, None, "unknown", "DescribeConfigs refused"))
    assert "DescribeConfigs refused" in cause(state, cfg, T0 + 10_000, broker=refused).unchecked["throttled_cleaner"]
    assert "cleaner-io count was not read" in cause(state, cfg, T0 + 10_000).unchecked["throttled_cleaner"]


def test_a_throttle_does_not_make_a_partition_that_does_not_wait_throttled(tmp_path):
    """The throttle explains only a wait: a partition below its threshold keeps its own cause."""
    big, small = plain(0, 40), plain(40, 45)
    state, cfg, _ = build(tmp_path, [big, small, plain(45, 46)], checkpoint=40)
    assert not state.eligible
    assert cause(state, cfg, T0 + 10_000, broker=throttled(100_000.0, 100_000.0)).cause == "below_threshold"


def test_throttled_comes_before_overdue_and_says_it_is_overdue(tmp_path):
    """Overdue because the throttle holds the cleaner: the throttle is the cause (more threads, overdue's fix,
    would share the same throttle), and the summary says it is past max.compaction.lag.ms."""
    cfg = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.99, max_compaction_lag_ms=1_000)
    now = T0 + 10_000
    state, ecfg, _ = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], cfg, now=now, checkpoint=20)
    c = cause(state, ecfg, now, broker=throttled(99_000.0, 100_000.0))
    assert c.cause == "throttled_cleaner" and "past max.compaction.lag.ms" in c.summary
    assert c.evidence["compaction_delay_ms"] == now - 1_000 - batch_max_ts(20, 40)


def test_uncleanable_from_the_cleaner_log_wins(tmp_path):
    now = T0 + 60_000
    state, cfg, _ = build(tmp_path, txn_layout(), now=now, checkpoint=0)
    u = Uncleanable("t", 0, "CorruptRecordException", "Record size is less than the minimum", now - 5, "/d",
                    "log-cleaner.log:12")
    c = cause(state, cfg, now, cleaner=CleanerLogState({("t", 0): u}, (), ()))
    assert c.cause == "uncleanable" and c.evidence["exception"] == "CorruptRecordException"
    assert any("restart the broker" in f for f in c.fix)
    assert "uncleanable" not in c.unchecked
    assert explain(state, cfg, now_ms=now).unchecked["uncleanable"] == "log-cleaner.log was not read"


def test_a_record_over_the_decompressed_limit_names_why_the_cleaner_gave_up(tmp_path):
    """Kafka 4.4: a compressed batch's record above max.decompressed.message.bytes. Its size is the record's
    length field (kafka-python's size_in_bytes less the length varint); only the segments the cleaner reads
    count (not the active one), only compressed batches (Kafka checks no other). The cleaner's mark after an
    InvalidRecordException is named by this cause, with the fix raising the setting to fit; a mark after
    another exception stays ``uncleanable``'s; without a mark, the next clean fails."""
    big = [Rec(o, T0 + o * 7, f"k-{o}".encode(), b"x" * (3000 if o == 5 else 100)) for o in range(10)]
    huge_active = [Rec(20, T0 + 140, b"k-20", b"y" * 9000)]
    plain_big = [Rec(o, T0 + o * 7, f"k-{o}".encode(), b"z" * 6000) for o in range(10, 20)]
    expected = B.size_in_bytes(5, 35, b"k-5", b"x" * 3000, []) - 2  # a two-byte length varint
    now = T0 + 60_000
    cfg = TopicConfig(cleanup_policy=("compact",), max_decompressed_message_bytes=2000)
    state, ecfg, sums = build(tmp_path, [[v2(big, "gzip")], [v2(plain_big)], [v2(huge_active, "gzip")]], cfg,
                              now=now, checkpoint=0)
    assert sums[0].max_decompressed_record_bytes == expected and sums[1].max_decompressed_record_bytes == 0
    assert sums[2].max_decompressed_record_bytes > 9000  # read, but the cleaner never reads the active segment
    assert state.max_decompressed_record_bytes == expected and state.over_decompressed_limit
    assert state.as_dict()["max_decompressed_message_bytes"] == 2000
    u = Uncleanable("t", 0, "InvalidRecordException",
                    f"Invalid record size: {expected} exceeds the configured maximum record size of 2000.",
                    now - 5, "/d", "log-cleaner.log:7")
    c = cause(state, ecfg, now, cleaner=CleanerLogState({("t", 0): u}, (), ()))
    assert c.cause == "record_over_decompressed_limit"
    assert c.evidence["max_decompressed_record_bytes"] == expected and c.evidence["cleaner_log"] == "log-cleaner.log:7"
    assert c.evidence["configs"]["max.decompressed.message.bytes"] == {"value": "2000", "source": ADMIN}
    assert "--add-config max.decompressed.message.bytes=1048576" in c.fix[0] and "restart" in c.fix[1]
    other = Uncleanable("t", 0, "CorruptRecordException", "Record is corrupt", now - 5, "/d", "log-cleaner.log:9")
    assert cause(state, ecfg, now, cleaner=CleanerLogState({("t", 0): other}, (), ())).cause == "uncleanable"
    c = cause(state, ecfg, now)
    assert c.cause == "record_over_decompressed_limit" and "the next clean of t-0 fails" in c.summary
    # at the record's size it passes (Kafka fails only a larger one); Kafka's default is left out of as_dict
    at = TopicConfig(cleanup_policy=("compact",), max_decompressed_message_bytes=expected)
    state, ecfg, _ = build(tmp_path / "at", [[v2(big, "gzip")], [v2(plain_big)], [v2(huge_active, "gzip")]], at,
                           now=now, checkpoint=0)
    assert not state.over_decompressed_limit and cause(state, ecfg, now).cause != "record_over_decompressed_limit"
    state, _, _ = build(tmp_path / "default", [[v2(big, "gzip")], []], now=now)
    assert "max_decompressed_record_bytes" not in state.as_dict()


def test_cleaner_dead_over_waiting(tmp_path):
    state, cfg, _ = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    death = ThreadDeath("kafka-log-cleaner-thread-0", "java.lang.OutOfMemoryError", T0, "log-cleaner.log:3")
    c = cause(state, cfg, T0 + 10_000, broker=BrokerFacts(1.0, "jmx"),
              cleaner=CleanerLogState({}, (death,), ()))
    assert c.cause == "cleaner_dead" and c.evidence["last_error"] == "java.lang.OutOfMemoryError"
    assert explain(state, cfg, now_ms=T0 + 10_000, broker=BrokerFacts(0.0, "jmx")).cause == "waiting"


def test_all_threads_dead_names_the_thread_count(tmp_path):
    """With log.cleaner.threads known (admin API), the evidence says whether every thread is dead."""
    state, cfg, _ = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    c = cause(state, cfg, T0 + 10_000, broker=BrokerFacts(2.0, "jmx", cleaner_enabled=True, cleaner_threads=2))
    assert c.cause == "cleaner_dead" and c.evidence["cleaner_threads"] == 2 and c.evidence["all_threads_dead"]
    assert c.summary.startswith("all 2 log cleaner thread(s) died")
    c = cause(state, cfg, T0 + 10_000, broker=BrokerFacts(1.0, "jmx", cleaner_enabled=True, cleaner_threads=3))
    assert c.evidence["all_threads_dead"] is False and c.summary.startswith("1 of 3 log cleaner threads died")
    c = cause(state, cfg, T0 + 10_000, broker=BrokerFacts(1.0, "jmx"))
    assert c.evidence["all_threads_dead"] is None and "cleaner_disabled" in c.unchecked


def test_a_disabled_cleaner_comes_first_and_only_where_something_is_dirty(tmp_path):
    state, cfg, _ = build(tmp_path / "a", [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    death = ThreadDeath("kafka-log-cleaner-thread-0", "java.lang.OutOfMemoryError", T0, "log-cleaner.log:3")
    off = BrokerFacts(1.0, "jmx", cleaner_enabled=False, cleaner_threads=1)
    c = cause(state, cfg, T0 + 10_000, broker=off, cleaner=CleanerLogState({}, (death,), ()))
    assert c.cause == "cleaner_disabled" and "remove log.cleaner.enable=false" in c.fix[0]
    assert "cleaner_disabled" not in c.unchecked
    assert explain(state, cfg, now_ms=T0 + 10_000, broker=BrokerFacts(0.0, "jmx", True, 1)).cause == "waiting"
    clean, cfg, _ = build(tmp_path / "b", [plain(0, 10), plain(10, 20), []], checkpoint=20)
    assert explain(clean, cfg, now_ms=T0 + 10_000, broker=off).cause == "clean"  # nothing to compact


def test_unknown_on_read_faults_and_on_a_topic_not_compacted(tmp_path):
    state, cfg, sums = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    seg = sums[1].path
    with open(seg, "r+b") as fh:  # damage the CRC-covered bytes of the second segment's batch
        fh.seek(70)
        fh.write(b"\xff\xff\xff\xff")
    damaged = [summarize(s.path, s.base_offset)[0] for s in sums]
    assert damaged[1].faults
    state = partition_state("t", 0, damaged, COMPACT, T0 + 10_000, checkpoint=0)
    c = cause(state, cfg, T0 + 10_000, faults=tuple(damaged[1].faults))
    assert c.cause == "unknown" and c.evidence["reason"] == "read faults" and seg in c.evidence["first_fault"]
    deleted = TopicConfig(cleanup_policy=("delete",))
    c = explain(state, EffectiveConfig(deleted, {"cleanup.policy": ADMIN}), now_ms=T0)
    assert c.cause == "unknown" and "cleanup.policy=delete" in c.summary
    # Kafka 4.2+ (KIP-1161): an empty policy, said as such (neither compacted nor deleted), not a blank
    c = explain(state, EffectiveConfig(TopicConfig(cleanup_policy=()), {"cleanup.policy": ADMIN}), now_ms=T0)
    assert c.cause == "unknown" and "neither compacted nor deleted" in c.summary
    c = unknown_cause("t", 3, "/d/t-3/00000000000000000000.log: permission denied")
    assert c.cause == "unknown" and c.forecast["threshold"]["at_ms"] is None


def test_every_cause_is_reached_and_the_table_is_the_list():
    assert CAUSES == tuple(n for n, _, _ in PRECEDENCE)
    assert set(CAUSES) == {"cleaner_disabled", "record_over_decompressed_limit", "uncleanable", "cleaner_dead", "unknown", "hanging_transaction", "open_transaction",
                           "throttled_cleaner", "overdue", "waiting", "min_compaction_lag", "below_threshold",
                           "active_segment_only", "clean"}
    assert all(why for _, _, why in PRECEDENCE)


def test_a_lag_counts_only_if_it_decides_an_open_transaction_always(tmp_path):
    """min.compaction.lag.ms releases by itself: below the threshold anyway, the ratio is the cause. The
    LSO moves only when the producer (or an abort) ends the transaction: it is the cause whatever the ratio."""
    strict = dict(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.99)
    lag = TopicConfig(**strict, min_compaction_lag_ms=3_600_000)
    state, cfg, _ = build(tmp_path / "lag", [plain(0, 40), plain(40, 45), plain(45, 46)], lag, checkpoint=40)
    assert state.blocked_by == "min_compaction_lag"
    c = explain(state, cfg, now_ms=T0 + 10_000)
    assert c.cause == "below_threshold" and c.evidence["blocked_by"] == "min_compaction_lag"
    now = T0 + 60_000
    state, cfg, _ = build(tmp_path / "txn", txn_layout(), TopicConfig(**strict), now=now, checkpoint=20)
    assert state.uncleaned_ratio < 0.99
    assert explain(state, cfg, now_ms=now).cause == "open_transaction"


def test_not_yet_cleanable_split_by_what_holds_it(tmp_path):
    """The bytes the cleaner may not touch: the active segment's file, and min.compaction.lag.ms' from
    the first segment it holds (here all below the active one: every record is recent)."""
    cfg = TopicConfig(cleanup_policy=("compact",), min_compaction_lag_ms=3_600_000)
    state, _, sums = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], cfg)
    split = state.not_yet_cleanable_split()
    assert split == {"active_segment": file_size(sums[2]),
                     "min_compaction_lag": file_size(sums[0]) + file_size(sums[1]), "last_stable_offset": 0}
    assert sum(split.values()) == state.not_yet_cleanable_bytes
    # nothing held below the active segment: all of it is the active segment's
    state, _, sums = build(tmp_path / "b", [plain(0, 20), plain(20, 25)], COMPACT, checkpoint=20)
    assert state.not_yet_cleanable_split() == {"active_segment": file_size(sums[1]), "min_compaction_lag": 0,
                                               "last_stable_offset": 0}


def test_a_topic_config_unknown_gives_no_verdict_and_says_why(tmp_path):
    # with Kafka's defaults (ratio 0.5) this partition would be "waiting" (eligible: cleanable ratio 1.0)
    state, cfg, sums = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    assert cause(state, cfg, T0 + 10_000).cause == "waiting"
    why = AdminRefusal(REFUSED, "refused: no DescribeConfigs on TOPIC t for User:blind")
    unknown = effective_config("t", compacted=True, refusal=why)
    c = cause(state, unknown, T0 + 10_000)
    assert c.cause == "unknown" and why.text in c.summary and why.text in c.evidence["reason"]
    assert c.evidence["configs"]["min.cleanable.dirty.ratio"] == {"value": None, "source": UNKNOWN}
    assert c.evidence["configs"]["delete.retention.ms"] == {"value": None, "source": UNKNOWN}
    assert c.evidence["eligible"] is None and c.evidence["min_cleanable_dirty_ratio"] is None
    assert c.evidence["cleanable_ratio"] is None
    assert all(c.forecast[k]["at_ms"] is None for k in ("threshold", "next_clean_due", "active_segment_roll"))
    assert any("DescribeConfigs" in fix for fix in c.fix)
    # the admin API did not answer at all (the cluster out of reach): no ACL is missing, none is advised
    down = AdminRefusal(ADMIN_DOWN, "the admin API did not answer: cannot reach the cluster at b:9 (connection "
                                    "refused)")
    c = cause(state, effective_config("t", compacted=True, refusal=down), T0 + 10_000)
    assert c.cause == "unknown" and down.text in c.summary
    assert not any("kafka-acls" in fix or "DescribeConfigs" in fix for fix in c.fix), c.fix
    assert any("make the cluster reachable" in fix for fix in c.fix)

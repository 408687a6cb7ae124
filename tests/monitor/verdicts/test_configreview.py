"""The configuration review's checks on facts given by hand: each pitfall found with its evidence and
suggested value, its near miss passing, and a check without its measured input left unchecked (never
guessed). Expected values follow from the configs and the facts written here."""

from __future__ import annotations

from monitor.verdicts.configreview import (CHECKS, GROUP_LAG, LOG_DIR, GroupLagFact, TopicFacts, format_review,
                                          review)
from monitor.model.topicconfig import LONG_MAX, TopicConfig

GOOD = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.5, max_compaction_lag_ms=86_400_000,
                   delete_retention_ms=86_400_000, segment_ms=3_600_000)


def facts(config=GOOD, **kw) -> TopicFacts:
    base = dict(log_bytes=10_000, clean_bytes=5_000, cleanable_bytes=1_000, tombstones=3, write_bytes_per_second=10.0,
                write_rate_basis="measured", active_segment_bytes=100, active_segment_age_ms=1000,
                group_lags=(GroupLagFact("g", 0, 60.0),), groups_measured=True)
    base.update(kw)
    return TopicFacts("t", config, **base)


def checks(r) -> set:
    return {f.check for f in r.findings}


def test_a_topic_set_up_well_passes_every_check():
    r = review([facts()])
    assert r.passed and not r.unchecked and r.topics == ("t",)
    assert format_review(r).endswith("all pass")


def test_delete_retention_below_the_slowest_groups_lag():
    cfg = TopicConfig(**{**GOOD.__dict__, "delete_retention_ms": 30_000})
    r = review([facts(cfg, group_lags=(GroupLagFact("fast", 0, 1.0), GroupLagFact("slow", 1, 45.0),
                                       GroupLagFact("unread", 0, None)))])
    [f] = r.findings
    assert (f.check, f.setting, f.current) == ("delete_retention_below_consumer_lag", "delete.retention.ms", "30000")
    assert f.evidence["slowest_group"] == "slow" and f.evidence["lag_seconds"] == 45.0
    assert int(f.suggested) >= 90_000 and "--entity-name t --add-config delete.retention.ms=" in f.fix
    assert review([facts(cfg, group_lags=(GroupLagFact("g", 0, 29.0),))]).passed  # near miss
    r = review([facts(cfg, group_lags=(), groups_measured=False)])
    assert not r.findings and not r.passed and "delete_retention_below_consumer_lag" in r.unchecked["t"]


def test_a_very_low_dirty_ratio_with_the_clean_interval_at_the_measured_rate():
    cfg = TopicConfig(**{**GOOD.__dict__, "min_cleanable_dirty_ratio": 0.01})
    [f] = review([facts(cfg)]).findings
    assert (f.check, f.current, f.suggested) == ("dirty_ratio_too_low", "0.01", "0.5")
    assert f.evidence["seconds_between_cleans"] == 0.01 * 10_000 / 10.0
    assert review([facts(TopicConfig(**{**GOOD.__dict__, "min_cleanable_dirty_ratio": 0.1}))]).passed


def test_unbounded_max_lag_only_on_a_quiet_topic_with_tombstones():
    cfg = TopicConfig(**{**GOOD.__dict__, "max_compaction_lag_ms": LONG_MAX})
    [f] = review([facts(cfg, write_bytes_per_second=0.0)]).findings
    assert (f.check, f.suggested) == ("unbounded_max_compaction_lag", "86400000")
    assert f.evidence["tombstones"] == 3 and f.evidence["eligible_in_ms"] is None
    # at 10 B/s: (0.5 * 6100 - 1100) / 0.5 = 3900 more bytes (390 s), after the active segment rolls by
    # segment.ms (1 h, less its 1 s age): eligible within the hour, not quiet
    from monitor.verdicts.configreview import _time_to_eligible_ms

    assert _time_to_eligible_ms(facts(cfg)) == 3_600_000 - 1000
    assert _time_to_eligible_ms(facts(cfg, write_bytes_per_second=1.0)) == 3_900_000
    assert review([facts(cfg)]).passed
    assert review([facts(cfg, tombstones=0, write_bytes_per_second=0.0)]).passed
    r = review([facts(cfg, tombstones=None, write_bytes_per_second=None)])
    assert "unbounded_max_compaction_lag" in r.unchecked["t"]


def test_a_segment_that_the_traffic_rolls_too_late():
    cfg = TopicConfig(**{**GOOD.__dict__, "segment_ms": 604_800_000, "max_compaction_lag_ms": LONG_MAX})
    [f] = review([facts(cfg, tombstones=0)]).findings  # 1 GiB at 10 B/s: never soon; segment.ms 7 days
    assert (f.check, f.setting, f.suggested) == ("segment_roll_beyond_traffic", "segment.ms", "3600000")
    # a busy topic fills segment.bytes (1 GiB) within a day: no finding
    assert review([facts(cfg, tombstones=0, write_bytes_per_second=1_073_741_824 / 3600)]).passed
    # LogConfig.maxSegmentMs: a bounded max.compaction.lag.ms rolls it too
    assert review([facts(TopicConfig(**{**cfg.__dict__, "max_compaction_lag_ms": 3_600_000}))]).passed
    assert "segment_roll_beyond_traffic" in review([facts(cfg, tombstones=0, write_bytes_per_second=None)]).unchecked["t"]


def test_compact_delete_with_retention_below_delete_retention():
    cfg = TopicConfig(**{**GOOD.__dict__, "cleanup_policy": ("compact", "delete"), "retention_ms": 3_600_000})
    [f] = review([facts(cfg)]).findings
    assert (f.check, f.setting, f.current, f.suggested) == ("retention_below_delete_retention", "retention.ms",
                                                            "3600000", "86400000")
    text = format_review(review([facts(cfg)]))
    assert "t: retention_below_delete_retention" in text and "retention.ms=3600000 (1 h)  ->  suggested 86400000 (1 d)" in text
    assert text.endswith("1 finding(s) on 1 compacted topic(s)")
    assert review([facts(TopicConfig(**{**cfg.__dict__, "retention_ms": -1}))]).passed  # no time limit
    assert review([facts(TopicConfig(**{**cfg.__dict__, "cleanup_policy": ("compact",)}))]).passed


def test_every_check_is_tested_here_and_topics_not_compacted_are_skipped():
    assert set(CHECKS) == {"delete_retention_below_consumer_lag", "dirty_ratio_too_low", "unbounded_max_compaction_lag",
                           "segment_roll_beyond_traffic", "retention_below_delete_retention",
                           "decompressed_limit_below_records"}
    deleted = TopicConfig(cleanup_policy=("delete",), min_cleanable_dirty_ratio=0.01)
    assert review([facts(deleted)]).topics == ()


def test_a_check_not_run_for_one_reason_on_every_topic_is_said_once_with_what_it_needs():
    """No log dir read, no groups listed: the checks that need them are not run on any topic, each named
    once with the input it needs, and the review neither passes nor says "all pass"."""
    r = review([TopicFacts(t, TopicConfig(cleanup_policy=("compact",))) for t in ("a", "b", "c")])
    text = format_review(r)
    assert set(r.unchecked) == {"a", "b", "c"} and not r.findings and not r.passed
    assert text.count("not run: unbounded_max_compaction_lag on every topic\n  why:       no log dir read") == 1
    assert "all pass" not in text
    # Kafka's default segment.ms (7 d): whether the traffic rolls it sooner needs the write rate, from a log dir
    assert text.endswith("0 finding(s) on 3 compacted topic(s); 3 check(s) not run: "
                         "delete_retention_below_consumer_lag, segment_roll_beyond_traffic, unbounded_max_compaction_lag")
    by = {n["check"]: n for n in r.as_dict()["not_run"]}
    assert set(by) == {"delete_retention_below_consumer_lag", "segment_roll_beyond_traffic",
                       "unbounded_max_compaction_lag"}
    assert by["delete_retention_below_consumer_lag"]["needs"] == GROUP_LAG
    assert by["unbounded_max_compaction_lag"]["needs"] == LOG_DIR
    assert by["unbounded_max_compaction_lag"]["topics"] == ["a", "b", "c"]
    assert r.as_dict()["passed"] is False


def test_each_check_not_run_names_an_input_it_declares():
    """The table's ``needs`` is what ``not_run`` reports: a check lacking an input it does not declare would
    be a table out of step with its test."""
    for topic in (TopicFacts("t", TopicConfig(cleanup_policy=("compact",), segment_ms=604_800_000,
                                              max_compaction_lag_ms=LONG_MAX)),
                  facts(write_bytes_per_second=None, group_lags=(GroupLagFact("g", 0, None),),
                        config=TopicConfig(**{**GOOD.__dict__, "segment_ms": 604_800_000,
                                              "max_compaction_lag_ms": LONG_MAX}))):
        r = review([topic])
        assert r.not_run, r
        for n in r.not_run:
            assert n["needs"] in CHECKS[n["check"]].needs, n


def test_the_consumer_lag_check_is_the_alerts_comparison():
    """At exactly delete.retention.ms, ConsumerMayMissTombstones' critical rule (ratio >= 1) fires: so does
    the check (one comparison, monitor.contract.rules.LAG_PAST_RETENTION)."""
    cfg = TopicConfig(**{**GOOD.__dict__, "delete_retention_ms": 30_000})
    assert checks(review([facts(cfg, group_lags=(GroupLagFact("g", 0, 30.0),))])) == \
        {"delete_retention_below_consumer_lag"}
    assert CHECKS["delete_retention_below_consumer_lag"].alert == "ConsumerMayMissTombstones"


def test_a_decompressed_limit_below_a_stored_record_is_found_before_the_cleaner_fails():
    """Kafka 4.4's max.decompressed.message.bytes lowered below a stored record of a compressed batch: a
    finding with the record's size and a value at or above it; at the record's size exactly it passes
    (Kafka fails only a larger one); at Kafka's default nothing is judged, not even without a log dir."""
    capped = TopicConfig(**{**GOOD.__dict__, "max_decompressed_message_bytes": 1000})
    r = review([facts(capped, max_decompressed_record_bytes=1001)])
    (f,) = r.findings
    assert f.check == "decompressed_limit_below_records" and f.setting == "max.decompressed.message.bytes"
    assert (f.current, f.evidence["max_decompressed_record_bytes"]) == ("1000", 1001)
    assert int(f.suggested) >= 1001 and f"--add-config max.decompressed.message.bytes={f.suggested}" in f.fix
    assert "1001 bytes" in f.summary and "InvalidRecordException" in f.summary
    assert "setting:   max.decompressed.message.bytes=1000 (" in format_review(r)
    assert review([facts(capped, max_decompressed_record_bytes=1000)]).passed
    # no log dir read: not run while the cap is set, nothing to judge at the default
    r = review([facts(capped)])
    assert r.unchecked["t"]["decompressed_limit_below_records"].needs == LOG_DIR
    assert review([facts(GOOD)]).passed
    # records still being read (headers first): a record over it is found, none over it yet is not a pass
    assert checks(review([facts(capped, max_decompressed_record_bytes=5000, records_pending=True)])) == {
        "decompressed_limit_below_records"}
    assert "decompressed_limit_below_records" in review([facts(capped, max_decompressed_record_bytes=10,
                                                              records_pending=True)]).unchecked["t"]

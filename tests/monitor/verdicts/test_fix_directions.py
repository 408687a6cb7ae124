"""Every fix ``explain`` and the config review suggest moves its setting the way that helps (issue #33: for
min_compaction_lag, explain proposed 365 d on a topic with 3650 d whose held records were minutes old).

Each cause with a setting to change is tried at an ordinary current value and at an extreme one (very large,
very small), and the value its command line proposes is compared with the current one in the direction the
cause needs; where the model can say so, the proposed value is applied and the partition is folded again to
see that it helps. Causes whose fix changes no number are checked to propose none. Partitions are built from
real segment files (tests/causefixtures.py)."""

from __future__ import annotations

import math
import re

import pytest

from causefixtures import T0, build, plain, txn_layout
from horizonfixtures import CFG as HCFG, NOW as HNOW, segment as horizon_segment
from monitor.model.cleanerio import IoRate
from monitor.model.compaction import partition_state
from monitor.model.summary import summarize
from monitor.model.topicconfig import ADMIN, LONG_MAX, BrokerSetting, TopicConfig, effective_config
from monitor.verdicts.causes import CAUSES, explain
from monitor.verdicts.configreview import GroupLagFact, TopicFacts, review
from monitor.verdicts.facts import BrokerFacts
from monitor.verdicts.fixes import DOUBLE_MAX, IO_MAX
from recordfixtures import items, v2

DAY = 86_400_000
ADD = re.compile(r"--add-config ([\w.]+)=(\S+)")


def proposed(lines) -> dict[str, str]:
    """Every ``--add-config key=value`` the fix lines propose."""
    return {k: v for line in lines for k, v in ADD.findall(line)}


def test_min_compaction_lag_is_lowered_below_the_held_records_age_even_from_3650_days(tmp_path):
    """The case of issue #33: a lag of 3650 d (and one of 1 h) holding back records written seconds ago. A
    tenth of the lag (365 d) still holds them; the value proposed releases them when applied."""
    for current in (3650 * DAY, 3_600_000):
        cfg = TopicConfig(cleanup_policy=("compact",), min_compaction_lag_ms=current)
        now = T0 + 10_000
        state, ecfg, sums = build(tmp_path / str(current), [plain(0, 20), plain(20, 40), plain(40, 41)], cfg,
                                  now=now)
        c = explain(state, ecfg, now_ms=now)
        assert c.cause == "min_compaction_lag"
        value = int(proposed(c.fix)["min.compaction.lag.ms"])
        assert value < current
        # applied, the lag holds nothing back any more (LogCleanerManager.cleanableOffsets, as the model folds it)
        after = partition_state("t", 0, sums, TopicConfig(cleanup_policy=("compact",), min_compaction_lag_ms=value),
                                now)
        assert after.blocked_by != "min_compaction_lag" and after.eligible, (value, after)


@pytest.mark.parametrize("ratio", [0.5, 0.01])
def test_below_threshold_lowers_the_ratio_below_the_partitions_and_the_current(tmp_path, ratio):
    """min.cleanable.dirty.ratio proposed below the current one and below the partition's cleanable ratio, so
    that, applied, the partition is eligible; at a current ratio of 0.01 too (the old fix proposed 0.01 again)."""
    cfg = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=ratio)
    big, small = plain(0, 400), plain(400, 401)
    state, ecfg, sums = build(tmp_path, [big, small, plain(401, 402)], cfg, checkpoint=400)
    c = explain(state, ecfg, now_ms=T0 + 10_000)
    assert c.cause == "below_threshold", (c.cause, state.cleanable_ratio)
    value = float(proposed(c.fix)["min.cleanable.dirty.ratio"])
    assert 0 <= value < ratio
    lowered = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=value)
    assert partition_state("t", 0, sums, lowered, T0 + 10_000, checkpoint=400).eligible


@pytest.mark.parametrize("segment_ms, now_after", [(30 * DAY, 60_000), (800, 300)])
def test_active_segment_only_lowers_segment_ms_or_says_only_an_append_helps(tmp_path, segment_ms, now_after):
    """segment.ms proposed below the time the segment rolls after now (30 d; and 800 ms, where the old fix
    proposed 1000 ms, a later roll); a roll already due is not helped by any segment.ms: none proposed."""
    cfg = TopicConfig(cleanup_policy=("compact",), segment_ms=segment_ms)
    active = [v2(items(range(20, 25)))]
    state, ecfg, _ = build(tmp_path, [plain(0, 20), active], cfg, checkpoint=20)
    first = state.active_segment_first_timestamp
    c = explain(state, ecfg, now_ms=first + now_after)
    assert c.cause == "active_segment_only"
    assert int(proposed(c.fix)["segment.ms"]) < segment_ms
    due = explain(state, ecfg, now_ms=first + segment_ms + 1)
    assert due.cause == "active_segment_only" and "segment.ms" not in proposed(due.fix)
    assert "next append" in due.fix[0]


@pytest.mark.parametrize("limit", [100_000.0, 1e308])
def test_throttled_cleaner_raises_the_throttle_to_a_value_kafka_takes(tmp_path, limit):
    state, ecfg, _ = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    broker = BrokerFacts(0.0, "jmx", True, 1, IoRate(limit * 0.95, 15.0, "given"), BrokerSetting(IO_MAX, limit, ADMIN))
    c = explain(state, ecfg, now_ms=T0 + 10_000, broker=broker)
    assert c.cause == "throttled_cleaner"
    value = float(proposed(c.fix)[IO_MAX])
    assert limit < value <= DOUBLE_MAX and math.isfinite(value)


def test_a_cleaner_setting_set_on_one_broker_is_fixed_on_that_broker(tmp_path):
    """A per-broker dynamic value (kafka-configs --entity-name) comes before the cluster's default, so the fix
    names the broker: --entity-default would leave it as it is. Unknown or cluster-wide: the default."""
    state, ecfg, _ = build(tmp_path, [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    limit = 100_000.0
    own = BrokerSetting(IO_MAX, limit, ADMIN, kafka_source="DYNAMIC_BROKER_CONFIG")
    for setting, broker_only in ((own, True), (BrokerSetting(IO_MAX, limit, ADMIN, kafka_source=
                                                             "DYNAMIC_DEFAULT_BROKER_CONFIG"), False),
                                 (BrokerSetting(IO_MAX, limit, ADMIN), False)):
        broker = BrokerFacts(0.0, "jmx", True, 1, IoRate(limit * 0.95, 15.0, "given"), setting, broker="2",
                             per_broker=frozenset({IO_MAX}) if setting.per_broker else frozenset())
        c = explain(state, ecfg, now_ms=T0 + 10_000, broker=broker)
        assert c.cause == "throttled_cleaner"
        assert ("--entity-name 2 --add-config" in c.fix[0]) is broker_only
        assert ("--entity-default --add-config" in c.fix[0]) is not broker_only
        assert ("set on broker 2 alone" in c.fix[0]) is broker_only
    threads = BrokerFacts(0.0, "jmx", True, 2, broker="2", per_broker=frozenset({"log.cleaner.threads"}))
    c = explain(state, ecfg, now_ms=T0 + 10_000, broker=threads)
    assert c.cause == "waiting" and "--entity-name 2 --add-config log.cleaner.threads=4" in " ".join(c.fix)


@pytest.mark.parametrize("threads", [1, 8, None])
def test_waiting_and_overdue_add_cleaner_threads(tmp_path, threads):
    """More threads (up to double, what one change may add): twice the current count when it is known."""
    lagged = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.99, max_compaction_lag_ms=1_000)
    waiting = build(tmp_path / "w", [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    overdue = build(tmp_path / "o", [plain(0, 20), plain(20, 40), plain(40, 41)], lagged, checkpoint=20)
    broker = BrokerFacts(0.0, "jmx", True, threads)
    for (state, ecfg, _), name in ((waiting, "waiting"), (overdue, "overdue")):
        c = explain(state, ecfg, now_ms=T0 + 10_000, broker=broker)
        assert c.cause == name
        value = proposed(c.fix)["log.cleaner.threads"]
        if threads is None:
            assert value == "<up" and "twice the current" in " ".join(c.fix)
        else:
            assert int(value) == 2 * threads


def test_tombstones_past_horizon_propose_a_max_lag_only_below_the_topics(tmp_path):
    """On a quiet partition, a max.compaction.lag.ms of delete.retention.ms makes a clean come sooner only if
    the topic's is higher: with one of 1 h (below delete.retention.ms, 1 d), proposing 1 d would delay it."""
    summaries = [summarize(horizon_segment(tmp_path).path, 0)[0]]
    for current in (LONG_MAX, 3_600_000, 2 * DAY):
        cfg = TopicConfig(**{**HCFG.__dict__, "max_compaction_lag_ms": current})
        st = partition_state("t", 0, summaries, cfg, HNOW)
        past = explain(st, effective_config("t", admin=cfg), now_ms=HNOW).evidence["tombstones_past_horizon"]
        got = proposed(past["fix"])
        if "max.compaction.lag.ms" in got:
            assert int(got["max.compaction.lag.ms"]) < current
        else:
            assert current <= HCFG.delete_retention_ms
        assert float(got["min.cleanable.dirty.ratio"]) < cfg.min_cleanable_dirty_ratio


def test_causes_without_a_figure_to_move_propose_none(tmp_path):
    """The transaction causes abort or wait; uncleanable, a dead or disabled cleaner restart; clean does
    nothing: none of them proposes a topic config change."""
    now = T0 + 1_000_000
    state, ecfg, _ = build(tmp_path / "h", txn_layout(), now=now, checkpoint=20)
    hanging = explain(state, ecfg, now_ms=now)
    state, ecfg, _ = build(tmp_path / "o", txn_layout(), now=T0 + 60_000, checkpoint=20)
    open_ = explain(state, ecfg, now_ms=T0 + 60_000)
    state, ecfg, _ = build(tmp_path / "c", [plain(0, 10), plain(10, 20), []], checkpoint=20)
    clean = explain(state, ecfg, now_ms=T0 + 10_000)
    state, ecfg, _ = build(tmp_path / "d", [plain(0, 20), plain(20, 40), plain(40, 41)], checkpoint=0)
    dead = explain(state, ecfg, now_ms=T0 + 10_000, broker=BrokerFacts(1.0, "jmx", True, 1))
    off = explain(state, ecfg, now_ms=T0 + 10_000, broker=BrokerFacts(0.0, "jmx", False, 1))
    seen = {c.cause: c for c in (hanging, open_, clean, dead, off)}
    assert set(seen) == {"hanging_transaction", "open_transaction", "clean", "cleaner_dead", "cleaner_disabled"}
    for c in seen.values():
        assert not proposed(c.fix), (c.cause, c.fix)
    assert "remove log.cleaner.enable=false" in off.fix[0] and "log.cleaner.threads" in off.fix[0]
    assert "log.cleaner.enable=true" not in off.fix[0]  # deprecated since 4.1 (KIP-1148): never advised


def test_every_cause_is_covered_here():
    """A cause added to the table gets its direction checked here too."""
    covered = {"min_compaction_lag", "below_threshold", "active_segment_only", "throttled_cleaner", "waiting",
               "overdue", "hanging_transaction", "open_transaction", "clean", "cleaner_dead", "cleaner_disabled",
               "uncleanable", "unknown", "record_over_decompressed_limit"}  # uncleanable, unknown: restart / repair, or give the config (test_causes.py)
    assert covered == set(CAUSES)


def _review_facts(config, **kw) -> TopicFacts:
    base = dict(log_bytes=10_000, clean_bytes=5_000, cleanable_bytes=0, tombstones=3, write_bytes_per_second=0.0,
                write_rate_basis="measured", active_segment_bytes=100, active_segment_age_ms=1000,
                group_lags=(GroupLagFact("g", 0, 30 * 86_400.0),), groups_measured=True)
    return TopicFacts("t", config, **{**base, **kw})


@pytest.mark.parametrize("delete_retention", [60_000, LONG_MAX])
def test_config_review_suggestions_move_each_setting_the_way_that_helps(delete_retention):
    """check-config / topics lint: delete.retention.ms and retention.ms raised, min.cleanable.dirty.ratio raised,
    max.compaction.lag.ms lowered from unbounded (also where delete.retention.ms is unbounded itself: the old
    suggestion was max(delete.retention.ms, 1 d), Long.MAX_VALUE again), segment.ms lowered."""
    cfg = TopicConfig(cleanup_policy=("compact", "delete"), min_cleanable_dirty_ratio=0.01,
                      max_compaction_lag_ms=LONG_MAX, delete_retention_ms=delete_retention, segment_ms=30 * DAY,
                      retention_ms=30_000, max_decompressed_message_bytes=4096)
    found = {f.setting: f for f in review([_review_facts(cfg, max_decompressed_record_bytes=5000)]).findings}
    higher = {"delete.retention.ms", "retention.ms", "min.cleanable.dirty.ratio", "max.decompressed.message.bytes"}
    lower = {"max.compaction.lag.ms", "segment.ms"}
    expected = lower | {"min.cleanable.dirty.ratio", "retention.ms", "max.decompressed.message.bytes"} | (
        {"delete.retention.ms"} if delete_retention < LONG_MAX else set())
    assert set(found) == expected, sorted(found)
    for setting, f in found.items():
        current, suggested = (float(x) if "." in x else int(x) for x in (f.current, f.suggested))
        assert (suggested > current) if setting in higher else (suggested < current), (setting, current, suggested)
        assert f"--add-config {setting}={f.suggested}" in f.fix

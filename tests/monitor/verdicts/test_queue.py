"""monitor.verdicts.queue: the queue forecast's inputs from the edges' facts (the broker's settings, its
log-cleaner.log, each partition's state and config), and the forecast in words for ``explain``."""

from dataclasses import replace
from types import SimpleNamespace

from monitor.kafka.cleanerlog import Uncleanable, read_cleaner_log
from monitor.model.cleanerqueue import BROKER_UNKNOWN, NO_THROUGHPUT, UNCLEANABLE, NextClean
from monitor.model.topicconfig import UNKNOWN, BrokerSetting, TopicConfig, effective_config
from monitor.verdicts.facts import BrokerFacts
from monitor.verdicts.queue import BACKOFF, broker_queue, in_words, params_of

NOW = 1_700_000_000_000
STATS = """[2026-11-22 11:24:18,847] INFO [kafka-log-cleaner-thread-0]:
	Log cleaner thread 0 cleaned log other-0 (dirty section = [0, 5400])
	4.0 MB of log processed in 2.0 seconds (2.0 MB/sec).
 (org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread)
""".splitlines()


def broker(threads=2, backoff=500, dead=0.0):
    return BrokerFacts(dead_threads=dead, cleaner_enabled=True, cleaner_threads=threads,
                       backoff=BrokerSetting(BACKOFF, backoff, "admin") if backoff is not None else
                       BrokerSetting(BACKOFF, None, UNKNOWN, "CLUSTER_AUTHORIZATION_FAILED"))


def state(p, clean, dirty):
    return SimpleNamespace(topic="t", partition=p, clean_bytes=clean, cleanable_bytes=dirty, min_cleanable_dirty_ratio=0.5,
                           first_dirty_timestamp=None, uncleanable_reason="active_segment", dirty_largest_timestamp=None)


CFG = effective_config("t", admin=TopicConfig(cleanup_policy=("compact",)), compacted=True)


def test_the_settings_the_throughput_and_the_dead_threads():
    p = params_of(broker(threads=3, dead=1.0), read_cleaner_log(STATS))
    assert (p.threads, p.backoff_ms, p.throughput, p.unknown) == (2, 500, 2.0 * (1 << 20), None)
    p = params_of(broker(backoff=None), None)
    assert BACKOFF in p.unknown and p.throughput is None and "no log-cleaner.log" in p.throughput_basis
    assert "no admin API" in params_of(None, None).unknown


def test_the_queue_of_a_broker_skips_the_uncleanable_and_an_unknown_config_stops_it():
    cleaner = read_cleaner_log(STATS)
    marked = replace(cleaner, uncleanable={
        ("t", 1): Uncleanable("t", 1, "CorruptRecordException", "x", None, None, "log-cleaner.log:9")})
    q = broker_queue([(state(0, 0, 1 << 20), CFG, None), (state(1, 0, 8 << 20), CFG, None)], broker(), marked, NOW)
    assert q.cleans[("t", 1)].code == UNCLEANABLE and "CorruptRecordException" in q.cleans[("t", 1)].reason
    assert q.cleans[("t", 0)].start_ms == NOW and q.cleans[("t", 0)].end_ms == NOW + 500  # 1 MiB at 2 MiB/s
    refused = effective_config("t", compacted=True, refusal=None)
    refused = type(refused)(refused.config, {k: UNKNOWN for k in refused.sources}, None)
    q = broker_queue([(state(0, 0, 1 << 20), CFG, None), (state(1, 0, 1), refused, None)], broker(), cleaner, NOW)
    assert {c.code for c in q.cleans.values()} == {BROKER_UNKNOWN} and "t-1: topic config unknown" in q.drain_reason
    q = broker_queue([(state(0, 0, 1 << 20), CFG, None)], broker(), None, NOW)
    assert q.cleans[("t", 0)].code == NO_THROUGHPUT


def test_in_words():
    c = NextClean("t", 0, NOW + 90_000, NOW + 150_000, 3, NOW + 60_000, "its turn")
    words = in_words(c, NOW)
    assert words.startswith("next clean: starts in 1 min 30 s") and "#3 in the broker's queue" in words, words
    assert "30 s past its max.compaction.lag.ms deadline" in words and "done in 1 min" in words, words
    assert in_words(NextClean("t", 0, None, None, None, None, "no throughput", NO_THROUGHPUT), NOW) == \
        "next clean: unknown (no throughput)"

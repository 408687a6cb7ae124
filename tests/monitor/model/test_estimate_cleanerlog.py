"""The cleaner's stats blocks and the cleaning-time model."""

import pytest

from monitor.kafka.cleanerlog import MB, learned_throughput, parse_cleaner_log
from monitor.model.estimate import CleanerParams, estimate_clean

BLOCK = """[2026-11-22 10:00:00,123] INFO [kafka-log-cleaner-thread-0]: 
\tLog cleaner thread 0 cleaned log orders.v2-3 (dirty section = [1200, 5400])
\t1,012.3 MB of log processed in 11.4 seconds (88.8 MB/sec).
\tIndexed 4.1 MB in 0.5 seconds (8.2 Mb/sec, 35.7% of total time)
\tBuffer utilization: 0.2%
\tCleaned 12.3 MB in 0.9 seconds (13.7 Mb/sec, 64.3% of total time)
\tStart size: 12.3 MB (40,112 messages)
\tEnd size: 5.0 MB (16,001 messages)
\t59.3% size reduction (60.1% fewer messages)
 (org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread)
[2026-11-22 10:00:01,000] INFO [kafka-log-cleaner-thread-0]: 
\tLog cleaner thread 0 cleaned log tiny-0 (dirty section = [0, 3])
\t0.0 MB of log processed in 0.0 seconds (Infinity MB/sec).
\tIndexed 0.0 MB in 0.0 seconds (NaN Mb/sec, 0.0% of total time)
\tBuffer utilization: 0.0%
\tCleaned 0.0 MB in 0.0 seconds (NaN Mb/sec, 0.0% of total time)
\tStart size: 0.0 MB (3 messages)
\tEnd size: 0.0 MB (2 messages)
\t33.3% size reduction (33.3% fewer messages)
 (kafka.log.LogCleaner)
"""


def test_parse_blocks_with_grouping_and_infinity():
    s = parse_cleaner_log(BLOCK.splitlines())
    assert [x.log for x in s] == ["orders.v2-3", "tiny-0"]
    a = s[0]
    assert a.topic_partition == ("orders.v2", 3) and (a.dirty_start, a.dirty_end) == (1200, 5400)
    assert a.processed_mb == 1012.3 and a.seconds == 11.4 and a.start_messages == 40112 and a.end_messages == 16001
    assert a.buffer_utilization == pytest.approx(0.002)
    assert s[1].mb_per_sec == float("inf")


def test_learned_throughput_ignores_cleans_too_small_to_time():
    s = parse_cleaner_log(BLOCK.splitlines())
    assert s[0].duration == pytest.approx(1012.3 / 88.8)  # finer than the printed 11.4 s
    assert learned_throughput(s) == pytest.approx(88.8 * MB)
    assert learned_throughput(s[1:]) is None


def test_keys_per_pass_matches_kafka_defaults():
    assert CleanerParams().keys_per_pass == 5_033_164  # MD5: 24 B per entry, load factor 0.9
    assert CleanerParams(hash_bytes=32).keys_per_pass == 3_019_898  # SHA-256
    assert CleanerParams(threads=2).keys_per_pass == 2_516_581  # floor(floor(64 MiB / 24) * 0.9)


def test_passes_and_time():
    p = CleanerParams(throughput=100 * MB)
    one = estimate_clean(400 * MB, 100 * MB, 1_000_000, p)
    assert one.passes == 1 and one.seconds == pytest.approx(5.0)
    three = estimate_clean(0, 300 * MB, 12_000_000, p)
    assert three.passes == 3 and three.bytes_read == pytest.approx((100 + 200 + 300) * MB)
    throttled = estimate_clean(0, 100 * MB, 10, CleanerParams(throughput=100 * MB, io_max_bytes_per_second=10 * MB))
    assert throttled.seconds == pytest.approx(10.0)
    assert estimate_clean(5, 0, 0, p).passes == 0

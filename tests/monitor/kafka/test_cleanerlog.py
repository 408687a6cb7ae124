"""log-cleaner.log lines of Kafka 2.x to 4.3, made here from the format strings in Kafka's sources
(LogCleaner.scala recordStats / tryCleanFilthiestLog in 2.x-3.x, LogCleaner.java in 4.x,
ShutdownableThread's "Error due to"), read into uncleanable partitions, thread deaths and cleans."""

import pytest

from cleanerlogfixtures import L2, START, head, stats_block, uncleanable
from monitor.kafka.cleanerlog import MB, CleanerLogParser, read_cleaner_log, root_exception


def test_uncleanable_partitions_of_each_kafka_generation():
    lines = START + uncleanable(
        "2026-11-22 10:00:00,000", "Log(dir=/data/kafka/orders-3, topicId=oPdSuOQaTRm4lkXBfUOhDA, topic=orders, "
        "partition=3, highWatermark=153, lastStableOffset=153, logStartOffset=0, logEndOffset=153)", "orders-3",
        "org.apache.kafka.common.InvalidRecordException",
        "Invalid record size: expected to read 45 bytes in record payload, but instead read 44") + uncleanable(
        "2026-11-22 10:00:01,000", "UnifiedLog(dir=/data/k2/pay.v1-0, topic=pay.v1, partition=0, highWatermark=9, "
        "lastStableOffset=9, logStartOffset=0, logEndOffset=9)", "pay.v1-0",
        "org.apache.kafka.common.errors.CorruptRecordException", "Record size 0 is less than the minimum record overhead (14)",
        wrapper="kafka.log", logger=L2) + uncleanable(
        "2026-11-22 10:00:02,000", "Log(/data/k3/old-topic-12)", "old-topic-12",
        "java.lang.IllegalStateException", "Found log ending in the middle", wrapper="kafka.log", logger=L2)
    st = read_cleaner_log(lines, "/var/log/kafka/log-cleaner.log")
    assert set(st.uncleanable) == {("orders", 3), ("pay.v1", 0), ("old-topic", 12)}
    u = st.uncleanable[("orders", 3)]
    assert (u.exception, u.log_dir) == ("InvalidRecordException", "/data/kafka")
    assert u.message == "Invalid record size: expected to read 45 bytes in record payload, but instead read 44"
    assert u.source == "/var/log/kafka/log-cleaner.log:3"
    assert st.uncleanable[("pay.v1", 0)].exception == "CorruptRecordException"
    assert st.uncleanable[("pay.v1", 0)].log_dir == "/data/k2"
    assert st.uncleanable[("old-topic", 12)].log_dir == "/data/k3"
    assert st.malformed_total == 0 and st.broker_starts == 1


def test_a_broker_start_clears_what_was_read_before_it():
    lines = START + uncleanable("2026-11-22 10:00:00,000", "Log(dir=/d/a-0, topic=a, partition=0)", "a-0",
                                "org.apache.kafka.common.InvalidRecordException", "bad")
    p = CleanerLogParser()
    for ln in lines:
        p.feed(ln)
    assert ("a", 0) in p.state().uncleanable  # the open event (its stack trace may go on) counts already
    for ln in START:
        p.feed(ln)
    st = p.state()
    assert st.uncleanable == {} and st.broker_starts == 2


def test_thread_death_with_its_last_error():
    """ShutdownableThread.run: error("Error due to", e), then info("Stopped")."""
    lines = START + [
        head("2026-11-22 11:00:00,000", "ERROR", "[kafka-log-cleaner-thread-1]: Error due to", L2),
        "java.lang.OutOfMemoryError: Java heap space",
        "\tat java.nio.HeapByteBuffer.<init>(HeapByteBuffer.java:57)",
        head("2026-11-22 11:00:00,001", "INFO", "[kafka-log-cleaner-thread-1]: Stopped", L2),
        head("2026-11-22 11:00:05,000", "ERROR", "[kafka-log-cleaner-thread-0]: Error due to"),
        "java.lang.IllegalStateException: offset map is too small",
        "Caused by: java.lang.IllegalArgumentException: requirement failed"]
    st = read_cleaner_log(lines)
    assert st.thread_deaths_total == 2 and [d.thread for d in st.thread_deaths] == [
        "kafka-log-cleaner-thread-1", "kafka-log-cleaner-thread-0"]
    last = st.last_thread_death
    assert (last.exception, last.error) == ("IllegalArgumentException", "IllegalArgumentException: requirement failed")
    assert st.thread_deaths[0].error == "OutOfMemoryError: Java heap space"
    again = read_cleaner_log(lines + START)
    assert again.thread_deaths == () and again.thread_deaths_total == 2  # the counter keeps counting


def test_stats_blocks_in_base_units():
    lines = START + stats_block("2026-11-22 12:00:00,000", 0, "orders-3", 1200, 5400, 1536 * MB, 12.0, 4.0,
                                0.375, 512 * MB, 40112, 16001) + stats_block(
        "2026-11-22 12:00:01,000", 0, "tiny-0", 0, 3, 300, 0.01, 0.004, 0.0, 200, 3, 2, logger=L2)
    st = read_cleaner_log(lines)
    assert st.cleans_total == 2 and [c.log for c in st.cleans] == ["orders-3", "tiny-0"]
    a = st.cleans[0]
    assert a.processed_bytes == 1536 * MB and a.throughput_bytes_per_second == pytest.approx(128 * MB)
    assert a.buffer_utilization == pytest.approx(0.375) and a.size_reduction == pytest.approx(2 / 3, abs=5e-4)
    assert a.start_messages == 40112 and a.end_messages == 16001 and a.dirty_end == 5400
    assert st.processed_bytes_total == pytest.approx(1536 * MB)  # tiny-0 printed 0.0 MB
    assert st.learned_throughput() == pytest.approx(1536 * MB / 12.0)


def test_malformed_lines_are_named_never_fatal():
    lines = ["garbage before any event", *START,
             head("2026-11-22 10:00:00,000", "WARN", "[kafka-log-cleaner-thread-0]: Unexpected exception thrown "
                  "when cleaning log Log(dir=/d/x). Marking its partition (no-number) as uncleanable"),
             head("2026-11-22 10:00:01,000", "INFO", "[kafka-log-cleaner-thread-0]: "),
             "\tLog cleaner thread 0 cleaned log t-0 (dirty section = [0, 5])",
             "\t1.2.3 MB of log processed in x seconds (NaN MB/sec)."]
    st = read_cleaner_log(lines, "lc.log")
    assert st.malformed_total == 3
    assert st.malformed[0].startswith("lc.log:1: ") and st.malformed[1].startswith("lc.log:4: ")
    assert st.malformed[2].startswith("lc.log:5: ") and "stats block" in st.malformed[2]
    assert st.uncleanable == {} and st.cleans_total == 0


def test_recent_cleans_are_bounded():
    p = CleanerLogParser(max_cleans=3, max_event_lines=5)
    for i in range(10):
        for ln in stats_block(f"2026-11-22 12:00:{i:02d},000", 0, f"t-{i}", 0, 5, 2 * MB, 1.0, 0.5, 0.1, MB, 10, 5):
            p.feed(ln)
    st = p.finish()
    assert st.cleans_total == 10 and [c.log for c in st.cleans] == ["t-7", "t-8", "t-9"]


def test_root_exception():
    assert root_exception(["kafka.log.LogCleaningException: x", "\tat a.b(C.java:1)"]) == ("LogCleaningException", "x")
    assert root_exception(["\tat a.b(C.java:1)"]) is None


@pytest.mark.parametrize("tp", ["t-99999999999999999999", "t-03", "t-٣", "lost+found-3"])
def test_an_uncleanable_line_names_a_partition_only_as_kafka_prints_one(tp):
    """Kafka prints ``TopicPartition.toString``: a legal topic, ``-``, an int32 in plain digits
    (``monitor.kafka.kafkanames``); anything else names no partition (no series for partition 99999999999999999999)."""
    lines = [*START, head("2026-11-22 10:00:00,000", "WARN", "[kafka-log-cleaner-thread-0]: Unexpected exception "
                          f"thrown when cleaning log Log(dir=/d/x). Marking its partition ({tp}) as uncleanable")]
    st = read_cleaner_log(lines, "lc.log")
    assert st.uncleanable == {} and st.malformed_total == 1

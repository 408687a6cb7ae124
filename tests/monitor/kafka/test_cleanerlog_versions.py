"""The cleaner-log parser on the lines each Kafka family's stock log4j config writes, as taken from a real
broker of each version (tests/compat runs the brokers and reads their live logs the same way): Kafka 3.9's
log4j.properties routes the logger ``kafka.log.LogCleaner`` to log-cleaner.log and its cleaner prints the
swapped segments as a Scala ``List(...)``; Kafka 4.4's log4j2.yaml routes three loggers under
``org.apache.kafka.storage.internals.log`` (LogCleaner, Cleaner, LogCleaner$CleanerThread), and the
segments print as a Java list ``[...]``. The parser reads neither the logger nor the swap line: the same
events come out of both."""

from __future__ import annotations

import pytest

from monitor.kafka.cleanerlog import read_cleaner_log

KAFKA_3_9_1 = [
    '[2026-12-07 14:51:40,302] INFO Starting the log cleaner (kafka.log.LogCleaner)',
    '[2026-12-07 14:52:35,715] INFO Cleaner 0: Beginning cleaning of log cleaned-0 (kafka.log.LogCleaner)',
    '[2026-12-07 14:52:35,716] INFO Cleaner 0: Building offset map for cleaned-0... (kafka.log.LogCleaner)',
    '[2026-12-07 14:52:36,131] INFO Cleaner 0: Building offset map for log cleaned-0 for 2 segments in offset range [0, 101). (kafka.log.LogCleaner)',
    '[2026-12-07 14:52:36,149] INFO Cleaner 0: Offset map for log cleaned-0 complete. (kafka.log.LogCleaner)',
    '[2026-12-07 14:52:36,151] INFO Cleaner 0: Cleaning log cleaned-0 (cleaning prior to Mon Dec 07 14:52:35 UTC 2026, discarding tombstones prior to upper bound deletion horizon Thu Jan 01 00:00:00 UTC 1970)... (kafka.log.LogCleaner)',
    '[2026-12-07 14:52:36,158] INFO Cleaner 0: Cleaning LogSegment(baseOffset=0, size=2511, lastModifiedTime=1796655154964, largestRecordTimestamp=1796655154937) in log cleaned-0 into 0 with an upper bound deletion horizon 0 computed from the segment last modified time of 1796655154964,retaining deletes. (kafka.log.LogCleaner)',
    '[2026-12-07 14:52:36,162] INFO Cleaner 0: Cleaning LogSegment(baseOffset=50, size=2588, lastModifiedTime=1796655155372, largestRecordTimestamp=1796655155365) in log cleaned-0 into 0 with an upper bound deletion horizon 0 computed from the segment last modified time of 1796655155372,retaining deletes. (kafka.log.LogCleaner)',
    '[2026-12-07 14:52:36,203] INFO Cleaner 0: Swapping in cleaned segment LogSegment(baseOffset=0, size=2588, lastModifiedTime=1796655155372, largestRecordTimestamp=1796655155365) for segment(s) List(LogSegment(baseOffset=0, size=2511, lastModifiedTime=1796655154964, largestRecordTimestamp=1796655154937), LogSegment(baseOffset=50, size=2588, lastModifiedTime=1796655155372, largestRecordTimestamp=1796655155365)) in log Log(dir=/tmp/compat-exp/b39/data/cleaned-0, topicId=NhCJoLmtT4qdtBMX1lRmag, topic=cleaned, partition=0, highWatermark=155, lastStableOffset=155, logStartOffset=0, logEndOffset=155) (kafka.log.LogCleaner)',
    '[2026-12-07 14:52:36,224] INFO [kafka-log-cleaner-thread-0]: ',
    '\tLog cleaner thread 0 cleaned log cleaned-0 (dirty section = [0, 101])',
    '\t0.0 MB of log processed in 0.5 seconds (0.0 MB/sec).',
    '\tIndexed 0.0 MB in 0.4 seconds (0.0 Mb/sec, 85.8% of total time)',
    '\tBuffer utilization: 0.0%',
    '\tCleaned 0.0 MB in 0.1 seconds (0.1 Mb/sec, 14.2% of total time)',
    '\tStart size: 0.0 MB (101 messages)',
    '\tEnd size: 0.0 MB (51 messages)',
    '\t49.2% size reduction (49.5% fewer messages)',
    ' (kafka.log.LogCleaner)',
]

KAFKA_4_4_0 = [
    '[2026-12-07 14:52:16,268] INFO Starting the log cleaner (org.apache.kafka.storage.internals.log.LogCleaner)',
    '[2026-12-07 14:52:16,421] INFO [kafka-log-cleaner-thread-0]: Starting (org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread)',
    '[2026-12-07 14:52:38,658] INFO Cleaner 0: Beginning cleaning of log cleaned-0 (org.apache.kafka.storage.internals.log.Cleaner)',
    '[2026-12-07 14:52:38,658] INFO Cleaner 0: Building offset map for cleaned-0... (org.apache.kafka.storage.internals.log.Cleaner)',
    '[2026-12-07 14:52:39,106] INFO Cleaner 0: Building offset map for log cleaned-0 for 1 segments in offset range [0, 50). (org.apache.kafka.storage.internals.log.Cleaner)',
    '[2026-12-07 14:52:39,116] INFO Cleaner 0: Offset map for log cleaned-0 complete. (org.apache.kafka.storage.internals.log.Cleaner)',
    '[2026-12-07 14:52:39,123] INFO Cleaner 0: Cleaning log cleaned-0 (cleaning prior to Mon Dec 07 14:52:37 UTC 2026, discarding tombstones prior to upper bound deletion horizon Thu Jan 01 00:00:00 UTC 1970)... (org.apache.kafka.storage.internals.log.Cleaner)',
    '[2026-12-07 14:52:39,135] INFO Cleaner 0: Cleaning LogSegment(baseOffset=0, size=2511, lastModifiedTime=1796655157892, largestRecordTimestamp=1796655157655) in log cleaned-0 into 0 with an upper bound deletion horizon 0 computed from the segment last modified time of 1796655157892,retaining deletes. (org.apache.kafka.storage.internals.log.Cleaner)',
    '[2026-12-07 14:52:39,186] INFO Cleaner 0: Swapping in cleaned segment LogSegment(baseOffset=0, size=2511, lastModifiedTime=1796655157892, largestRecordTimestamp=1796655157655) for segment(s) [LogSegment(baseOffset=0, size=2511, lastModifiedTime=1796655157892, largestRecordTimestamp=1796655157655)] in log Log(dir=/tmp/compat-exp/b44/data/cleaned-0, topicId=4obzY6h5RuqSunl3Tlsx3g, topic=cleaned, partition=0, highWatermark=152, lastStableOffset=152, logStartOffset=0, logEndOffset=152) (org.apache.kafka.storage.internals.log.Cleaner)',
    '[2026-12-07 14:52:39,231] INFO [kafka-log-cleaner-thread-0]: ',
    '\tLog cleaner thread 0 cleaned log cleaned-0 (dirty section = [0, 50])',
    '\t0.0 MB of log processed in 0.5 seconds (0.0 MB/sec).',
    '\tIndexed 0.0 MB in 0.5 seconds (0.0 Mb/sec, 84.5% of total time)',
    '\tBuffer utilization: 0.0%',
    '\tCleaned 0.0 MB in 0.1 seconds (0.0 Mb/sec, 15.5% of total time)',
    '\tStart size: 0.0 MB (50 messages)',
    '\tEnd size: 0.0 MB (50 messages)',
    '\t0.0% size reduction (0.0% fewer messages)',
    ' (org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread)',
]


def test_a_kafka_3_9_cleaner_log_reads_as_its_clean():
    state = read_cleaner_log(KAFKA_3_9_1, source="3.9.1/log-cleaner.log")
    assert state.malformed == () and state.broker_starts == 1
    [clean] = state.cleans
    assert (clean.log, clean.dirty_start, clean.dirty_end) == ("cleaned-0", 0, 101)
    assert (clean.start_messages, clean.end_messages, clean.size_reduction) == (101, 51, pytest.approx(0.492))
    assert clean.source == "3.9.1/log-cleaner.log:10"
    assert any(" for segment(s) List(LogSegment(" in line for line in KAFKA_3_9_1)


def test_a_kafka_4_4_cleaner_log_reads_as_its_clean():
    state = read_cleaner_log(KAFKA_4_4_0, source="4.4.0/log-cleaner.log")
    assert state.malformed == () and state.broker_starts == 1
    [clean] = state.cleans
    assert (clean.log, clean.dirty_start, clean.dirty_end) == ("cleaned-0", 0, 50)
    assert (clean.start_messages, clean.end_messages, clean.size_reduction) == (50, 50, 0.0)
    assert clean.source == "4.4.0/log-cleaner.log:10"
    assert any(" for segment(s) [LogSegment(" in line for line in KAFKA_4_4_0)


def test_a_line_of_neither_layout_is_named_by_file_and_line():
    """A line from a layout the parser does not know (no log4j event header above it) is one malformed
    entry naming the file and line; the events around it are still read."""
    lines = ["cleaner: cleaned-0 [0, 101]"] + KAFKA_3_9_1
    state = read_cleaner_log(lines, source="other/log-cleaner.log")
    assert state.malformed == ("other/log-cleaner.log:1: not a log4j event line ([date] LEVEL message (logger)) "
                               "and no event above it",)
    assert [c.log for c in state.cleans] == ["cleaned-0"]

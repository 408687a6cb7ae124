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


L44 = "org.apache.kafka.storage.internals.log"

# lines both families write beside the ones above, each under the logger that writes it (4.x's Cleaner and
# CleanerThread, 3.x's kafka.log.LogCleaner for LogCleanerManager's checkpoint warning)
MORE_KNOWN = [
    f'[2026-12-07 14:52:40,000] INFO [kafka-log-cleaner-thread-0]: \tCleanable partitions: 1, Delayed partitions: 1, max delay: 2 ({L44}.LogCleaner$CleanerThread)',
    f'[2026-12-07 14:52:40,001] INFO Cleaner 0: Growing cleaner I/O buffers from 262144 bytes to 524288 bytes. ({L44}.Cleaner)',
    f'[2026-12-07 14:52:40,002] INFO Updating logCleanerIoMaxBytesPerSecond: 1.0E7 ({L44}.LogCleaner)',
    '[2026-12-07 14:52:40,003] WARN The last checkpoint dirty offset for partition cleaned-0 is 90, which is larger than the log end offset 50. Resetting to the log start offset 0. (kafka.log.LogCleaner)',
    f'[2026-12-07 14:52:40,004] INFO [kafka-log-cleaner-thread-0]: Shutting down ({L44}.LogCleaner$CleanerThread)',
    f'[2026-12-07 14:52:40,005] INFO [kafka-log-cleaner-thread-0]: Stopped ({L44}.LogCleaner$CleanerThread)',
    f'[2026-12-07 14:52:40,006] INFO [kafka-log-cleaner-thread-0]: Shutdown completed ({L44}.LogCleaner$CleanerThread)',
    f'[2026-12-07 14:52:40,007] INFO Shutting down the log cleaner. ({L44}.LogCleaner)',
]


def test_every_line_kafka_writes_under_the_cleaners_loggers_is_of_a_known_shape():
    state = read_cleaner_log(KAFKA_3_9_1 + KAFKA_4_4_0 + MORE_KNOWN, source="log-cleaner.log")
    assert state.malformed == () and len(state.cleans) == 2


def test_a_cleaner_line_of_an_unknown_version_is_one_line_naming_file_line_and_what_was_expected():
    """A line under one of the cleaner's loggers in a shape no Kafka version this parser knows writes (a later
    version's new event, or a reworded one) is named, not dropped in silence: file, line, logger, the line,
    what was expected; the clean after it is still read."""
    new_event = f'[2026-12-07 14:52:39,200] WARN Cleaner 0: Skipping log cleaned-0: decompressed batch too large ({L44}.Cleaner)'
    reworded_stats = [f'[2026-12-07 14:52:39,210] INFO [kafka-log-cleaner-thread-0]: ',
                      '\tLog cleaner thread 0 compacted cleaned-0 in 0.5 s',
                      f' ({L44}.LogCleaner$CleanerThread)']
    lines = KAFKA_4_4_0[:9] + [new_event, *reworded_stats] + KAFKA_4_4_0[9:]
    state = read_cleaner_log(lines, source="4.x/log-cleaner.log")
    expected = ("expected a clean's stats, an uncleanable partition, a thread's death, a start, or a progress or "
                "checkpoint line of Kafka 2.x-4.4")
    assert state.malformed == (
        f"4.x/log-cleaner.log:10: a line of the cleaner's logger {L44}.Cleaner (WARN) in no shape this reader "
        f"knows (another Kafka version's?): 'Skipping log cleaned-0: decompressed batch too large'; {expected}",
        f"4.x/log-cleaner.log:11: a line of the cleaner's logger {L44}.LogCleaner$CleanerThread (INFO) in no "
        f"shape this reader knows (another Kafka version's?): 'Log cleaner thread 0 compacted cleaned-0 in 0.5 s'; "
        f"{expected}")
    [clean] = state.cleans
    assert clean.source == "4.x/log-cleaner.log:14" and clean.dirty_end == 50


def test_other_loggers_and_debug_lines_in_the_cleaners_file_are_not_judged():
    """Another class routed to the same file is not the cleaner's; DEBUG and TRACE (a logger turned up by hand)
    write shapes too many to list."""
    lines = KAFKA_3_9_1 + [
        '[2026-12-07 14:53:00,000] INFO Rolled new log segment at offset 155 (kafka.log.LocalLog)',
        '[2026-12-07 14:53:00,001] DEBUG Cleaner 0: Something only a debug build says (kafka.log.LogCleaner)']
    assert read_cleaner_log(lines, source="log-cleaner.log").malformed == ()

"""log-cleaner.log lines as Kafka writes them, made from the format strings in Kafka's sources (2.x-3.x
core/src/main/scala/kafka/log/LogCleaner.scala recordStats and tryCleanFilthiestLog; 4.x
storage/src/main/java/org/apache/kafka/storage/internals/log/LogCleaner.java, the same strings;
ShutdownableThread's "Error due to") and the layout of Kafka's log4j config, "[%d] %p %m (%c)%n".
The uncleanable event's stack trace is the shape a real Kafka 4.3 broker logged for a damaged
record (tests/collectors/test_uncleanable_kafka.py makes one)."""

from monitor.kafka.cleanerlog import MB

L4 = "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread"  # the 4.x logger
L2 = "kafka.log.LogCleaner"  # 2.x/3.x: CleanerThread logs under LogCleaner's name


def head(ts, level, msg, logger=L4):
    """Kafka's log4j layout: "[%d] %p %m (%c)%n"."""
    return f"[{ts}] {level} {msg} ({logger})"


def stats_block(ts, thread, log, start, end, read_b, secs, idx_secs, util, written_b, msgs_in, msgs_out, logger=L4):
    """recordStats' message, as Kafka formats it (mb(x) = x / 2^20; %,.1f groups thousands)."""
    mb = lambda b: b / MB  # noqa: E731
    msg = ("\n\tLog cleaner thread %d cleaned log %s (dirty section = [%d, %d])\n" % (thread, log, start, end)
           + "\t{:,.1f} MB of log processed in {:,.1f} seconds ({:,.1f} MB/sec).\n".format(
               mb(read_b), secs, mb(read_b / secs))
           + "\tIndexed {:,.1f} MB in {:.1f} seconds ({:,.1f} Mb/sec, {:.1f}% of total time)\n".format(
               mb(read_b), idx_secs, mb(read_b) / idx_secs, 100 * idx_secs / secs)
           + "\tBuffer utilization: {:.1f}%\n".format(100 * util)
           + "\tCleaned {:,.1f} MB in {:.1f} seconds ({:,.1f} Mb/sec, {:.1f}% of total time)\n".format(
               mb(read_b), secs - idx_secs, mb(read_b) / (secs - idx_secs), 100 * (secs - idx_secs) / secs)
           + "\tStart size: {:,.1f} MB ({:,d} messages)\n".format(mb(read_b), msgs_in)
           + "\tEnd size: {:,.1f} MB ({:,d} messages)\n".format(mb(written_b), msgs_out)
           + "\t{:.1f}% size reduction ({:.1f}% fewer messages)\n".format(
               100 * (1 - written_b / read_b), 100 * (1 - msgs_out / msgs_in)))
    return head(ts, "INFO", f"[kafka-log-cleaner-thread-{thread}]: {msg}", logger).splitlines()


def uncleanable(ts, log_repr, tp, cause_cls, cause_msg, wrapper="org.apache.kafka.storage.internals.log", logger=L4):
    """tryCleanFilthiestLog's WARN with the LogCleaningException (message = the cause's) and its cause."""
    return [head(ts, "WARN", f"[kafka-log-cleaner-thread-0]: Unexpected exception thrown when cleaning log "
                 f"{log_repr}. Marking its partition ({tp}) as uncleanable", logger),
            f"{wrapper}.LogCleaningException: {cause_msg}",
            "\tat org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread.cleanFilthiestLog(LogCleaner.java:570) ~[kafka-storage-4.3.0.jar:?]",
            "\tat org.apache.kafka.server.util.ShutdownableThread.run(ShutdownableThread.java:136) [kafka-server-common-4.3.0.jar:?]",
            f"Caused by: {cause_cls}: {cause_msg}",
            "\t... 4 more"]


START = [head("2026-11-22 09:00:00,000", "INFO", "Starting the log cleaner", "org.apache.kafka.storage.internals.log.LogCleaner"),
         head("2026-11-22 09:00:00,100", "INFO", "[kafka-log-cleaner-thread-0]: Starting")]

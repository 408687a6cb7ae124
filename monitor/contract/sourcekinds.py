"""The kinds of the collector's sources: the ``kind`` label of its own health series (``source_up``,
``source_last_error_info``, ...), which the collector names its sources with and the dashboard reads to tell
which part of the collector a series is about (a broker's cleaner gauges missing because their source is down,
not because none was configured). Defined once here for both."""

from __future__ import annotations

JMX, JOLOKIA = "jmx", "jolokia"  # a broker's JMX exporter page; its Jolokia agent
LOG_DIRS, CLEANER_LOG = "log_dirs", "cleaner_log"  # a broker's log dirs; its log-cleaner.log
ADMIN, GROUPS = "admin", "consumer_groups"  # the cluster's admin API: topics and brokers; consumer groups
GAUGES = (JMX, JOLOKIA)  # the kinds that read a broker's cleaner gauges

"""The compatibility checks (compatchecks.py) on Kafka 3.9 with ZooKeeper: the last 3.x line, still what
Confluent Platform 7.x runs. Its log dir's meta.properties is version 0 (broker.id), it has no metadata log,
its cleaner logs as kafka.log.LogCleaner and prints swapped segments as a Scala List, its dump tool is
kafka.tools.DumpLogSegments."""

KAFKA_VERSION = "3.9.1"

from compatchecks import *  # noqa: E402,F401,F403  (the checks, run against this module's broker)

"""The compatibility checks (compatchecks.py) on Kafka 4.3 in KRaft, the version the rest of the suite ran
until 4.4 (issue 44): meta.properties version 1, the metadata log in the log dir, the cleaner's loggers under
org.apache.kafka.storage.internals.log, kafka-configs still kafka.admin.ConfigCommand (4.4 moved it), and
kafka-storage format writing bootstrap.checkpoint (4.4 writes a snapshot in __cluster_metadata-0)."""

KAFKA_VERSION = "4.3.0"

from compatchecks import *  # noqa: E402,F401,F403  (the checks, run against this module's broker)

"""The compatibility checks (compatchecks.py) on Kafka 4.4 in KRaft, the newest release: meta.properties
version 1 (node.id, directory.id), the metadata log __cluster_metadata-0 in the log dir, the cleaner's
loggers under org.apache.kafka.storage.internals.log, its dump tool org.apache.kafka.tools.DumpLogSegments.
(4.3, the version the rest of the suite runs, is covered there.)"""

KAFKA_VERSION = "4.4.0"

from compatchecks import *  # noqa: E402,F401,F403  (the checks, run against this module's broker)

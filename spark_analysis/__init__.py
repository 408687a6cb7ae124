"""Spark audit jobs: scan Kafka log segments, kafka-dump-log dumps or a live topic, and estimate
what compaction would reclaim, how long the cleaner needs, and where tombstones build up.

Record parsing is delegated to ``monitor`` (the same reader the collector uses); this package
only plans partitions, turns records into Arrow batches on the executors, and aggregates."""

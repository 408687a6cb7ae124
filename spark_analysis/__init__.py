"""Spark audit jobs: scan Kafka log segments, kafka-dump-log dumps or a live topic, and estimate
what compaction would reclaim, how long the cleaner needs, and where tombstones build up.

Record parsing is delegated to ``monitor`` (the same reader the collector uses). This package plans
the work a partition per task, folds each partition's records with one fold (``keyfold``, run by
``partition_fold``) next to the decoder, and merges and reports the per-partition rows (``audit``)."""
